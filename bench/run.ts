// `npm run bench [-- <filter>…]`: runs every benchmark whose name contains one of the filters (all when
// none), then prints each figure beside its baseline from the same run and their ratio.
import { cpus, loadavg } from 'node:os';
import type { Benchmark, Result } from './benchmark.js';
import crossNode from './cross-node.js';
import gatewayFanout from './gateway-fanout.js';
import gatewayMemory from './gateway-memory.js';
import gatewayScale from './gateway-scale.js';
import guildChat from './guild-chat.js';
import guildCreate from './guild-create.js';
import { killAllChildren } from './lib/children.js';
import { progress } from './lib/progress.js';
import lobbyChat from './lobby-chat.js';
import presenceFanout from './presence-fanout.js';
import provisionalToken from './provisional-token.js';
import readPath from './read-path.js';
import search from './search.js';
import snapshotRestore from './snapshot-restore.js';
import tokenExchange from './token-exchange.js';
import voiceRelay from './voice-relay.js';
import webhookDelivery from './webhook-delivery.js';

/** The registry: add a module here to add a benchmark. */
const BENCHMARKS: readonly Benchmark[] = [
  readPath,
  tokenExchange,
  gatewayFanout,
  gatewayMemory,
  gatewayScale,
  lobbyChat,
  webhookDelivery,
  provisionalToken,
  presenceFanout,
  guildCreate,
  guildChat,
  search,
  voiceRelay,
  snapshotRestore,
  crossNode,
];

type Outcome = { benchmark: Benchmark; results: Result[] } | { benchmark: Benchmark; error: Error };

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllChildren();
    process.exit(130);
  });
}

const filters = process.argv.slice(2);
const selected = BENCHMARKS.filter((b) => filters.length === 0 || filters.some((f) => b.name.includes(f)));
if (selected.length === 0) {
  progress(
    `no benchmark matches ${filters.join(', ')}; there are: ${BENCHMARKS.map((b) => b.name).join(', ')}`,
  );
  process.exit(2);
}

console.log(
  `node ${process.version}, ${process.platform} ${process.arch}, ${cpus().length} CPUs, ` +
    `load average ${loadavg()[0]!.toFixed(2)} at start. Only the ratio compares across machines.`,
);
const outcomes: Outcome[] = [];
for (const benchmark of selected) {
  progress(`${benchmark.name}: ${benchmark.description}`);
  const started = performance.now();
  try {
    const result = await withTimeout(benchmark.run(), benchmark.timeoutSeconds, benchmark.name);
    outcomes.push({ benchmark, results: Array.isArray(result) ? result : [result] });
  } catch (error) {
    killAllChildren();
    outcomes.push({ benchmark, error: error instanceof Error ? error : new Error(String(error)) });
  }
  progress(`${benchmark.name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

console.log(`\n${renderTable(outcomes)}`);
for (const outcome of outcomes) {
  if ('results' in outcome) {
    for (const note of outcome.results.flatMap((result) => result.notes)) {
      console.log(`${outcome.benchmark.name}: ${note}`);
    }
  }
}
const failures = outcomes.filter((o) => 'error' in o);
for (const failure of failures) {
  console.error(`\n${failure.benchmark.name} FAILED: ${failure.error.stack ?? failure.error.message}`);
}
process.exit(failures.length > 0 ? 1 : 0);

async function withTimeout<T>(work: Promise<T>, seconds: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  // A benchmark that fails after its timeout must not crash the runner with an unhandled rejection.
  work.catch(() => undefined);
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} took longer than ${seconds} s`)), seconds * 1000);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function renderTable(rows: readonly Outcome[]): string {
  const header = ['benchmark', 'side', 'throughput', 'p50 ms', 'p99 ms', 'rounds', 'ratio'];
  const right = [false, false, true, true, true, false, true];
  const lines: string[][] = [header];
  for (const outcome of rows) {
    if ('error' in outcome) {
      lines.push([outcome.benchmark.name, 'FAILED', '', '', '', '', '']);
      continue;
    }
    for (const result of outcome.results) {
      for (const [side, figures] of [
        ['baseline', result.baseline],
        ['hearth', result.hearth],
      ] as const) {
        const name =
          result.metric === undefined ? outcome.benchmark.name : `${outcome.benchmark.name} ${result.metric}`;
        lines.push([
          side === 'baseline' ? name : '',
          `${side}: ${figures.label}`,
          `${count(figures.throughput)} ${result.unit}`,
          figures.latencyP50Ms?.toFixed(2) ?? '–',
          figures.latencyP99Ms?.toFixed(2) ?? '–',
          figures.rounds.map(count).join(' / '),
          side === 'hearth'
            ? `${result.ratio.toFixed(3)}×${result.lowerIsBetter ? ' (lower is better)' : ''}`
            : '',
        ]);
      }
    }
  }
  const widths = header.map((_, i) => Math.max(...lines.map((line) => line[i]!.length)));
  const format = (line: string[]) =>
    line
      .map((cell, i) => (right[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.slice(1).map(format)].join(
    '\n',
  );
}

function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
