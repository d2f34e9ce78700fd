import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayIntents, GatewayOpcodes, OverwriteTypes, PermissionFlags } from '@hearth/protocol';
import { ManualClock, MemoryBus, MemorySessionStore } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../../../test-support/services.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const { Guilds, GuildMembers, GuildModeration, GuildPresences } = GatewayIntents;

/** A text channel row written directly (setup only: the channels routes are another part's). */
function seedChannel(
  hearth: TestHearth,
  guild: TestGuild,
  name: string,
  overwrites: Array<{ id: string; type: number; allow: bigint; deny: bigint }> = [],
): Promise<string> {
  return seedTestChannel(hearth, guild.id, { name, overwrites });
}

/** The wire channel object a service would publish for a channel (what CHANNEL_* carries). */
function channelEvent(guild: TestGuild, id: string, overwrites: Array<Record<string, unknown>> = []) {
  return {
    id,
    type: 0,
    guild_id: guild.id,
    name: 'c',
    position: 0,
    permission_overwrites: overwrites,
  };
}

async function identify(hearth: TestHearth, token: string, d: Record<string, unknown> = {}) {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, properties: PROPERTIES, ...d } });
  await client.nextDispatch('READY');
  return client;
}

async function approve(hearth: TestHearth, game: TestGame, flags: string[]) {
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: flags });
}

/** Published last: a frame that proves every earlier event was delivered or dropped. */
function barrier(hearth: TestHearth, guild: TestGuild) {
  return hearth.bus.publish({
    type: 'GUILD_UPDATE',
    data: { id: guild.id, barrier: true },
    audience: { guildId: guild.id },
  });
}

describe('READY then GUILD_CREATE (gateway events: Ready, Guild Create)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  it('a bot with GUILDS gets READY listing its guilds unavailable, then one full GUILD_CREATE per guild', async () => {
    const guild = await createTestGuild(hearth, 'Hearthside');
    const game = await addTestBot(hearth, guild);
    const roleId = await grantTestRole(hearth, guild, PermissionFlags.SendMessages, [game.botUserId], 2);
    const channelId = await seedChannel(hearth, guild, 'general');
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: Guilds } });
    const ready = await client.nextDispatch('READY');
    expect((ready.d as { guilds: unknown }).guilds).toEqual([{ id: guild.id, unavailable: true }]);
    const created = await client.next();
    expect(created).toMatchObject({ op: 0, s: 2, t: 'GUILD_CREATE' });
    const d = created.d as Record<string, unknown>;
    expect(d).toMatchObject({
      id: guild.id,
      name: 'Hearthside',
      owner_id: guild.owner.id,
      unavailable: false,
      large: false,
      member_count: 2,
      emojis: [],
      stickers: [],
      threads: [],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    });
    expect(typeof d['joined_at']).toBe('string');
    expect((d['roles'] as Array<{ id: string }>).map((role) => role.id).toSorted()).toEqual(
      [guild.id, roleId].toSorted(),
    );
    expect(d['channels']).toEqual([
      expect.objectContaining({ id: channelId, name: 'general', type: 0, guild_id: guild.id }),
    ]);
    // Without GUILD_PRESENCES the members are the bot itself (and members in voice).
    expect(d['members']).toEqual([
      expect.objectContaining({ user: expect.objectContaining({ id: game.botUserId }), roles: [roleId] }),
    ]);
    await client.close();
  });

  it('with GUILD_PRESENCES and a guild under large_threshold, GUILD_CREATE lists every member', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const game = await addTestBot(hearth, guild);
    await approve(hearth, game, ['GatewayPresenceLimited']);
    const client = await identify(hearth, game.botToken, { intents: Guilds | GuildPresences });
    const created = await client.nextDispatch('GUILD_CREATE');
    const ids = (created.d as { members: Array<{ user: { id: string } }> }).members.map((m) => m.user.id);
    expect(ids.toSorted()).toEqual([guild.owner.id, member.id, game.botUserId].toSorted());
    await client.close();
  });

  it('with GUILD_PRESENCES, GUILD_CREATE carries the presences of the members who are not offline', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const game = await addTestBot(hearth, guild);
    await approve(hearth, game, ['GatewayPresenceLimited']);
    const online = await identify(hearth, member.token, {
      presence: { status: 'dnd', activities: [], since: null, afk: false },
    });
    await vi.waitFor(() => expect(hearth.services.presence.presenceOf(member.id).status).toBe('dnd'));
    const client = await identify(hearth, game.botToken, { intents: Guilds | GuildPresences });
    const created = await client.nextDispatch('GUILD_CREATE');
    expect((created.d as { presences: unknown[] }).presences).toEqual([
      { user: { id: member.id }, status: 'dnd', activities: [], client_status: { desktop: 'dnd' } },
    ]);
    await client.close();
    const other = await addTestBot(hearth, guild);
    const without = await identify(hearth, other.botToken, { intents: Guilds });
    expect(((await without.nextDispatch('GUILD_CREATE')).d as { presences: unknown[] }).presences).toEqual(
      [],
    );
    await Promise.all([without.close(), online.close()]);
  });

  it('a channel the bot cannot view is left out of GUILD_CREATE', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const visible = await seedChannel(hearth, guild, 'open');
    await seedChannel(hearth, guild, 'hidden', [
      { id: guild.id, type: OverwriteTypes.Role, allow: 0n, deny: PermissionFlags.ViewChannel },
    ]);
    const client = await identify(hearth, game.botToken, { intents: Guilds });
    const created = await client.nextDispatch('GUILD_CREATE');
    expect((created.d as { channels: Array<{ id: string }> }).channels.map((c) => c.id)).toEqual([visible]);
    await client.close();
  });

  it('a bot without GUILDS gets READY and no GUILD_CREATE', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const client = await identify(hearth, game.botToken, { intents: 0 });
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { applicationId: game.id } });
    expect(await client.next()).toMatchObject({ s: 2, t: 'BARRIER' });
    await client.close();
  });

  it('a user session keeps READY alone: no GUILD_CREATE follows', async () => {
    const guild = await createTestGuild(hearth);
    const client = await identify(hearth, guild.owner.token);
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { users: [guild.owner.id] } });
    expect(await client.next()).toMatchObject({ s: 2, t: 'BARRIER' });
    await client.close();
  });
});

