import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import {
  BUS_HISTORY_SIZE,
  type Bus,
  type BusErrorReporter,
  type BusEvent,
  type BusListener,
  type BusOptions,
  compareEventIds,
  type DeliveredEvent,
  decodeEvent,
  encodeEvent,
  reportToStderr,
  type SubscribeOptions,
  Subscribers,
} from './bus.js';

/** The one stream every node appends to and reads, under the connection's key prefix. */
export const BUS_STREAM = 'bus:events';

export interface RedisStreamsBusOptions extends BusOptions {
  /** This node's name; its reader connection shows as `hearth:bus:<name>` in CLIENT LIST. */
  name?: string;
  /** Entries the stream keeps, approximately (XADD MAXLEN ~): a node further behind loses the excess. */
  maxLength?: number;
  /** How long one XREAD waits for entries (ms); a silent socket is dropped 10 s after that. */
  blockMs?: number;
  /** Entries one XREAD returns at most. */
  batchSize?: number;
}

const BACKOFF_MIN_MS = 50;
const BACKOFF_MAX_MS = 2000;
/** Publishers whose last sequence a reader remembers to drop resent entries; a node restart adds one. */
const REMEMBERED_PUBLISHERS = 1024;

/**
 * Every node appends to one Redis stream and reads it from the last entry id it delivered, on a
 * connection of its own, so a Redis blip delays events but loses none (DESIGN.md, Choices).
 */
export class RedisStreamsBus implements Bus {
  readonly #redis: Redis;
  readonly #reader: Redis;
  readonly #subscribers: Subscribers;
  readonly #onError: BusErrorReporter;
  readonly #maxLength: number;
  readonly #blockMs: number;
  readonly #batchSize: number;
  /** Tags this instance's entries so that readers can drop one ioredis resent after a lost reply. */
  readonly #publisher = randomBytes(6).toString('hex');
  #published = 0;
  readonly #lastSequence = new Map<string, number>();
  /** The last entry delivered; before the first, the stream's end when this bus was made. */
  #lastId = '0-0';
  readonly #started: Promise<void>;
  readonly #loop: Promise<void>;
  #closed = false;
  readonly #closing: Promise<void>;
  #signalClosing!: () => void;

  /** Makes a bus and waits until events published anywhere from then on are sure to reach it. */
  static async open(redis: Redis, options: RedisStreamsBusOptions = {}): Promise<RedisStreamsBus> {
    const bus = new RedisStreamsBus(redis, options);
    await bus.ready();
    return bus;
  }

