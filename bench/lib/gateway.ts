// What the gateway benchmarks share: the servers (Hearth's gateway and a bare `ws` server, each a child
// with an IPC channel), the descriptor budget, and a fleet of WebSocket clients in this process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RawData, WebSocket } from 'ws';
import { type ServerProcess, startServer } from './children.js';
import { BENCH_EVENT_TYPE } from './gateway-event.js';
import { HOST, profileFlags, ROOT } from './hearth.js';

/** The sessions each side holds: 1,000, or 500 when the descriptor limit cannot take 1,000. */
export const FULL_SESSIONS = 1000;
export const REDUCED_SESSIONS = 500;
/** Descriptors a process needs besides its sockets (stdio, pipes, the module loader, SQLite…). */
const SPARE_FDS = 256;

/**
 * How many sessions per side fit in this process's open-file limit: the bench holds the clients of both
 * sides at once (2 × sessions sockets) and each server child its own (the children inherit the limit).
 */
export function sessionBudget(): { sessions: number; limit: number; note: string | undefined } {
  const limit = openFileLimit();
  const fits = (sessions: number) => limit >= 2 * sessions + SPARE_FDS;
  if (fits(FULL_SESSIONS)) return { sessions: FULL_SESSIONS, limit, note: undefined };
  if (fits(REDUCED_SESSIONS)) {
    return {
      sessions: REDUCED_SESSIONS,
      limit,
      note:
        `open-file limit ${limit} (ulimit -n) is too low for ${FULL_SESSIONS} sessions per side ` +
        `(needs ${2 * FULL_SESSIONS + SPARE_FDS}): ran with ${REDUCED_SESSIONS}; raise it with ulimit -n`,
    };
  }
  throw new Error(
    `open-file limit ${limit} (ulimit -n) is too low even for ${REDUCED_SESSIONS} sessions per side ` +
      `(needs ${2 * REDUCED_SESSIONS + SPARE_FDS}); raise it with ulimit -n`,
  );
}

