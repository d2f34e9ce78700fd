import { inflateSync } from 'node:zlib';
import {
  FATAL_CLOSE_CODES,
  GatewayCloseCodes,
  GatewayIntents,
  GatewayOpcodes,
  IDENTIFY_WINDOW_MS,
} from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectOptions, GatewayClient } from '../../../../test-support/gateway.js';
import { type StartOptions, startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { RESUME_BUFFER_SIZE } from '../../src/gateway/sessions.js';

/**
 * The gateway as a raw client sees it (PROTOCOL.md §D): Hello and Identify, close codes, Resume, fan-out
 * and intents, Request Guild Members and its RATE_LIMITED dispatch, zlib-stream, draining and the
 * session start limit. Every assertion is on the frames as sent.
 */

const HELLO = { op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null };
const ACK = { op: 11, d: null, s: null, t: null };
const INVALID_SESSION = { op: 9, d: false, s: null, t: null };
const PROPERTIES = { os: 'linux', browser: 'hearth-tests', device: 'hearth-tests' };
const SOCIAL_SCOPES = 'openid sdk.social_layer';
/** `openid sdk.social_layer` as granted and expanded (PROTOCOL.md §B.7). */
const SOCIAL_SCOPES_EXPANDED = [
  'activities.invites.write',
  'activities.read',
  'activities.write',
  'application_identities.write',
  'dm_channels.messages.read',
  'dm_channels.messages.write',
  'dm_channels.read',
  'gateway.connect',
  'guilds',
  'guilds.channels.read',
  'identify',
  'lobbies.write',
  'openid',
  'relationships.read',
  'relationships.write',
  'sdk.social_layer',
];
/** The start of an epoch-aligned 30 s counter window, in 2026 (after every dated rule). */
const T0 = Date.parse('2026-03-02T12:00:00Z');

const hearths: TestHearth[] = [];
const clients: GatewayClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await Promise.all(hearths.splice(0).map((hearth) => hearth.close()));
});

async function start(clock?: ManualClock, options?: StartOptions): Promise<TestHearth> {
  const hearth = await startHearth({}, clock, options);
  hearths.push(hearth);
  return hearth;
}

async function connect(hearth: TestHearth, options: ConnectOptions = {}): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url, options);
  clients.push(client);
  return client;
}

/** Connects, reads Hello and sends Identify with `token` (and `extra` fields, intents 0 unless given). */
async function identify(
  hearth: TestHearth,
  token: string,
  extra: Record<string, unknown> = {},
  options: ConnectOptions = {},
): Promise<GatewayClient> {
  const client = await connect(hearth, options);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, properties: PROPERTIES, intents: 0, ...extra } });
  return client;
}

/** Identifies and expects READY as the next frame; answers the client and READY's `d`. */
async function ready(
  hearth: TestHearth,
  token: string,
  extra: Record<string, unknown> = {},
  options: ConnectOptions = {},
): Promise<{ client: GatewayClient; ready: Record<string, unknown> & { session_id: string } }> {
  const client = await identify(hearth, token, extra, options);
  const frame = await client.next();
  expect(frame).toMatchObject({ op: 0, s: 1, t: 'READY' });
  return { client, ready: frame.d as Record<string, unknown> & { session_id: string } };
}

/** After a close, the node still serves: a fresh connection gets Hello, then READY for a new bot. */
async function expectStillServing(hearth: TestHearth): Promise<void> {
  const game = await createGame(hearth);
  const client = await connect(hearth);
  expect(await client.next()).toEqual({
    ...HELLO,
    d: { heartbeat_interval: hearth.gateway.heartbeatIntervalMs },
  });
  client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
  expect(await client.next()).toMatchObject({ op: 0, s: 1, t: 'READY', d: { user: { id: game.botUserId } } });
}

async function getJson<T>(hearth: TestHearth, path: string, auth?: string): Promise<T> {
  const response = await hearth.api(path, auth === undefined ? {} : { auth });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

/** A guild owned by a new player, with the bot of `game` added as a member before it identifies. */
async function guildWithBot(
  hearth: TestHearth,
  game: TestGame,
): Promise<{ guildId: string; ownerId: string }> {
  const owner = await createPlayer(hearth);
  const { id } = await hearth.services.guilds.createGuild(owner.user.id, { name: 'Hearthside' });
  await hearth.services.guilds.addMember(id, game.botUserId);
  return { guildId: id, ownerId: owner.user.id };
}

async function approveGuildMembers(hearth: TestHearth, game: TestGame): Promise<void> {
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['GatewayGuildMembersLimited'] });
}

