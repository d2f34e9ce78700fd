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
  /**
   * For requests that cannot repeat (each spends a single-use code): every run then makes an exact number
   * of requests, whose bodies the target prepares before it starts (`Target.bodies`): as many as the side
   * would answer in the planned seconds at the best rate it has shown so far.
   */
  counted?: {
    /** The first warm-up run's request count, before the side's rate is known. */
    probeRequests: number;
    /** The most requests of one run, so that a run (and preparing it) stays bounded on a fast machine. */
    maxRunRequests: number;
  };
}

/** An HTTP endpoint to drive, with the server behind it. */
export interface Target {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** GET unless given. */
  method?: 'GET' | 'POST';
  /**
   * Counted plans only: the bodies of the next run's requests, one per request, each sent exactly once.
   * Called before the run and outside its measurement, so that preparing them (minting codes…) is not timed.
   */
  bodies?: (count: number) => Promise<string[]>;
  /** Checks every response beyond its 2xx status; answers what is wrong with it, or undefined. */
  check?: (status: number, body: string) => string | undefined;
  /** Throws if the server behind `url` has died (so that its stderr, not a wall of ECONNREFUSED, is shown). */
  assertAlive(): void;
  /** The server process's CPU seconds so far (`ServerProcess.cpuSeconds`): gives each round's CPU per request. */
  cpuSeconds?: () => number | undefined;
}

interface Round {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  cpuPerRequestUs: number | undefined;
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
  // Under a counted plan the best rate each side has shown sizes its next run. (Its last rate alone would
  // chase the noise: one slow run, and the next is too short to tell much.)
  const best = new Map<Target, number>();
  for (const target of [baseline, subject]) await warmUp(target, plan, best);
  const rounds = new Map<Target, Round[]>([
    [baseline, []],
    [subject, []],
  ]);
  for (let i = 0; i < plan.rounds; i++) {
    const order = i % 2 === 0 ? [baseline, subject] : [subject, baseline];
    for (const target of order) {
      const span = spanOf(plan, plan.roundSeconds, best.get(target));
      const round = await drive(target, plan, span);
      rounds.get(target)!.push(round);
      noteRate(best, target, round.requestsPerSecond);
      progress(
        `  round ${i + 1}/${plan.rounds} ${target.label}: ${Math.round(round.requestsPerSecond)} req/s, ` +
          `p50 ${round.latencyP50Ms.toFixed(2)} ms, p99 ${round.latencyP99Ms.toFixed(2)} ms` +
          ('requests' in span ? ` (${span.requests} requests)` : ''),
      );
    }
  }
  return {
    baseline: summarise(baseline, rounds.get(baseline)!),
    subject: summarise(subject, rounds.get(subject)!),
  };
}

/** A counted warm-up stops after this many runs even if the side keeps speeding up. */
const MAX_WARMUP_RUNS = 4;

/**
 * The warm-up: one timed run, or counted runs until the planned seconds are spent, each sized to fill the
 * rest at the side's best rate so far (the first is a probe), noting that rate in `best`.
 */
async function warmUp(target: Target, plan: LoadPlan, best: Map<Target, number>): Promise<void> {
  progress(`  warm-up ${target.label} ${plan.warmupSeconds} s`);
  if (!plan.counted) {
    await drive(target, plan, { seconds: plan.warmupSeconds });
    return;
  }
  let spent = 0;
  let total = 0;
  let requests = plan.counted.probeRequests;
  for (let run = 1; ; run++) {
    const { requestsPerSecond } = await drive(target, plan, { requests });
    noteRate(best, target, requestsPerSecond);
    spent += requests / requestsPerSecond;
    total += requests;
    if (spent >= plan.warmupSeconds * 0.9 || run === MAX_WARMUP_RUNS) {
      progress(`  warm-up ${target.label}: ${total} requests in ${run} runs, ${spent.toFixed(1)} s`);
      return;
    }
    requests = runRequests(plan, plan.counted, plan.warmupSeconds - spent, best.get(target)!);
  }
}

/** How long a run of about `seconds` lasts: that, or under a counted plan the requests it should take. */
function spanOf(plan: LoadPlan, seconds: number, rate: number | undefined): Span {
  if (!plan.counted) return { seconds };
  if (rate === undefined) throw new Error('a counted run needs a rate to size it');
  return { requests: runRequests(plan, plan.counted, seconds, rate) };
}

/** The requests a counted run of about `seconds` makes at `rate`. */
function runRequests(
  plan: LoadPlan,
  counted: NonNullable<LoadPlan['counted']>,
  seconds: number,
  rate: number,
): number {
  // autocannon refuses fewer requests than connections.
  return Math.min(counted.maxRunRequests, Math.max(plan.connections, Math.ceil(rate * seconds)));
}

function noteRate(best: Map<Target, number>, target: Target, rate: number): void {
  best.set(target, Math.max(best.get(target) ?? 0, rate));
}

type Span = { seconds: number } | { requests: number };