/** The soft limit on open files (`ulimit -n`), from /proc on Linux; Infinity when unlimited or unknown. */
export function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === undefined || soft === 'unlimited') return Number.POSITIVE_INFINITY;
    const value = Number(soft);
    return Number.isFinite(value) ? value : Number.POSITIVE_INFINITY;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Hearth's gateway as a child with IPC (`servers/hearth-gateway.ts`): minting `players` players with tokens
 * first when given, on `database` (default in-memory SQLite); granting the game the approval flag `approve`
 * and setting the per-identity request budget to `rateLimitGlobal` per second when given; a node of a
 * many-node deployment with `redis` (its URL, key prefix and this node's worker id).
 */
export function startHearthGateway(options: {
  players?: number;
  database?: string;
  approve?: string;
  rateLimitGlobal?: number;
  /** The gateway's heartbeat interval; default HEARTBEAT_MS (idle clients need not beat during a run). */
  heartbeatMs?: number;
  redis?: { url: string; prefix: string; workerId: number };
  exposeGc: boolean;
  /** For the server to be ready, minting included; default 60 s and 30 ms per player minted. */
  timeoutMs?: number;
}): Promise<ServerProcess> {
  return startServer({
    name: 'hearth-gateway',
    args: [
      '--import',
      'tsx',
      join(ROOT, 'bench/servers/hearth-gateway.ts'),
      '--host',
      HOST,
      ...(options.players === undefined ? [] : ['--players', String(options.players)]),
      ...(options.database === undefined ? [] : ['--database', options.database]),
      ...(options.approve === undefined ? [] : ['--approve', options.approve]),
      ...(options.rateLimitGlobal === undefined
        ? []
        : ['--rate-limit-global', String(options.rateLimitGlobal)]),
      ...(options.redis === undefined
        ? []
        : [
            '--redis',
            options.redis.url,
            '--redis-prefix',
            options.redis.prefix,
            '--worker-id',
            String(options.redis.workerId),
          ]),
      // Idle sessions then need no heartbeats during the run; the deadline timer exists either way.
      '--heartbeat-ms',
      String(options.heartbeatMs ?? HEARTBEAT_MS),
    ],
    nodeFlags: [...(options.exposeGc ? ['--expose-gc'] : []), ...profileFlags()],
    ipc: true,
    cwd: ROOT,
    ready: /^hearth-gateway listening on (http:\/\/\S+)$/,
    // Minting takes each player through the code flow: allow for 10,000 of them on a loaded machine.
    timeoutMs: options.timeoutMs ?? 60_000 + (options.players ?? 0) * 30,
  });
}

/**
 * The bare `ws` server as a child with IPC (`baseline/bare-ws.ts`); given `ack`, it answers every op 1
 * Heartbeat with that frame (Hearth's own ack, byte for byte).
 */
export function startBareWs(options: { exposeGc: boolean; ack?: string }): Promise<ServerProcess> {
  return startServer({
    name: 'bare-ws',
    args: [
      '--import',
      'tsx',
      join(ROOT, 'bench/baseline/bare-ws.ts'),
      '--host',
      HOST,
      ...(options.ack === undefined ? [] : ['--ack', options.ack]),
    ],
    nodeFlags: options.exposeGc ? ['--expose-gc'] : [],
    ipc: true,
    cwd: ROOT,
    ready: /^bare-ws listening on (http:\/\/\S+)$/,
    timeoutMs: 30_000,
  });
}

/**
 * The minimal-work lobby chat server as a child with IPC (`baseline/minimal-lobby.ts`) on the SQLite file
 * `database`; its players and lobby come from `{cmd: 'setup', …}`.
 */
export function startMinimalLobby(options: { database: string }): Promise<ServerProcess> {
  return startServer({
    name: 'minimal-lobby',
    args: [
      '--import',
      'tsx',
      join(ROOT, 'bench/baseline/minimal-lobby.ts'),
      '--host',
      HOST,
      '--database',
      options.database,
      '--heartbeat-ms',
      String(HEARTBEAT_MS),
    ],
    ipc: true,
    cwd: ROOT,
    ready: /^minimal-lobby listening on (http:\/\/\S+)$/,
    timeoutMs: 30_000,
  });
}

/**
 * A node of cross-node's minimal-work deployment as a child with IPC (`baseline/minimal-cross-node.ts`): its
 * event log in the PostgreSQL schema `schema` of `database`, its wake-ups on Redis under `prefix`; its players
 * come from `{cmd: 'setup', tokens}`.
 */
export function startMinimalCrossNode(options: {
  database: string;
  schema: string;
  redis: string;
  prefix: string;
}): Promise<ServerProcess> {
  return startServer({
    name: 'minimal-cross-node',
    args: [
      '--import',
      'tsx',
      join(ROOT, 'bench/baseline/minimal-cross-node.ts'),
      '--host',
      HOST,
      '--database',
      options.database,
      '--schema',
      options.schema,
      '--redis',
      options.redis,
      '--prefix',
      options.prefix,
    ],
    ipc: true,
    cwd: ROOT,
    ready: /^minimal-cross-node listening on (http:\/\/\S+)$/,
    timeoutMs: 30_000,
  });
}

/**
 * Waits for servers started side by side, adding each that started to `started` (so that the caller stops
 * it); throws the first failure once all have settled.
 */
export async function startAll<const T extends readonly Promise<ServerProcess>[]>(
  started: ServerProcess[],
  starting: T,
): Promise<{ -readonly [K in keyof T]: ServerProcess }> {
  const settled = await Promise.allSettled(starting);
  for (const outcome of settled) if (outcome.status === 'fulfilled') started.push(outcome.value);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<ServerProcess>).value) as {
    -readonly [K in keyof T]: ServerProcess;
  };
}

