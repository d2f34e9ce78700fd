import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { ApplicationFlags, AuditLogEvents, GuildLimits, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens } from '../../../../test-support/oauth.js';
import { call, expectError, type Json, recordEvents, UNKNOWN_ID } from './moderation-support.js';

const P = PermissionFlags;
const PNG = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48]).toString('base64')}`;
const DAY = 24 * 60 * 60 * 1000;

const MEMBER_KEYS = [
  'avatar',
  'banner',
  'communication_disabled_until',
  'deaf',
  'flags',
  'joined_at',
  'mute',
  'nick',
  'pending',
  'premium_since',
  'roles',
  'user',
].sort();

describe('guild members (GUILDS.md §3.2)', () => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let member: { id: string; token: string };
  let moderator: { id: string; token: string };
  let peer: { id: string; token: string };
  let lowRole: string;
  let highRole: string;

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
    guild = await createTestGuild(hearth, 'Members');
    member = await addTestMember(hearth, guild);
    moderator = await addTestMember(hearth, guild);
    peer = await addTestMember(hearth, guild);
    const mod = P.ManageNicknames | P.ManageRoles | P.KickMembers | P.ModerateMembers | P.MuteMembers;
    await grantTestRole(hearth, guild, mod, [moderator.id, peer.id], 5);
    lowRole = await grantTestRole(hearth, guild, 0n, [], 1);
    highRole = await grantTestRole(hearth, guild, 0n, [], 9);
  });
  afterAll(() => hearth.close());

  const path = (userId: string) => `/guilds/${guild.id}/members/${userId}`;

  describe('Get Guild Member', () => {
    it('answers the member object with its user and roles', async () => {
      const answer = await call(hearth, member.token, 'GET', path(moderator.id));
      expect(answer.status).toBe(200);
      expect(Object.keys(answer.body).sort()).toEqual(MEMBER_KEYS);
      expect(answer.body).toMatchObject({
        nick: null,
        avatar: null,
        banner: null,
        deaf: false,
        mute: false,
        flags: 0,
        pending: false,
        premium_since: null,
        communication_disabled_until: null,
      });
      expect((answer.body['user'] as Json)['id']).toBe(moderator.id);
      expect(answer.body['roles']).toHaveLength(1);
      expect(typeof answer.body['joined_at']).toBe('string');
    });

    it('10007 for a user who is not a member, 10013 for an unknown user', async () => {
      const outsider = await createPlayer(hearth);
      expectError(
        await call(hearth, member.token, 'GET', path(outsider.user.id)),
        404,
        10007,
        'Unknown Member',
      );
      expectError(await call(hearth, member.token, 'GET', path(UNKNOWN_ID)), 404, 10013, 'Unknown User');
    });

    it('10004 for an unknown guild, 50001 for a caller outside the guild', async () => {
      expectError(
        await call(hearth, member.token, 'GET', `/guilds/${UNKNOWN_ID}/members/${member.id}`),
        404,
        10004,
        'Unknown Guild',
      );
      const other = await createTestGuild(hearth);
      expectError(
        await call(hearth, other.owner.token, 'GET', path(member.id)),
        403,
        50001,
        'Missing Access',
      );
    });

    it('401 for an unknown token; 50035 for an id that is not a snowflake', async () => {
      expect((await call(hearth, 'not-a-session', 'GET', path(member.id))).status).toBe(401);
      const answer = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/members/abc`);
      expectError(answer, 400, 50035, 'Invalid Form Body');
      expect(answer.body['errors']).toHaveProperty('user_id');
    });
  });

  describe('List Guild Members', () => {
    it('defaults to one member; pages by `after` in user id order; limit 1000 holds, 1001 and 0 are 50035', async () => {
      const first = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/members`);
      expect(first.items).toHaveLength(GuildLimits.membersListDefault);
      const all = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/members?limit=1000`);
      const ids = all.items.map((m) => (m['user'] as Json)['id'] as string);
      expect(ids).toEqual([...ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
      expect(ids).toHaveLength(4);
      const after = await call(
        hearth,
        member.token,
        'GET',
        `/guilds/${guild.id}/members?limit=2&after=${ids[0]}`,
      );
      expect(after.items.map((m) => (m['user'] as Json)['id'])).toEqual(ids.slice(1, 3));
      for (const limit of [0, 1001]) {
        const answer = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/members?limit=${limit}`);
        expectError(answer, 400, 50035, 'Invalid Form Body');
        expect(answer.body['errors']).toHaveProperty('limit');
      }
    });

    it('a bot needs the GUILD_MEMBERS intent enabled on its application (50001 without)', async () => {
      const bot = await addTestBot(hearth, guild);
      const url = `/guilds/${guild.id}/members?limit=10`;
      expectError(await call(hearth, `Bot ${bot.botToken}`, 'GET', url), 403, 50001, 'Missing Access');
      await hearth.storage.db
        .updateTable('applications')
        .set({ flags: Number(ApplicationFlags.GatewayGuildMembersLimited) })
        .where('id', '=', bot.id)
        .execute();
      const answer = await call(hearth, `Bot ${bot.botToken}`, 'GET', url);
      expect(answer.status).toBe(200);
      expect(answer.items).toHaveLength(5);
    });
  });

  describe('Search Guild Members', () => {
    it('matches a username or nick prefix, case-insensitive; `query` is required', async () => {
      await call(hearth, moderator.token, 'PATCH', path(member.id), { nick: 'Zebra Keeper' });
      const byNick = await call(
        hearth,
        member.token,
        'GET',
        `/guilds/${guild.id}/members/search?query=zEbRa&limit=10`,
      );
      expect(byNick.items.map((m) => (m['user'] as Json)['id'])).toEqual([member.id]);
      const user = (await call(hearth, member.token, 'GET', path(peer.id))).body['user'] as Json;
      const username = user['username'] as string;
      const byName = await call(
        hearth,
        member.token,
        'GET',
        `/guilds/${guild.id}/members/search?query=${username.toUpperCase()}&limit=10`,
      );
      expect(byName.items.map((m) => (m['user'] as Json)['id'])).toContain(peer.id);
      const none = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/members/search?query=%25`);
      expect(none.items).toEqual([]);
      const missing = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/members/search`);
      expectError(missing, 400, 50035, 'Invalid Form Body', {
        query: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      });
    });
  });

  describe('Modify Guild Member', () => {
    it('sets a nick (MANAGE_NICKNAMES), records MEMBER_UPDATE with the reason and sends GUILD_MEMBER_UPDATE', async () => {
      const events = recordEvents(hearth);
      const answer = await call(
        hearth,
        moderator.token,
        'PATCH',
        path(member.id),
        { nick: 'Renamed' },
        {
          'x-audit-log-reason': encodeURIComponent('too loud'),
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.body['nick']).toBe('Renamed');
      const update = events.of('GUILD_MEMBER_UPDATE')[0]!;
      expect(update.audience).toEqual({ guildId: guild.id });
      expect(Object.keys(update.data).sort()).toEqual([...MEMBER_KEYS, 'guild_id'].sort());
      const entry = events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data;
      expect(entry).toMatchObject({
        guild_id: guild.id,
        user_id: moderator.id,
        target_id: member.id,
        action_type: AuditLogEvents.MemberUpdate,
        reason: 'too loud',
        changes: [{ key: 'nick', old_value: 'Zebra Keeper', new_value: 'Renamed' }],
      });
      events.stop();
    });

    it('a nick of 33 characters is 50035; 32 holds', async () => {
      const long = await call(hearth, moderator.token, 'PATCH', path(member.id), { nick: 'n'.repeat(33) });
      expectError(long, 400, 50035, 'Invalid Form Body', {
        nick: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 32 or fewer in length.' }] },
      });
      const edge = await call(hearth, moderator.token, 'PATCH', path(member.id), { nick: 'n'.repeat(32) });
      expect(edge.status).toBe(200);
    });

    it('hierarchy: an equal or higher member, or the owner, cannot be edited (50013); the owner edits anyone', async () => {
      for (const target of [peer.id, guild.owner.id]) {
        expectError(
          await call(hearth, moderator.token, 'PATCH', path(target), { nick: 'x' }),
          403,
          50013,
          'Missing Permissions',
        );
      }
      const owner = await call(hearth, guild.owner.token, 'PATCH', path(moderator.id), { nick: 'mod' });
      expect(owner.status).toBe(200);
    });

    it("one's own nick needs CHANGE_NICKNAME only; others' nicks need MANAGE_NICKNAMES", async () => {
      expect((await call(hearth, member.token, 'PATCH', path(member.id), { nick: 'me' })).status).toBe(200);
      expectError(
        await call(hearth, member.token, 'PATCH', path(moderator.id), { nick: 'you' }),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it('roles: below the actor only, unknown ones 10011; MEMBER_ROLE_UPDATE lists $add and $remove', async () => {
      const events = recordEvents(hearth);
      const added = await call(hearth, moderator.token, 'PATCH', path(member.id), { roles: [lowRole] });
      expect(added.status).toBe(200);
      expect(added.body['roles']).toEqual([lowRole]);
      expectError(
        await call(hearth, moderator.token, 'PATCH', path(member.id), { roles: [highRole] }),
        403,
        50013,
        'Missing Permissions',
      );
      expectError(
        await call(hearth, moderator.token, 'PATCH', path(member.id), { roles: [UNKNOWN_ID] }),
        404,
        10011,
        'Unknown Role',
      );
      const removed = await call(hearth, moderator.token, 'PATCH', path(member.id), { roles: [] });
      expect(removed.body['roles']).toEqual([]);
      const entries = events.of('GUILD_AUDIT_LOG_ENTRY_CREATE').map((e) => e.data);
      expect(entries.map((e) => [e['action_type'], (e['changes'] as Json[])[0]!['key']])).toEqual([
        [AuditLogEvents.MemberRoleUpdate, '$add'],
        [AuditLogEvents.MemberRoleUpdate, '$remove'],
      ]);
      expect((entries[0]!['changes'] as Json[])[0]!['new_value']).toEqual([
        { id: lowRole, name: expect.any(String) },
      ]);
      events.stop();
    });

    it('a managed role can be neither added nor removed (50013)', async () => {
      const managed = await grantTestRole(hearth, guild, 0n, [], 1);
      await hearth.storage.db
        .updateTable('guild_roles')
        .set({ managed: 1 })
        .where('id', '=', managed)
        .execute();
      expectError(
        await call(hearth, guild.owner.token, 'PATCH', path(member.id), { roles: [managed] }),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it('timeout: 28 days ahead holds, a minute more is 50035; MODERATE_MEMBERS needed', async () => {
      const now = hearth.clock.now();
      const edge = new Date(now + GuildLimits.timeoutMaxMs - 60_000).toISOString();
      const ok = await call(hearth, moderator.token, 'PATCH', path(member.id), {
        communication_disabled_until: edge,
      });
      expect(ok.status).toBe(200);
      expect(Date.parse(ok.body['communication_disabled_until'] as string)).toBe(Date.parse(edge));
      const beyond = new Date(now + 28 * DAY + 60_000).toISOString();
      const far = await call(hearth, moderator.token, 'PATCH', path(member.id), {
        communication_disabled_until: beyond,
      });
      expectError(far, 400, 50035, 'Invalid Form Body');
      expect(far.body['errors']).toHaveProperty('communication_disabled_until');
      const cleared = await call(hearth, moderator.token, 'PATCH', path(member.id), {
        communication_disabled_until: null,
      });
      expect(cleared.body['communication_disabled_until']).toBeNull();
      expectError(
        await call(hearth, member.token, 'PATCH', path(moderator.id), {
          communication_disabled_until: edge,
        }),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it('timeout of the owner or an ADMINISTRATOR is 403, even for the owner', async () => {
      const admin = await addTestMember(hearth, guild);
      await grantTestRole(hearth, guild, P.Administrator, [admin.id], 1);
      const until = new Date(hearth.clock.now() + DAY).toISOString();
      for (const target of [admin.id, guild.owner.id]) {
        expectError(
          await call(hearth, guild.owner.token, 'PATCH', path(target), {
            communication_disabled_until: until,
          }),
          403,
          50013,
          'Missing Permissions',
        );
      }
    });

    it('mute and deaf need the target in voice (40032)', async () => {
      expectError(
        await call(hearth, moderator.token, 'PATCH', path(member.id), { mute: true }),
        400,
        40032,
        'Target user is not connected to voice.',
      );
      expectError(
        await call(hearth, moderator.token, 'PATCH', path(member.id), { deaf: true }),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it('flags: only BYPASSES_VERIFICATION changes', async () => {
      const answer = await call(hearth, moderator.token, 'PATCH', path(member.id), { flags: 0b111 });
      expect(answer.body['flags']).toBe(4);
    });

    it('wrong types are 50035 with the field named', async () => {
      const answer = await call(hearth, moderator.token, 'PATCH', path(member.id), { nick: 5, roles: 'x' });
      expectError(answer, 400, 50035, 'Invalid Form Body');
      expect(Object.keys(answer.body['errors'] as Json).sort()).toEqual(['nick', 'roles']);
    });
  });

  describe('Modify Current Member', () => {
    it('a bot sets nick, avatar (a hash of the image), banner and bio', async () => {
      const bot = await addTestBot(hearth, guild);
      const answer = await call(hearth, `Bot ${bot.botToken}`, 'PATCH', `/guilds/${guild.id}/members/@me`, {
        nick: 'Helper',
        avatar: PNG,
        banner: PNG,
        bio: 'b'.repeat(GuildLimits.bioMax),
      });
      expect(answer.status).toBe(200);
      expect(answer.body['nick']).toBe('Helper');
      expect(answer.body['avatar']).toMatch(/^[0-9a-f]{32}$/);
      expect(answer.body['banner']).toBe(answer.body['avatar']);
    });

    it('an image that is not PNG/JPEG/GIF/WebP is 50035 on its field; a bio of 191 is 50035', async () => {
      const bad = await call(hearth, member.token, 'PATCH', `/guilds/${guild.id}/members/@me`, {
        avatar: `data:image/png;base64,${Buffer.from('not an image at all').toString('base64')}`,
      });
      expectError(bad, 400, 50035, 'Invalid Form Body', {
        avatar: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] },
      });
      const bio = await call(hearth, member.token, 'PATCH', `/guilds/${guild.id}/members/@me`, {
        bio: 'b'.repeat(GuildLimits.bioMax + 1),
      });
      expectError(bio, 400, 50035, 'Invalid Form Body', {
        bio: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 190 or fewer in length.' }] },
      });
    });
  });

  describe('Add / Remove Guild Member Role', () => {
    it('204 and GUILD_MEMBER_UPDATE; hierarchy, unknown role and missing MANAGE_ROLES refused', async () => {
      const url = (role: string) => `${path(member.id)}/roles/${role}`;
      const events = recordEvents(hearth);
      const put = await call(hearth, moderator.token, 'PUT', url(lowRole));
      expect(put.status).toBe(204);
      expect(events.of('GUILD_MEMBER_UPDATE')[0]!.data['roles']).toEqual([lowRole]);
      expectError(
        await call(hearth, moderator.token, 'PUT', url(highRole)),
        403,
        50013,
        'Missing Permissions',
      );
      expectError(await call(hearth, moderator.token, 'PUT', url(UNKNOWN_ID)), 404, 10011, 'Unknown Role');
      expectError(
        await call(hearth, member.token, 'DELETE', url(lowRole)),
        403,
        50013,
        'Missing Permissions',
      );
      expect((await call(hearth, moderator.token, 'DELETE', url(lowRole))).status).toBe(204);
      expect((await call(hearth, member.token, 'GET', path(member.id))).body['roles']).toEqual([]);
      events.stop();
    });
  });

  describe('Remove Guild Member (kick)', () => {
    it('204, GUILD_MEMBER_REMOVE and MEMBER_KICK with the reason', async () => {
      const target = await addTestMember(hearth, guild);
      const events = recordEvents(hearth);
      const answer = await call(hearth, moderator.token, 'DELETE', path(target.id), undefined, {
        'x-audit-log-reason': 'spam',
      });
      expect(answer.status).toBe(204);
      expect(events.of('GUILD_MEMBER_REMOVE')[0]!.data).toMatchObject({
        guild_id: guild.id,
        user: { id: target.id },
      });
      expect(events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data).toMatchObject({
        action_type: AuditLogEvents.MemberKick,
        target_id: target.id,
        reason: 'spam',
      });
      expectError(await call(hearth, moderator.token, 'GET', path(target.id)), 404, 10007, 'Unknown Member');
      events.stop();
    });

    it('an equal member, the owner, or without KICK_MEMBERS: 50013; an unknown member 10007', async () => {
      expectError(
        await call(hearth, moderator.token, 'DELETE', path(peer.id)),
        403,
        50013,
        'Missing Permissions',
      );
      expectError(
        await call(hearth, moderator.token, 'DELETE', path(guild.owner.id)),
        403,
        50013,
        'Missing Permissions',
      );
      expectError(
        await call(hearth, member.token, 'DELETE', path(peer.id)),
        403,
        50013,
        'Missing Permissions',
      );
      const outsider = await createPlayer(hearth);
      expectError(
        await call(hearth, moderator.token, 'DELETE', path(outsider.user.id)),
        404,
        10007,
        'Unknown Member',
      );
    });
  });

  describe('Add Guild Member (guilds.join)', () => {
    it('201 with the member and GUILD_MEMBER_ADD, then 204 for a member; scope and token checked', async () => {
      const game = await createGame(hearth);
      await hearth.services.guilds.addMember(guild.id, game.botUserId);
      const player = await createPlayer(hearth);
      const bot = `Bot ${game.botToken}`;
      const url = path(player.user.id);
      const identify = await grantTokens(hearth, game, player.token, 'identify');
      expectError(
        await call(hearth, bot, 'PUT', url, { access_token: identify.access_token }),
        403,
        50026,
        'Missing required OAuth2 scope',
      );
      expectError(
        await call(hearth, bot, 'PUT', url, { access_token: 'revoked-or-unknown' }),
        403,
        50025,
        'Invalid OAuth2 access token provided',
      );
      const tokens = await grantTokens(hearth, game, player.token, 'identify guilds.join');
      expectError(
        await call(hearth, bot, 'PUT', url, { access_token: tokens.access_token, nick: 'x' }),
        403,
        50013,
        'Missing Permissions',
      );
      const events = recordEvents(hearth);
      const added = await call(hearth, bot, 'PUT', url, { access_token: tokens.access_token });
      expect(added.status).toBe(201);
      expect(Object.keys(added.body).sort()).toEqual(MEMBER_KEYS);
      expect(events.of('GUILD_MEMBER_ADD')[0]!.data).toMatchObject({
        guild_id: guild.id,
        user: { id: player.user.id },
      });
      const again = await call(hearth, bot, 'PUT', url, { access_token: tokens.access_token });
      expect(again.status).toBe(204);
      expect(again.empty).toBe(true);
      expectError(
        await call(hearth, player.token, 'PUT', url, { access_token: tokens.access_token }),
        403,
        20002,
        'Only bots can use this endpoint',
      );
      events.stop();
    });

    it('a banned user is refused (40007) until unbanned', async () => {
      const game = await createGame(hearth);
      await hearth.services.guilds.addMember(guild.id, game.botUserId);
      const player = await createPlayer(hearth);
      const tokens = await grantTokens(hearth, game, player.token, 'identify guilds.join');
      expect(
        (await call(hearth, guild.owner.token, 'PUT', `/guilds/${guild.id}/bans/${player.user.id}`, {}))
          .status,
      ).toBe(204);
      const bot = `Bot ${game.botToken}`;
      const url = path(player.user.id);
      expectError(
        await call(hearth, bot, 'PUT', url, { access_token: tokens.access_token }),
        403,
        40007,
        'The user is banned from this guild.',
      );
      await call(hearth, guild.owner.token, 'DELETE', `/guilds/${guild.id}/bans/${player.user.id}`);
      expect((await call(hearth, bot, 'PUT', url, { access_token: tokens.access_token })).status).toBe(201);
    });
  });

  describe('Get Current User Guild Member', () => {
    it("answers the caller's member with guilds.members.read; 50026 without; 10004 outside the guild", async () => {
      const game = await createGame(hearth);
      const tokens = await grantTokens(hearth, game, member.token, 'identify guilds.members.read');
      const answer = await call(
        hearth,
        `Bearer ${tokens.access_token}`,
        'GET',
        `/users/@me/guilds/${guild.id}/member`,
      );
      expect(answer.status).toBe(200);
      expect((answer.body['user'] as Json)['id']).toBe(member.id);
      const bare = await grantTokens(hearth, game, member.token, 'identify');
      expectError(
        await call(hearth, `Bearer ${bare.access_token}`, 'GET', `/users/@me/guilds/${guild.id}/member`),
        403,
        50026,
        'Missing required OAuth2 scope',
      );
      const other = await createTestGuild(hearth);
      expectError(
        await call(hearth, member.token, 'GET', `/users/@me/guilds/${other.id}/member`),
        404,
        10004,
        'Unknown Guild',
      );
    });
  });

  describe('@discordjs/core drives members as a bot', () => {
    it('editMember, addRoleToMember, removeRoleFromMember, getMember; refused with 50013 above its role', async () => {
      const bot = await addTestBot(hearth, guild);
      await grantTestRole(
        hearth,
        guild,
        P.ManageRoles | P.ManageNicknames | P.KickMembers,
        [bot.botUserId],
        4,
      );
      const api = new API(new REST({ api: `${hearth.url}/api` }).setToken(bot.botToken));
      const target = await addTestMember(hearth, guild);
      const edited = await api.guilds.editMember(
        guild.id,
        target.id,
        { nick: 'via core' },
        { reason: 'core' },
      );
      expect(edited.nick).toBe('via core');
      await api.guilds.addRoleToMember(guild.id, target.id, lowRole);
      expect((await api.guilds.getMember(guild.id, target.id)).roles).toEqual([lowRole]);
      await api.guilds.removeRoleFromMember(guild.id, target.id, lowRole);
      await expect(api.guilds.addRoleToMember(guild.id, target.id, highRole)).rejects.toMatchObject({
        status: 403,
        code: 50013,
      });
      await api.guilds.removeMember(guild.id, target.id);
      await expect(api.guilds.getMember(guild.id, target.id)).rejects.toMatchObject({
        status: 404,
        code: 10007,
      });
    });
  });
});
