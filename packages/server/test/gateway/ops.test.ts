import { GatewayIntents, GatewayOpcodes, IDENTIFY_WINDOW_MS } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { addTestBot, createTestGuild, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

/**
 * Every opcode a client may send (DOCS opcodes and status codes; PROTOCOL.md §D.2, lobby ops §A): each is
 * acted on or ignored as the platform does, and none closes a session as not served; an opcode the
 * interface does not define still closes with 4001. Op 31 answers SOUNDBOARD_SOUNDS per guild asked for.
 */

const PROPERTIES = { os: 'linux', browser: 'hearth-tests', device: 'hearth-tests' };
const ACK = { op: 11, d: null, s: null, t: null };
const clock = new ManualClock('2026-03-02T12:00:00Z');

let hearth: TestHearth;
let guild: TestGuild;
let second: TestGuild;
const clients: GatewayClient[] = [];

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  guild = await createTestGuild(hearth, 'Ops Hall');
  second = await createTestGuild(hearth, 'Ops Annex');
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(() => hearth.close());

async function hello(): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  clients.push(client);
  await client.nextOp(GatewayOpcodes.Hello);
  return client;
}

/** A bot of both guilds past READY and its two GUILD_CREATEs (one Identify per 5 s window: the clock moves). */
async function botSession(): Promise<{ client: GatewayClient; botUserId: string; token: string }> {
  const bot = await addTestBot(hearth, guild);
  await hearth.services.guilds.addMember(second.id, bot.botUserId);
  clock.advance(IDENTIFY_WINDOW_MS);
  const client = await hello();
  client.send({
    op: GatewayOpcodes.Identify,
    d: { token: bot.botToken, properties: PROPERTIES, intents: GatewayIntents.Guilds },
  });
  await client.nextDispatch('READY');
  await client.nextDispatch('GUILD_CREATE');
  await client.nextDispatch('GUILD_CREATE');
  return { client, botUserId: bot.botUserId, token: bot.botToken };
}

/** The session still serves: a heartbeat is ACKed (dispatches on the way are passed over). */
async function expectServing(client: GatewayClient): Promise<void> {
  client.send({ op: GatewayOpcodes.Heartbeat, d: null });
  expect(await client.nextOp(GatewayOpcodes.HeartbeatAck)).toEqual(ACK);
  expect(client.socket.readyState).toBe(client.socket.OPEN);
}

describe('every client opcode is acted on or ignored; none closes the session', () => {
  it('ops 1, 3, 4, 8, 17, 31, 42 and 43 with valid payloads, one after another on one session', async () => {
    const { client, botUserId } = await botSession();
    const lobbyId = '1234567890123456789';
    const sent: Array<[number, unknown]> = [
      [GatewayOpcodes.Heartbeat, null],
      [GatewayOpcodes.PresenceUpdate, { since: null, activities: [], status: 'idle', afk: false }],
      [
        GatewayOpcodes.VoiceStateUpdate,
        { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false },
      ],
      [GatewayOpcodes.RequestGuildMembers, { guild_id: guild.id, user_ids: [botUserId], nonce: 'ops' }],
      [GatewayOpcodes.LobbyVoiceStates, [{ lobby_id: lobbyId, self_mute: false, self_deaf: false }]],
      [GatewayOpcodes.RequestSoundboardSounds, { guild_ids: [guild.id] }],
      [GatewayOpcodes.LobbyVoiceServerPing, { lobby_id: lobbyId }],
      [GatewayOpcodes.RequestChannelInfo, { guild_id: guild.id, fields: ['status', 'voice_start_time'] }],
    ];
    for (const [op, d] of sent) {
      client.send({ op, d });
      await expectServing(client);
    }
    // What was acted on answered: the members chunk and the soundboard list.
    const dispatched = client.frames.filter((frame) => frame.op === 0).map((frame) => frame.t);
    expect(dispatched).toContain('GUILD_MEMBERS_CHUNK');
    expect(dispatched).toContain('SOUNDBOARD_SOUNDS');
  });

  it('ops 2 and 6 start and resume a session; the resumed session still serves', async () => {
    const { client, token } = await botSession();
    const ready = client.frames.find((frame) => frame.t === 'READY')!;
    const { session_id } = ready.d as { session_id: string };
    const seq = Math.max(...client.frames.map((frame) => frame.s ?? 0));
    await client.close(4000);
    const resumed = await hello();
    resumed.send({ op: GatewayOpcodes.Resume, d: { token: `Bot ${token}`, session_id, seq } });
    await resumed.nextDispatch('RESUMED');
    await expectServing(resumed);
  });

  it.each([
    [5, 'not used'],
    [36, 'not defined'],
    [37, 'not defined'],
    [99, 'not defined'],
  ])('op %i (%s) still closes with 4001 Unknown opcode', async (op) => {
    const { client } = await botSession();
    client.send({ op, d: {} });
    expect(await client.waitClose()).toEqual({ code: 4001, reason: 'Unknown opcode' });
  });
});

describe('Request Soundboard Sounds (op 31)', () => {
  it('answers one SOUNDBOARD_SOUNDS per guild of the session asked for, each once; Hearth has no sounds', async () => {
    const { client } = await botSession();
    const unknown = '1234567890123456789';
    client.send({
      op: GatewayOpcodes.RequestSoundboardSounds,
      d: { guild_ids: [second.id, unknown, guild.id, second.id] },
    });
    client.send({ op: GatewayOpcodes.Heartbeat, d: null });
    const first = await client.next();
    const next = await client.next();
    expect([first, next]).toEqual([
      expect.objectContaining({
        op: 0,
        t: 'SOUNDBOARD_SOUNDS',
        d: { guild_id: second.id, soundboard_sounds: [] },
      }),
      expect.objectContaining({
        op: 0,
        t: 'SOUNDBOARD_SOUNDS',
        d: { guild_id: guild.id, soundboard_sounds: [] },
      }),
    ]);
    // Nothing for the guild the bot is not in, nor a second time for the repeated one.
    expect(await client.next()).toEqual(ACK);
  });

  it('an empty list answers nothing and keeps the session', async () => {
    const { client } = await botSession();
    client.send({ op: GatewayOpcodes.RequestSoundboardSounds, d: { guild_ids: [] } });
    client.send({ op: GatewayOpcodes.Heartbeat, d: null });
    expect(await client.next()).toEqual(ACK);
  });

  it.each([
    ['no d', null],
    ['no guild_ids', {}],
    ['guild_ids not a list', { guild_ids: 'all' }],
    ['an id that is no snowflake', { guild_ids: ['general'] }],
  ])('closes with 4002 Decode error for %s', async (_case, d) => {
    const { client } = await botSession();
    client.send({ op: GatewayOpcodes.RequestSoundboardSounds, d });
    expect(await client.waitClose()).toEqual({
      code: 4002,
      reason: 'Invalid Request Soundboard Sounds payload',
    });
  });

  it('before Identify it is 4003 Not authenticated, as every op that needs a session', async () => {
    const client = await hello();
    client.send({ op: GatewayOpcodes.RequestSoundboardSounds, d: { guild_ids: [guild.id] } });
    expect(await client.waitClose()).toEqual({ code: 4003, reason: 'Not authenticated' });
  });
});
