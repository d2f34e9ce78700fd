import autocannon from 'autocannon';
import type { Figures } from '../benchmark.js';
import { progress } from './progress.js';

/** The same load for both sides of a comparison. */
export interface LoadPlan {
  connections: number;
  pipelining: number;
  /** Per side, once, before the first round; its figures are discarded. */
  warmupSeconds: number;
  rounds: number;
  roundSeconds: number;
}

/** An HTTP endpoint to drive, with the server behind it. */
export interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** Throws if the server behind `url` has died (so that its stderr, not a wall of ECONNREFUSED, is shown). */
  assertAlive(): void;
}

interface Round {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
}

/**
 * Drives baseline and subject in turn, one at a time, in the order AB BA AB… so that slow drift of the
 * machine weighs on both alike, and reports the median of each side's rounds.
 */
export async function compare(
  baseline: Target,
  subject: Target,
  plan: LoadPlan,
): Promise<{ baseline: Figures; subject: Figures }> {
  for (const target of [baseline, subject]) {
    progress(`  warm-up ${target.label} ${plan.warmupSeconds} s`);
    await drive(target, plan, plan.warmupSeconds);
  }
  const rounds = new Map<Target, Round[]>([
    [baseline, []],
    [subject, []],
  ]);
  for (let i = 0; i < plan.rounds; i++) {
    const order = i % 2 === 0 ? [baseline, subject] : [subject, baseline];
    for (const target of order) {
      const round = await drive(target, plan, plan.roundSeconds);
      rounds.get(target)!.push(round);
      progress(
        `  round ${i + 1}/${plan.rounds} ${target.label}: ${Math.round(round.requestsPerSecond)} req/s, ` +
          `p50 ${round.latencyP50Ms.toFixed(2)} ms, p99 ${round.latencyP99Ms.toFixed(2)} ms`,
      );
    }
  }
  return {
    baseline: summarise(baseline, rounds.get(baseline)!),
    subject: summarise(subject, rounds.get(subject)!),
  };
}

/** One autocannon run; throws unless every response was 2xx with no connection error or timeout. */
async function drive(target: Target, plan: LoadPlan, seconds: number): Promise<Round> {
  target.assertAlive();
  // autocannon's own latency histogram has 1 ms resolution, too coarse on loopback: keep each sample.
  const latencies: number[] = [];
  const instance = autocannon({
    url: target.url,
    headers: target.headers,
    connections: plan.connections,
    pipelining: plan.pipelining,
    duration: seconds,
    timeout: 5,
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    latencies.push(responseTime);
  });
  const result = await instance;
  target.assertAlive();
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result['2xx'] === 0) {
    const statuses = Object.entries(result.statusCodeStats)
      .map(([status, { count }]) => `${status}×${count}`)
      .join(', ');
    throw new Error(
      `${target.label}: not every response was 2xx — ${result['2xx']} 2xx, ${result.non2xx} non-2xx ` +
        `(${statuses || 'none'}), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    requestsPerSecond: result['2xx'] / result.duration,
    latencyP50Ms: percentile(sorted, 0.5),
    latencyP99Ms: percentile(sorted, 0.99),
  };
}

function summarise(target: Target, rounds: Round[]): Figures {
  return {
    label: target.label,
    throughput: median(rounds.map((r) => r.requestsPerSecond)),
    latencyP50Ms: median(rounds.map((r) => r.latencyP50Ms)),
    latencyP99Ms: median(rounds.map((r) => r.latencyP99Ms)),
    rounds: rounds.map((r) => r.requestsPerSecond),
  };
}

/** Nearest-rank percentile of sorted samples. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