describe('Hello, Identify and heartbeats (PROTOCOL.md §D.3)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start();
  });

  it('sends Hello first: {op:10, d:{heartbeat_interval}, s:null, t:null}', async () => {
    const client = await connect(hearth);
    expect(await client.next()).toEqual(HELLO);
    expect(client.frames).toEqual([HELLO]);
  });

  it.each([
    ['the raw bot token', (token: string) => token],
    ['"Bot <token>"', (token: string) => `Bot ${token}`],
  ])(
    'answers Identify with %s by READY {v, user, guilds (unavailable), session_id, resume_gateway_url, shard, application}',
    async (_name, asSent) => {
      const game = await createGame(hearth);
      const { guildId } = await guildWithBot(hearth, game);
      const auth = `Bot ${game.botToken}`;
      const user = await getJson<{ id: string }>(hearth, '/users/@me', auth);
      const application = await getJson<{ flags: number; flags_new: string }>(
        hearth,
        '/applications/@me',
        auth,
      );
      const { url } = await getJson<{ url: string }>(hearth, '/gateway');

      const client = await identify(hearth, asSent(game.botToken));
      const frame = await client.next();

      expect(frame).toEqual({
        op: 0,
        s: 1,
        t: 'READY',
        d: {
          v: 10,
          user,
          guilds: [{ id: guildId, unavailable: true }],
          session_id: expect.stringMatching(/^[0-9a-f]{32}$/),
          resume_gateway_url: url,
          shard: [0, 1],
          application: { id: game.id, flags: application.flags, flags_new: application.flags_new },
          // A bot's READY lists no DMs (DOCS Gateway Events, Ready: private_channels).
          private_channels: [],
        },
      });
      expect(user).toMatchObject({ id: game.botUserId, bot: true });
      expect(client.frames).toEqual([HELLO, frame]);
    },
  );

  it('answers a heartbeat {op:1, d:<last seq>} with {op:11, d:null, s:null, t:null}, before and after Identify', async () => {
    const game = await createGame(hearth);
    const client = await connect(hearth);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 1, d: null });
    expect(await client.next()).toEqual(ACK);
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
    expect(await client.next()).toMatchObject({ op: 0, s: 1, t: 'READY' });
    client.send({ op: 1, d: 1 });
    expect(await client.next()).toEqual(ACK);
  });
});

describe('Identify with a bearer token: players with gateway.connect (PROTOCOL.md §B.7, §K)', () => {
  let hearth: TestHearth;
  let game: TestGame;
  beforeAll(async () => {
    hearth = await start();
    game = await createGame(hearth);
  });

  it('"Bearer <token>" granted sdk.social_layer (which includes gateway.connect) gets READY with application and scopes', async () => {
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token, SOCIAL_SCOPES);
    const bearer = `Bearer ${tokens.access_token}`;
    const user = await getJson<{ id: string }>(hearth, '/users/@me', bearer);
    const application = await getJson<{ flags: number; flags_new: string }>(
      hearth,
      '/applications/@me',
      `Bot ${game.botToken}`,
    );
    const { url } = await getJson<{ url: string }>(hearth, '/gateway');

    const frame = await (await identify(hearth, bearer)).next();

    expect(frame).toEqual({
      op: 0,
      s: 1,
      t: 'READY',
      d: {
        v: 10,
        user,
        guilds: [],
        session_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        resume_gateway_url: url,
        shard: [0, 1],
        application: { id: game.id, flags: application.flags, flags_new: application.flags_new },
        scopes: expect.any(Array),
        lobbies: [],
        // A game's session lists no DMs of the person (theirs are the person's own client's).
        private_channels: [],
        // The online friends' presences; this player has none.
        presences: [],
      },
    });
    expect(user).toMatchObject({ id: player.user.id });
    expect(((frame.d as { scopes: string[] }).scopes ?? []).toSorted()).toEqual(SOCIAL_SCOPES_EXPANDED);
  });

  it('closes 4004 for a bearer token without gateway.connect (scope identify only)', async () => {
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token, 'identify');
    const client = await identify(hearth, `Bearer ${tokens.access_token}`);
    expect(await client.waitClose()).toEqual({ code: 4004, reason: 'Authentication failed' });
    await expectStillServing(hearth);
  });

  it.each([
    ['an unknown bot token', 'MTIzNDU2Nzg5.not.a-token'],
    ['an unknown bearer token', 'Bearer not-an-access-token'],
  ])('closes 4004 (fatal: no reconnect) for %s', async (_name, token) => {
    const client = await connect(hearth);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 2, d: { token, properties: PROPERTIES, intents: 0 } });
    expect(await client.waitClose()).toEqual({ code: 4004, reason: 'Authentication failed' });
    expect(FATAL_CLOSE_CODES).toContain(GatewayCloseCodes.AuthenticationFailed);
    await expectStillServing(hearth);
  });
});

