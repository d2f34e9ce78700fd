import type { Benchmark, Figures, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  type Burst,
  Fleet,
  gatewayUrl,
  playerTokens,
  sessionBudget,
  startAll,
  startBareWs,
  startHearthGateway,
} from './lib/gateway.js';
import { median } from './lib/load.js';
import { progress } from './lib/progress.js';

/** Measured changes per side, in the order AB BA AB…, after the warm-ups. */
const ROUNDS = 41;
/**
 * Unmeasured changes per side first: a change is a few milliseconds, and after one warm-up Hearth's next four
 * still ran at half speed (the presence path not yet compiled), which decided a median of 15.
 */
const WARM_UPS = 5;
const BURST_TIMEOUT_MS = 20_000;
const CONNECT = { concurrency: 50, timeoutMs: 60_000 };
const PRESENCE_UPDATE = 'PRESENCE_UPDATE';

interface Side {
  label: string;
  fleet: Fleet;
  publish: (round: number) => Promise<unknown>;
  bursts: Burst[];
}

/**
 * One presence change of a player with 1,000 online friends (PROTOCOL.md §B.8): Hearth's presence service
 * (replica over the bus, the friends lookup in storage, PRESENCE_UPDATE with audience {users: friends}, then
 * per session the filter, sequence, resume buffer, JSON and send) beside a bare `ws` server sending a frame of
 * the same bytes to each of its clients.
 */
const presenceFanout: Benchmark = {
  name: 'presence-fanout',
  description: 'one presence change of a player with 1,000 online friends (deliveries/s)',
  timeoutSeconds: 150,
  async run(): Promise<Result> {
    const budget = sessionBudget();
    const friends = budget.sessions;
    const servers: ServerProcess[] = [];
    const fleets: Fleet[] = [];
    try {
      progress(`  starting Hearth (minting ${friends + 1} players with tokens) and bare ws`);
      const [hearth, bare] = await startAll(servers, [
        startHearthGateway({ players: friends + 1, exposeGc: false }),
        startBareWs({ exposeGc: false }),
      ]);
      const [, ...friendTokens] = await playerTokens(hearth);
      await hearth.request({ cmd: 'befriend' }, 60_000);

      progress(`  connecting ${friends} friends' sessions to Hearth, ${friends} clients to bare ws`);
      const hearthFleet = await Fleet.open({
        label: 'Hearth',
        url: gatewayUrl(hearth.url),
        tokens: friendTokens,
        eventType: PRESENCE_UPDATE,
        ...CONNECT,
      });
      fleets.push(hearthFleet);
      const bareFleet = await Fleet.open({
        label: 'bare ws',
        url: gatewayUrl(bare.url),
        count: friends,
        eventType: PRESENCE_UPDATE,
        ...CONNECT,
      });
      fleets.push(bareFleet);

      const hearthSide: Side = {
        label: 'Hearth',
        fleet: hearthFleet,
        publish: (round) => published(hearth, { cmd: 'presence', round }, friends),
        bursts: [],
      };
      for (let i = 1; i <= WARM_UPS; i++) await burst(hearthSide, -i, `warm-up ${i}/${WARM_UPS}`);
      const payload = hearthFleet.sample;
      if (payload === undefined) throw new Error('Hearth sent no PRESENCE_UPDATE to sample');
      const bareSide: Side = {
        label: 'bare ws',
        fleet: bareFleet,
        publish: () => published(bare, { cmd: 'publish', count: 1, payload }, friends),
        bursts: [],
      };
      for (let i = 1; i <= WARM_UPS; i++) await burst(bareSide, -i, `warm-up ${i}/${WARM_UPS}`);
      hearthSide.bursts.length = 0;
      bareSide.bursts.length = 0;

      for (let i = 1; i <= ROUNDS; i++) {
        for (const side of i % 2 === 1 ? [bareSide, hearthSide] : [hearthSide, bareSide]) {
          await burst(side, i, `round ${i}/${ROUNDS}`);
        }
      }
      const baseline = figures(bareSide, friends);
      const subject = figures(hearthSide, friends);
      return {
        unit: 'deliveries/s',
        baseline,
        hearth: subject,
        ratio: subject.throughput / baseline.throughput,
        notes: [
          `${friends} friends online, each a WebSocket session in the bench process parsing every frame ` +
            `(Hearth: players identified with Bearer tokens of one game)`,
          `a round: one presence change of the host (a new activity name) through the presence service, timed ` +
            `until all ${friends} friends had its PRESENCE_UPDATE; bare ws sends Hearth's frame byte for byte ` +
            `(${Buffer.byteLength(payload)} bytes); ${WARM_UPS} warm-ups and ${ROUNDS} rounds per side (AB BA…), medians` +
            (budget.note === undefined ? '' : `; ${budget.note}`),
        ],
      };
    } finally {
      await Promise.allSettled(fleets.map((fleet) => fleet.close(5_000)));
      await Promise.allSettled(servers.map((server) => server.stop()));
    }
  },
};

export default presenceFanout;

async function burst(side: Side, round: number, what: string): Promise<void> {
  const result = await side.fleet.burst(1, () => side.publish(round), BURST_TIMEOUT_MS);
  side.bursts.push(result);
  const deliveries = result.latencies.length;
  progress(
    `  ${what} ${side.label}: ${Math.round(deliveries / result.seconds)} deliveries/s ` +
      `(${deliveries} in ${(result.seconds * 1000).toFixed(1)} ms)`,
  );
}

async function published(
  server: ServerProcess,
  request: { cmd: string; [key: string]: unknown },
  receivers: number,
) {
  server.assertAlive();
  const reply = (await server.request(request, BURST_TIMEOUT_MS)) as Record<string, unknown> | null;
  const held = reply?.['sessions'] ?? reply?.['clients'];
  if (held !== receivers) throw new Error(`${server.name} had ${String(held)} receivers, not ${receivers}`);
}

function figures(side: Side, friends: number): Figures {
  if (side.bursts.some((b) => b.latencies.length !== friends)) {
    throw new Error(`${side.label}: a round counted other than ${friends} deliveries`);
  }
  const rates = side.bursts.map((b) => b.latencies.length / b.seconds);
  const percentile = (b: Burst, p: number) => {
    const sorted = Float64Array.from(b.latencies).sort();
    return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  };
  return {
    label: side.label === 'Hearth' ? 'Hearth' : 'bare ws 8',
    throughput: median(rates),
    latencyP50Ms: median(side.bursts.map((b) => percentile(b, 0.5))),
    latencyP99Ms: median(side.bursts.map((b) => percentile(b, 0.99))),
    rounds: rates,
  };
}
