import { DiscordAPIError, type RateLimitData, REST } from '@discordjs/rest';
import { CompressionMethod, WebSocketManager, WebSocketShardEvents } from '@discordjs/ws';
import { GatewayCloseCodes } from '@hearth/protocol';
import type { Config } from '@hearth/server';
import {
  type APIApplication,
  type APIUser,
  type GatewayReadyDispatchData,
  type RESTGetAPIGatewayBotResult,
  Routes,
} from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';

/**
 * The real third-party clients against Hearth, changing only their base URL (PROTOCOL.md §J): @discordjs/rest
 * for requests, errors and rate-limit buckets, @discordjs/ws for Identify, dispatches, heartbeats, Resume and
 * zlib-stream, and discord-api-types for the READY shape. No Hearth client code is used.
 */

const HEARTBEAT_MS = 250;

/** A server in this process; `heartbeatIntervalMs` shortens the gateway's heartbeats. */
function start(overrides: Partial<Config> = {}, heartbeatIntervalMs?: number): Promise<TestHearth> {
  return startHearth(
    overrides,
    undefined,
    heartbeatIntervalMs === undefined ? {} : { gateway: { heartbeatIntervalMs } },
  );
}

const rests: REST[] = [];
const managers: WebSocketManager[] = [];

function restFor(hearth: TestHearth, token: string): REST {
  const rest = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(token);
  rests.push(rest);
  return rest;
}

afterEach(async () => {
  await Promise.all(managers.splice(0).map((manager) => manager.destroy()));
  for (const rest of rests.splice(0)) {
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
  }
});

/** Polls `condition` every 10 ms; fails with `what` after `timeoutMs`. */
async function until(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// ---- @discordjs/rest ----

describe('@discordjs/rest against Hearth', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let rest: REST;

  beforeAll(async () => {
    hearth = await start();
    game = await createGame(hearth);
  });
  afterAll(() => hearth.close());

  it('answers the bot user from GET /users/@me', async () => {
    rest = restFor(hearth, game.botToken);
    const user = (await rest.get(Routes.user())) as APIUser;
    expect(user).toMatchObject({ id: game.botUserId, bot: true });
    expect(typeof user.username).toBe('string');
    expect(typeof user.discriminator).toBe('string');
  });

  it('answers GET /gateway/bot with url, shards and session_start_limit', async () => {
    rest = restFor(hearth, game.botToken);
    const info = (await rest.get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult;
    expect(info).toEqual({
      url: expect.stringMatching(/^ws:\/\/[^?]+$/),
      shards: 1,
      session_start_limit: {
        total: expect.any(Number),
        remaining: expect.any(Number),
        reset_after: expect.any(Number),
        max_concurrency: expect.any(Number),
      },
    });
    expect(info.session_start_limit.max_concurrency).toBeGreaterThanOrEqual(1);
  });

  it('edits the application with PATCH /applications/@me', async () => {
    rest = restFor(hearth, game.botToken);
    const description = 'Edited through @discordjs/rest';
    const edited = (await rest.patch(Routes.currentApplication(), {
      body: { description },
    })) as APIApplication;
    expect(edited).toMatchObject({ id: game.id, description });
    expect(((await rest.get(Routes.currentApplication())) as APIApplication).description).toBe(description);
  });

  it('surfaces a refused form as DiscordAPIError 50035 with the error tree intact', async () => {
    rest = restFor(hearth, game.botToken);
    const error = await rest.patch(Routes.currentApplication(), { body: { flags: 1 } }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    const apiError = error as DiscordAPIError;
    expect(apiError.code).toBe(50035);
    expect(apiError.status).toBe(400);
    expect(apiError.method).toBe('PATCH');
    expect(apiError.rawError).toMatchObject({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { flags: { _errors: [{ code: expect.any(String), message: expect.any(String) }] } },
    });
    // discord.js flattens the tree into its message: "flags[CODE]: message".
    expect(apiError.message).toMatch(/^Invalid Form Body\nflags\[[A-Z_]+\]: /);
  });

  it('surfaces an OAuth2 error with the OAuth `error` as its code', async () => {
    rest = restFor(hearth, game.botToken);
    const error = await rest
      .post(Routes.oauth2TokenExchange(), {
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'not-a-code',
          redirect_uri: 'http://127.0.0.1/callback',
          client_id: game.id,
          client_secret: game.clientSecret,
        }),
        passThroughBody: true,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        auth: false,
      })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(DiscordAPIError);
    const apiError = error as DiscordAPIError;
    expect(apiError.code).toBe('invalid_grant');
    expect(apiError.status).toBe(400);
    expect(apiError.rawError).toEqual({ error: 'invalid_grant', error_description: expect.any(String) });
    expect(apiError.message).toBe((apiError.rawError as { error_description: string }).error_description);
  });
});