describe('Guild events reach only sessions whose intents and permissions allow them', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  it('CHANNEL_CREATE of a channel the bot cannot view is not sent; one it can view is', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const client = await identify(hearth, game.botToken, { intents: Guilds });
    await client.nextDispatch('GUILD_CREATE');
    const hidden = [{ id: guild.id, type: 0, allow: '0', deny: PermissionFlags.ViewChannel.toString() }];
    const audience = { guildId: guild.id };
    await hearth.bus.publish({ type: 'CHANNEL_CREATE', data: channelEvent(guild, '1001', hidden), audience });
    await hearth.bus.publish({ type: 'CHANNEL_CREATE', data: channelEvent(guild, '1002'), audience });
    const next = await client.next();
    expect(next).toMatchObject({ t: 'CHANNEL_CREATE', d: { id: '1002' } });
    await client.close();
  });

  it('a member overwrite allowing VIEW_CHANNEL lets the channel through; the owner sees every channel', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const bot = await identify(hearth, game.botToken, { intents: Guilds });
    await bot.nextDispatch('GUILD_CREATE');
    const owner = await identify(hearth, guild.owner.token);
    const overwrites = [
      { id: guild.id, type: 0, allow: '0', deny: PermissionFlags.ViewChannel.toString() },
      { id: game.botUserId, type: 1, allow: PermissionFlags.ViewChannel.toString(), deny: '0' },
    ];
    await hearth.bus.publish({
      type: 'CHANNEL_UPDATE',
      data: channelEvent(guild, '2001', overwrites),
      audience: { guildId: guild.id },
    });
    expect(await bot.next()).toMatchObject({ t: 'CHANNEL_UPDATE', d: { id: '2001' } });
    expect(await owner.next()).toMatchObject({ t: 'CHANNEL_UPDATE', d: { id: '2001' } });
    await bot.close();
    await owner.close();
  });

  it('GUILD_AUDIT_LOG_ENTRY_CREATE needs GUILD_MODERATION and VIEW_AUDIT_LOG; a role update granting it takes effect at once', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const roleId = await grantTestRole(hearth, guild, 0n, [game.botUserId]);
    const client = await identify(hearth, game.botToken, { intents: Guilds | GuildModeration });
    await client.nextDispatch('GUILD_CREATE');
    const audience = { guildId: guild.id };
    const entry = (id: string) => ({ id, guild_id: guild.id, action_type: 1, user_id: guild.owner.id });
    await hearth.bus.publish({ type: 'GUILD_AUDIT_LOG_ENTRY_CREATE', data: entry('1'), audience });
    const role = { id: roleId, permissions: PermissionFlags.ViewAuditLog.toString() };
    await hearth.bus.publish({ type: 'GUILD_ROLE_UPDATE', data: { guild_id: guild.id, role }, audience });
    await hearth.bus.publish({ type: 'GUILD_AUDIT_LOG_ENTRY_CREATE', data: entry('2'), audience });
    expect(await client.next()).toMatchObject({ t: 'GUILD_ROLE_UPDATE' });
    expect(await client.next()).toMatchObject({ t: 'GUILD_AUDIT_LOG_ENTRY_CREATE', d: { id: '2' } });
    await client.close();
  });

  it('GUILD_MEMBER_* need the privileged GUILD_MEMBERS intent; GUILD_ROLE_* need GUILDS', async () => {
    const guild = await createTestGuild(hearth);
    const plain = await addTestBot(hearth, guild);
    const members = await addTestBot(hearth, guild);
    const onlyMembers = await addTestBot(hearth, guild);
    await approve(hearth, members, ['GatewayGuildMembersLimited']);
    await approve(hearth, onlyMembers, ['GatewayGuildMembersLimited']);
    const a = await identify(hearth, plain.botToken, { intents: Guilds });
    const b = await identify(hearth, members.botToken, { intents: Guilds | GuildMembers });
    const c = await identify(hearth, onlyMembers.botToken, { intents: GuildMembers });
    const audience = { guildId: guild.id };
    const user = { id: guild.owner.id };
    await hearth.bus.publish({
      type: 'GUILD_MEMBER_UPDATE',
      data: { guild_id: guild.id, user, roles: [] },
      audience,
    });
    await hearth.bus.publish({
      type: 'GUILD_ROLE_DELETE',
      data: { guild_id: guild.id, role_id: '9' },
      audience,
    });
    expect(await a.next((f) => f.t !== 'GUILD_CREATE')).toMatchObject({ t: 'GUILD_ROLE_DELETE' });
    expect(await b.next((f) => f.t !== 'GUILD_CREATE')).toMatchObject({ t: 'GUILD_MEMBER_UPDATE' });
    expect(await c.next()).toMatchObject({ s: 2, t: 'GUILD_MEMBER_UPDATE' });
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { applicationId: onlyMembers.id } });
    expect(await c.next()).toMatchObject({ s: 3, t: 'BARRIER' });
    await Promise.all([a.close(), b.close(), c.close()]);
  });
});

