import { AuthorizationTokenType, sdkpp, type WebSocketLike } from '@hearth/sdk';
import type { Clock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { fakeFetch, json } from './fake-fetch.js';

/**
 * The client's gateway connection (seed, Library operations: GetCurrentUserV2, RegisterAuthorizeRequestCallback,
 * RemoveAuthorizeRequestCallback; Events: AUTHORIZE_REQUEST "re-subscribed after a reconnect"; PROTOCOL.md §D).
 * The first part runs against a live server in this process; the second scripts the server's side of the
 * socket to reach what a healthy server rarely does (op 7, op 9, zombies, every fatal close code).
 */

const { Status, Error: Errors } = sdkpp.Client;
const SCOPES = 'openid sdk.social_layer';
const HEARTBEAT_MS = 500;

/** Status changes as names, for readable failures: [status, error, errorDetail]. */
type Change = [string, string, number];

async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function observe(client: sdkpp.Client): { changes: Change[]; requests: [bigint, string][] } {
  const changes: Change[] = [];
  const requests: [bigint, string][] = [];
  client.SetStatusChangedCallback((status, error, detail) =>
    changes.push([sdkpp.Client.StatusToString(status), sdkpp.Client.ErrorToString(error), detail]),
  );
  client.RegisterAuthorizeRequestCallback((applicationId, scopes) => requests.push([applicationId, scopes]));
  return { changes, requests };
}

describe('against a live server', () => {
  /** The server's clock, which a test moves past the identify window (one Identify per user per 5 s). */
  let skew = 0;
  const clock: Clock = { now: () => Date.now() + skew };
  let hearth: TestHearth;
  let game: TestGame;
  const clients: sdkpp.Client[] = [];

  beforeAll(async () => {
    // A short heartbeat interval, so that heartbeats and the server's deadline run within the test.
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock, {
      gateway: { heartbeatIntervalMs: HEARTBEAT_MS },
    });
    game = await createGame(hearth, { publicClient: true });
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) {
      client.Disconnect();
      await waitFor(() => client.GetStatus() === Status.Disconnected, 'the Disconnect');
    }
  });
  afterAll(() => hearth.close());

  function newClient(webSocket?: sdkpp.ClientOptions['webSocket']): sdkpp.Client {
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, webSocket ? { webSocket } : {});
    clients.push(client);
    return client;
  }

  /** A fresh player (identify limits are per user) with a token for the game and a client Ready with it. */
  async function readyPlayer(global_name?: string) {
    const name = `gw${Math.random().toString(36).slice(2, 10)}`;
    const player = global_name
      ? await hearth.services.accounts.createUser({
          username: name,
          email: `${name}@example.com`,
          password: 'a long password',
          global_name,
        })
      : await createPlayer(hearth, name);
    const tokens = await grantTokens(hearth, game, player.token, SCOPES);
    const client = newClient();
    const observed = observe(client);
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await waitFor(() => client.GetStatus() === Status.Ready, 'Ready');
    return { player, tokens, client, ...observed };
  }

  const sessionsOf = (userId: string) =>
    [...hearth.gateway.registry.all()].filter((session) => session.identity.userId === userId);

  /** The platform client's entry point: POST /users/@me/authorize-requests with the player's session token. */
  async function requestAuthorization(playerToken: string, scopes?: string): Promise<void> {
    const response = await hearth.api('/users/@me/authorize-requests', {
      method: 'POST',
      auth: playerToken,
      body: { application_id: game.id, ...(scopes ? { scopes } : {}) },
    });
    expect(response.status).toBe(204);
  }

  /** Closes the player's connection from the server side, as a network drop would; answers the session. */
  function dropFromServer(userId: string) {
    const [session, ...others] = sessionsOf(userId);
    expect(others).toEqual([]);
    expect(session?.attached).toBeDefined();
    session!.attached!.close(4000);
    return session!;
  }

  describe('Connect: Disconnected → Connecting → Connected → Ready', () => {
    it('reports each status once, with no error, and GetStatus follows', async () => {
      const player = await createPlayer(hearth);
      const tokens = await grantTokens(hearth, game, player.token, SCOPES);
      const client = newClient();
      const { changes } = observe(client);
      expect(client.GetStatus()).toBe(Status.Disconnected);
      await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
      client.Connect();
      expect(client.GetStatus()).toBe(Status.Connecting);
      await waitFor(() => client.GetStatus() === Status.Ready, 'Ready');
      expect(changes).toEqual([
        ['Connecting', 'None', 0],
        ['Connected', 'None', 0],
        ['Ready', 'None', 0],
      ]);
      expect(sessionsOf(player.user.id)).toHaveLength(1);
    });

    it('GetCurrentUserV2 is undefined until Ready, then the player: Id, Username, DisplayName, IsProvisional', async () => {
      const player = await createPlayer(hearth);
      const tokens = await grantTokens(hearth, game, player.token, SCOPES);
      const client = newClient();
      expect(client.GetCurrentUserV2()).toBeUndefined();
      await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
      const seen: (sdkpp.UserHandle | undefined)[] = [];
      client.SetStatusChangedCallback((status) => {
        if (status !== Status.Ready) seen.push(client.GetCurrentUserV2());
      });
      client.Connect();
      expect(client.GetCurrentUserV2()).toBeUndefined();
      await waitFor(() => client.GetStatus() === Status.Ready, 'Ready');
      expect(seen).toEqual([undefined, undefined]);
      const user = client.GetCurrentUserV2();
      expect(user).toBeInstanceOf(sdkpp.UserHandle);
      expect(user?.Id()).toBe(BigInt(player.user.id));
      expect(user?.Username()).toBe(player.user.username);
      expect(user?.DisplayName()).toBe(player.user.username);
      expect(user?.IsProvisional()).toBe(false);
    });

    it('DisplayName is the global name when the player has one', async () => {
      const { client, player } = await readyPlayer('Ember Knight');
      expect(client.GetCurrentUserV2()?.DisplayName()).toBe('Ember Knight');
      expect(client.GetCurrentUserV2()?.Username()).toBe(player.user.username);
    });

    it('heartbeats keep the session: still Ready after many intervals of the server deadline (1.5 × interval)', async () => {
      const { client, changes, player } = await readyPlayer();
      const [session] = sessionsOf(player.user.id);
      await sleep(HEARTBEAT_MS * 4);
      expect(client.GetStatus()).toBe(Status.Ready);
      expect(changes.map(([status]) => status)).toEqual(['Connecting', 'Connected', 'Ready']);
      expect(sessionsOf(player.user.id)).toEqual([session]);
      expect(session?.attached).toBeDefined();
    });

    it('Connect while connecting or connected changes nothing', async () => {
      const player = await createPlayer(hearth);
      const tokens = await grantTokens(hearth, game, player.token, SCOPES);
      const client = newClient();
      const { changes } = observe(client);
      await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
      client.Connect();
      client.Connect();
      await waitFor(() => client.GetStatus() === Status.Ready, 'Ready');
      client.Connect();
      await sleep(50);
      expect(changes.map(([status]) => status)).toEqual(['Connecting', 'Connected', 'Ready']);
      expect(sessionsOf(player.user.id)).toHaveLength(1);
    });

    it('without a token, Connect reports Disconnected with ConnectionFailed and opens nothing', async () => {
      let sockets = 0;
      const client = newClient(
        class extends WebSocket {
          constructor(url: string) {
            super(url);
            sockets += 1;
          }
        },
      );
      const { changes } = observe(client);
      client.Connect();
      await sleep(50);
      expect(changes).toEqual([['Disconnected', 'ConnectionFailed', 0]]);
      expect(client.GetStatus()).toBe(Status.Disconnected);
      expect(sockets).toBe(0);
    });
  });

  describe('Disconnect', () => {
    it('goes Disconnecting → Disconnected, forgets the user, and ends the session on the server (close 1000)', async () => {
      const { client, changes, player } = await readyPlayer();
      changes.length = 0;
      client.Disconnect();
      expect(client.GetStatus()).toBe(Status.Disconnecting);
      expect(client.GetCurrentUserV2()).toBeUndefined();
      await waitFor(() => client.GetStatus() === Status.Disconnected, 'Disconnected');
      expect(changes).toEqual([
        ['Disconnecting', 'None', 0],
        ['Disconnected', 'None', 0],
      ]);
      await waitFor(() => sessionsOf(player.user.id).length === 0, 'the session to end');
    });

    it('a client Disconnected can Connect again, to a new session', async () => {
      const { client, changes, player } = await readyPlayer();
      const [first] = sessionsOf(player.user.id);
      client.Disconnect();
      await waitFor(() => client.GetStatus() === Status.Disconnected, 'Disconnected');
      skew += 6_000; // past the identify window of this player
      changes.length = 0;
      client.Connect();
      await waitFor(() => client.GetStatus() === Status.Ready, 'Ready again');
      expect(changes.map(([status]) => status)).toEqual(['Connecting', 'Connected', 'Ready']);
      const sessions = sessionsOf(player.user.id);
      expect(sessions).toHaveLength(1);
      expect(sessions[0]?.id).not.toBe(first?.id);
    });
  });

  describe('a connection closed by the server (4000): Reconnecting, then Ready again by Resume', () => {
    it('resumes the same session: no new READY, one session in the registry', async () => {
      const { client, changes, player } = await readyPlayer();
      changes.length = 0;
      const session = dropFromServer(player.user.id);
      await waitFor(() => changes.length === 2, 'Reconnecting and Ready');
      expect(changes).toEqual([
        ['Reconnecting', 'UnexpectedClose', 4000],
        ['Ready', 'None', 0],
      ]);
      expect(client.GetStatus()).toBe(Status.Ready);
      expect(sessionsOf(player.user.id)).toEqual([session]);
      expect(session.attached).toBeDefined();
      const sent = session.buffer.map((dispatch) => dispatch.t);
      // The buffer keeps every dispatch but READY (no resume replays it): one READY is seq − buffered = 1.
      expect(session.seq - sent.length).toBe(1);
      expect(sent.filter((t) => t === 'RESUMED')).toHaveLength(1);
      expect(client.GetCurrentUserV2()?.Id()).toBe(BigInt(player.user.id));
    });

    it('GetCurrentUserV2 is undefined while Reconnecting', async () => {
      const { client, player } = await readyPlayer();
      const during: (sdkpp.UserHandle | undefined)[] = [];
      client.SetStatusChangedCallback((status) => {
        if (status === Status.Reconnecting) during.push(client.GetCurrentUserV2());
      });
      dropFromServer(player.user.id);
      await waitFor(() => during.length === 1 && client.GetStatus() === Status.Ready, 'the resume');
      expect(during).toEqual([undefined]);
    });

    it('drops again and again: each one resumes', async () => {
      const { client, changes, player } = await readyPlayer();
      changes.length = 0;
      for (let drop = 1; drop <= 3; drop++) {
        dropFromServer(player.user.id);
        await waitFor(() => changes.length === drop * 2, `resume ${drop}`);
      }
      expect(changes.map(([status]) => status)).toEqual([
        'Reconnecting',
        'Ready',
        'Reconnecting',
        'Ready',
        'Reconnecting',
        'Ready',
      ]);
      expect(client.GetStatus()).toBe(Status.Ready);
      expect(sessionsOf(player.user.id)).toHaveLength(1);
    });

    it('a session the server forgot: the Resume is refused (op 9) and the client identifies again', async () => {
      const { client, changes, player, requests } = await readyPlayer();
      changes.length = 0;
      skew += 6_000; // past the identify window, so that the new Identify is not refused in turn
      const old = dropFromServer(player.user.id);
      hearth.gateway.forget(old.id);
      await waitFor(() => changes.length === 2, 'Reconnecting and Ready');
      expect(changes).toEqual([
        ['Reconnecting', 'UnexpectedClose', 4000],
        ['Ready', 'None', 0],
      ]);
      const [fresh, ...others] = sessionsOf(player.user.id);
      expect(others).toEqual([]);
      expect(fresh?.id).not.toBe(old.id);
      // A fresh session: its own READY was seq 1 (the buffer keeps what follows READY).
      expect(fresh?.seq).toBeGreaterThanOrEqual(1);
      expect(fresh?.buffer.every((dispatch) => dispatch.seq > 1)).toBe(true);
      expect(client.GetCurrentUserV2()?.Id()).toBe(BigInt(player.user.id));
      // AUTHORIZE_REQUEST reaches the game through the new session too.
      await requestAuthorization(player.token);
      await waitFor(() => requests.length === 1, 'AUTHORIZE_REQUEST on the new session');
    });
  });

  describe('AUTHORIZE_REQUEST from POST /users/@me/authorize-requests', () => {
    it('reaches RegisterAuthorizeRequestCallback with the application id and the scopes', async () => {
      const { player, requests } = await readyPlayer();
      await requestAuthorization(player.token);
      await waitFor(() => requests.length === 1, 'the callback');
      expect(requests).toEqual([[BigInt(game.id), 'openid sdk.social_layer']]);
      await requestAuthorization(player.token, 'openid sdk.social_layer_presence');
      await waitFor(() => requests.length === 2, 'the second callback');
      expect(requests[1]).toEqual([BigInt(game.id), 'openid sdk.social_layer_presence']);
    });

    it('still arrives after every reconnect: the callback is re-subscribed with each resumed connection', async () => {
      const { player, requests, changes } = await readyPlayer();
      for (let round = 1; round <= 3; round++) {
        const before = changes.length;
        dropFromServer(player.user.id);
        await waitFor(
          () => changes.length === before + 2 && changes.at(-1)?.[0] === 'Ready',
          `resume ${round}`,
        );
        await requestAuthorization(player.token);
        await waitFor(() => requests.length === round, `AUTHORIZE_REQUEST after reconnect ${round}`);
      }
      expect(requests).toEqual([
        [BigInt(game.id), SCOPES],
        [BigInt(game.id), SCOPES],
        [BigInt(game.id), SCOPES],
      ]);
    });

    it('one requested while the connection is down arrives once, when the session resumes', async () => {
      const { player, requests, client } = await readyPlayer();
      dropFromServer(player.user.id);
      await requestAuthorization(player.token);
      await waitFor(() => requests.length === 1 && client.GetStatus() === Status.Ready, 'the replayed event');
      await sleep(100);
      expect(requests).toHaveLength(1);
    });

    it("goes only to this player's client of this game", async () => {
      const first = await readyPlayer();
      const second = await readyPlayer();
      await requestAuthorization(first.player.token);
      await waitFor(() => first.requests.length === 1, 'the first player');
      await requestAuthorization(second.player.token);
      await waitFor(() => second.requests.length === 1, 'the second player');
      expect(first.requests).toHaveLength(1);
    });

    it('RemoveAuthorizeRequestCallback stops it; registering again resumes delivery', async () => {
      const { client, player, requests } = await readyPlayer();
      client.RemoveAuthorizeRequestCallback();
      await requestAuthorization(player.token, 'openid identify');
      // Dispatches arrive in order: once the next one reaches a new callback, the first has been handled.
      const later: string[] = [];
      client.RegisterAuthorizeRequestCallback((_applicationId, scopes) => later.push(scopes));
      await requestAuthorization(player.token, 'openid email');
      await waitFor(() => later.length > 0, 'the re-registered callback');
      expect(later).toEqual(['openid email']);
      expect(requests).toEqual([]);
    });
  });

  describe('a refused token: close 4004, Disconnected with an error, no retry', () => {
    it('a revoked token never reaches Ready and is not retried', async () => {
      const player = await createPlayer(hearth);
      const tokens = await grantTokens(hearth, game, player.token, SCOPES);
      let sockets = 0;
      const client = newClient(
        class extends WebSocket {
          constructor(url: string) {
            super(url);
            sockets += 1;
          }
        },
      );
      const { changes } = observe(client);
      expect((await client.RevokeToken(game.id, tokens.access_token)).Successful()).toBe(true);
      await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
      client.Connect();
      await waitFor(() => changes.length === 3, 'the refusal');
      expect(changes).toEqual([
        ['Connecting', 'None', 0],
        ['Connected', 'None', 0],
        ['Disconnected', 'ConnectionFailed', 4004],
      ]);
      await sleep(1_500);
      expect(changes).toHaveLength(3);
      expect(sockets).toBe(1);
      expect(client.GetStatus()).toBe(Status.Disconnected);
      expect(client.GetCurrentUserV2()).toBeUndefined();
      expect(sessionsOf(player.user.id)).toEqual([]);
    });
  });
});

