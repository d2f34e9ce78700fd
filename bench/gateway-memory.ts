import { join } from 'node:path';
import type { Benchmark, Figures, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  Fleet,
  gatewayUrl,
  playerTokens,
  sessionBudget,
  startBareWs,
  startHearthGateway,
} from './lib/gateway.js';
import { isMemorySample, type MemorySample } from './lib/ipc.js';
import { median } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

/** Measured rounds per side, in the order AB BA AB, each on a fresh server process. */
const ROUNDS = 3;
/**
 * Connections opened and closed in each fresh server before its first sample (on Hearth, other players), so
 * that what a process pays once (code compiled, caches filled) is not counted. As many as are measured: with
 * 20, V8 still optimized the Identify path during the measured sessions (the code column of each round).
 */
const WARMUP_SESSIONS = 1000;
const CONNECT = { concurrency: 50, timeoutMs: 30_000 };

interface Side {
  label: string;
  start: () => Promise<ServerProcess>;
  /** The connections of one round, or of its warm-up. */
  open: (server: ServerProcess, warmUp: boolean) => Promise<Fleet>;
  heap: number[];
  rss: number[];
  /** Heap V8 had reserved but not used before the sessions connected (heapTotal − heapUsed), bytes. */
  slack: number[];
}

/**
 * Memory per idle session: a fresh server child's heap and RSS after a forced GC, before and after N idle
 * clients connect (on Hearth each identified as a different player, so each holds a session), divided by N.
 * Beside it the same for N plain connections to a bare `ws` server. Lower is better.
 */
const gatewayMemory: Benchmark = {
  name: 'gateway-memory',
  description: 'server memory per idle identified session (bytes, lower is better)',
  timeoutSeconds: 180,
  async run(): Promise<Result[]> {
    const budget = sessionBudget();
    const sessions = budget.sessions;
    const dir = scratchDir('hearth-bench-');
    const servers = new Set<ServerProcess>();
    try {
      // The players are minted once, by a process of their own, into a database every round then opens:
      // minting in the measured process would leave its memory high-water mark far above the sessions'.
      const database = `sqlite:${join(dir.path, 'gateway.sqlite')}`;
      progress(`  minting ${sessions + WARMUP_SESSIONS} players with tokens`);
      const minter = await startHearthGateway({
        players: sessions + WARMUP_SESSIONS,
        database,
        exposeGc: false,
      });
      servers.add(minter);
      const tokens = await playerTokens(minter);
      await minter.stop();
      servers.delete(minter);
      const measured = tokens.slice(0, sessions);
      const warmUp = tokens.slice(sessions);

      const hearthSide: Side = {
        label: 'Hearth',
        start: () => startHearthGateway({ database, exposeGc: true }),
        open: (server, warm) =>
          Fleet.open({
            label: 'Hearth',
            url: gatewayUrl(server.url),
            tokens: warm ? warmUp : measured,
            ...CONNECT,
          }),
        heap: [],
        rss: [],
        slack: [],
      };
      const bareSide: Side = {
        label: 'bare ws',
        start: () => startBareWs({ exposeGc: true }),
        open: (server, warm) =>
          Fleet.open({
            label: 'bare ws',
            url: gatewayUrl(server.url),
            count: warm ? WARMUP_SESSIONS : sessions,
            ...CONNECT,
          }),
        heap: [],
        rss: [],
        slack: [],
      };

      for (let i = 0; i < ROUNDS; i++) {
        for (const side of i % 2 === 0 ? [bareSide, hearthSide] : [hearthSide, bareSide]) {
          const server = await side.start();
          servers.add(server);
          try {
            await round(side, server, sessions, `round ${i + 1}/${ROUNDS}`);
          } finally {
            await server.stop();
            servers.delete(server);
          }
        }
      }

      const notes = [
        `${sessions} idle sessions per side (Hearth: each identified as a different player with a Bearer ` +
          `token of one game, intents 0; bare ws: plain connections), clients in the bench process`,
        `per round, on a fresh server process: ${WARMUP_SESSIONS} connections opened and closed (Hearth: ` +
          `other players), then process.memoryUsage() after forced GC (--expose-gc, reported over IPC) ` +
          `before and after the ${sessions} connect, delta / ${sessions}; ${ROUNDS} rounds per side ` +
          `(AB BA AB), medians; RSS counts whole pages and allocator slack, so it is coarser than heap`,
      ];
      if (budget.note !== undefined) notes.push(budget.note);
      return [
        result('heap', bareSide.heap, hearthSide.heap, notes),
        result('rss', bareSide.rss, hearthSide.rss, [
          `rss counts the pages the process had to add, not the sessions' bytes: before the sessions ` +
            `came, Hearth's V8 heap had ${mb(median(hearthSide.slack))} MB reserved but unused (bare ws: ` +
            `${mb(median(bareSide.slack))} MB), which its sessions fill without adding pages, so its rss ` +
            `figure and ratio understate it; compare heap`,
        ]),
      ];
    } finally {
      await Promise.allSettled([...servers].map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default gatewayMemory;

async function round(side: Side, server: ServerProcess, sessions: number, what: string): Promise<void> {
  const warm = await side.open(server, true);
  await warm.close(5_000);
  const before = await settled(server, 0);
  const fleet = await side.open(server, false);
  try {
    const after = await memory(server);
    if (after.held !== sessions) {
      throw new Error(`${side.label} holds ${after.held} sessions with ${sessions} clients connected`);
    }
    const heap = (after.heapUsed - before.heapUsed) / sessions;
    const rss = (after.rss - before.rss) / sessions;
    side.heap.push(heap);
    side.rss.push(rss);
    side.slack.push(before.heapTotal - before.heapUsed);
    progress(
      `  ${what} ${side.label}: heap ${Math.round(heap)} B/session (of it compiled code ` +
        `${Math.round((after.codeSpace - before.codeSpace) / sessions)}), rss ${Math.round(rss)} B/session ` +
        `(heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)} MB of ${mb(before.heapTotal)} → ` +
        `${mb(after.heapTotal)}, rss ${mb(before.rss)} → ${mb(after.rss)} MB)`,
    );
  } finally {
    await fleet.close(5_000);
  }
}

/** A memory sample once the server holds `held` sessions (closes are asynchronous); at most 5 s. */
async function settled(server: ServerProcess, held: number): Promise<MemorySample> {
  const deadline = performance.now() + 5_000;
  for (;;) {
    const sample = await memory(server);
    if (sample.held === held) return sample;
    if (performance.now() > deadline) {
      throw new Error(`${server.name} still holds ${sample.held} sessions, expected ${held}`);
    }
    await sleep(50);
  }
}

async function memory(server: ServerProcess): Promise<MemorySample> {
  server.assertAlive();
  const sample = await server.request({ cmd: 'memory' }, 30_000);
  if (!isMemorySample(sample)) throw new Error(`${server.name} answered no memory sample`);
  return sample;
}

function result(metric: string, baseline: number[], hearth: number[], notes: string[]): Result {
  const figures = (label: string, rounds: number[]): Figures => ({
    label,
    throughput: median(rounds),
    rounds,
  });
  const base = figures('bare ws 8', baseline);
  const subject = figures('Hearth', hearth);
  return {
    metric,
    unit: `B/session`,
    baseline: base,
    hearth: subject,
    ratio: subject.throughput / base.throughput,
    lowerIsBetter: true,
    notes,
  };
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
