import { sql } from 'kysely';
import type { Storage } from '../storage/database.js';
import { jsonTextArray } from '../storage/json-text-array.js';
import {
  BUS_HISTORY_SIZE,
  type Bus,
  type BusErrorReporter,
  type BusEvent,
  type BusListener,
  type BusOptions,
  type DeliveredEvent,
  decodeEvent,
  encodeEvent,
  reportToStderr,
  type SubscribeOptions,
  Subscribers,
} from './bus.js';

export interface DatabaseBusOptions extends BusOptions {
  /** How often the log is read for rows of other processes (ms); this node's own are delivered at once. */
  pollMs?: number;
  /** Rows one read returns, or one append writes, at most. */
  batchSize?: number;
  /** Rows the log keeps; a node further behind than this loses the excess (as Redis MAXLEN does). */
  retain?: number;
  /** How often a node trims the log to `retain` rows (ms). */
  trimEveryMs?: number;
  /** Row numbers one trimming DELETE covers at most; appends run between two. */
  trimBatchSize?: number;
  /** Tells other nodes of new rows so they read before their next poll (Redis); the bus closes it. */
  wake?: BusWake;
}

/**
 * A signal between the nodes of one log, carrying nothing but "read now": delivery never depends on it,
 * so a lost nudge only delays an event until the next poll.
 */
export interface BusWake {
  /** Tells the other nodes that this node appended. */
  notify(): void;
  /** Calls `listener` when another node appended (or the signal came back after an outage). */
  listen(listener: () => void): () => void;
  close(): Promise<void>;
}

interface Row {
  id: number | string;
  ms: number | string;
  event: string;
}

/**
 * Every node appends to one table of the shared database and tails it from the last row it delivered,
 * so that the `hearth` CLI and other nodes reach this node's sessions without Redis. Rows are numbered in
 * commit order (one writer at a time: SQLite's lock, a table lock on PostgreSQL), and a row's event id is
 * `<ms>-<row number>` with `ms` never going back, so ids increase in the order every node delivers.
 */
export class DatabaseBus implements Bus {
  readonly #storage: Storage;
  readonly #subscribers: Subscribers;
  readonly #onError: BusErrorReporter;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #retain: number;
  readonly #trimEveryMs: number;
  readonly #trimBatchSize: number;
  /** The last row delivered (or passed over as not an event); before the first, the log's end at open. */
  #last = 0;
  /** Appends, reads and deliveries run one after another on this chain: publish order is delivery order. */
  #work: Promise<unknown>;
  readonly #started: Promise<void>;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  /** A nudge came while a read was under way: read again right after it. */
  #pollAgain = false;
  #lastTrim = 0;
  #trimming = false;
  #closed = false;
  /** Publishes waiting for the next append, in call order. */
  #queued: Array<{ event: BusEvent; text: string; settle: () => void; fail: (error: unknown) => void }> = [];
  readonly #wake: BusWake | undefined;
  readonly #stopListening: (() => void) | undefined;

  /** Makes a bus and waits until every event appended from then on is sure to reach it. */
  static async open(storage: Storage, options: DatabaseBusOptions = {}): Promise<DatabaseBus> {
    const bus = new DatabaseBus(storage, options);
    await bus.ready();
    return bus;
  }

  constructor(storage: Storage, options: DatabaseBusOptions = {}) {
    this.#storage = storage;
    this.#onError = options.onError ?? reportToStderr;
    this.#subscribers = new Subscribers(this.#onError);
    this.#pollMs = options.pollMs ?? 100;
    this.#batchSize = options.batchSize ?? 500;
    this.#retain = Math.max(1, options.retain ?? 100_000);
    this.#trimEveryMs = options.trimEveryMs ?? 60_000;
    this.#trimBatchSize = Math.max(1, options.trimBatchSize ?? 5_000);
    this.#started = this.#findStart();
    this.#work = this.#started;
    this.#wake = options.wake;
    this.#stopListening = this.#wake?.listen(() => this.#pollNow());
    this.#schedule();
  }

  /** Resolves once the starting row is fixed. */
  ready(): Promise<void> {
    return this.#started;
  }