describe('Close codes (PROTOCOL.md §D.4); none of them takes the node down', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start();
  });
  afterEach(async () => {
    await expectStillServing(hearth);
  });

  async function helloed(options: ConnectOptions = {}): Promise<GatewayClient> {
    const client = await connect(hearth, options);
    await client.nextOp(GatewayOpcodes.Hello);
    return client;
  }

  it('4001 Unknown opcode: op 99', async () => {
    const client = await helloed();
    client.send({ op: 99, d: null });
    expect(await client.waitClose()).toEqual({ code: 4001, reason: 'Unknown opcode' });
  });

  it.each([
    [0, 'Dispatch'],
    [7, 'Reconnect'],
    [9, 'Invalid Session'],
    [10, 'Hello'],
    [11, 'Heartbeat ACK'],
  ])('4001 Unknown opcode: op %i (%s) is sent by the server only', async (op) => {
    const client = await helloed();
    client.send({ op, d: null });
    expect(await client.waitClose()).toEqual({ code: 4001, reason: 'Unknown opcode' });
  });

  it.each([
    [17, 'Lobby Voice States', [{ lobby_id: '1', self_mute: false, self_deaf: false }]],
    [31, 'Request Soundboard Sounds', { guild_ids: ['1'] }],
    [42, 'Lobby Voice Server Ping', { lobby_id: '1' }],
    [43, 'Request Channel Info', { guild_id: '1', fields: ['status'] }],
  ])(
    'op %i (%s) about a lobby or guild the session is not in is ignored: the session stays open',
    async (op, _name, d) => {
      const game = await createGame(hearth);
      const { client } = await ready(hearth, game.botToken);
      client.send({ op, d });
      client.send({ op: 1, d: null });
      expect(await client.nextOp(GatewayOpcodes.HeartbeatAck)).toEqual(ACK);
      expect(client.socket.readyState).toBe(client.socket.OPEN);
    },
  );

  it('4002 Decode error: a frame that is not JSON', async () => {
    const client = await helloed();
    client.send('{"op": 1, "d":');
    expect(await client.waitClose()).toEqual({ code: 4002, reason: 'Invalid JSON' });
  });

  it('4002 Decode error: a payload over 4096 bytes; one of exactly 4096 bytes is served', async () => {
    const client = await helloed();
    const heartbeat = (size: number) => {
      const empty = JSON.stringify({ op: 1, d: null, pad: '' });
      return JSON.stringify({ op: 1, d: null, pad: 'x'.repeat(size - empty.length) });
    };
    expect(Buffer.byteLength(heartbeat(4096))).toBe(4096);
    client.send(heartbeat(4096));
    expect(await client.next()).toEqual(ACK);
    client.send(heartbeat(4097));
    expect(await client.waitClose()).toEqual({ code: 4002, reason: 'Payload too large' });
  });

  it('4002 Decode error: a payload without op ({})', async () => {
    const client = await helloed();
    client.send({});
    expect(await client.waitClose()).toEqual({ code: 4002, reason: 'A payload is {op, d}' });
  });

  it.each([
    [3, 'Presence Update'],
    [4, 'Voice State Update'],
    [8, 'Request Guild Members'],
  ])('4003 Not authenticated: op %i (%s) before Identify', async (op) => {
    const client = await helloed();
    client.send({ op, d: { since: null, activities: [], status: 'online', afk: false } });
    expect(await client.waitClose()).toEqual({ code: 4003, reason: 'Not authenticated' });
  });

  it('4005 Already authenticated: a second Identify', async () => {
    const game = await createGame(hearth);
    const { client } = await ready(hearth, game.botToken);
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
    expect(await client.waitClose()).toEqual({ code: 4005, reason: 'Already authenticated' });
  });

  it('4012 Invalid API version: v=6', async () => {
    const client = await connect(hearth, { version: 6 });
    expect(await client.waitClose()).toEqual({ code: 4012, reason: 'Invalid API version' });
  });

  it('4002 Decode error: encoding=etf (only json is served)', async () => {
    const client = await connect(hearth, { encoding: 'etf' });
    expect(await client.waitClose()).toEqual({ code: 4002, reason: 'Only encoding=json is served' });
  });

  it('4013 Invalid intent(s): an unknown bit (1 << 30)', async () => {
    const game = await createGame(hearth);
    const client = await identify(hearth, game.botToken, { intents: 1 << 30 });
    expect(await client.waitClose()).toEqual({ code: 4013, reason: 'Invalid intent(s)' });
  });

  it('4014 Disallowed intent(s): GUILD_MEMBERS without approval; accepted once the application is approved', async () => {
    const game = await createGame(hearth);
    const intents = GatewayIntents.Guilds | GatewayIntents.GuildMembers;
    const client = await identify(hearth, game.botToken, { intents });
    expect(await client.waitClose()).toEqual({ code: 4014, reason: 'Disallowed intent(s)' });

    await approveGuildMembers(hearth, game);
    await ready(hearth, game.botToken, { intents });
  });

  it('4010 Invalid shard: shard [1, 1]', async () => {
    const game = await createGame(hearth);
    const client = await identify(hearth, game.botToken, { shard: [1, 1] });
    expect(await client.waitClose()).toEqual({ code: 4010, reason: 'Invalid shard' });
  });

  it('4008 Rate limited: the 121st client payload within 60 s', async () => {
    const client = await helloed();
    for (let i = 0; i < 120; i++) client.send({ op: 1, d: null });
    for (let i = 0; i < 120; i++) expect(await client.next()).toEqual(ACK);
    client.send({ op: 1, d: null });
    expect(await client.waitClose()).toEqual({ code: 4008, reason: 'Rate limited' });
  });
});

