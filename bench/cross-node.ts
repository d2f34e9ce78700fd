import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Benchmark, Figures, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  Fleet,
  gatewayUrl,
  playerTokens,
  sessionBudget,
  startAll,
  startHearthGateway,
  startMinimalCrossNode,
} from './lib/gateway.js';
import { BENCH_EVENT_DATA } from './lib/gateway-event.js';
import { collectGarbage } from './lib/gc.js';
import { median, percentile } from './lib/load.js';
import { progress } from './lib/progress.js';

/** The services of a many-node deployment; the test suites' defaults and variables (test-support/services.ts). */
const POSTGRES_URL = process.env['HEARTH_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env['HEARTH_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Events published per second on the publishing node, each to one session. */
const RATE = 5000;
const RUN_SECONDS = 3;
const WARM_UP_SECONDS = 1;
/** Measured runs per side, one of each side a round, the order reversed every other round, after one warm-up each. */
const ROUNDS = 3;
/** After the last event was due, for every delivery to arrive. */
const DRAIN_TIMEOUT_MS = 30_000;
const CONNECT = { concurrency: 50, timeoutMs: 60_000 };
/** The issue's targets (issue 20): two nodes' p99 and their delivered/s against one node's. */
const TARGET_P99_MS = 25;
const TARGET_RATIO = 0.8;

/** One deployment: its nodes, its clients, and the runs measured on it. */
interface Side {
  label: string;
  /** Its row in the table. */
  title: string;
  /** The node every event is published on. */
  publisher: ServerProcess;
  /** Sessions the publisher holds (checked against its registry at every run). */
  publisherSessions: number;
  /** Every node of the deployment, the publisher first: each one's CPU per event is measured per run. */
  nodes: ServerProcess[];
  fleets: Fleet[];
  tally: Tally;
  runs: Run[];
}

interface Run {
  deliveries: number;
  /** From the first event's due time to the last delivery. */
  seconds: number;
  p50: number;
  p99: number;
  /** How far the publisher's pacing fell behind (ms): its event loop was that late at worst. */
  lateMs: number;
  /** Percentiles of each event's time from due until its publish returned (appended and committed), ms. */
  publishP50: number;
  publishP99: number;
  /** Each node's CPU (user + system, /proc) per event of the run, µs, in `Side.nodes` order. */
  cpuPerEventUs: number[];
}

/**
 * Events published on one node of a deployment on PostgreSQL and Redis at a steady rate, each to a session
 * on another node, beside the same load on a deployment of one node holding every session: the bus between
 * nodes (event log, wake-up over Redis, the reading node's fan-out) against a node's own delivery. Beside
 * both, the minimal-work deployment (`baseline/minimal-cross-node.ts`): two nodes doing only what carrying
 * an event between them durably and in order cannot skip, so that the latency the host allows is measured in
 * the same run.
 */
const crossNode: Benchmark = {
  name: 'cross-node',
  description: `events at ${RATE}/s published on one node, delivered to sessions on another (deliveries/s)`,
  timeoutSeconds: 420,
  async run(): Promise<Result[]> {
    const began = performance.now();
    const elapsed = () => `${((performance.now() - began) / 1000).toFixed(1)} s`;
    const budget = sessionBudget();
    const sessions = budget.sessions;
    // Half the sessions receive: in the two-node deployment those on node B, the rest idle on node A.
    const receivers = sessions / 2;
    const loadAtStart = loadavg();
    const services = await Services.open();
    const servers: ServerProcess[] = [];
    const fleets: Fleet[] = [];
    try {
      const two = services.deployment('two');
      const one = services.deployment('one');
      progress(`  starting node A (minting ${sessions} players with tokens) of two nodes, and one node`);
      const [nodeA, single] = await startAll(servers, [
        startHearthGateway({ players: sessions, ...two, exposeGc: false, timeoutMs: 180_000 }),
        startHearthGateway({ players: sessions, ...one, exposeGc: false, timeoutMs: 180_000 }),
      ]);
      // Node B finds the game node A made in their database.
      progress(`  starting node B of two nodes (${elapsed()})`);
      const [nodeB] = await startAll(servers, [
        startHearthGateway({
          ...two,
          redis: { ...two.redis, workerId: 1 },
          exposeGc: false,
          timeoutMs: 60_000,
        }),
      ]);
      const twoTokens = await playerTokens(nodeA);
      const oneTokens = await playerTokens(single);
      // The minimal nodes know the same players by the same tokens; node A makes the event log first.
      const minimal = services.minimal('minimal');
      const [minimalA] = await startAll(servers, [startMinimalCrossNode(minimal)]);
      const [minimalB] = await startAll(servers, [startMinimalCrossNode(minimal)]);
      for (const node of [minimalA, minimalB]) await node.request({ cmd: 'setup', tokens: twoTokens });

      progress(
        `  connecting ${receivers} + ${receivers} sessions to nodes A and B, ${sessions} to one node (${elapsed()})`,
      );
      const twoTally = new Tally('two nodes', receivers, sessions);
      const oneTally = new Tally('one node', receivers, sessions);
      const minimalTally = new Tally('minimal work', receivers, sessions);
      const open = async (label: string, url: string, tokens: string[], tally: Tally, offset: number) => {
        const fleet = await Fleet.open({
          label,
          url: gatewayUrl(url),
          tokens,
          ...CONNECT,
          onEvent: (client, data, at) => tally.received(offset + client, data, at),
        });
        fleets.push(fleet);
        return fleet;
      };
      /** A deployment of two nodes: players 0 … receivers − 1 on A (which publishes), the rest on B. */
      const twoNodes = async (
        label: string,
        title: string,
        a: ServerProcess,
        b: ServerProcess,
        tally: Tally,
      ) => ({
        label,
        title,
        publisher: a,
        publisherSessions: sessions - receivers,
        nodes: [a, b],
        fleets: [
          await open(`${label}: A`, a.url, twoTokens.slice(0, receivers), tally, 0),
          await open(`${label}: B`, b.url, twoTokens.slice(receivers), tally, receivers),
        ],
        tally,
        runs: [],
      });
      const twoSide: Side = await twoNodes('two nodes', 'Hearth, two nodes (A → B)', nodeA, nodeB, twoTally);
      const oneSide: Side = {
        label: 'one node',
        title: 'Hearth, one node',
        publisher: single,
        publisherSessions: sessions,
        nodes: [single],
        fleets: [await open('one node', single.url, oneTokens, oneTally, 0)],
        tally: oneTally,
        runs: [],
      };
      const minimalSide: Side = await twoNodes(
        'minimal work',
        'minimal work, two nodes (A → B)',
        minimalA,
        minimalB,
        minimalTally,
      );

      progress(`  streaming (${elapsed()})`);
      let runs = 0;
      const measure = async (side: Side, seconds: number, what: string) => {
        collectGarbage();
        const run = await stream(side, `r${String(++runs).padStart(3, '0')}`, seconds, receivers, sessions);
        progress(
          `  ${what} ${side.label}: ${Math.round(run.deliveries / run.seconds)} deliveries/s, ` +
            `p50 ${run.p50.toFixed(2)} ms, p99 ${run.p99.toFixed(2)} ms (${run.deliveries} in ` +
            `${(run.seconds * 1000).toFixed(0)} ms; publish returned p50 ${run.publishP50.toFixed(1)} ms, ` +
            `p99 ${run.publishP99.toFixed(1)} ms after due; pacing behind by up to ${run.lateMs.toFixed(1)} ms; ` +
            `CPU per event ${run.cpuPerEventUs.map((us) => `${us.toFixed(0)} µs`).join(' + ')})`,
        );
        return run;
      };
      const sides = [oneSide, twoSide, minimalSide];
      for (const side of sides) await measure(side, WARM_UP_SECONDS, 'warm-up');
      for (let i = 0; i < ROUNDS; i++) {
        for (const side of i % 2 === 0 ? sides : sides.toReversed()) {
          side.runs.push(await measure(side, RUN_SECONDS, `round ${i + 1}/${ROUNDS}`));
        }
      }
      const twoBytes = twoTally.dataBytes;
      for (const tally of [oneTally, minimalTally]) {
        if (tally.dataBytes !== twoBytes) {
          throw new Error(
            `two nodes delivered events of ${twoBytes} bytes, ${tally.label} of ${tally.dataBytes}`,
          );
        }
      }

      const baseline = figures(oneSide);
      const subject = figures(twoSide);
      const floor = figures(minimalSide);
      const ratio = subject.throughput / baseline.throughput;
      const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
      const publishing = (side: Side) =>
        `${side.label} p50 ${median(side.runs.map((r) => r.publishP50)).toFixed(1)} ms, p99 ` +
        `${median(side.runs.map((r) => r.publishP99)).toFixed(1)} ms`;
      const cpuPerEvent = (side: Side) =>
        `${side.label} ${side.nodes
          .map((_, i) => `${median(side.runs.map((r) => r.cpuPerEventUs[i]!)).toFixed(0)} µs`)
          .join(' + ')}`;
      const loadAtEnd = loadavg();
      const p99 = (figures: Figures) => `${figures.latencyP99Ms!.toFixed(1)} ms`;
      return [
        {
          metric: 'two nodes vs one',
          unit: 'deliveries/s',
          baseline,
          hearth: subject,
          ratio,
          notes: [
            `two nodes: Hearth nodes A and B (servers/hearth-gateway.ts, each its own process) on one PostgreSQL ` +
              `schema and one Redis key prefix, ${receivers} sessions on each; every event is published on A ` +
              `to one of B's ${receivers} players. one node: one Hearth process on a schema and prefix of its ` +
              `own, with PostgreSQL and Redis all the same, holding all ${sessions} sessions, and the same ` +
              `events to the same ${receivers} players`,
            `a run: ${RATE} events/s paced on the publishing node (bus.publish, audience {users: [one player], ` +
              `applicationId}) for ${RUN_SECONDS} s, then until every event reached its one session, exactly ` +
              `once (else it fails); deliveries/s = events / (first due to last delivery); latency: each ` +
              `delivery's time from when its event was due (the time it carries) to its arrival at the client; ` +
              `1 warm-up run of ${WARM_UP_SECONDS} s and ${ROUNDS} runs per side (one node, two nodes, minimal ` +
              `work, then the other way round, and so on), medians`,
            `CPU per event (user + system from /proc, medians; two nodes: A + B): ${cpuPerEvent(oneSide)}; ` +
              `${cpuPerEvent(twoSide)}`,
            `of which the publish (the append to the event log committed, and delivered on its own node; from ` +
              `due until bus.publish returned, medians): ${publishing(oneSide)}; ${publishing(twoSide)}`,
            `events of ${twoBytes} bytes of data on both sides; sessions identified as different players of ` +
              `one game with Bearer tokens (openid sdk.social_layer), clients in the bench process parsing ` +
              `every frame` +
              (budget.note === undefined ? '' : `; ${budget.note}`),
            `targets (issue 20): two nodes' p99 < ${TARGET_P99_MS} ms: ${met(subject.latencyP99Ms! < TARGET_P99_MS)} ` +
              `(${subject.latencyP99Ms!.toFixed(1)} ms); delivered/s ≥ ${TARGET_RATIO}× one node's: ` +
              `${met(ratio >= TARGET_RATIO)} (${ratio.toFixed(2)}×); load average ` +
              `${loadAtStart[0]!.toFixed(2)} at start, ${loadAtEnd[0]!.toFixed(2)} at end`,
          ],
        },
        {
          metric: 'two nodes vs minimal work',
          unit: 'deliveries/s',
          baseline: floor,
          hearth: subject,
          ratio: subject.throughput / floor.throughput,
          notes: [
            `minimal work (baseline/minimal-cross-node.ts): two nodes of one process each with the same ` +
              `clients, tokens and event bytes on PostgreSQL and Redis (a schema and prefix of their own): the ` +
              `publishing node appends the events published while an append is under way in one INSERT of ` +
              `arrays (one round trip, one commit), wakes the other over Redis and sends its own rows at once; ` +
              `the other reads the rows after its last (500 at a time) and sends each to its player's session; ` +
              `no table lock (one publisher), no trimming, no dispatches kept for resuming elsewhere; run ` +
              `alongside the Hearth deployments (one warm-up, then ${ROUNDS} rounds, the order reversed every ` +
              `other round), medians`,
            `CPU per event: ${cpuPerEvent(minimalSide)}; the publish: ${publishing(minimalSide)}`,
            `p99 delivery: Hearth two nodes ${p99(subject)}, minimal work two nodes ${p99(floor)}, Hearth one ` +
              `node ${p99(baseline)}; the ${TARGET_P99_MS} ms target is ${met(floor.latencyP99Ms! < TARGET_P99_MS)} ` +
              `by the minimal work itself on this host`,
          ],
        },
      ];
    } finally {
      await Promise.allSettled(fleets.map((fleet) => fleet.close(5_000)));
      // A node writes its CPU profile as it exits, after its sessions and their writes are wound up.
      const grace = process.env['BENCH_PROFILE'] ? 60_000 : 5_000;
      await Promise.allSettled(servers.map((server) => server.stop(grace)));
      await services.close().catch((error: unknown) => progress(`  cleaning up failed: ${String(error)}`));
    }
  },
};

export default crossNode;

/** Runs one stream on a side: asks its publishing node for it and waits for every delivery. */
async function stream(
  side: Side,
  run: string,
  seconds: number,
  receivers: number,
  sessions: number,
): Promise<Run> {
  for (const fleet of side.fleets) if (fleet.failure) throw fleet.failure;
  const count = RATE * seconds;
  const cpu = () => side.nodes.map((node) => node.cpuSeconds() ?? Number.NaN);
  const cpuBefore = cpu();
  const delivered = side.tally.begin(run, count);
  side.publisher.assertAlive();
  const reply = (await side.publisher.request(
    {
      cmd: 'stream',
      rate: RATE,
      count,
      run,
      from: receivers,
      to: sessions,
      data: BENCH_EVENT_DATA,
    },
    seconds * 1000 + DRAIN_TIMEOUT_MS,
  )) as {
    sessions?: unknown;
    lateMs?: unknown;
    publishP50Ms?: unknown;
    publishP99Ms?: unknown;
  } | null;
  if (reply?.sessions !== side.publisherSessions) {
    throw new Error(
      `${side.label}: the publishing node held ${String(reply?.sessions)} sessions, not ${side.publisherSessions}`,
    );
  }
  const arrivals = await side.tally.finish(delivered, DRAIN_TIMEOUT_MS);
  const cpuAfter = cpu();
  for (const fleet of side.fleets) if (fleet.failure) throw fleet.failure;
  const sorted = Float64Array.from(arrivals.latencies).sort();
  return {
    deliveries: count,
    seconds: (arrivals.last - arrivals.firstDue) / 1000,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    lateMs: Number(reply.lateMs),
    publishP50: Number(reply.publishP50Ms),
    publishP99: Number(reply.publishP99Ms),
    cpuPerEventUs: cpuAfter.map((after, i) => ((after - cpuBefore[i]!) * 1e6) / count),
  };
}

function figures(side: Side): Figures {
  const rates = side.runs.map((run) => run.deliveries / run.seconds);
  return {
    label: side.title,
    throughput: median(rates),
    latencyP50Ms: median(side.runs.map((run) => run.p50)),
    latencyP99Ms: median(side.runs.map((run) => run.p99)),
    rounds: rates,
  };
}

interface Pending {
  run: string;
  count: number;
  /** Per event, whether its one session has it. */
  received: Uint8Array;
  delivered: number;
  latencies: Float64Array;
  /** Epoch ms (sub-ms): when event 0 was due, and when the last delivery arrived. */
  firstDue: number;
  last: number;
  done: () => void;
}

/**
 * Matches every delivery of a deployment's sessions to its event: the session it was for (event i goes to
 * the i % receivers-th receiving session), the run it belongs to, and only once.
 */
class Tally {
  readonly label: string;
  readonly #firstReceiver: number;
  readonly #receivers: number;
  #pending: Pending | undefined;
  /** A wrong delivery, reported by the run (throwing in a socket's handler would crash the bench). */
  #failure: Error | undefined;
  /** The byte length of an event's data as delivered (JSON), to compare the sides. */
  dataBytes: number | undefined;

  constructor(label: string, receivers: number, sessions: number) {
    this.label = label;
    this.#receivers = receivers;
    this.#firstReceiver = sessions - receivers;
  }

  begin(run: string, count: number): Promise<void> {
    if (this.#failure) throw this.#failure;
    return new Promise<void>((done) => {
      this.#pending = {
        run,
        count,
        received: new Uint8Array(count),
        delivered: 0,
        latencies: new Float64Array(count),
        firstDue: Number.NaN,
        last: 0,
        done,
      };
    });
  }

  /** Waits until every event of the run was delivered (or the drain times out); answers the run's arrivals. */
  async finish(
    delivered: Promise<void>,
    timeoutMs: number,
  ): Promise<{ latencies: Float64Array; firstDue: number; last: number }> {
    const pending = this.#pending;
    if (!pending) throw new Error(`${this.label}: no run under way`);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        delivered,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `${this.label}: ${pending.delivered} of ${pending.count} events of run ${pending.run} ` +
                    `delivered within ${timeoutMs} ms of the last publish` +
                    (this.#failure ? `; ${this.#failure.message}` : ''),
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
      this.#pending = undefined;
    }
    if (this.#failure) throw this.#failure;
    return { latencies: pending.latencies, firstDue: pending.firstDue, last: pending.last };
  }

  received(client: number, data: unknown, at: number): void {
    const arrived = performance.timeOrigin + at;
    const pending = this.#pending;
    const wrong = this.#wrong(pending, client, data);
    if (wrong !== undefined || !pending) {
      this.#failure ??= new Error(`${this.label}: ${wrong}`);
      return;
    }
    const meta = (data as { metadata: { seq: string; sent_at: string } }).metadata;
    const seq = Number(meta.seq);
    const sentAt = Number(meta.sent_at);
    pending.received[seq] = 1;
    this.dataBytes ??= Buffer.byteLength(JSON.stringify(data));
    if (seq === 0) pending.firstDue = sentAt;
    pending.latencies[pending.delivered++] = arrived - sentAt;
    pending.last = Math.max(pending.last, arrived);
    if (pending.delivered === pending.count) pending.done();
  }

  /** Why a delivery is not one the run expects (another run's, a bad one, to another session, a repeat). */
  #wrong(pending: Pending | undefined, client: number, data: unknown): string | undefined {
    const meta = (data as { metadata?: { run?: unknown; seq?: unknown; sent_at?: unknown } } | null)
      ?.metadata;
    if (!pending || meta?.run !== pending.run)
      return `an event of run ${String(meta?.run)} arrived outside it`;
    const seq = Number(meta.seq);
    if (!Number.isInteger(seq) || seq < 0 || seq >= pending.count || !Number.isFinite(Number(meta.sent_at))) {
      return `an event without a valid seq and sent_at arrived: ${JSON.stringify(meta)}`;
    }
    const expected = this.#firstReceiver + (seq % this.#receivers);
    if (client !== expected) return `event ${seq} reached session ${client}, not ${expected}`;
    if (pending.received[seq]) return `event ${seq} of run ${pending.run} arrived twice`;
    return undefined;
  }
}

/**
 * A PostgreSQL schema and a Redis key prefix of this run's own for each deployment, so that it shares
 * nothing with test suites running meanwhile (Hearth names its Redis channels after the prefix too);
 * both are removed at the end.
 */
class Services {
  readonly #tag = `hearth_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  readonly #schemas: string[] = [];
  readonly #prefixes: string[] = [];
  readonly #redis: Redis;

  private constructor(redis: Redis) {
    this.#redis = redis;
  }

  /** Fails with the reason when PostgreSQL or Redis cannot be reached. */
  static async open(): Promise<Services> {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5_000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
    } catch (error) {
      throw new Error(
        `cross-node needs PostgreSQL at ${POSTGRES_URL} (HEARTH_TEST_POSTGRES_URL): ${String(error)}`,
      );
    } finally {
      await client.end().catch(() => {});
    }
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      redis.disconnect();
      throw new Error(`cross-node needs Redis at ${REDIS_URL} (HEARTH_TEST_REDIS_URL): ${String(error)}`);
    }
    return new Services(redis);
  }

  /** The database URL and Redis settings of a deployment's nodes (node A's worker id). */
  deployment(name: string): { database: string; redis: { url: string; prefix: string; workerId: number } } {
    const schema = `${this.#tag}_${name}`;
    const prefix = `${this.#tag}:${name}:`;
    this.#schemas.push(schema);
    this.#prefixes.push(prefix);
    return {
      database: `${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`,
      redis: { url: REDIS_URL, prefix, workerId: 0 },
    };
  }

  /** Where the minimal-work nodes keep their event log and send their wake-ups. */
  minimal(name: string): { database: string; schema: string; redis: string; prefix: string } {
    const schema = `${this.#tag}_${name}`;
    const prefix = `${this.#tag}:${name}:`;
    this.#schemas.push(schema);
    this.#prefixes.push(prefix);
    return { database: POSTGRES_URL, schema, redis: REDIS_URL, prefix };
  }

  async close(): Promise<void> {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    try {
      await client.connect();
      for (const schema of this.#schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end().catch(() => {});
    }
    for (const prefix of this.#prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await this.#redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await this.#redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
    this.#redis.disconnect();
  }
}
