/** One side of a comparison: medians over the rounds of one benchmark. */
export interface Figures {
  /** What ran, e.g. `Hearth` or `bare Fastify 5`. */
  label: string;
  /** Median over rounds, in the result's `unit`. */
  throughput: number;
  /** Median over rounds of each round's latency percentile, milliseconds; absent where nothing is timed. */
  latencyP50Ms?: number;
  latencyP99Ms?: number;
  /** Throughput of each round, in run order, to show the noise. */
  rounds: number[];
  /** HTTP benchmarks: the server process's CPU time per request, median over rounds, microseconds. */
  cpuPerRequestUs?: number;
}

export interface Result {
  /** What the figures measure, when a benchmark gives more than one result (shown after its name). */
  metric?: string;
  /** Unit of `throughput`, e.g. `req/s`. */
  unit: string;
  baseline: Figures;
  hearth: Figures;
  /** hearth.throughput / baseline.throughput: the only figure comparable across machines. */
  ratio: number;
  /** For costs (bytes, ms): a lower figure, and so a lower ratio, is the better one. */
  lowerIsBetter?: boolean;
  /** One-line facts worth printing under the table (settings, body size…). */
  notes: string[];
}

export interface Benchmark {
  /** Short and unique; `npm run bench -- <filter>` matches it by substring. */
  name: string;
  /** What is measured, in a few words. */
  description: string;
  /** The runner aborts the benchmark and kills its child processes after this long. */
  timeoutSeconds: number;
  /** One result, or several (each with its `metric`) measured in the same run. */
  run(): Promise<Result | Result[]>;
}