describe('4009 Session timed out: a client silent for 1.5 heartbeat intervals (PROTOCOL.md §D.3)', () => {
  const INTERVAL_MS = 200;
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start(undefined, { gateway: { heartbeatIntervalMs: INTERVAL_MS } });
  });

  it('closes 4009 no earlier than 1.5 intervals after Hello when no heartbeat comes', async () => {
    const started = performance.now();
    const client = await connect(hearth);
    expect(await client.next()).toEqual({ ...HELLO, d: { heartbeat_interval: INTERVAL_MS } });
    expect(await client.waitClose(5_000)).toEqual({ code: 4009, reason: 'Session timed out' });
    // Timers may fire up to a millisecond early.
    expect(performance.now() - started).toBeGreaterThanOrEqual(INTERVAL_MS * 1.5 - 2);
    await expectStillServing(hearth);
  });

  it('keeps a client that heartbeats past twice the deadline, and closes it 4009 once it stops', async () => {
    const game = await createGame(hearth);
    const { client } = await ready(hearth, game.botToken);
    // The real heartbeat timer is the behaviour under test. Beats every half interval leave a wide margin
    // to the 1.5-interval deadline; six of them span twice that deadline.
    for (let beat = 0; beat < 6; beat++) {
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS / 2));
      client.send({ op: 1, d: 1 });
      expect(await client.next()).toEqual(ACK);
    }
    const silentSince = performance.now();
    expect(await client.waitClose(5_000)).toEqual({ code: 4009, reason: 'Session timed out' });
    expect(performance.now() - silentSince).toBeGreaterThanOrEqual(INTERVAL_MS);
    await expectStillServing(hearth);
  });
});

describe('Resume (PROTOCOL.md §D.3)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start();
  });

  function publish(game: TestGame, n: number): Promise<void> {
    return hearth.bus.publish({
      type: 'LOBBY_UPDATE',
      data: { id: 'lobby', n },
      audience: { applicationId: game.id },
    });
  }

  const lobbyUpdate = (s: number, n: number) => ({ op: 0, s, t: 'LOBBY_UPDATE', d: { id: 'lobby', n } });

  /** A bot session that saw READY (s 1) and two events (s 2, 3), then closed with `code`. */
  async function detachedSession(code: number): Promise<{ game: TestGame; sessionId: string }> {
    const game = await createGame(hearth);
    const { client, ready: d } = await ready(hearth, game.botToken);
    await publish(game, 1);
    await publish(game, 2);
    expect(await client.next()).toEqual(lobbyUpdate(2, 1));
    expect(await client.next()).toEqual(lobbyUpdate(3, 2));
    await client.close(code);
    return { game, sessionId: d.session_id };
  }

  async function resume(d: Record<string, unknown>): Promise<GatewayClient> {
    const client = await connect(hearth);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 6, d });
    return client;
  }

  it('replays exactly the dispatches missed after a client 4000 close, with their original seq, then RESUMED', async () => {
    const { game, sessionId } = await detachedSession(4000);
    await publish(game, 3);
    await publish(game, 4);
    await publish(game, 5);

    const client = await resume({ token: game.botToken, session_id: sessionId, seq: 3 });

    const resumed = await client.nextDispatch('RESUMED');
    expect(resumed).toEqual({ op: 0, s: 7, t: 'RESUMED', d: {} });
    expect(client.frames).toEqual([HELLO, lobbyUpdate(4, 3), lobbyUpdate(5, 4), lobbyUpdate(6, 5), resumed]);
    // The resumed session goes on numbering where it was.
    await publish(game, 6);
    expect(await client.next()).toEqual(lobbyUpdate(8, 6));
  });

  it('replays from an older seq the client last saw, again in order', async () => {
    const { game, sessionId } = await detachedSession(4000);
    await publish(game, 3);
    const client = await resume({ token: game.botToken, session_id: sessionId, seq: 1 });
    await client.nextDispatch('RESUMED');
    expect(client.frames).toEqual([
      HELLO,
      lobbyUpdate(2, 1),
      lobbyUpdate(3, 2),
      lobbyUpdate(4, 3),
      { op: 0, s: 5, t: 'RESUMED', d: {} },
    ]);
  });

  it('replays everything after READY to a Resume from seq 0, but never READY: whoever resumes has it', async () => {
    const { game, sessionId } = await detachedSession(4000);
    const client = await resume({ token: game.botToken, session_id: sessionId, seq: 0 });
    await client.nextDispatch('RESUMED');
    expect(client.frames).toEqual([
      HELLO,
      lobbyUpdate(2, 1),
      lobbyUpdate(3, 2),
      { op: 0, s: 4, t: 'RESUMED', d: {} },
    ]);
  });

  it('answers {op:9, d:false} to a Resume with another token', async () => {
    const { sessionId } = await detachedSession(4000);
    const other = await createGame(hearth);
    const client = await resume({ token: other.botToken, session_id: sessionId, seq: 3 });
    expect(await client.next()).toEqual(INVALID_SESSION);
  });

  it('answers {op:9, d:false} to a Resume of an unknown session_id', async () => {
    const { game } = await detachedSession(4000);
    const client = await resume({ token: game.botToken, session_id: '0'.repeat(32), seq: 3 });
    expect(await client.next()).toEqual(INVALID_SESSION);
  });

  it('answers {op:9, d:false} after a client 1000 close: the session ended', async () => {
    const { game, sessionId } = await detachedSession(1000);
    const client = await resume({ token: game.botToken, session_id: sessionId, seq: 3 });
    expect(await client.next()).toEqual(INVALID_SESSION);
  });

  it(`answers {op:9, d:false} to a seq older than the buffer can replay (${RESUME_BUFFER_SIZE} dispatches)`, async () => {
    const { game, sessionId } = await detachedSession(4000);
    // READY and two events are s 1..3; these make s 4..(RESUME_BUFFER_SIZE + 5), so s 6 is the oldest kept.
    for (let n = 3; n < RESUME_BUFFER_SIZE + 5; n++) await publish(game, n);

    const tooOld = await resume({ token: game.botToken, session_id: sessionId, seq: 4 });
    expect(await tooOld.next()).toEqual(INVALID_SESSION);

    const oldestKept = await resume({ token: game.botToken, session_id: sessionId, seq: 5 });
    expect(await oldestKept.next()).toEqual(lobbyUpdate(6, 5));
    const resumed = await oldestKept.nextDispatch('RESUMED');
    expect(resumed.s).toBe(RESUME_BUFFER_SIZE + 6);
    expect(oldestKept.frames).toHaveLength(RESUME_BUFFER_SIZE + 2);
  });

  it('after a failed Resume the same connection may Identify afresh', async () => {
    const game = await createGame(hearth);
    const client = await resume({ token: game.botToken, session_id: '0'.repeat(32), seq: 3 });
    expect(await client.next()).toEqual(INVALID_SESSION);
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
    expect(await client.next()).toMatchObject({ op: 0, s: 1, t: 'READY' });
  });
});