describe('@discordjs/rest rate-limit buckets', () => {
  let hearth: TestHearth;

  beforeAll(async () => {
    hearth = await start({ rateLimitGlobal: 5 });
  });
  afterAll(() => hearth.close());

  it('waits out 429s: 30 quick requests to one route all resolve', async () => {
    const game = await createGame(hearth);
    const rest = restFor(hearth, game.botToken);
    const rateLimited: RateLimitData[] = [];
    const statuses: number[] = [];
    rest.on('rateLimited', (info) => rateLimited.push(info));
    rest.on('response', (_request, response) => statuses.push(response.status));

    const results = await Promise.allSettled(
      Array.from({ length: 30 }, () => rest.get(Routes.user()) as Promise<APIUser>),
    );

    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    for (const result of results) {
      expect(result.status === 'fulfilled' && result.value.id).toBe(game.botUserId);
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    // The server refused at least once, and the client planned by what it answered.
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
    expect(rateLimited.length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
  }, 30_000);
});

// ---- @discordjs/ws ----

interface Received {
  t: string;
  s: number;
  d: unknown;
}

/** What a manager reports, in order. */
interface Observed {
  timeline: Array<Received | { closed: number }>;
  dispatches: Received[];
  ready: GatewayReadyDispatchData[];
  resumed: number;
  heartbeats: Array<{ ackAt: number; heartbeatAt: number; latency: number }>;
  closed: number[];
  errors: Error[];
  debug: string[];
}

function observe(manager: WebSocketManager): Observed {
  const observed: Observed = {
    timeline: [],
    dispatches: [],
    ready: [],
    resumed: 0,
    heartbeats: [],
    closed: [],
    errors: [],
    debug: [],
  };
  manager.on(WebSocketShardEvents.Dispatch, (payload) => {
    const received = payload as unknown as Received;
    observed.dispatches.push(received);
    observed.timeline.push(received);
  });
  manager.on(WebSocketShardEvents.Ready, (data) => observed.ready.push(data));
  manager.on(WebSocketShardEvents.Resumed, () => {
    observed.resumed += 1;
  });
  manager.on(WebSocketShardEvents.HeartbeatComplete, (stats) => observed.heartbeats.push(stats));
  manager.on(WebSocketShardEvents.Closed, (code) => {
    observed.closed.push(code);
    observed.timeline.push({ closed: code });
  });
  manager.on(WebSocketShardEvents.Error, (error) => observed.errors.push(error));
  manager.on(WebSocketShardEvents.Debug, (message) => observed.debug.push(message));
  return observed;
}

const testEvents = (observed: Observed) => observed.dispatches.filter((event) => event.t === 'TEST_EVENT');

describe('@discordjs/ws against Hearth', () => {
  let hearth: TestHearth;

  beforeAll(async () => {
    hearth = await start({}, HEARTBEAT_MS);
  });
  afterAll(() => hearth.close());

  async function connect(
    game: TestGame,
    options: { compression?: CompressionMethod } = {},
  ): Promise<{ manager: WebSocketManager; observed: Observed }> {
    const manager = new WebSocketManager({
      token: game.botToken,
      intents: 0,
      rest: restFor(hearth, game.botToken),
      ...options,
    });
    managers.push(manager);
    const observed = observe(manager);
    await manager.connect();
    return { manager, observed };
  }

  const publish = (game: TestGame, n: number) =>
    hearth.bus.publish({ type: 'TEST_EVENT', data: { n }, audience: { applicationId: game.id } });

  const sessionOf = (game: TestGame) => {
    const session = [...hearth.gateway.registry.all()].find((s) => s.identity.applicationId === game.id);
    if (!session) throw new Error(`no session for ${game.id}`);
    return session;
  };

  it('connects through GET /gateway/bot, receives READY and then a bus dispatch', async () => {
    const game = await createGame(hearth);
    const { observed } = await connect(game);
    expect(observed.ready).toHaveLength(1);
    expect(observed.ready[0]).toMatchObject({ user: { id: game.botUserId }, application: { id: game.id } });
    expect(observed.dispatches[0]).toMatchObject({ t: 'READY', s: 1 });

    await publish(game, 1);
    await until('TEST_EVENT', () => testEvents(observed).length === 1);
    expect(testEvents(observed)).toEqual([{ t: 'TEST_EVENT', s: 2, d: { n: 1 }, op: 0 }]);
    expect(observed.errors).toEqual([]);
  });

  it('keeps heartbeating: 20+ heartbeat/ACK rounds on one connection, never a zombie', async () => {
    const game = await createGame(hearth);
    const { observed } = await connect(game);
    const sessionId = observed.ready[0]!.session_id;
    const attached = sessionOf(game).attached;

    await until('20 heartbeat ACKs', () => observed.heartbeats.length >= 20, 8000);

    for (const beat of observed.heartbeats) expect(beat.latency).toBeLessThan(HEARTBEAT_MS);
    expect(observed.closed).toEqual([]);
    expect(observed.debug.filter((message) => /zombie|timed out/i.test(message))).toEqual([]);
    expect(observed.ready).toHaveLength(1);
    expect(observed.resumed).toBe(0);
    // Still the same live session on the same connection.
    expect(sessionOf(game).id).toBe(sessionId);
    expect(sessionOf(game).attached).toBe(attached);
    await publish(game, 1);
    await until('TEST_EVENT', () => testEvents(observed).length === 1);
  }, 15_000);

  it('resumes after a server-side close and gets every event exactly once, in order', async () => {
    const game = await createGame(hearth);
    const { observed } = await connect(game);
    for (const n of [1, 2, 3]) await publish(game, n);
    await until('3 TEST_EVENTs', () => testEvents(observed).length === 3);

    sessionOf(game).attached!.close(GatewayCloseCodes.UnknownError, 'test');
    // Published while the client is away: only a Resume can deliver these.
    for (const n of [4, 5, 6, 7, 8]) await publish(game, n);

    await until('RESUMED', () => observed.resumed === 1);
    await until('8 TEST_EVENTs', () => testEvents(observed).length >= 8);

    expect(observed.closed).toEqual([GatewayCloseCodes.UnknownError]);
    expect(observed.ready).toHaveLength(1);
    expect(observed.dispatches.filter((event) => event.t === 'READY')).toHaveLength(1);
    expect(observed.dispatches.filter((event) => event.t === 'RESUMED')).toHaveLength(1);
    expect(testEvents(observed).map((event) => (event.d as { n: number }).n)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    // One sequence, no gap and no repeat, across the two connections.
    expect(observed.dispatches.map((event) => event.s)).toEqual(
      observed.dispatches.map((_event, index) => index + 1),
    );
    // Events 4–8 came after the close, replayed on the new connection before RESUMED.
    const names = observed.timeline.map((entry) =>
      'closed' in entry
        ? `closed ${entry.closed}`
        : `${entry.t}${entry.t === 'TEST_EVENT' ? (entry.d as { n: number }).n : ''}`,
    );
    expect(names).toEqual([
      'READY',
      'TEST_EVENT1',
      'TEST_EVENT2',
      'TEST_EVENT3',
      'closed 4000',
      'TEST_EVENT4',
      'TEST_EVENT5',
      'TEST_EVENT6',
      'TEST_EVENT7',
      'TEST_EVENT8',
      'RESUMED',
    ]);
    // The session lives on, attached to the new connection.
    expect(sessionOf(game).id).toBe(observed.ready[0]!.session_id);
    expect(sessionOf(game).attached).toBeDefined();
    await publish(game, 9);
    await until('TEST_EVENT 9', () => testEvents(observed).length === 9);
    expect(observed.errors).toEqual([]);
  });

  it('works end to end with compress=zlib-stream (native zlib)', async () => {
    const game = await createGame(hearth);
    const { observed } = await connect(game, { compression: CompressionMethod.ZlibNative });
    expect(observed.ready).toHaveLength(1);
    // The shard really negotiated transport compression (it falls back silently when it cannot).
    expect(observed.debug.some((message) => message.includes('compress=zlib-stream'))).toBe(true);
    expect(observed.debug.some((message) => message.includes('compression: zlib-stream'))).toBe(true);

    await publish(game, 1);
    await publish(game, 2);
    await until('2 TEST_EVENTs', () => testEvents(observed).length === 2);
    expect(testEvents(observed).map((event) => event.d)).toEqual([{ n: 1 }, { n: 2 }]);
    await until('a heartbeat ACK', () => observed.heartbeats.length >= 1);
    expect(observed.errors).toEqual([]);
  });

  // ---- discord-api-types ----

  it('sends a READY that satisfies GatewayReadyDispatchData for the fields clients read', async () => {
    const game = await createGame(hearth);
    const { observed } = await connect(game);
    const raw = observed.dispatches.find((event) => event.t === 'READY')!.d as Record<string, unknown>;

    // Runtime: the shape, field by field.
    expect(raw).toMatchObject({
      v: 10,
      user: {
        id: game.botUserId,
        username: expect.any(String),
        discriminator: expect.any(String),
        bot: true,
      },
      guilds: expect.any(Array),
      session_id: expect.any(String),
      resume_gateway_url: expect.stringMatching(/^ws:\/\/[^?]+$/),
      application: { id: game.id, flags: expect.any(Number), flags_new: expect.any(String) },
    });
    const user = raw.user as Record<string, unknown>;
    expect(user.global_name === null || typeof user.global_name === 'string').toBe(true);
    expect(user.avatar === null || typeof user.avatar === 'string').toBe(true);
    for (const guild of raw.guilds as unknown[]) {
      expect(guild).toEqual({ id: expect.any(String), unavailable: true });
    }

    // Compile time: a typed copy of exactly those fields satisfies discord-api-types (no excess, none missing).
    const application = raw.application as { id: string; flags: number; flags_new: string };
    const copy = {
      v: raw.v as number,
      user: {
        id: user.id as string,
        username: user.username as string,
        discriminator: user.discriminator as string,
        global_name: user.global_name as string | null,
        avatar: user.avatar as string | null,
        bot: user.bot as boolean,
      },
      guilds: (raw.guilds as Array<{ id: string; unavailable: boolean }>).map(({ id, unavailable }) => ({
        id,
        unavailable,
      })),
      session_id: raw.session_id as string,
      resume_gateway_url: raw.resume_gateway_url as string,
      application: { id: application.id, flags: application.flags, flags_new: application.flags_new },
    } satisfies Pick<
      GatewayReadyDispatchData,
      'v' | 'user' | 'guilds' | 'session_id' | 'resume_gateway_url' | 'application'
    >;
    expect(raw).toMatchObject(copy);
    // The same object as @discordjs/ws hands its users, typed by discord-api-types.
    expect(observed.ready[0]).toEqual(raw);
  });
});
