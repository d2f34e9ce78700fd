import type { Benchmark, Figures, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  type Burst,
  Fleet,
  gatewayUrl,
  playerTokens,
  publishTo,
  sessionBudget,
  startAll,
  startBareWs,
  startHearthGateway,
} from './lib/gateway.js';
import { BENCH_EVENT_DATA } from './lib/gateway-event.js';
import { median } from './lib/load.js';
import { progress } from './lib/progress.js';

/** Events per burst: each reaches every session. */
const EVENTS = 50;
/** Measured bursts per side, in the order AB BA AB…, after one warm-up burst per side. */
const ROUNDS = 5;
const BURST_TIMEOUT_MS = 20_000;
const CONNECT = { concurrency: 50, timeoutMs: 30_000 };

interface Side {
  label: string;
  fleet: Fleet;
  /** Makes the server send the burst's events to every client; answers once they are queued. */
  publish: () => Promise<unknown>;
  bursts: Burst[];
}

/**
 * One event to every connected, identified session of a game: Hearth's gateway (bus publish with audience
 * {applicationId}, then per session the filter, sequence, resume buffer, JSON and send) beside a bare `ws`
 * server sending a frame of the same bytes to each of its clients. Both servers are children; the clients
 * of both sides live in this process and parse every frame.
 */
const gatewayFanout: Benchmark = {
  name: 'gateway-fanout',
  description: 'one event to every identified session of a game (deliveries/s)',
  timeoutSeconds: 90,
  async run(): Promise<Result> {
    const budget = sessionBudget();
    const sessions = budget.sessions;
    const servers: ServerProcess[] = [];
    const fleets: Fleet[] = [];
    try {
      progress(`  starting Hearth (minting ${sessions} players with tokens) and bare ws`);
      const [hearth, bare] = await startAll(servers, [
        startHearthGateway({ players: sessions, exposeGc: false }),
        startBareWs({ exposeGc: false }),
      ]);
      const tokens = await playerTokens(hearth);

      progress(`  connecting ${sessions} identified sessions to Hearth, ${sessions} clients to bare ws`);
      const hearthFleet = await Fleet.open({
        label: 'Hearth',
        url: gatewayUrl(hearth.url),
        tokens,
        ...CONNECT,
      });
      fleets.push(hearthFleet);
      const bareFleet = await Fleet.open({
        label: 'bare ws',
        url: gatewayUrl(bare.url),
        count: sessions,
        ...CONNECT,
      });
      fleets.push(bareFleet);

      const hearthSide: Side = {
        label: 'Hearth',
        fleet: hearthFleet,
        publish: () =>
          publishTo(
            hearth,
            { cmd: 'publish', count: EVENTS, data: BENCH_EVENT_DATA },
            sessions,
            BURST_TIMEOUT_MS,
          ),
        bursts: [],
      };
      // The warm-up gives the frame Hearth sends; the baseline sends those very bytes.
      await burst(hearthSide, 'warm-up');
      const payload = hearthFleet.sample;
      if (payload === undefined) throw new Error('Hearth sent no dispatch to sample');
      const bareSide: Side = {
        label: 'bare ws',
        fleet: bareFleet,
        publish: () =>
          publishTo(bare, { cmd: 'publish', count: EVENTS, payload }, sessions, BURST_TIMEOUT_MS),
        bursts: [],
      };
      await burst(bareSide, 'warm-up');
      if (bareFleet.sample !== payload) throw new Error('bare ws delivered other bytes than it was given');
      hearthSide.bursts.length = 0;
      bareSide.bursts.length = 0;

      for (let i = 0; i < ROUNDS; i++) {
        for (const side of i % 2 === 0 ? [bareSide, hearthSide] : [hearthSide, bareSide]) {
          await burst(side, `round ${i + 1}/${ROUNDS}`);
        }
      }
      const baseline = figures(bareSide, sessions);
      const subject = figures(hearthSide, sessions);
      return {
        unit: 'deliveries/s',
        baseline,
        hearth: subject,
        ratio: subject.throughput / baseline.throughput,
        notes: [
          `${sessions} sessions per side, each a WebSocket client in the bench process parsing every frame; ` +
            `Hearth's identified as ${sessions} different players with Bearer tokens (openid ` +
            `sdk.social_layer) of one game`,
          `a burst: ${EVENTS} events published at once (Hearth: bus.publish with audience {applicationId}; ` +
            `bare ws: for each client send), timed until every client had all ${EVENTS}: ` +
            `${sessions * EVENTS} deliveries; 1 warm-up and ${ROUNDS} bursts per side (AB BA AB…), medians`,
          `latency: each delivery's time from the start of its burst; frames of ` +
            `${Buffer.byteLength(payload)} bytes (bare ws sends a frame Hearth sent, byte for byte)` +
            (budget.note === undefined ? '' : `; ${budget.note}`),
        ],
      };
    } finally {
      await Promise.allSettled(fleets.map((fleet) => fleet.close(5_000)));
      await Promise.allSettled(servers.map((server) => server.stop()));
    }
  },
};

export default gatewayFanout;

async function burst(side: Side, what: string): Promise<void> {
  const result = await side.fleet.burst(EVENTS, side.publish, BURST_TIMEOUT_MS);
  side.bursts.push(result);
  const deliveries = result.latencies.length;
  progress(
    `  ${what} ${side.label}: ${Math.round(deliveries / result.seconds)} deliveries/s ` +
      `(${deliveries} in ${(result.seconds * 1000).toFixed(0)} ms)`,
  );
}

function figures(side: Side, sessions: number): Figures {
  const rates = side.bursts.map((b) => b.latencies.length / b.seconds);
  const percentiles = side.bursts.map((b) => {
    const sorted = Float64Array.from(b.latencies).sort();
    return { p50: at(sorted, 0.5), p99: at(sorted, 0.99) };
  });
  if (side.bursts.some((b) => b.latencies.length !== sessions * EVENTS)) {
    throw new Error(`${side.label}: a burst counted other than ${sessions * EVENTS} deliveries`);
  }
  return {
    label: side.label === 'Hearth' ? 'Hearth' : 'bare ws 8',
    throughput: median(rates),
    latencyP50Ms: median(percentiles.map((p) => p.p50)),
    latencyP99Ms: median(percentiles.map((p) => p.p99)),
    rounds: rates,
  };
}

/** Nearest-rank percentile of sorted samples. */
function at(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}