describe('Events and intents (PROTOCOL.md §D.5)', () => {
  const clock = new ManualClock(T0);
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start(clock);
  });

  /** Identifies, past the 5 s identify window of the previous session of the same user. */
  async function session(token: string, extra: Record<string, unknown> = {}): Promise<GatewayClient> {
    clock.advance(IDENTIFY_WINDOW_MS);
    return (await ready(hearth, token, extra)).client;
  }

  it('an event for {applicationId} reaches the bot sessions of that application and not of another', async () => {
    const [mine, other] = [await createGame(hearth), await createGame(hearth)];
    const [mineClient, otherClient] = [await session(mine.botToken), await session(other.botToken)];

    await hearth.bus.publish({
      type: 'LOBBY_UPDATE',
      data: { id: 'l1' },
      audience: { applicationId: mine.id },
    });
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { applicationId: other.id } });

    expect(await mineClient.next()).toEqual({ op: 0, s: 2, t: 'LOBBY_UPDATE', d: { id: 'l1' } });
    expect(await otherClient.next()).toEqual({ op: 0, s: 2, t: 'BARRIER', d: {} });
  });

  it("an event for {users: [id]} reaches that user's bearer sessions only", async () => {
    const game = await createGame(hearth);
    const [alice, bob] = [await createPlayer(hearth), await createPlayer(hearth)];
    const aliceToken = (await grantTokens(hearth, game, alice.token, SOCIAL_SCOPES)).access_token;
    const bobToken = (await grantTokens(hearth, game, bob.token, SOCIAL_SCOPES)).access_token;
    const aliceClient = await session(`Bearer ${aliceToken}`);
    const bobClient = await session(`Bearer ${bobToken}`);

    await hearth.bus.publish({
      type: 'RELATIONSHIP_ADD',
      data: { id: 'r1' },
      audience: { users: [alice.user.id] },
    });
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { users: [bob.user.id] } });

    expect(await aliceClient.next()).toEqual({ op: 0, s: 2, t: 'RELATIONSHIP_ADD', d: { id: 'r1' } });
    expect(await bobClient.next()).toEqual({ op: 0, s: 2, t: 'BARRIER', d: {} });
  });

  it('a GUILD_CREATE for {applicationId, guildId} reaches a bot session with GUILDS in that guild, not one with intents 0', async () => {
    const game = await createGame(hearth);
    const { guildId } = await guildWithBot(hearth, game);
    const withGuilds = await session(game.botToken, { intents: GatewayIntents.Guilds });
    const withoutIntents = await session(game.botToken, { intents: 0 });
    const audience = { applicationId: game.id, guildId };

    // The session's own GUILD_CREATE follows READY (s 2); the published one comes after it.
    expect(await withGuilds.next()).toMatchObject({ op: 0, s: 2, t: 'GUILD_CREATE', d: { id: guildId } });
    await hearth.bus.publish({ type: 'GUILD_CREATE', data: { id: guildId }, audience });
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience });

    expect(await withGuilds.next()).toEqual({ op: 0, s: 3, t: 'GUILD_CREATE', d: { id: guildId } });
    expect(await withGuilds.next()).toEqual({ op: 0, s: 4, t: 'BARRIER', d: {} });
    expect(await withoutIntents.next()).toEqual({ op: 0, s: 2, t: 'BARRIER', d: {} });
  });

  it('an event for {applicationId, guildId} does not reach a session of that application outside the guild', async () => {
    const game = await createGame(hearth);
    const client = await session(game.botToken, { intents: GatewayIntents.Guilds });
    const { guildId } = await guildWithBot(hearth, game);

    await hearth.bus.publish({
      type: 'GUILD_UPDATE',
      data: { id: guildId },
      audience: { applicationId: game.id, guildId },
    });
    await hearth.bus.publish({ type: 'BARRIER', data: {}, audience: { applicationId: game.id } });

    // The bot joined after it identified: its session does not see the guild yet.
    expect(await client.next()).toEqual({ op: 0, s: 2, t: 'BARRIER', d: {} });
  });
});