describe('Membership moves sessions (gateway events: Guild Create, Guild Delete)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  it('a bot installed while connected gets GUILD_CREATE, then the guild events that follow', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    const client = await identify(hearth, game.botToken, { intents: Guilds });
    await hearth.services.botInstalls.install({
      guildId: guild.id,
      applicationId: game.id,
      permissions: PermissionFlags.SendMessages,
      actorId: guild.owner.id,
    });
    const created = await client.nextDispatch('GUILD_CREATE');
    expect(created.d).toMatchObject({ id: guild.id, unavailable: false });
    await barrier(hearth, guild);
    expect(await client.next()).toMatchObject({ t: 'GUILD_UPDATE', d: { barrier: true } });
    await client.close();
  });

  it('a removed member gets GUILD_DELETE {id} without unavailable and no more of the guild events', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const client = await identify(hearth, game.botToken, { intents: Guilds });
    await client.nextDispatch('GUILD_CREATE');
    await hearth.bus.publish({
      type: 'GUILD_MEMBER_REMOVE',
      data: { guild_id: guild.id, user: { id: game.botUserId } },
      audience: { guildId: guild.id },
    });
    expect(await client.next()).toEqual({ op: 0, s: 3, t: 'GUILD_DELETE', d: { id: guild.id } });
    await barrier(hearth, guild);
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { applicationId: game.id } });
    expect(await client.next()).toMatchObject({ s: 4, t: 'BARRIER' });
    await client.close();
  });

  it('a banned member gets GUILD_DELETE, and a deleted guild leaves every session', async () => {
    const guild = await createTestGuild(hearth);
    const banned = await addTestBot(hearth, guild);
    const staying = await addTestBot(hearth, guild);
    const a = await identify(hearth, banned.botToken, { intents: Guilds | GuildModeration });
    const b = await identify(hearth, staying.botToken, { intents: Guilds });
    await a.nextDispatch('GUILD_CREATE');
    await b.nextDispatch('GUILD_CREATE');
    const audience = { guildId: guild.id };
    await hearth.bus.publish({
      type: 'GUILD_BAN_ADD',
      data: { guild_id: guild.id, user: { id: banned.botUserId } },
      audience,
    });
    expect(await a.next()).toEqual({ op: 0, s: 3, t: 'GUILD_DELETE', d: { id: guild.id } });
    await hearth.bus.publish({ type: 'GUILD_DELETE', data: { id: guild.id }, audience });
    expect(await b.next()).toEqual({ op: 0, s: 3, t: 'GUILD_DELETE', d: { id: guild.id } });
    await barrier(hearth, guild);
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { users: [staying.botUserId] } });
    expect(await b.next()).toMatchObject({ s: 4, t: 'BARRIER' });
    await Promise.all([a.close(), b.close()]);
  });
});