// ---- The protocol, against a scripted server ----

/** A WebSocket whose server side the test plays: it records what the client sends and delivers what the test says. */
class ScriptedSocket implements WebSocketLike {
  static all: ScriptedSocket[] = [];
  readonly url: string;
  readyState = 0;
  readonly sent: { op: number; d: unknown }[] = [];
  closedWith: number | undefined;
  readonly #listeners = new Map<string, ((event: never) => void)[]>();

  constructor(url: string) {
    this.url = url;
    ScriptedSocket.all.push(this);
    queueMicrotask(() => {
      if (this.readyState === 0) this.readyState = 1;
    });
  }

  addEventListener(type: string, listener: (event: never) => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }

  send(data: string): void {
    this.sent.push(JSON.parse(data) as { op: number; d: unknown });
  }

  close(code = 1005): void {
    if (this.readyState >= 2) return;
    this.closedWith = code;
    this.#end(code);
  }

  // The server's side.

  hello(interval = 60_000): void {
    this.deliver({ op: 10, d: { heartbeat_interval: interval } });
  }

  deliver(payload: { op: number; d?: unknown; s?: number; t?: string }): void {
    const data = JSON.stringify({ d: null, s: null, t: null, ...payload });
    queueMicrotask(() => this.#emit('message', { data }));
  }

  ready(seq = 1): void {
    this.deliver({
      op: 0,
      t: 'READY',
      s: seq,
      d: {
        v: 10,
        user: { id: '80351110224678912', username: 'nelly', global_name: null },
        guilds: [],
        session_id: 'session-1',
        resume_gateway_url: 'ws://resume.test/gateway',
      },
    });
  }

  drop(code: number): void {
    this.#end(code);
  }

  ops(): number[] {
    return this.sent.map((payload) => payload.op);
  }

  #end(code: number): void {
    this.readyState = 2;
    queueMicrotask(() => {
      this.readyState = 3;
      this.#emit('close', { code, reason: '' });
    });
  }