describe('Request Guild Members, op 8 (PROTOCOL.md §D.6)', () => {
  // Each test starts its own server: the clock's date is part of what is tested.
  let opened: TestHearth | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  /** A bot approved for GUILD_MEMBERS, identified with it, in a guild of three (owner, another player, bot). */
  async function setUp(at: number | string) {
    const clock = new ManualClock(at);
    const hearth = await startHearth({}, clock);
    opened = hearth;
    const game = await createGame(hearth);
    await approveGuildMembers(hearth, game);
    const { guildId, ownerId } = await guildWithBot(hearth, game);
    const other = await createPlayer(hearth);
    await hearth.services.guilds.addMember(guildId, other.user.id);
    const { client } = await ready(hearth, game.botToken, {
      intents: GatewayIntents.Guilds | GatewayIntents.GuildMembers,
    });
    const request = (d: Record<string, unknown>) => client.send({ op: 8, d: { guild_id: guildId, ...d } });
    const nextChunkOrLimit = () =>
      client.next((frame) => frame.t === 'GUILD_MEMBERS_CHUNK' || frame.t === 'RATE_LIMITED');
    return {
      clock,
      hearth,
      game,
      client,
      guildId,
      ownerId,
      otherId: other.user.id,
      request,
      nextChunkOrLimit,
    };
  }

  const member = (userId: string, joinedAt: number) => ({
    user: expect.objectContaining({ id: userId }),
    nick: null,
    avatar: null,
    banner: null,
    roles: [],
    joined_at: new Date(joinedAt).toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  });

  it('answers all members (query "", limit 0) with one GUILD_MEMBERS_CHUNK carrying the nonce', async () => {
    const { client, game, guildId, ownerId, otherId, request } = await setUp(T0);
    request({ query: '', limit: 0, nonce: 'n1' });
    const chunk = await client.nextDispatch('GUILD_MEMBERS_CHUNK');
    const ids = [ownerId, otherId, game.botUserId].toSorted();
    expect(chunk).toEqual({
      op: 0,
      s: 3,
      t: 'GUILD_MEMBERS_CHUNK',
      d: {
        guild_id: guildId,
        members: ids.map((id) => member(id, T0)),
        chunk_index: 0,
        chunk_count: 1,
        nonce: 'n1',
      },
    });
  });

  it('limits all-members requests to 1 per guild per bot per 30 s: RATE_LIMITED {opcode, retry_after, meta}, no chunk', async () => {
    const { clock, guildId, request, nextChunkOrLimit } = await setUp(T0);
    request({ query: '', limit: 0, nonce: 'n1' });
    expect(await nextChunkOrLimit()).toMatchObject({ t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'n1' } });

    clock.advance(10_000);
    request({ query: '', limit: 0, nonce: 'n2' });
    expect(await nextChunkOrLimit()).toEqual({
      op: 0,
      s: 4,
      t: 'RATE_LIMITED',
      d: { opcode: 8, retry_after: 20, meta: { guild_id: guildId, nonce: 'n2' } },
    });

    // A query request is not limited, and no chunk was sent for n2 before it.
    request({ query: 'pla', limit: 10, nonce: 'q1' });
    expect(await nextChunkOrLimit()).toMatchObject({ s: 5, t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'q1' } });

    clock.advance(20_000);
    request({ query: '', limit: 0, nonce: 'n3' });
    expect(await nextChunkOrLimit()).toMatchObject({ s: 6, t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'n3' } });
  });

  it('counts the 30 s from the request served, not from a fixed clock window', async () => {
    // 20 s into a 30 s epoch window: a second request 15 s later is in the next fixed window.
    const { clock, guildId, request, nextChunkOrLimit } = await setUp(T0 + 20_000);
    request({ query: '', limit: 0, nonce: 'n1' });
    expect(await nextChunkOrLimit()).toMatchObject({ t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'n1' } });

    clock.advance(15_000);
    request({ query: '', limit: 0, nonce: 'n2' });
    expect(await nextChunkOrLimit()).toEqual({
      op: 0,
      s: 4,
      t: 'RATE_LIMITED',
      d: { opcode: 8, retry_after: 15, meta: { guild_id: guildId, nonce: 'n2' } },
    });
  });

  it('does not limit query requests (query "pla", limit 10): each gets its chunk of matching members', async () => {
    const { client, guildId, ownerId, otherId, request } = await setUp(T0);
    for (const nonce of ['q1', 'q2', 'q3']) {
      request({ query: 'pla', limit: 10, nonce });
      const chunk = await client.nextDispatch('GUILD_MEMBERS_CHUNK');
      expect(chunk.d).toEqual({
        guild_id: guildId,
        members: [ownerId, otherId].toSorted().map((id) => member(id, T0)),
        chunk_index: 0,
        chunk_count: 1,
        nonce,
      });
    }
  });

  it('applies from 1 October 2025: on 30 September two all-members requests both get chunks', async () => {
    const { clock, guildId, request, nextChunkOrLimit } = await setUp('2025-09-30T23:59:59Z');
    request({ query: '', limit: 0, nonce: 'a' });
    expect(await nextChunkOrLimit()).toMatchObject({ t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'a' } });
    request({ query: '', limit: 0, nonce: 'b' });
    expect(await nextChunkOrLimit()).toMatchObject({ t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'b' } });

    clock.set('2025-10-01T00:00:00Z');
    request({ query: '', limit: 0, nonce: 'c' });
    expect(await nextChunkOrLimit()).toMatchObject({ t: 'GUILD_MEMBERS_CHUNK', d: { nonce: 'c' } });
    request({ query: '', limit: 0, nonce: 'd' });
    expect(await nextChunkOrLimit()).toMatchObject({
      t: 'RATE_LIMITED',
      d: { opcode: 8, retry_after: 30, meta: { guild_id: guildId, nonce: 'd' } },
    });
  });

  it('answers user_ids with the members found and the unknown ids in not_found', async () => {
    const { client, guildId, otherId, request } = await setUp(T0);
    const unknown = '123456789012345678';
    request({ user_ids: [otherId, unknown], nonce: 'u1' });
    expect(await client.nextDispatch('GUILD_MEMBERS_CHUNK')).toEqual({
      op: 0,
      s: 3,
      t: 'GUILD_MEMBERS_CHUNK',
      d: {
        guild_id: guildId,
        members: [member(otherId, T0)],
        chunk_index: 0,
        chunk_count: 1,
        not_found: [unknown],
        nonce: 'u1',
      },
    });
  });
});