/** Hearth's heartbeat interval in these runs: 10 minutes, longer than any benchmark. */
export const HEARTBEAT_MS = 600_000;

/** The WebSocket address of a server's gateway, as a client connects to it. */
export function gatewayUrl(httpUrl: string): string {
  return `${httpUrl.replace(/^http/, 'ws')}/gateway?v=10&encoding=json`;
}

/** The access tokens the Hearth child minted, in order. */
export async function playerTokens(hearth: ServerProcess): Promise<string[]> {
  const tokens = await hearth.request({ cmd: 'players' });
  if (!Array.isArray(tokens) || !tokens.every((t): t is string => typeof t === 'string')) {
    throw new Error('hearth-gateway answered no token list');
  }
  return tokens;
}

/**
 * Asks a gateway server child to publish (`{cmd: 'publish', …}`, see the servers) and checks that it had
 * the expected number of receivers (Hearth's sessions or bare ws's clients).
 */
export async function publishTo(
  server: ServerProcess,
  request: { cmd: 'publish'; [key: string]: unknown },
  receivers: number,
  timeoutMs: number,
): Promise<void> {
  server.assertAlive();
  const reply = await server.request(request, timeoutMs);
  const held =
    typeof reply === 'object' && reply !== null
      ? ((reply as Record<string, unknown>)['sessions'] ?? (reply as Record<string, unknown>)['clients'])
      : undefined;
  if (held !== receivers) {
    throw new Error(`${server.name} published to ${String(held)} receivers, not ${receivers}`);
  }
}

export interface FleetOptions {
  /** Names the fleet in errors. */
  label: string;
  url: string;
  /** One connection each: Hello, Identify with `Bearer <token>` (or as `identifyAs` says), READY. */
  tokens?: readonly string[];
  /** The Identify `token` for each of `tokens`; default `Bearer <token>` (a player's access token). */
  identifyAs?: (token: string) => string;
  /** Without tokens: this many plain connections, ready once open. */
  count?: number;
  /** Connections being opened at once. */
  concurrency: number;
  /** For the whole fleet to be ready. */
  timeoutMs: number;
  /**
   * Given: every counted dispatch goes here, with its parsed `d` and its arrival time, instead of
   * being counted for `burst` (for traffic that comes in a stream rather than in bursts).
   */
  onEvent?: (client: number, data: unknown, at: number) => void;
  /** The dispatch counted as a delivery; default BENCH_EVENT_TYPE. */
  eventType?: string;
  /**
   * Given: each client sends op 1 Heartbeat at this interval from the moment it is open, the first after a
   * random part of it (as the protocol asks of real clients, so beats spread over the interval), and
   * counts its acks (`takeAcks`).
   */
  heartbeatMs?: number;
}

export interface Burst {
  seconds: number;
  /** Each delivery's time from the start of the burst, ms, in arrival order. */
  latencies: Float64Array;
}

interface Round {
  events: number;
  expected: number;
  received: number;
  perClient: Uint32Array;
  started: number;
  latencies: Float64Array;
  done: () => void;
}

/**
 * WebSocket clients of one server, each parsing every message it receives as a gateway payload and
 * counting the dispatches of one type (BENCH_EVENT_TYPE unless told); `burst` times a number of them reaching every client.
 */
export class Fleet {
  readonly label: string;
  /** The text of the first BENCH_EVENT_TYPE dispatch received: what the baseline sends in Hearth's stead. */
  sample: string | undefined;
  readonly #sockets: WebSocket[] = [];
  #round: Round | undefined;
  #failure: Error | undefined;
  #closing = false;
  readonly #onEvent: FleetOptions['onEvent'];

  readonly #eventType: string;
  readonly #identifyAs: (token: string) => string;
  /** Per client: heartbeat acks received since `startHeartbeats`. */
  #acks: Uint32Array | undefined;
  #ackSample: string | undefined;
  readonly #heartbeatMs: number | undefined;
  readonly #beats: NodeJS.Timeout[] = [];