  /** `redis` publishes and stays the caller's; reading uses a duplicate, since XREAD BLOCK holds it. */
  constructor(redis: Redis, options: RedisStreamsBusOptions = {}) {
    this.#redis = redis;
    this.#onError = options.onError ?? reportToStderr;
    this.#subscribers = new Subscribers(this.#onError);
    this.#maxLength = options.maxLength ?? 100_000;
    this.#blockMs = options.blockMs ?? 10_000;
    this.#batchSize = options.batchSize ?? 500;
    const name = options.name ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.#reader = redis.duplicate({
      connectionName: `hearth:bus:${name}`,
      socketTimeout: this.#blockMs + 10_000,
      lazyConnect: true,
    });
    this.#reader.on('error', () => {
      // Each failed read reports its own error; ioredis repeats this one at every reconnect attempt.
    });
    this.#closing = new Promise((resolve) => {
      this.#signalClosing = resolve;
    });
    this.#started = this.#findStart();
    this.#loop = this.#read();
  }

  /** Resolves once the starting offset is fixed: every event published after that is delivered here. */
  ready(): Promise<void> {
    return this.#started;
  }

  async publish(event: BusEvent): Promise<void> {
    // After the start offset was read on this same connection, so our own events are never before it.
    await this.#started;
    const publication = `${this.#publisher}:${this.#published++}`;
    await this.#redis.xadd(
      BUS_STREAM,
      'MAXLEN',
      '~',
      this.#maxLength,
      '*',
      'event',
      encodeEvent(event),
      'pub',
      publication,
    );
  }

  lastId(): string {
    return this.#lastId;
  }

  subscribe(listener: BusListener, options?: SubscribeOptions): () => void {
    return this.#subscribers.add(listener, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return this.#loop;
    this.#closed = true;
    this.#subscribers.clear();
    this.#signalClosing();
    // Ends a pending XREAD BLOCK now instead of at its timeout; the publishing connection is not ours.
    this.#reader.disconnect();
    await this.#loop;
  }

  /**
   * Closes the reading connection as a failed network would, without ioredis reconnecting it: the loop
   * reconnects after its backoff and reads on from the last entry it delivered (tests, operators).
   */
  dropReaderConnection(): void {
    this.#reader.disconnect();
  }

  /** The id of the stream's last entry ('$' made concrete), so reading from it misses nothing later. */
  async #findStart(): Promise<void> {
    for (let failures = 0; !this.#closed; failures++) {
      try {
        const last = await this.#untilClosed(this.#redis.xrevrange(BUS_STREAM, '+', '-', 'COUNT', 1));
        if (last === undefined) return;
        this.#lastId = last[0]?.[0] ?? '0-0';
        return;
      } catch (error) {
        if (this.#closed) return;
        this.#onError(error);
        await this.#backoff(failures);
      }
    }
  }

  async #read(): Promise<void> {
    await this.#started;
    for (let failures = 0; !this.#closed; ) {
      try {
        // A connection ended for good (retry strategy gave up) is reopened here, from the same offset.
        if (this.#reader.status === 'end') await this.#reader.connect();
        const reply = await this.#untilClosed(
          this.#reader.xread(
            'COUNT',
            this.#batchSize,
            'BLOCK',
            this.#blockMs,
            'STREAMS',
            BUS_STREAM,
            this.#lastId,
          ),
        );
        failures = 0;
        let events = 0;
        for (const [, entries] of reply ?? []) events += entries.length;
        this.#subscribers.run(() => {
          for (const [, entries] of reply ?? []) {
            for (const [id, fields] of entries) this.#deliver(id, fields);
          }
        }, events);
      } catch (error) {
        if (this.#closed) return;
        this.#onError(error);
        await this.#backoff(failures++);
      }
    }
  }

  async history(afterId: string): Promise<DeliveredEvent[]> {
    const entries = await this.#redis.xrange(BUS_STREAM, `(${afterId}`, '+', 'COUNT', BUS_HISTORY_SIZE);
    const seen = new Set<string>();
    const events: DeliveredEvent[] = [];
    for (const [id, fields] of entries) {
      const entry = fieldMap(fields);
      const publication = entry.get('pub');
      // A resent XADD appears twice with one publication tag: keep the first.
      if (publication !== undefined && seen.has(publication)) continue;
      if (publication !== undefined) seen.add(publication);
      const event = decodeEvent(entry.get('event') ?? '');
      if (event) events.push({ ...event, id });
    }
    return events;
  }

  #deliver(id: string, fields: string[]): void {
    if (this.#closed || compareEventIds(id, this.#lastId) <= 0) return;
    this.#lastId = id;
    const entry = fieldMap(fields);
    const event = decodeEvent(entry.get('event') ?? '');
    if (!event) {
      this.#onError(new Error(`bus: stream entry ${id} is not a Hearth event; skipped`));
      return;
    }
    if (this.#isResent(entry.get('pub'))) return;
    this.#subscribers.deliver({ ...event, id });
  }

  /**
   * One publisher's entries enter the stream in its sequence order (one connection, in call order),
   * so a sequence not above the last one seen is a copy ioredis resent after a reply was lost.
   */
  #isResent(publication: string | undefined): boolean {
    const colon = publication?.lastIndexOf(':') ?? -1;
    if (!publication || colon < 0) return false;
    const publisher = publication.slice(0, colon);
    const sequence = Number(publication.slice(colon + 1));
    const last = this.#lastSequence.get(publisher);
    if (last !== undefined && sequence <= last) return true;
    this.#lastSequence.delete(publisher);
    this.#lastSequence.set(publisher, sequence);
    if (this.#lastSequence.size > REMEMBERED_PUBLISHERS) {
      const oldest = this.#lastSequence.keys().next().value;
      if (oldest !== undefined) this.#lastSequence.delete(oldest);
    }
    return false;
  }

  /** `pending`'s value, or undefined on close: a command queued while Redis is away may never settle. */
  async #untilClosed<T>(pending: Promise<T>): Promise<T | undefined> {
    pending.catch(() => {});
    return Promise.race([pending, this.#closing.then(() => undefined)]);
  }

  async #backoff(failures: number): Promise<void> {
    const delay = Math.min(BACKOFF_MIN_MS * 2 ** failures, BACKOFF_MAX_MS);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, delay);
      }),
      this.#closing,
    ]);
    clearTimeout(timer);
  }
}

function fieldMap(fields: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
  return map;
}
