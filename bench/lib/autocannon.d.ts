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
      /** Requests to make in all (split over the connections); overrides `duration`. */
      amount?: number;
      /** Milliseconds between samples; the result comes at the first sample after the run ends. */
      sampleInt?: number;
      /** Requests each connection makes in turn, starting over at the end. */
      requests?: Request[];
    }

    /** One request of `requests`; unset fields come from the top-level options. */
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /**
       * Called on a copy of this request each time it is about to be written (the first time when its
       * connection is created); answers the request to write.
       */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request;
      /** Called with every response to this request, its body as text. */
      onResponse?: (
        status: number,
        body: string,
        context: Record<string, unknown>,
        headers: Record<string, string | string[]>,
      ) => void;
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
