import { ApplicationFlags, AuditLogEvents, GatewayOpcodes, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { requiredKeys } from '../../../../test-support/openapi.js';
import {
  call,
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  recordEvents,
  UNKNOWN_ROLE,
} from '../guilds/core-helpers.js';

const { CreateInstantInvite, ManageChannels, ManageGuild, ManageRoles, ViewChannel, ViewAuditLog } =
  PermissionFlags;
const UNKNOWN_INVITE = { code: 10006, message: 'Unknown Invite' };
const HOUR = 60 * 60 * 1000;
const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

let hearth: TestHearth;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock('2026-05-01T00:00:00Z');
  hearth = await startHearth({}, clock);
});
afterAll(() => hearth.close());

interface Place {
  guild: TestGuild;
  channelId: string;
}

async function place(): Promise<Place> {
  const guild = await createTestGuild(hearth);
  const channelId = await seedTestChannel(hearth, guild.id, { name: 'lobby' });
  return { guild, channelId };
}

async function player(): Promise<{ id: string; token: string }> {
  const created = await createPlayer(hearth);
  return { id: created.user.id, token: created.token };
}

function createInvite(auth: string, channelId: string, body: unknown = {}) {
  return call(hearth, `/channels/${channelId}/invites`, { auth, method: 'POST', body });
}

async function inviteCode(auth: string, channelId: string, body: unknown = {}): Promise<string> {
  const { status, body: invite } = await createInvite(auth, channelId, body);
  expect(status).toBe(200);
  return (invite as { code: string }).code;
}

function accept(auth: string, code: string) {
  return call(hearth, `/invites/${code}`, { auth, method: 'POST' });
}

function targetUsersForm(csv: string, fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.set(key, value);
  form.set('target_users_file', new Blob([csv], { type: 'text/csv' }), 'users.csv');
  return form;
}