  private constructor(options: FleetOptions) {
    this.label = options.label;
    this.#onEvent = options.onEvent;
    this.#eventType = options.eventType ?? BENCH_EVENT_TYPE;
    this.#identifyAs = options.identifyAs ?? ((token) => `Bearer ${token}`);
    this.#heartbeatMs = options.heartbeatMs;
    if (options.heartbeatMs !== undefined) {
      this.#acks = new Uint32Array(options.tokens?.length ?? options.count ?? 0);
    }
  }

  #beatFrom(index: number, socket: WebSocket, intervalMs: number): void {
    const beat = JSON.stringify({ op: HEARTBEAT, d: null });
    this.#beats[index] = setTimeout(() => {
      socket.send(beat);
      this.#beats[index] = setInterval(() => socket.send(beat), intervalMs);
    }, Math.random() * intervalMs);
  }

  get size(): number {
    return this.#sockets.length;
  }

  /** Opens the connections, `concurrency` at a time; rejects (closing those open) if one fails. */
  static async open(options: FleetOptions): Promise<Fleet> {
    const fleet = new Fleet(options);
    const count = options.tokens?.length ?? options.count ?? 0;
    const deadline = performance.now() + options.timeoutMs;
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const index = next++;
        const remaining = deadline - performance.now();
        if (remaining <= 0) throw new Error(`${options.label}: ${index} of ${count} ready in time`);
        fleet.#sockets[index] = await fleet.#connect(index, options.url, options.tokens?.[index], remaining);
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(options.concurrency, count) }, worker));
    } catch (error) {
      await fleet.close(5_000);
      throw error;
    }
    return fleet;
  }

  /** The first failure of a connection (an error, or closed by the server) since the fleet opened, if any. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /**
   * Calls `trigger` (which makes the server send `events` dispatches to every client) and waits until every
   * client has received all of them; the time runs from just before `trigger` to the last delivery.
   */
  async burst(events: number, trigger: () => Promise<unknown>, timeoutMs: number): Promise<Burst> {
    this.#check();
    const expected = this.#sockets.length * events;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const round: Round = {
      events,
      expected,
      received: 0,
      perClient: new Uint32Array(this.#sockets.length),
      started: performance.now(),
      latencies: new Float64Array(expected),
      done,
    };
    this.#round = round;
    let timer: NodeJS.Timeout | undefined;
    try {
      const triggered = trigger();
      await Promise.race([
        Promise.all([finished, triggered]),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `${this.label}: ${round.received} of ${expected} deliveries within ${timeoutMs} ms` +
                    (this.#failure ? `; ${this.#failure.message}` : ''),
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
      const seconds = round.latencies[expected - 1]! / 1000;
      this.#check();
      if (round.perClient.some((n) => n !== events)) {
        throw new Error(`${this.label}: a client received other than ${events} dispatches`);
      }
      return { seconds, latencies: round.latencies };
    } finally {
      clearTimeout(timer);
      this.#round = undefined;
    }
  }

  /** Per client, the heartbeat acks received since the last call (with `heartbeatMs`); zeroes them. */
  takeAcks(): { acks: Uint32Array; sample: string | undefined } {
    const acks = this.#acks ?? new Uint32Array(0);
    this.#acks = new Uint32Array(acks.length);
    return { acks, sample: this.#ackSample };
  }

  #stopHeartbeats(): void {
    for (const timer of this.#beats) clearTimeout(timer);
    this.#beats.length = 0;
  }

  /** Closes every connection with 1000 (ending Hearth sessions); terminates those not closed in time. */
  async close(timeoutMs: number): Promise<void> {
    this.#stopHeartbeats();
    this.#closing = true;
    const open = this.#sockets.filter((s) => s !== undefined && s.readyState !== WebSocket.CLOSED);
    const closed = open.map(
      (socket) => new Promise<void>((resolve) => socket.once('close', () => resolve())),
    );
    for (const socket of open) {
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
      else socket.close(1000);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all(closed), late]);
    clearTimeout(timer);
    for (const socket of open) if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
  }

  #check(): void {
    if (this.#failure) throw this.#failure;
  }

  #connect(index: number, url: string, token: string | undefined, timeoutMs: number): Promise<WebSocket> {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    return new Promise<WebSocket>((resolve, reject) => {
      let ready = false;
      const fail = (why: string) => {
        clearTimeout(timer);
        socket.terminate();
        reject(new Error(`${this.label}: connection ${index} ${why}`));
      };
      const timer = setTimeout(() => fail(`not ready within ${Math.round(timeoutMs)} ms`), timeoutMs);
      const becomeReady = () => {
        ready = true;
        clearTimeout(timer);
        resolve(socket);
      };
      socket.on('error', (error) => {
        if (!ready) fail(`failed: ${error.message}`);
        else this.#failure ??= new Error(`${this.label}: connection ${index} failed: ${error.message}`);
      });
      socket.on('close', (code, reason) => {
        if (!ready) fail(`closed ${code} ${reason.toString()} before it was ready`);
        else if (!this.#closing) {
          this.#failure ??= new Error(
            `${this.label}: connection ${index} closed ${code} ${reason.toString()}`,
          );
        }
      });
      if (token === undefined) socket.once('open', becomeReady);
      const heartbeatMs = this.#heartbeatMs;
      if (heartbeatMs !== undefined) socket.once('open', () => this.#beatFrom(index, socket, heartbeatMs));
      socket.on('message', (data) => {
        const frame = parseFrame(data);
        if (ready) {
          this.#received(index, frame);
          return;
        }
        if (token === undefined) return;
        if (frame?.op === HELLO) {
          socket.send(
            JSON.stringify({
              op: IDENTIFY,
              d: {
                token: this.#identifyAs(token),
                intents: 0,
                properties: { os: process.platform, browser: 'hearth-bench', device: 'hearth-bench' },
              },
            }),
          );
        } else if (frame?.op === DISPATCH && frame.t === 'READY') {
          becomeReady();
        } else if (frame?.op === INVALID_SESSION) {
          fail('was refused Identify (op 9 Invalid Session)');
        }
      });
    });
  }

  #received(index: number, frame: Frame | undefined): void {
    if (frame?.op === HEARTBEAT_ACK && this.#acks) {
      this.#acks[index]!++;
      this.#ackSample ??= frame.text;
      return;
    }
    if (frame === undefined || frame.op !== DISPATCH || frame.t !== this.#eventType) return;
    this.sample ??= frame.text;
    if (this.#onEvent) {
      this.#onEvent(index, frame.d, performance.now());
      return;
    }
    const round = this.#round;
    if (!round) {
      this.#failure ??= new Error(`${this.label}: a dispatch arrived outside a burst`);
      return;
    }
    if (++round.perClient[index]! > round.events) {
      this.#failure ??= new Error(`${this.label}: connection ${index} received more than ${round.events}`);
      return;
    }
    round.latencies[round.received++] = performance.now() - round.started;
    if (round.received === round.expected) round.done();
  }
}

const DISPATCH = 0;
const HEARTBEAT = 1;
const IDENTIFY = 2;
const INVALID_SESSION = 9;
const HELLO = 10;
const HEARTBEAT_ACK = 11;

interface Frame {
  op: number;
  t: string | null;
  d: unknown;
  text: string;
}

/** A gateway payload's op, t and d (every message is parsed whole, as a client would). */
function parseFrame(data: RawData): Frame | undefined {
  const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || !('op' in value) || typeof value.op !== 'number') {
    return undefined;
  }
  const t = 't' in value && typeof value.t === 'string' ? value.t : null;
  return { op: value.op, t, d: 'd' in value ? value.d : null, text };
}