  #emit(type: string, event: unknown): void {
    for (const listener of this.#listeners.get(type) ?? []) (listener as (event: unknown) => void)(event);
  }
}

describe('the protocol (PROTOCOL.md §D), against a scripted server', () => {
  const TOKEN = 'scripted-access-token-5k2JdQ';
  const sockets = ScriptedSocket.all;

  const clients: sdkpp.Client[] = [];

  // A client left running would go on beating, reconnecting and opening sockets into the next test.
  afterEach(() => {
    for (const client of clients.splice(0)) client.Disconnect();
    sockets.length = 0;
  });

  async function scriptedClient() {
    const { fetch, requests: http } = fakeFetch(() => json(200, { url: 'ws://gateway.test/gateway' }));
    const client = new sdkpp.Client('http://hearth.test/api', 'http://hearth.test', {
      fetch,
      webSocket: ScriptedSocket,
    });
    clients.push(client);
    const observed = observe(client);
    await client.UpdateToken(AuthorizationTokenType.Bearer, TOKEN);
    client.Connect();
    await waitFor(() => sockets.length === 1, 'the first socket');
    return { client, http, ...observed, socket: sockets[0]! };
  }

  async function readyClient() {
    const scripted = await scriptedClient();
    scripted.socket.hello();
    scripted.socket.ready();
    await waitFor(() => scripted.client.GetStatus() === Status.Ready, 'Ready');
    return scripted;
  }

  const nth = async (index: number) => {
    await waitFor(() => sockets.length > index, `socket ${index + 1}`);
    return sockets[index]!;
  };

  it('reads GET /gateway, opens `<url>?v=10&encoding=json`, and identifies with `Bearer <token>` after Hello', async () => {
    const { socket, http, changes } = await scriptedClient();
    expect(http.map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET http://hearth.test/api/v10/gateway',
    ]);
    expect(socket.url).toBe('ws://gateway.test/gateway?v=10&encoding=json');
    expect(socket.sent).toEqual([]);
    socket.hello();
    await waitFor(() => socket.sent.length === 1, 'the Identify');
    expect(socket.sent[0]).toEqual({
      op: 2,
      d: {
        token: `Bearer ${TOKEN}`,
        properties: {
          os: process.platform,
          browser: 'hearth-sdk',
          device: 'hearth-sdk',
          sdk_version: '1.10.0',
        },
        intents: 0,
      },
    });
    expect(changes.map(([status]) => status)).toEqual(['Connecting', 'Connected']);
  });

  it('heartbeats at the interval with the last sequence number, and answers a requested beat at once', async () => {
    const { socket } = await scriptedClient();
    socket.hello(40);
    socket.ready(7);
    await waitFor(() => socket.ops().filter((op) => op === 1).length >= 1, 'a heartbeat');
    expect(socket.sent.find((payload) => payload.op === 1)).toEqual({ op: 1, d: 7 });
    socket.deliver({ op: 11 });
    await waitFor(() => socket.ops().filter((op) => op === 1).length >= 2, 'the next heartbeat');
    socket.deliver({ op: 11 });
    const beats = socket.ops().filter((op) => op === 1).length;
    socket.deliver({ op: 1 });
    await waitFor(() => socket.ops().filter((op) => op === 1).length > beats, 'the requested beat');
  });

  it('a heartbeat never ACKed is a zombie: the client leaves (4200) and resumes at resume_gateway_url', async () => {
    const { socket, changes } = await scriptedClient();
    socket.hello(30);
    socket.ready(3);
    await waitFor(() => socket.closedWith !== undefined, 'the zombie close', 2_000);
    expect(socket.closedWith).toBe(4200);
    const next = await nth(1);
    expect(next.url).toBe('ws://resume.test/gateway?v=10&encoding=json');
    next.hello();
    await waitFor(() => next.sent.length === 1, 'the Resume');
    expect(next.sent[0]).toEqual({
      op: 6,
      d: { token: `Bearer ${TOKEN}`, session_id: 'session-1', seq: 3 },
    });
    next.deliver({ op: 0, t: 'RESUMED', s: 4 });
    await waitFor(() => changes.at(-1)?.[0] === 'Ready', 'Ready again');
    expect(changes.slice(-2)).toEqual([
      ['Reconnecting', 'UnexpectedClose', 0],
      ['Ready', 'None', 0],
    ]);
  });

  it('op 7 Reconnect: resumes on a new connection, reported without an error', async () => {
    const { socket, changes } = await readyClient();
    socket.deliver({ op: 7 });
    const next = await nth(1);
    expect(socket.closedWith).toBe(4200);
    next.hello();
    await waitFor(() => next.sent.length === 1, 'the Resume');
    expect(next.sent[0]?.op).toBe(6);
    next.deliver({ op: 0, t: 'RESUMED', s: 2 });
    await waitFor(() => changes.at(-1)?.[0] === 'Ready', 'Ready again');
    expect(changes.slice(-2)).toEqual([
      ['Reconnecting', 'None', 0],
      ['Ready', 'None', 0],
    ]);
  });

  it('op 9 true: resume on a new connection; op 9 false in answer to the Resume: Identify on the same one', async () => {
    const { socket } = await readyClient();
    socket.deliver({ op: 9, d: true });
    const second = await nth(1);
    second.hello();
    await waitFor(() => second.sent.length === 1, 'the Resume');
    expect(second.sent[0]?.op).toBe(6);
    second.deliver({ op: 9, d: false });
    await waitFor(() => second.sent.length === 2, 'the Identify');
    expect(second.sent[1]).toMatchObject({ op: 2, d: { token: `Bearer ${TOKEN}` } });
    expect(sockets).toHaveLength(2);
  });

  it('op 9 false in answer to an Identify: the next Identify waits 1–5 s (the identify window)', async () => {
    // The low end of the 1–5 s window, to keep the test short.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    onTestFinished(() => random.mockRestore());
    const { socket } = await scriptedClient();
    const identifies = () => socket.ops().filter((op) => op === 2).length;
    socket.hello();
    await waitFor(() => identifies() === 1, 'the Identify');
    const refused = Date.now();
    socket.deliver({ op: 9, d: false });
    await waitFor(() => identifies() === 2, 'the second Identify');
    expect(Date.now() - refused).toBeGreaterThanOrEqual(950);
    expect(sockets).toHaveLength(1);
  });

  it.each([4003, 4005, 4007, 4008])(
    'a close with %i after Ready: the session is gone, the client identifies again',
    async (code) => {
      const { socket, changes } = await readyClient();
      socket.drop(code);
      const next = await nth(1);
      expect(next.url).toBe('ws://gateway.test/gateway?v=10&encoding=json');
      next.hello();
      await waitFor(() => next.sent.length === 1, 'the Identify');
      expect(next.sent[0]?.op).toBe(2);
      expect(changes.at(-1)).toEqual(['Reconnecting', 'UnexpectedClose', code]);
    },
  );

  it.each([4004, 4010, 4011, 4012, 4013, 4014])(
    'fatal close %i: Disconnected with the code, and no new connection',
    async (code) => {
      const before = await scriptedClient();
      before.socket.hello();
      before.socket.drop(code);
      await waitFor(() => before.client.GetStatus() === Status.Disconnected, 'Disconnected');
      expect(before.changes.at(-1)).toEqual(['Disconnected', 'ConnectionFailed', code]);
      sockets.length = 0;

      const after = await readyClient();
      after.socket.drop(code);
      await waitFor(() => after.client.GetStatus() === Status.Disconnected, 'Disconnected');
      expect(after.changes.at(-1)).toEqual(['Disconnected', 'UnexpectedClose', code]);
      await sleep(100);
      expect(sockets).toHaveLength(1);
    },
  );

  it('reconnects back off: the first attempt at once, the next after 0.5–1 s', async () => {
    const { socket } = await readyClient();
    socket.drop(4000);
    const first = await nth(1);
    const firstAt = Date.now();
    first.drop(1006);
    const second = await nth(2);
    expect(Date.now() - firstAt).toBeGreaterThanOrEqual(450);
    expect(second.url).toBe('ws://resume.test/gateway?v=10&encoding=json');
  });

  it('Disconnect while reconnecting cancels the attempt', async () => {
    const { socket, client, changes } = await readyClient();
    socket.drop(4000);
    const first = await nth(1);
    first.drop(1006);
    client.Disconnect();
    expect(client.GetStatus()).toBe(Status.Disconnected);
    await sleep(1_100);
    expect(sockets).toHaveLength(2);
    expect(changes.slice(-3).map(([status]) => status)).toEqual([
      'Reconnecting',
      'Disconnecting',
      'Disconnected',
    ]);
  });

  it('the Identify and Resume tokens never reach a log line', async () => {
    const { fetch } = fakeFetch(() => json(200, { url: 'ws://gateway.test/gateway' }));
    const client = new sdkpp.Client('http://hearth.test/api', 'http://hearth.test', {
      fetch,
      webSocket: ScriptedSocket,
      build: 'debug',
    });
    clients.push(client);
    const lines: string[] = [];
    client.AddLogCallback((message) => lines.push(message), sdkpp.LoggingSeverity.Verbose);
    await client.UpdateToken(AuthorizationTokenType.Bearer, TOKEN);
    client.Connect();
    const socket = await nth(0);
    socket.hello();
    socket.ready();
    await waitFor(() => client.GetStatus() === Status.Ready, 'Ready');
    socket.drop(4000);
    const next = await nth(1);
    next.hello();
    await waitFor(() => next.sent.length === 1, 'the Resume');
    client.Disconnect();
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain(TOKEN);
  });

  it('Client.Status and Client.Error carry the C++ enumerators', () => {
    expect(Status).toEqual({
      Disconnected: 0,
      Connecting: 1,
      Connected: 2,
      Ready: 3,
      Reconnecting: 4,
      Disconnecting: 5,
    });
    expect(Errors).toEqual({ None: 0, ConnectionFailed: 1, UnexpectedClose: 2, ConnectionCanceled: 3 });
    expect(sdkpp.Client.StatusToString(Status.Ready)).toBe('Ready');
    expect(sdkpp.ClientStatus).toBe(Status);
  });
});