async function isMember(guild: TestGuild, userId: string): Promise<boolean> {
  const row = await hearth.storage.db
    .selectFrom('guild_members')
    .select('user_id')
    .where('guild_id', '=', guild.id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

describe('Create Channel Invite (POST /channels/{channel.id}/invites)', () => {
  it('answers the invite with its metadata: 24 hours and unlimited uses by default', async () => {
    const { guild, channelId } = await place();
    const { status, body } = await createInvite(guild.owner.token, channelId, {});
    expect(status).toBe(200);
    const invite = body as Record<string, unknown>;
    expect(requiredKeys('GuildInviteResponse').filter((key) => !(key in invite))).toEqual([]);
    expect(invite).toMatchObject({
      type: 0,
      code: expect.stringMatching(/^[A-Za-z0-9]{10}$/),
      guild_id: guild.id,
      guild: { id: guild.id },
      channel: { id: channelId, type: 0, name: 'lobby' },
      inviter: { id: guild.owner.id },
      uses: 0,
      max_uses: 0,
      max_age: 86_400,
      temporary: false,
      created_at: new Date(clock.now()).toISOString(),
      expires_at: new Date(clock.now() + 24 * HOUR).toISOString(),
    });
    const log = await call(
      hearth,
      `/guilds/${guild.id}/audit-logs?action_type=${AuditLogEvents.InviteCreate}`,
      {
        auth: guild.owner.token,
      },
    );
    expect((log.body as { audit_log_entries: unknown[] }).audit_log_entries).toEqual([
      expect.objectContaining({
        user_id: guild.owner.id,
        action_type: 40,
        changes: expect.arrayContaining([
          { key: 'code', new_value: invite['code'] },
          { key: 'channel_id', new_value: channelId },
          { key: 'max_age', new_value: 86_400 },
        ]),
      }),
    ]);
  });

  it('max_age 0 never expires; unique: false answers the same invite again, unique: true a new one', async () => {
    const { guild, channelId } = await place();
    const auth = guild.owner.token;
    const first = await createInvite(auth, channelId, { max_age: 0, max_uses: 5 });
    expect(first.body).toMatchObject({ max_age: 0, max_uses: 5, expires_at: null });
    const again = await createInvite(auth, channelId, { max_age: 0, max_uses: 5 });
    expect((again.body as { code: string }).code).toBe((first.body as { code: string }).code);
    const unique = await createInvite(auth, channelId, { max_age: 0, max_uses: 5, unique: true });
    expect((unique.body as { code: string }).code).not.toBe((first.body as { code: string }).code);
  });

  it('refuses max_age 604801 and max_uses 101 with 50035 at each field', async () => {
    const { guild, channelId } = await place();
    const auth = guild.owner.token;
    const tooOld = await createInvite(auth, channelId, { max_age: 604_801 });
    expect(tooOld.status).toBe(400);
    expect(tooOld.body).toMatchObject(invalidForm({ max_age: { _errors: [expect.any(Object)] } }));
    const tooMany = await createInvite(auth, channelId, { max_uses: 101 });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject(invalidForm({ max_uses: { _errors: [expect.any(Object)] } }));
    const wrongType = await createInvite(auth, channelId, { temporary: 'yes', target_type: 7 });
    expect(wrongType.status).toBe(400);
    expect(Object.keys((wrongType.body as { errors: object }).errors).sort()).toEqual([
      'target_type',
      'temporary',
    ]);
    expect((await createInvite(auth, channelId, { max_age: 604_800, max_uses: 100 })).status).toBe(200);
  });

  it('needs CREATE_INSTANT_INVITE in the channel (50013), sight of it (50001), membership (50001)', async () => {
    const { guild, channelId } = await place();
    const member = await addTestMember(hearth, guild);
    await setEveryonePermissions(hearth, guild, ViewChannel);
    expect(await createInvite(member.token, channelId)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    await setEveryonePermissions(hearth, guild, 0n);
    expect(await createInvite(member.token, channelId)).toEqual({ status: 403, body: MISSING_ACCESS });
    const stranger = await player();
    expect(await createInvite(stranger.token, channelId)).toEqual({ status: 403, body: MISSING_ACCESS });
    await setEveryonePermissions(hearth, guild, ViewChannel | CreateInstantInvite);
    expect((await createInvite(member.token, channelId)).status).toBe(200);
  });

  it('answers 10003 for an unknown channel and 50024 for a category', async () => {
    const { guild } = await place();
    const missing = await createInvite(guild.owner.token, '123456789012345678');
    expect(missing).toEqual({ status: 404, body: { code: 10003, message: 'Unknown Channel' } });
    const category = await seedTestChannel(hearth, guild.id, { type: 4 });
    const refused = await createInvite(guild.owner.token, category);
    expect(refused).toMatchObject({ status: 400, body: { code: 50024 } });
  });

  it('role_ids: MANAGE_ROLES and roles below the caller; unknown roles are 10011', async () => {
    const { guild, channelId } = await place();
    const manager = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, ViewChannel | CreateInstantInvite | ManageRoles, [manager.id], 5);
    const low = await grantTestRole(hearth, guild, 0n, [], 2);
    const high = await grantTestRole(hearth, guild, 0n, [], 9);
    const ok = await createInvite(manager.token, channelId, { role_ids: [low] });
    expect(ok.status).toBe(200);
    expect((ok.body as { roles: unknown[] }).roles).toEqual([
      {
        id: low,
        name: expect.any(String),
        position: 2,
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        icon: null,
        unicode_emoji: null,
      },
    ]);
    expect(await createInvite(manager.token, channelId, { role_ids: [high] })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(await createInvite(manager.token, channelId, { role_ids: ['999999999999999999'] })).toEqual({
      status: 404,
      body: UNKNOWN_ROLE,
    });
    const inviter = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, ViewChannel | CreateInstantInvite, [inviter.id], 8);
    expect(await createInvite(inviter.token, channelId, { role_ids: [low] })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });

  it('target_type 1 needs target_user_id, 2 needs an EMBEDDED target_application_id', async () => {
    const { guild, channelId } = await place();
    const auth = guild.owner.token;
    const noUser = await createInvite(auth, channelId, { target_type: 1 });
    expect(noUser.body).toMatchObject(
      invalidForm({ target_user_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } }),
    );
    const streamer = await player();
    const stream = await createInvite(auth, channelId, { target_type: 1, target_user_id: streamer.id });
    expect(stream.body).toMatchObject({ target_type: 1, target_user: { id: streamer.id } });
    const game = await addTestBot(hearth, guild);
    const notEmbedded = await createInvite(auth, channelId, {
      target_type: 2,
      target_application_id: game.id,
    });
    expect(notEmbedded.body).toMatchObject(invalidForm({ target_application_id: expect.any(Object) }));
    await hearth.storage.db
      .updateTable('applications')
      .set({ flags: Number(ApplicationFlags.Embedded) })
      .where('id', '=', game.id)
      .execute();
    const embedded = await createInvite(auth, channelId, { target_type: 2, target_application_id: game.id });
    expect(embedded).toMatchObject({
      status: 200,
      body: { target_type: 2, target_application: { id: game.id, flags: Number(ApplicationFlags.Embedded) } },
    });
    const resolved = await call(hearth, `/invites/${(embedded.body as { code: string }).code}`);
    expect(resolved.body).toMatchObject({ target_application: { id: game.id } });
  });

  it('a multipart body carries fields and the target users file; a bad line is 50035 naming its number', async () => {
    const { guild, channelId } = await place();
    const [a, b] = [await player(), await player()];
    const form = targetUsersForm(`user_id\n${a.id}\n${b.id}\n${a.id}\n`, {
      max_uses: '3',
      temporary: 'false',
    });
    const created = await call(hearth, `/channels/${channelId}/invites`, {
      auth: guild.owner.token,
      method: 'POST',
      body: form,
    });
    expect(created).toMatchObject({ status: 200, body: { max_uses: 3, temporary: false } });
    const code = (created.body as { code: string }).code;
    const csv = await hearth.api(`/invites/${code}/target-users`, { auth: guild.owner.token });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(await csv.text()).toBe(
      `user_id\n${[a.id, b.id].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)).join('\n')}\n`,
    );

    const bad = await call(hearth, `/channels/${channelId}/invites`, {
      auth: guild.owner.token,
      method: 'POST',
      body: targetUsersForm(`user_id\n${a.id}\nnot-an-id\n\n12x\n`),
    });
    expect(bad).toEqual({
      status: 400,
      body: invalidForm({
        target_users_file: {
          _errors: [
            { code: 'INVALID_USER_ID', message: 'Line 3: invalid user ID - not-an-id' },
            { code: 'INVALID_USER_ID', message: 'Line 5: invalid user ID - 12x' },
          ],
        },
      }),
    });
    // payload_json with the file beside it
    const withPayload = targetUsersForm(`${b.id}\n`, { payload_json: JSON.stringify({ max_age: 600 }) });
    const second = await call(hearth, `/channels/${channelId}/invites`, {
      auth: guild.owner.token,
      method: 'POST',
      body: withPayload,
    });
    expect(second).toMatchObject({ status: 200, body: { max_age: 600 } });
  });
});

describe('Get Channel Invites and Get Guild Invites', () => {
  it('list the usable invites with metadata; MANAGE_CHANNELS and MANAGE_GUILD', async () => {
    const { guild, channelId } = await place();
    const other = await seedTestChannel(hearth, guild.id, { name: 'other' });
    const a = await inviteCode(guild.owner.token, channelId, { unique: true });
    const b = await inviteCode(guild.owner.token, other, { unique: true });
    const expired = await inviteCode(guild.owner.token, channelId, { unique: true, max_age: 60 });
    clock.advance(61_000);
    const channelList = await call(hearth, `/channels/${channelId}/invites`, { auth: guild.owner.token });
    expect(channelList.status).toBe(200);
    expect((channelList.body as Array<{ code: string }>).map((invite) => invite.code)).toEqual([a]);
    expect(channelList.body).toEqual([expect.objectContaining({ uses: 0, max_uses: 0, temporary: false })]);
    const guildList = await call(hearth, `/guilds/${guild.id}/invites`, { auth: guild.owner.token });
    expect((guildList.body as Array<{ code: string }>).map((invite) => invite.code).sort()).toEqual(
      [a, b].sort(),
    );
    expect((guildList.body as Array<{ code: string }>).some((invite) => invite.code === expired)).toBe(false);

    const member = await addTestMember(hearth, guild);
    await setEveryonePermissions(hearth, guild, ViewChannel);
    expect(await call(hearth, `/channels/${channelId}/invites`, { auth: member.token })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(await call(hearth, `/guilds/${guild.id}/invites`, { auth: member.token })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, ManageChannels | ManageGuild, [member.id]);
    expect((await call(hearth, `/guilds/${guild.id}/invites`, { auth: member.token })).status).toBe(200);
    // Another guild's owner sees nothing of this one.
    const elsewhere = await place();
    expect(await call(hearth, `/guilds/${guild.id}/invites`, { auth: elsewhere.guild.owner.token })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
  });
});

describe('Get Invite (GET /invites/{code})', () => {
  it('answers without credentials; with_counts adds the approximate counts; unknown codes are 10006', async () => {
    const { guild, channelId } = await place();
    await addTestMember(hearth, guild);
    const code = await inviteCode(guild.owner.token, channelId);
    const plain = await call(hearth, `/invites/${code}`);
    expect(plain.status).toBe(200);
    expect(plain.body).not.toHaveProperty('uses');
    expect(plain.body).not.toHaveProperty('approximate_member_count');
    const counted = await call(hearth, `/invites/${code}?with_counts=true&with_expiration=true`);
    expect(counted.body).toMatchObject({
      code,
      guild: { id: guild.id },
      approximate_member_count: 2,
      approximate_presence_count: 0,
    });
    expect(await call(hearth, '/invites/doesNotExist')).toEqual({ status: 404, body: UNKNOWN_INVITE });
  });

  it('an expired code is 10006 once the clock passes expires_at', async () => {
    const { guild, channelId } = await place();
    const code = await inviteCode(guild.owner.token, channelId, { max_age: 3600 });
    clock.advance(3599_000);
    expect((await call(hearth, `/invites/${code}`)).status).toBe(200);
    clock.advance(1000);
    expect(await call(hearth, `/invites/${code}`)).toEqual({ status: 404, body: UNKNOWN_INVITE });
    const joiner = await player();
    expect(await accept(joiner.token, code)).toEqual({ status: 404, body: UNKNOWN_INVITE });
  });
});

describe('Delete Invite (DELETE /invites/{code})', () => {
  it('MANAGE_CHANNELS or MANAGE_GUILD; answers the invite, audits INVITE_DELETE, publishes INVITE_DELETE', async () => {
    const { guild, channelId } = await place();
    const code = await inviteCode(guild.owner.token, channelId);
    const member = await addTestMember(hearth, guild);
    await setEveryonePermissions(hearth, guild, ViewChannel);
    const del = (auth: string) => call(hearth, `/invites/${code}`, { auth, method: 'DELETE' });
    expect(await del(member.token)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    const outsider = (await place()).guild.owner;
    expect(await del(outsider.token)).toEqual({ status: 403, body: MISSING_ACCESS });
    await grantTestRole(hearth, guild, ManageGuild, [member.id]);
    const events = recordEvents(hearth, guild.id);
    const deleted = await call(hearth, `/invites/${code}`, {
      auth: member.token,
      method: 'DELETE',
      headers: { 'x-audit-log-reason': 'spam' },
    });
    expect(deleted).toMatchObject({ status: 200, body: { code, uses: 0 } });
    expect(await events.next('INVITE_DELETE')).toEqual({ channel_id: channelId, guild_id: guild.id, code });
    events.stop();
    expect(await del(guild.owner.token)).toEqual({ status: 404, body: UNKNOWN_INVITE });
    const log = await call(
      hearth,
      `/guilds/${guild.id}/audit-logs?action_type=${AuditLogEvents.InviteDelete}`,
      {
        auth: guild.owner.token,
      },
    );
    expect((log.body as { audit_log_entries: unknown[] }).audit_log_entries).toEqual([
      expect.objectContaining({
        user_id: member.id,
        action_type: 42,
        reason: 'spam',
        changes: expect.arrayContaining([{ key: 'code', old_value: code }]),
      }),
    ]);
  });
});

describe('Accept Invite (POST /invites/{code}, user sessions)', () => {
  it('joins the guild with the invite roles, counts the use, GUILD_MEMBER_ADD; a member again spends none', async () => {
    const { guild, channelId } = await place();
    const role = await grantTestRole(hearth, guild, 0n, [], 1);
    const code = await inviteCode(guild.owner.token, channelId, { role_ids: [role], max_uses: 5 });
    const joiner = await player();
    const events = recordEvents(hearth, guild.id);
    const joined = await accept(joiner.token, code);
    expect(joined).toMatchObject({ status: 200, body: { code, guild: { id: guild.id }, new_member: true } });
    const added = await events.next('GUILD_MEMBER_ADD');
    expect(added).toMatchObject({ guild_id: guild.id, user: { id: joiner.id }, roles: [role] });
    events.stop();
    const again = await accept(joiner.token, code);
    expect(again).toMatchObject({ status: 200, body: { new_member: false } });
    const [listed] = (await call(hearth, `/channels/${channelId}/invites`, { auth: guild.owner.token }))
      .body as Array<{ uses: number }>;
    expect(listed?.uses).toBe(1);
  });

  it("the joining user's gateway sessions get the guild's GUILD_CREATE", async () => {
    const { guild, channelId } = await place();
    const code = await inviteCode(guild.owner.token, channelId);
    const joiner = await player();
    const client = await GatewayClient.connect(hearth.url);
    try {
      await client.nextOp(GatewayOpcodes.Hello);
      client.send({ op: 2, d: { token: joiner.token, properties: PROPERTIES } });
      await client.nextDispatch('READY');
      expect((await accept(joiner.token, code)).status).toBe(200);
      const created = await client.nextDispatch('GUILD_CREATE');
      expect(created.d).toMatchObject({
        id: guild.id,
        channels: [expect.objectContaining({ id: channelId })],
      });
    } finally {
      await client.close();
    }
  });

  it('a used-up code is 10006, and the invite is gone with INVITE_DELETE at its last use', async () => {
    const { guild, channelId } = await place();
    const code = await inviteCode(guild.owner.token, channelId, { max_uses: 1 });
    const events = recordEvents(hearth, guild.id);
    expect((await accept((await player()).token, code)).status).toBe(200);
    expect(await events.next('INVITE_DELETE')).toMatchObject({ code });
    events.stop();
    expect(await accept((await player()).token, code)).toEqual({ status: 404, body: UNKNOWN_INVITE });
  });

  it('refuses a banned user (40007), a user the target users file leaves out (10006), bots (20001), paused invites (50001)', async () => {
    const { guild, channelId } = await place();
    const [allowed, left, banned] = [await player(), await player(), await player()];
    await hearth.storage.db
      .insertInto('guild_bans')
      .values({ guild_id: guild.id, user_id: banned.id, reason: null, created_at: clock.now() })
      .execute();
    const open = await inviteCode(guild.owner.token, channelId);
    expect(await accept(banned.token, open)).toEqual({
      status: 403,
      body: { code: 40007, message: 'The user is banned from this guild.' },
    });
    expect(await isMember(guild, banned.id)).toBe(false);
    const created = await call(hearth, `/channels/${channelId}/invites`, {
      auth: guild.owner.token,
      method: 'POST',
      body: targetUsersForm(`user_id\n${allowed.id}\n`),
    });
    const code = (created.body as { code: string }).code;
    expect(await accept(left.token, code)).toEqual({ status: 404, body: UNKNOWN_INVITE });
    expect(await isMember(guild, left.id)).toBe(false);
    expect((await accept(allowed.token, code)).status).toBe(200);
    expect(await isMember(guild, allowed.id)).toBe(true);
    const bot = await addTestBot(hearth, guild);
    expect(await accept(`Bot ${bot.botToken}`, open)).toMatchObject({ status: 403, body: { code: 20001 } });
    await hearth.storage.db
      .updateTable('guilds')
      .set({ features: JSON.stringify(['INVITES_DISABLED']) })
      .where('id', '=', guild.id)
      .execute();
    const late = await player();
    expect(await accept(late.token, open)).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(await isMember(guild, late.id)).toBe(false);
  });

  it('a temporary membership ends when the member disconnects, unless a role was given since', async () => {
    const { guild, channelId } = await place();
    const code = await inviteCode(guild.owner.token, channelId, { temporary: true });
    const [brief, kept] = [await player(), await player()];
    for (const user of [brief, kept]) expect((await accept(user.token, code)).status).toBe(200);
    await grantTestRole(hearth, guild, 0n, [kept.id]);
    const events = recordEvents(hearth, guild.id);
    for (const user of [kept, brief]) {
      const client = await GatewayClient.connect(hearth.url);
      await client.nextOp(GatewayOpcodes.Hello);
      client.send({ op: 2, d: { token: user.token, properties: PROPERTIES } });
      await client.nextDispatch('READY');
      await client.close();
    }
    expect(await events.next('GUILD_MEMBER_REMOVE')).toMatchObject({ user: { id: brief.id } });
    events.stop();
    const removed = events.events.filter((event) => event.type === 'GUILD_MEMBER_REMOVE');
    expect(removed.map((event) => (event.data['user'] as { id: string }).id)).toEqual([brief.id]);
    expect(await isMember(guild, brief.id)).toBe(false);
    expect(await isMember(guild, kept.id)).toBe(true);
  });
});

describe('InvitesService.createInvite (what other domains call: a lobby channel invite)', () => {
  it('a single-use, one-hour invite for one user: only that user joins, once, within the hour', async () => {
    const { guild, channelId } = await place();
    const [target, other] = [await player(), await player()];
    const invite = await hearth.services.invites.createInvite({
      channelId,
      inviterId: guild.owner.id,
      maxAge: 3600,
      maxUses: 1,
      unique: true,
      targetUserIds: [target.id],
    });
    expect(invite).toMatchObject({
      max_age: 3600,
      max_uses: 1,
      expires_at: new Date(clock.now() + HOUR).toISOString(),
    });
    expect(await accept(other.token, invite.code)).toEqual({ status: 404, body: UNKNOWN_INVITE });
    expect((await accept(target.token, invite.code)).status).toBe(200);
    expect(await call(hearth, `/invites/${invite.code}`)).toEqual({ status: 404, body: UNKNOWN_INVITE });
  });
});

describe('Target users (GET/PUT /invites/{code}/target-users, job-status)', () => {
  it('PUT replaces the list (inviter or MANAGE_GUILD); the job is COMPLETED with the count', async () => {
    const { guild, channelId } = await place();
    const code = await inviteCode(guild.owner.token, channelId, { unique: true });
    const status = () =>
      call(hearth, `/invites/${code}/target-users/job-status`, { auth: guild.owner.token });
    expect((await status()).body).toEqual({
      status: 0,
      total_users: 0,
      processed_users: 0,
      created_at: null,
      completed_at: null,
      error_message: null,
    });
    const [a, b] = [await player(), await player()];
    const put = await hearth.api(`/invites/${code}/target-users`, {
      auth: guild.owner.token,
      method: 'PUT',
      body: targetUsersForm(`${a.id}\r\n${b.id}\r\n`),
    });
    expect(put.status).toBe(204);
    expect((await status()).body).toMatchObject({
      status: 2,
      total_users: 2,
      processed_users: 2,
      error_message: null,
    });
    const member = await addTestMember(hearth, guild);
    const refused = await call(hearth, `/invites/${code}/target-users`, {
      auth: member.token,
      method: 'PUT',
      body: targetUsersForm(`${a.id}\n`),
    });
    expect(refused).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await call(hearth, `/invites/${code}/target-users`, { auth: member.token })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, ViewAuditLog, [member.id]);
    expect((await hearth.api(`/invites/${code}/target-users`, { auth: member.token })).status).toBe(200);
    const badFile = await call(hearth, `/invites/${code}/target-users`, {
      auth: guild.owner.token,
      method: 'PUT',
      body: targetUsersForm('user_id\n-5\n'),
    });
    expect(badFile).toEqual({
      status: 400,
      body: invalidForm({
        target_users_file: {
          _errors: [{ code: 'INVALID_USER_ID', message: 'Line 2: invalid user ID - -5' }],
        },
      }),
    });
  });
});