describe('Request Guild Members answers real member objects (gateway: Request Guild Members)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  it('members carry their roles and nick', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const game = await addTestBot(hearth, guild);
    const roleId = await grantTestRole(hearth, guild, 0n, [member.id]);
    await hearth.storage.db
      .updateTable('guild_members')
      .set({ nick: 'Sparks' })
      .where('user_id', '=', member.id)
      .execute();
    const client = await identify(hearth, game.botToken, { intents: Guilds });
    client.send({ op: 8, d: { guild_id: guild.id, user_ids: [member.id], nonce: 'x' } });
    const chunk = await client.nextDispatch('GUILD_MEMBERS_CHUNK');
    expect(chunk.d).toEqual({
      guild_id: guild.id,
      members: [
        expect.objectContaining({
          user: expect.objectContaining({ id: member.id }),
          nick: 'Sparks',
          roles: [roleId],
          pending: false,
          communication_disabled_until: null,
        }),
      ],
      chunk_index: 0,
      chunk_count: 1,
      nonce: 'x',
    });
    await client.close();
  });
});

const directory = mkdtempSync(join(tmpdir(), 'hearth-guild-nodes-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const withRedis = await redisAvailable();

function twoNodes(name: string, backend: 'memory' | 'redis') {
  const nodes: TestHearth[] = [];
  const bus = new MemoryBus();
  const sessions = new MemorySessionStore();
  beforeAll(async () => {
    const databaseUrl = `sqlite:${join(directory, `${name}.sqlite`)}`;
    const prefix = redisPrefix();
    const clock = new ManualClock();
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await startHearth(
          {
            databaseUrl,
            workerId: i,
            ...(backend === 'redis' ? { redisUrl: REDIS_URL, redisPrefix: prefix } : {}),
          },
          clock,
          backend === 'memory' ? { shared: { bus, sessions } } : {},
        ),
      );
    }
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await bus.close();
  });

  it('a bot installed on node A gets GUILD_CREATE on node B, and channel events filtered there', async () => {
    const [a, b] = nodes as [TestHearth, TestHearth];
    const guild = await createTestGuild(a);
    const game = await createGame(a);
    const client = await identify(b, game.botToken, { intents: Guilds });
    await a.services.botInstalls.install({
      guildId: guild.id,
      applicationId: game.id,
      permissions: 0n,
      actorId: guild.owner.id,
    });
    expect(await client.nextDispatch('GUILD_CREATE')).toMatchObject({ d: { id: guild.id } });
    const hidden = [{ id: guild.id, type: 0, allow: '0', deny: PermissionFlags.ViewChannel.toString() }];
    const audience = { guildId: guild.id };
    await a.bus.publish({ type: 'CHANNEL_CREATE', data: channelEvent(guild, '3001', hidden), audience });
    await a.bus.publish({ type: 'CHANNEL_CREATE', data: channelEvent(guild, '3002'), audience });
    expect(await client.nextDispatch('CHANNEL_CREATE')).toMatchObject({ d: { id: '3002' } });
    await client.close();
  }, 30_000);
}

describe('Guild events across nodes: in-process bus', () => {
  twoNodes('memory', 'memory');
});

describe.runIf(withRedis)('Guild events across nodes: Redis bus', () => {
  twoNodes('redis', 'redis');
});