/**
 * One autocannon run; throws unless every response was 2xx (and passed `check`) with no connection error
 * or timeout, and, for a counted run, unless each prepared body was sent once and answered.
 */
async function drive(target: Target, plan: LoadPlan, span: Span): Promise<Round> {
  target.assertAlive();
  const count = 'requests' in span ? span.requests : undefined;
  let bodies: string[] | undefined;
  if (target.bodies) {
    if (count === undefined) throw new Error(`${target.label}: prepared bodies need a counted plan`);
    bodies = await target.bodies(count);
    if (bodies.length !== count) {
      throw new Error(`${target.label}: asked for ${count} bodies, got ${bodies.length}`);
    }
    target.assertAlive();
  }
  const supply = bodies;
  let sent = 0;
  let rejected = 0;
  let firstRejection: string | undefined;
  const { check } = target;
  const url = new URL(target.url);
  const request: autocannon.Request = {
    method: target.method ?? 'GET',
    path: `${url.pathname}${url.search}`,
    headers: target.headers,
    // Each write takes the next body; past the end it sends none, which fails the run below.
    ...(supply
      ? { setupRequest: (copy: autocannon.Request) => ({ ...copy, body: supply[sent++] ?? '' }) }
      : {}),
    ...(check
      ? {
          onResponse: (status: number, body: string) => {
            const problem = check(status, body);
            if (problem === undefined) return;
            rejected++;
            firstRejection ??= problem;
          },
        }
      : {}),
  };
  // autocannon's own latency histogram has 1 ms resolution, too coarse on loopback: keep each sample.
  const latencies: number[] = [];
  let lastResponse = 0;
  const cpuBefore = target.cpuSeconds?.();
  const started = performance.now();
  const instance = autocannon({
    url: target.url,
    connections: plan.connections,
    pipelining: plan.pipelining,
    timeout: 5,
    requests: [request],
    // A counted run ends at its last response, not at a whole second: it is timed here, and its result
    // comes at the next sample, so sample often.
    ...('seconds' in span ? { duration: span.seconds } : { amount: span.requests, sampleInt: 20 }),
  });
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    latencies.push(responseTime);
    lastResponse = performance.now();
  });
  const result = await instance;
  const cpuAfter = target.cpuSeconds?.();
  target.assertAlive();
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result['2xx'] === 0) {
    const statuses = Object.entries(result.statusCodeStats)
      .map(([status, { count }]) => `${status}×${count}`)
      .join(', ');
    throw new Error(
      `${target.label}: not every response was 2xx — ${result['2xx']} 2xx, ${result.non2xx} non-2xx ` +
        `(${statuses || 'none'}), ${result.errors} errors, ${result.timeouts} timeouts` +
        (firstRejection === undefined ? '' : `; the first wrong answer: ${firstRejection}`),
    );
  }
  if (rejected > 0) {
    throw new Error(
      `${target.label}: ${rejected} of ${result['2xx']} responses were wrong; the first: ${firstRejection}`,
    );
  }
  if (count !== undefined && result['2xx'] !== count) {
    throw new Error(`${target.label}: ${count} requests planned, ${result['2xx']} answered`);
  }
  if (supply && sent !== supply.length) {
    throw new Error(`${target.label}: ${supply.length} bodies prepared, ${sent} sent`);
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    requestsPerSecond:
      count === undefined
        ? result['2xx'] / result.duration
        : (result['2xx'] * 1000) / (lastResponse - started),
    latencyP50Ms: percentile(sorted, 0.5),
    latencyP99Ms: percentile(sorted, 0.99),
    cpuPerRequestUs:
      cpuBefore === undefined || cpuAfter === undefined
        ? undefined
        : ((cpuAfter - cpuBefore) * 1e6) / result['2xx'],
  };
}

function summarise(target: Target, rounds: Round[]): Figures {
  const cpu = rounds.flatMap((r) => (r.cpuPerRequestUs === undefined ? [] : [r.cpuPerRequestUs]));
  return {
    label: target.label,
    throughput: median(rounds.map((r) => r.requestsPerSecond)),
    latencyP50Ms: median(rounds.map((r) => r.latencyP50Ms)),
    latencyP99Ms: median(rounds.map((r) => r.latencyP99Ms)),
    rounds: rounds.map((r) => r.requestsPerSecond),
    ...(cpu.length === rounds.length ? { cpuPerRequestUs: median(cpu) } : {}),
  };
}

/**
 * The note giving each side's server CPU per request (median of its rounds), which the load generator sharing
 * the machine's cores does not confound the way it does throughput; none where /proc gave none.
 */
export function cpuNotes(...sides: Figures[]): string[] {
  if (sides.some((side) => side.cpuPerRequestUs === undefined)) return [];
  const each = sides.map((side) => `${side.label} ${side.cpuPerRequestUs!.toFixed(0)} µs`).join(', ');
  return [`server CPU per request (user + system from /proc, median of rounds): ${each}`];
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
