import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Bus } from '../bus/bus.js';

/** What the metrics read when scraped: nothing here is counted on a hot path. */
export interface MetricSources {
  /** Open gateway sockets, and the sessions among them that identified (or resumed). */
  gatewaySessions(): { open: number; identified: number };
  /** Dispatches this node has sent since it started (a running total kept by the gateway). */
  dispatchesSent(): number;
  /** Webhook events still to deliver; rejects when the database does not answer. */
  webhookQueueDepth(): Promise<number>;
  /** The database pool's connections; undefined when the driver has no pool (SQLite). */
  databasePool(): { total: number; idle: number; waiting: number } | undefined;
  /** This node's voice server: open sessions and calls, and the media path's and DAVE's running totals. */
  voice?(): VoiceMetrics;
}

export interface VoiceMetrics {
  sessions: number;
  calls: number;
  /** Packets the UDP forwarder sent on to a receiver. */
  forwarded: number;
  /** Packets it discarded (unknown SSRC, not described, unauthenticated, malformed, sender may not send). */
  dropped: number;
  /** Among the dropped: RTP whose transport encryption did not authenticate. */
  decryptFailures: number;
  /** DAVE epochs committed (a member added or removed, or a new group). */
  daveEpochs: number;
}

/** How a webhook delivery attempt ended (worker's view): the label of `hearth_webhook_deliveries_total`. */
export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'skipped';

/** Seconds: from a fast cached read to a slow upload. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds between an event's publication and its delivery to this node. */
const BUS_LAG_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The label of requests no route matched: the raw URL never becomes a label (unbounded cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

interface HttpSeries {
  count: Counter.Internal;
  duration: Histogram.Internal<string>;
}

/**
 * One node's Prometheus metrics, in a registry of its own (several nodes may share a process in tests).
 * Hot paths only increment: the label children of each route, method and status are made once and kept.
 */
export class HearthMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #duration: Histogram<'method' | 'route' | 'status'>;
  readonly #rateLimited: Counter<'scope'>;
  readonly #deliveries: Counter<'outcome'>;
  readonly #busLag: Histogram;
  /** route → method → status → its series. */
  readonly #series = new Map<string, Map<string, Map<number, HttpSeries>>>();

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'hearth_' });
    this.#requests = new Counter({
      name: 'hearth_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.#duration = new Histogram({
      name: 'hearth_http_request_duration_seconds',
      help: 'Time from a request received to its response sent, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'hearth_rate_limit_refusals_total',
      help: 'Requests refused 429 by a rate limit, by X-RateLimit-Scope (user, global, shared).',
      labelNames: ['scope'],
      registers,
    });
    this.#deliveries = new Counter({
      name: 'hearth_webhook_deliveries_total',
      help: 'Webhook delivery attempts settled by this node, by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    this.#busLag = new Histogram({
      name: 'hearth_bus_lag_seconds',
      help: 'Time from an event published on the bus (any node) to its delivery to this node.',
      buckets: BUS_LAG_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'hearth_gateway_sessions',
      help: 'Gateway sockets of this node: open, and identified (a session attached).',
      labelNames: ['state'],
      registers,
      collect() {
        const { open, identified } = sources.gatewaySessions();
        this.set({ state: 'open' }, open);
        this.set({ state: 'identified' }, identified);
      },
    });
    let dispatchesSeen = 0;
    new Counter({
      name: 'hearth_gateway_dispatches_total',
      help: 'Gateway dispatches (op 0) this node has sent.',
      registers,
      collect() {
        const total = sources.dispatchesSent();
        this.inc(total - dispatchesSeen);
        dispatchesSeen = total;
      },
    });
    new Gauge({
      name: 'hearth_webhook_queue_depth',
      help: 'Webhook events waiting for delivery (every node’s, as recorded in the database).',
      registers,
      async collect() {
        // A scrape while the database is away still answers, with the depth unknown (NaN).
        this.set(await sources.webhookQueueDepth().catch(() => Number.NaN));
      },
    });
    new Gauge({
      name: 'hearth_database_pool_connections',
      help: 'PostgreSQL pool connections: total, idle, and clients waiting for one (absent on SQLite).',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = sources.databasePool();
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    const voice = sources.voice?.bind(sources);
    if (voice) this.#voiceMetrics(voice, registers);
  }

  /** The voice server's gauges and counters, read from `voice` when scraped. */
  #voiceMetrics(voice: () => VoiceMetrics, registers: Registry[]): void {
    new Gauge({
      name: 'hearth_voice_sessions',
      help: 'Voice gateway sessions open on this node (including those waiting for a resume).',
      registers,
      collect() {
        this.set(voice().sessions);
      },
    });
    new Gauge({
      name: 'hearth_voice_calls',
      help: 'Calls (voice channels and lobby calls) hosted on this node.',
      registers,
      collect() {
        this.set(voice().calls);
      },
    });
    const totals: Array<[string, string, (m: VoiceMetrics) => number]> = [
      [
        'hearth_voice_packets_forwarded_total',
        'RTP packets the UDP forwarder sent on to receivers.',
        (m) => m.forwarded,
      ],
      [
        'hearth_voice_packets_dropped_total',
        'UDP packets the forwarder discarded (unknown SSRC, unauthenticated, malformed, sender may not send).',
        (m) => m.dropped,
      ],
      [
        'hearth_voice_decrypt_failures_total',
        'RTP packets whose transport encryption did not authenticate (counted among the dropped).',
        (m) => m.decryptFailures,
      ],
      [
        'hearth_voice_dave_epochs_total',
        'DAVE epochs committed in the calls of this node.',
        (m) => m.daveEpochs,
      ],
    ];
    for (const [name, help, read] of totals) {
      let seen = 0;
      new Counter({
        name,
        help,
        registers,
        collect() {
          const total = read(voice());
          this.inc(total - seen);
          seen = total;
        },
      });
    }
  }

  /** Counts every response of `app` by its route pattern (never the raw URL), method and status. */
  observeHttp(app: FastifyInstance): void {
    app.addHook('onResponse', async (request, reply) => {
      const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
      const series = this.#httpSeries(route, request.method, reply.statusCode);
      series.count.inc();
      series.duration.observe(reply.elapsedTime / 1000);
      if (reply.statusCode === 429) {
        const scope = reply.getHeader('x-ratelimit-scope');
        this.#rateLimited.inc({ scope: typeof scope === 'string' ? scope : 'unknown' });
      }
    });
  }

  /** Observes the lag of every event the bus delivers to this node; returns the unsubscription. */
  observeBus(bus: Bus): () => void {
    return bus.subscribe((event) => {
      const published = Number(event.id.slice(0, event.id.indexOf('-')));
      if (Number.isFinite(published)) this.#busLag.observe(Math.max(0, Date.now() - published) / 1000);
    });
  }

  webhookDelivery(outcome: DeliveryOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  /** The exposition text, in Prometheus' text format 0.0.4. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #httpSeries(route: string, method: string, status: number): HttpSeries {
    let byMethod = this.#series.get(route);
    if (!byMethod) {
      byMethod = new Map();
      this.#series.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { count: this.#requests.labels(labels), duration: this.#duration.labels(labels) };
      byStatus.set(status, series);
    }
    return series;
  }
}