describe("A bus event's frames, written by the gateway itself (RFC 6455 §5.2 lengths)", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start();
  });

  /** Payload lengths at each edge of the three length forms: 7 bits, 16 bits, 64 bits. */
  const LENGTHS = [80, 125, 126, 127, 65_535, 65_536, 70_000];

  /** LOBBY_UPDATE events, the i-th padded so that its frame to a session at s = first + i is LENGTHS[i] bytes. */
  function sized(first: number): Array<{ d: { id: string; pad: string }; text: string }> {
    return LENGTHS.map((length, i) => {
      const frame = (pad: string) =>
        JSON.stringify({ op: 0, d: { id: 'lobby', pad }, s: first + i, t: 'LOBBY_UPDATE' });
      const pad = 'x'.repeat(length - frame('').length);
      return { d: { id: 'lobby', pad }, text: frame(pad) };
    });
  }

  it('delivers a payload of every length as one text frame, byte for byte', async () => {
    const game = await createGame(hearth);
    const { client } = await ready(hearth, game.botToken);
    const events = sized(2);
    for (const { d } of events)
      await hearth.bus.publish({ type: 'LOBBY_UPDATE', data: d, audience: { applicationId: game.id } });
    for (const { text } of events) expect(await client.next()).toEqual(JSON.parse(text));
    const received = client.messages.slice(-LENGTHS.length);
    expect(received.map((message) => message.binary)).toEqual(LENGTHS.map(() => false));
    expect(received.map((message) => message.bytes.toString('utf8'))).toEqual(events.map((e) => e.text));
    expect(received.map((message) => message.bytes.length)).toEqual(LENGTHS);
    // Still in step with ws's own frames on the same socket: the ACK of a later heartbeat comes after them.
    client.send({ op: 1, d: 8 });
    expect(await client.next()).toEqual(ACK);
  });

  it('deflates the same payloads on a zlib-stream connection', async () => {
    const game = await createGame(hearth);
    const { client } = await ready(hearth, game.botToken, {}, { compress: 'zlib-stream' });
    const events = sized(2);
    for (const { d } of events)
      await hearth.bus.publish({ type: 'LOBBY_UPDATE', data: d, audience: { applicationId: game.id } });
    for (const { text } of events) expect(await client.next()).toEqual(JSON.parse(text));
    expect(client.messages.slice(-LENGTHS.length).every((message) => message.binary)).toBe(true);
  });

  it('serializes an object a service publishes again, changed, as the later event has it', async () => {
    const game = await createGame(hearth);
    const { client } = await ready(hearth, game.botToken);
    const data = { id: 'lobby', name: 'before' };
    const audience = { applicationId: game.id };
    await hearth.bus.publish({ type: 'LOBBY_UPDATE', data, audience });
    data.name = 'after';
    await hearth.bus.publish({ type: 'LOBBY_UPDATE', data, audience });
    expect(await client.next()).toEqual({
      op: 0,
      s: 2,
      t: 'LOBBY_UPDATE',
      d: { id: 'lobby', name: 'before' },
    });
    expect(await client.next()).toEqual({
      op: 0,
      s: 3,
      t: 'LOBBY_UPDATE',
      d: { id: 'lobby', name: 'after' },
    });
  });
});

