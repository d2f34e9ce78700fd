// autocannon 8 ships no types, and @types/autocannon would be a new root dependency: this covers what bench/ uses.
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      connections?: number;
      pipelining?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds a request may take before it counts as a timeout. */
      timeout?: number;
    }

    /** hdr-histogram-percentiles-obj: latency in whole milliseconds, requests and throughput per second. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p99: number;
    }

    interface Result {
      url: string;
      requests: Histogram;
      latency: Histogram;
      throughput: Histogram;
      /** Seconds. */
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance extends PromiseLike<Result> {
      /** `responseTime` is in milliseconds with sub-millisecond precision (process.hrtime). */
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
      ): this;
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