  async publish(event: BusEvent): Promise<void> {
    const text = encodeEvent(event);
    await new Promise<void>((settle, fail) => {
      this.#queued.push({ event, text, settle, fail });
      // The first of a batch puts the append on the chain; those published until it runs join it.
      if (this.#queued.length === 1) void this.#serially(() => this.#appendQueued());
    });
  }

  /**
   * Appends the publishes queued so far (up to `batchSize`) in one transaction: one commit for a burst of
   * events instead of one each (a commit waits for the disk). Each settles as the whole batch does.
   */
  async #appendQueued(): Promise<void> {
    const batch = this.#queued.splice(0, this.#batchSize);
    if (batch.length === 0) return;
    if (this.#queued.length > 0) void this.#serially(() => this.#appendQueued());
    try {
      const rows = await this.#append(batch.map((queued) => queued.text));
      // The rows are committed: the other nodes start reading while this one delivers its own.
      this.#wake?.notify();
      const first = rows[0]!.id;
      const last = rows.at(-1)!.id;
      if (!this.#closed) {
        // Nothing of another process came in between: deliver now, without reading back (lobby chat).
        // The events are those just published, in row order: delivered as they are, not parsed back from
        // their text (as the memory bus delivers them).
        if (first === this.#last + 1 && last === this.#last + rows.length) {
          this.#subscribers.run(() => {
            rows.forEach((row, i) => {
              const { type, data, audience } = batch[i]!.event;
              this.#last = row.id;
              const id = `${row.ms}-${row.id}`;
              this.#subscribers.deliver(
                audience === undefined ? { type, data, id } : { type, data, audience, id },
              );
            });
          }, rows.length);
        } else {
          await this.#readThrough(last);
        }
      }
    } catch (error) {
      for (const queued of batch) queued.fail(error);
      return;
    }
    for (const queued of batch) queued.settle();
  }

  subscribe(listener: BusListener, options?: SubscribeOptions): () => void {
    return this.#subscribers.add(listener, options);
  }

  async history(afterId: string): Promise<DeliveredEvent[]> {
    const after = Number(/^\d+-(\d+)$/.exec(afterId)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(after)) throw new TypeError(`not a bus event id: ${JSON.stringify(afterId)}`);
    const rows = await this.#rows(after, Number.MAX_SAFE_INTEGER, BUS_HISTORY_SIZE);
    return rows.flatMap((row) => {
      const event = decodeEvent(row.event);
      return event ? [{ ...event, id: `${row.ms}-${row.id}` }] : [];
    });
  }

  // Only the row number counts for `history`; a `<ms>` of 0 orders before every real event.
  lastId(): string {
    return `0-${this.#last}`;
  }

  /** Stops delivery at once; appends already under way still land in the log. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopListening?.();
    this.#subscribers.clear();
    clearTimeout(this.#timer);
    await this.#work.catch(() => {});
    await this.#wake?.close();
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#work.then(task);
    this.#work = run.catch(() => {});
    return run;
  }

  async #findStart(): Promise<void> {
    const { rows } = await sql<{ id: number | string | null }>`SELECT max(id) AS id FROM event_log`.execute(
      this.#storage.db,
    );
    this.#last = Number(rows[0]?.id ?? 0);
  }

  /**
   * One statement on SQLite (atomic, under the database's write lock); on PostgreSQL one call of
   * `event_log_append` (migration 0040), which takes a table lock first, so that numbers are taken and
   * committed in one order and no reader skips a row committed late. The rows are numbered in the order of
   * `texts` and answered in that order.
   */
  async #append(texts: readonly string[]): Promise<Array<{ id: number; ms: number }>> {
    const now = Date.now();
    const { db, engine } = this.#storage;
    // PostgreSQL: one autocommit call, one round trip, the texts as one array (one statement text whatever
    // the batch's size). SQLite: one statement, ordinals as literals (parameters in VALUES carry no type).
    const { rows } =
      engine === 'postgres'
        ? await sql<Omit<Row, 'event'>>`SELECT id, ms
            FROM event_log_append(${jsonTextArray(texts)}, ${now})`.execute(db)
        : await sql<Omit<Row, 'event'>>`INSERT INTO event_log (ms, event)
            SELECT max(${now}, coalesce((SELECT ms FROM event_log ORDER BY id DESC LIMIT 1), 0)), v.column2
            FROM (VALUES ${sql.join(texts.map((text, i) => sql`(${sql.lit(i)}, ${text})`))}) AS v
            ORDER BY v.column1
            RETURNING id, ms`.execute(db);
    if (rows.length !== texts.length) throw new Error(`event log: the append returned ${rows.length} rows`);
    // RETURNING promises no order; the ids are the rows' order.
    return rows.map((row) => ({ id: Number(row.id), ms: Number(row.ms) })).sort((a, b) => a.id - b.id);
  }

  async #rows(after: number, through: number, limit: number): Promise<Row[]> {
    const { rows } = await sql<Row>`SELECT id, ms, event FROM event_log
      WHERE id > ${after} AND id <= ${through} ORDER BY id LIMIT ${limit}`.execute(this.#storage.db);
    return rows;
  }

  /** Delivers every row after the last one delivered up to `through`, in order. */
  async #readThrough(through: number): Promise<void> {
    while (!this.#closed && this.#last < through) {
      const rows = await this.#rows(this.#last, through, this.#batchSize);
      this.#subscribers.run(() => {
        for (const row of rows) {
          if (this.#closed) return;
          this.#last = Number(row.id);
          this.#deliver(row);
        }
      }, rows.length);
      if (this.#closed) return;
      if (rows.length < this.#batchSize) return;
    }
  }

  #deliver(row: Row): void {
    const event = decodeEvent(row.event);
    if (!event) {
      this.#onError(new Error(`bus: event log row ${row.id} is not a Hearth event; skipped`));
      return;
    }
    this.#subscribers.deliver({ ...event, id: `${row.ms}-${row.id}` });
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => void this.#poll(), this.#pollMs);
    this.#timer.unref();
  }

  /** Reads the log now instead of at the next tick. */
  #pollNow(): void {
    if (this.#closed) return;
    if (this.#polling) {
      this.#pollAgain = true;
      return;
    }
    clearTimeout(this.#timer);
    void this.#poll();
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed) return;
    this.#polling = true;
    this.#pollAgain = false;
    try {
      await this.#serially(() => this.#readThrough(Number.MAX_SAFE_INTEGER));
      // Beside the polls, not before the next: a long trim must not hold other nodes' events back.
      if (!this.#trimming) {
        this.#trimming = true;
        this.#trim()
          .catch((error: unknown) => {
            if (!this.#closed) this.#onError(error);
          })
          .finally(() => {
            this.#trimming = false;
          });
      }
    } catch (error) {
      if (!this.#closed) this.#onError(error);
    } finally {
      this.#polling = false;
      if (this.#pollAgain) this.#pollNow();
      else this.#schedule();
    }
  }

  /**
   * Keeps the newest `retain` rows, and always the last one: its `ms` is where the next id starts. A few
   * thousand row numbers per DELETE, each its own step on the chain (so that close() waits for it): one
   * DELETE of a minute's excess (300,000 rows at 5,000 events/s) held every append of every node meanwhile.
   */
  async #trim(): Promise<void> {
    const now = Date.now();
    if (this.#closed || now - this.#lastTrim < this.#trimEveryMs) return;
    this.#lastTrim = now;
    const { rows } = await this.#serially(() =>
      // Each bound its own subquery: SQLite reads min() and max() together by scanning the whole table
      // (37 ms at 50,000 lobby events), but either alone from one end of the primary key.
      sql<{ low: number | string | null; high: number | string | null }>`
        SELECT (SELECT min(id) FROM event_log) AS low, (SELECT max(id) FROM event_log) AS high`.execute(
        this.#storage.db,
      ),
    );
    const low = Number(rows[0]?.low ?? 0);
    const cutoff = Number(rows[0]?.high ?? 0) - this.#retain;
    for (let from = low; from <= cutoff && !this.#closed; from += this.#trimBatchSize) {
      const upTo = Math.min(cutoff, from + this.#trimBatchSize - 1);
      await this.#serially(() => sql`DELETE FROM event_log WHERE id <= ${upTo}`.execute(this.#storage.db));
    }
  }
}
