import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { AuditLogEvents, GuildLimits, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { call, expectError, type Json, recordEvents, UNKNOWN_ID } from './moderation-support.js';

const P = PermissionFlags;

describe('guild bans (GUILDS.md §3.3)', () => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let moderator: { id: string; token: string };
  let peer: { id: string; token: string };
  let plain: { id: string; token: string };

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
    guild = await createTestGuild(hearth, 'Bans');
    moderator = await addTestMember(hearth, guild);
    peer = await addTestMember(hearth, guild);
    plain = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, P.BanMembers, [moderator.id, peer.id], 3);
  });
  afterAll(() => hearth.close());

  const banPath = (userId: string) => `/guilds/${guild.id}/bans/${userId}`;

  describe('Create Guild Ban', () => {
    it('bans a member: 204, the member removed, GUILD_MEMBER_REMOVE, GUILD_BAN_ADD and MEMBER_BAN_ADD', async () => {
      const target = await addTestMember(hearth, guild);
      const events = recordEvents(hearth);
      const answer = await call(
        hearth,
        moderator.token,
        'PUT',
        banPath(target.id),
        { delete_message_seconds: GuildLimits.deleteMessageSecondsMax },
        { 'x-audit-log-reason': 'raiding' },
      );
      expect(answer.status).toBe(204);
      expect(events.seen.map((e) => e.type)).toEqual([
        'GUILD_MEMBER_REMOVE',
        'GUILD_AUDIT_LOG_ENTRY_CREATE',
        'GUILD_BAN_ADD',
      ]);
      expect(events.of('GUILD_BAN_ADD')[0]!.data).toMatchObject({
        guild_id: guild.id,
        user: { id: target.id },
      });
      expect(events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data).toMatchObject({
        action_type: AuditLogEvents.MemberBanAdd,
        user_id: moderator.id,
        target_id: target.id,
        reason: 'raiding',
        options: { delete_message_seconds: '604800' },
      });
      expectError(
        await call(hearth, moderator.token, 'GET', `/guilds/${guild.id}/members/${target.id}`),
        404,
        10007,
        'Unknown Member',
      );
      const ban = await call(hearth, moderator.token, 'GET', banPath(target.id));
      expect(ban.status).toBe(200);
      expect(Object.keys(ban.body).sort()).toEqual(['reason', 'user']);
      expect(ban.body['reason']).toBe('raiding');
      expect((ban.body['user'] as Json)['id']).toBe(target.id);
      events.stop();
    });

    it('bans a user who is not a member; an unknown user is 10013', async () => {
      const outsider = await createPlayer(hearth);
      expect((await call(hearth, moderator.token, 'PUT', banPath(outsider.user.id), {})).status).toBe(204);
      expectError(
        await call(hearth, moderator.token, 'PUT', banPath(UNKNOWN_ID), {}),
        404,
        10013,
        'Unknown User',
      );
    });

    it('delete_message_seconds past 604800 and delete_message_days past 7 are 50035', async () => {
      const outsider = await createPlayer(hearth);
      const seconds = await call(hearth, moderator.token, 'PUT', banPath(outsider.user.id), {
        delete_message_seconds: GuildLimits.deleteMessageSecondsMax + 1,
      });
      expectError(seconds, 400, 50035, 'Invalid Form Body', {
        delete_message_seconds: {
          _errors: [
            { code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 604800.' },
          ],
        },
      });
      const days = await call(hearth, moderator.token, 'PUT', banPath(outsider.user.id), {
        delete_message_days: 8,
      });
      expectError(days, 400, 50035, 'Invalid Form Body', {
        delete_message_days: {
          _errors: [{ code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 7.' }],
        },
      });
      expect(
        (await call(hearth, moderator.token, 'PUT', banPath(outsider.user.id), { delete_message_days: 7 }))
          .status,
      ).toBe(204);
    });

    it('hierarchy: an equal member or the owner cannot be banned; without BAN_MEMBERS 50013', async () => {
      for (const target of [peer.id, guild.owner.id]) {
        expectError(
          await call(hearth, moderator.token, 'PUT', banPath(target), {}),
          403,
          50013,
          'Missing Permissions',
        );
      }
      expectError(
        await call(hearth, plain.token, 'PUT', banPath(peer.id), {}),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it("another guild's member is 50001, an unknown guild 10004, an unknown token 401", async () => {
      const other = await createTestGuild(hearth);
      expectError(
        await call(hearth, other.owner.token, 'PUT', banPath(plain.id), {}),
        403,
        50001,
        'Missing Access',
      );
      expectError(
        await call(hearth, moderator.token, 'PUT', `/guilds/${UNKNOWN_ID}/bans/${plain.id}`, {}),
        404,
        10004,
        'Unknown Guild',
      );
      expect((await call(hearth, 'revoked', 'PUT', banPath(plain.id), {})).status).toBe(401);
    });
  });

  describe('Get Guild Bans / Get Guild Ban / Remove Guild Ban', () => {
    it('lists bans by user id with limit, after and before; limit 1001 is 50035; BAN_MEMBERS needed', async () => {
      const g = await createTestGuild(hearth);
      const users = await Promise.all([1, 2, 3].map(() => createPlayer(hearth)));
      for (const user of users)
        await call(hearth, g.owner.token, 'PUT', `/guilds/${g.id}/bans/${user.user.id}`, {});
      const ids = users.map((u) => u.user.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      const all = await call(hearth, g.owner.token, 'GET', `/guilds/${g.id}/bans`);
      expect(all.items.map((b) => (b['user'] as Json)['id'])).toEqual(ids);
      expect(all.items[0]).toEqual({ reason: null, user: expect.objectContaining({ id: ids[0] }) });
      const after = await call(hearth, g.owner.token, 'GET', `/guilds/${g.id}/bans?after=${ids[0]}&limit=1`);
      expect(after.items.map((b) => (b['user'] as Json)['id'])).toEqual([ids[1]]);
      const before = await call(
        hearth,
        g.owner.token,
        'GET',
        `/guilds/${g.id}/bans?before=${ids[2]}&limit=1`,
      );
      expect(before.items.map((b) => (b['user'] as Json)['id'])).toEqual([ids[1]]);
      const max = await call(
        hearth,
        g.owner.token,
        'GET',
        `/guilds/${g.id}/bans?limit=${GuildLimits.bansListMax}`,
      );
      expect(max.status).toBe(200);
      const over = await call(
        hearth,
        g.owner.token,
        'GET',
        `/guilds/${g.id}/bans?limit=${GuildLimits.bansListMax + 1}`,
      );
      expectError(over, 400, 50035, 'Invalid Form Body');
      expect(over.body['errors']).toHaveProperty('limit');
      const member = await addTestMember(hearth, g);
      expectError(
        await call(hearth, member.token, 'GET', `/guilds/${g.id}/bans`),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it('an unknown ban is 10026; unbanning sends GUILD_BAN_REMOVE and MEMBER_BAN_REMOVE, then 10026', async () => {
      const outsider = await createPlayer(hearth);
      expectError(
        await call(hearth, moderator.token, 'GET', banPath(outsider.user.id)),
        404,
        10026,
        'Unknown Ban',
      );
      await call(hearth, moderator.token, 'PUT', banPath(outsider.user.id), {});
      const events = recordEvents(hearth);
      expect((await call(hearth, moderator.token, 'DELETE', banPath(outsider.user.id))).status).toBe(204);
      expect(events.of('GUILD_BAN_REMOVE')[0]!.data).toMatchObject({
        guild_id: guild.id,
        user: { id: outsider.user.id },
      });
      expect(events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data['action_type']).toBe(
        AuditLogEvents.MemberBanRemove,
      );
      expectError(
        await call(hearth, moderator.token, 'DELETE', banPath(outsider.user.id)),
        404,
        10026,
        'Unknown Ban',
      );
      events.stop();
    });
  });

  describe('Bulk Guild Ban', () => {
    it('needs BAN_MEMBERS and MANAGE_GUILD', async () => {
      const outsider = await createPlayer(hearth);
      expectError(
        await call(hearth, moderator.token, 'POST', `/guilds/${guild.id}/bulk-ban`, {
          user_ids: [outsider.user.id],
        }),
        403,
        50013,
        'Missing Permissions',
      );
    });

    it('answers banned and failed users; 200 ids hold, 201 are 50035', async () => {
      const target = await addTestMember(hearth, guild);
      const outsider = await createPlayer(hearth);
      const answer = await call(hearth, guild.owner.token, 'POST', `/guilds/${guild.id}/bulk-ban`, {
        user_ids: [target.id, outsider.user.id, UNKNOWN_ID],
        delete_message_seconds: 60,
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        banned_users: [target.id, outsider.user.id],
        failed_users: [UNKNOWN_ID],
      });
      const ids = Array.from({ length: GuildLimits.bulkBanMax + 1 }, (_, i) =>
        String(10n ** 17n + BigInt(i)),
      );
      const over = await call(hearth, guild.owner.token, 'POST', `/guilds/${guild.id}/bulk-ban`, {
        user_ids: ids,
      });
      expectError(over, 400, 50035, 'Invalid Form Body', {
        user_ids: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 200 or fewer in length.' }] },
      });
      const edge = await call(hearth, guild.owner.token, 'POST', `/guilds/${guild.id}/bulk-ban`, {
        user_ids: [...ids.slice(0, GuildLimits.bulkBanMax - 1), outsider.user.id],
      });
      // Every id but one is unknown and the last is already banned: nobody could be banned.
      expectError(edge, 400, 500000, 'Failed to ban users');
    });

    it('none banned is 500000 with a 400', async () => {
      const answer = await call(hearth, guild.owner.token, 'POST', `/guilds/${guild.id}/bulk-ban`, {
        user_ids: [guild.owner.id],
      });
      expectError(answer, 400, 500000, 'Failed to ban users');
    });
  });

  describe('@discordjs/core drives bans as a bot', () => {
    it('banUser, getMemberBan, getMemberBans, unbanUser', async () => {
      const bot = await addTestBot(hearth, guild);
      await grantTestRole(hearth, guild, P.BanMembers, [bot.botUserId], 2);
      const api = new API(new REST({ api: `${hearth.url}/api` }).setToken(bot.botToken));
      const target = await addTestMember(hearth, guild);
      await api.guilds.banUser(guild.id, target.id, { delete_message_seconds: 3600 }, { reason: 'core ban' });
      expect((await api.guilds.getMemberBan(guild.id, target.id)).reason).toBe('core ban');
      const bans = await api.guilds.getMemberBans(guild.id, { limit: 1000 });
      expect(bans.map((b) => b.user.id)).toContain(target.id);
      await api.guilds.unbanUser(guild.id, target.id);
      await expect(api.guilds.getMemberBan(guild.id, target.id)).rejects.toMatchObject({
        status: 404,
        code: 10026,
      });
      await expect(api.guilds.banUser(guild.id, moderator.id)).rejects.toMatchObject({
        status: 403,
        code: 50013,
      });
    });
  });
});