describe('Transport compression zlib-stream (PROTOCOL.md §D.1)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start();
  });

  it('sends every frame binary, ending in 00 00 FF FF, inflating with one context to Hello, READY and ACK', async () => {
    const game = await createGame(hearth);
    const { client, ready: d } = await ready(hearth, game.botToken, {}, { compress: 'zlib-stream' });
    client.send({ op: 1, d: 1 });
    expect(await client.next()).toEqual(ACK);

    expect(client.frames).toEqual([HELLO, { op: 0, s: 1, t: 'READY', d }, ACK]);
    expect(d).toMatchObject({ v: 10, user: { id: game.botUserId }, application: { id: game.id } });
    expect(client.messages).toHaveLength(3);
    for (const message of client.messages) {
      expect(message.binary).toBe(true);
      expect([...message.bytes.subarray(-4)]).toEqual([0x00, 0x00, 0xff, 0xff]);
    }
    // One context for the connection: a later message is not a zlib stream on its own.
    expect(() => inflateSync(client.messages[1]!.bytes)).toThrow();
  });
});

describe('Reconnect, op 7: a draining node (PROTOCOL.md §D.2)', () => {
  it('sends {op:7, d:null, s:null, t:null} to every client, then closes with resumable 4000', async () => {
    const hearth = await start();
    const game = await createGame(hearth);
    const { client: identified } = await ready(hearth, game.botToken);
    const unidentified = await connect(hearth);
    await unidentified.nextOp(GatewayOpcodes.Hello);

    await hearth.gateway.close();

    for (const client of [identified, unidentified]) {
      expect(await client.next()).toEqual({ op: 7, d: null, s: null, t: null });
      expect(await client.waitClose()).toEqual({ code: 4000, reason: 'Reconnect' });
    }
    expect(FATAL_CLOSE_CODES).not.toContain(4000);
    await expect(connect(hearth)).rejects.toThrow(/404/);
  });
});

describe('Session start limit of GET /gateway/bot (PROTOCOL.md §D.1, §D.3)', () => {
  const clock = new ManualClock(T0);
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await start(clock);
  });

  it('drops remaining by one per Identify, and not for a Resume', async () => {
    const game = await createGame(hearth);
    const remaining = async () =>
      (
        await getJson<{ session_start_limit: { remaining: number } }>(
          hearth,
          '/gateway/bot',
          `Bot ${game.botToken}`,
        )
      ).session_start_limit.remaining;
    expect(await remaining()).toBe(1000);

    const { client, ready: first } = await ready(hearth, game.botToken);
    expect(await remaining()).toBe(999);
    clock.advance(IDENTIFY_WINDOW_MS);
    await ready(hearth, game.botToken);
    expect(await remaining()).toBe(998);

    await client.close(4000);
    const resumed = await connect(hearth);
    await resumed.nextOp(GatewayOpcodes.Hello);
    resumed.send({ op: 6, d: { token: game.botToken, session_id: first.session_id, seq: 1 } });
    await resumed.nextDispatch('RESUMED');
    expect(await remaining()).toBe(998);
  });

  it('answers {op:9, d:false} to a second Identify within the 5 s max_concurrency window', async () => {
    const game = await createGame(hearth);
    clock.advance(IDENTIFY_WINDOW_MS);
    await ready(hearth, game.botToken);
    const client = await identify(hearth, game.botToken);
    expect(await client.next()).toEqual(INVALID_SESSION);
  });
});
