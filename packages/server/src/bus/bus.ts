/**
 * The bus carries domain events from the service that committed a change to every node's gateway and
 * workers. It speaks Hearth's own terms; an adapter (in-process, Redis Streams) only moves them.
 */
export interface BusEvent {
  /** The event's name, e.g. `LOBBY_MESSAGE_CREATE` (a gateway dispatch) or `APPLICATION_DEAUTHORIZED`. */
  type: string;
  /** Plain JSON: a network adapter carries it as JSON text. */
  data: Record<string, unknown>;
  /** Who on the gateway receives it; absent: nobody (the event is for workers and webhooks). */
  audience?: Audience;
}

/** The sessions an event is for: every listed key that is present must match. */
export interface Audience {
  /** Sessions of these users. */
  users?: readonly string[];
  /** Sessions authenticated for this application (bot sessions and bearer sessions of its players). */
  applicationId?: string;
  /** Sessions that can see this guild. */
  guildId?: string;
  /**
   * With `guildId`: only members holding these permission bits (a decimal bitset, JSON has no bigint),
   * in `channelId` when it is given. Absent: the event type's own requirement (DISPATCH_PERMISSIONS).
   */
  permission?: string;
  channelId?: string;
}

/**
 * An event as delivered: with the id the bus gave it, `<ms>-<seq>` like a Redis stream entry id,
 * increasing in publish order on every node (compare two with `compareEventIds`).
 */
export interface DeliveredEvent extends BusEvent {
  id: string;
}

export type BusListener = (event: DeliveredEvent) => void;

export interface SubscribeOptions {
  /**
   * Called when a run of deliveries starts, with how many events it holds at most (a lone delivery: 1), so
   * that a listener can tell a short burst from a lone event before the first one arrives.
   */
  beforeDelivery?: (events: number) => void;
  /**
   * Called when a run of deliveries ends: after the events an adapter delivers together in one synchronous
   * loop (a read or an append of several), or after a lone one, and always before the bus settles a
   * publish or yields. The gateway holds its socket writes during a run and writes them here, in order.
   */
  afterDelivery?: () => void;
}

/** Where a bus reports what it cannot throw: a listener's exception (with its event), a failed read. */
export type BusErrorReporter = (error: unknown, event?: DeliveredEvent) => void;

export interface BusOptions {
  /** Default: stderr. The composition root passes its logger. */
  onError?: BusErrorReporter;
}

export interface Bus {
  /** Delivers `event` to every subscriber on every node, in publish order. Call after the change committed. */
  publish(event: BusEvent): Promise<void>;
  /** Every event published after this returns reaches `listener` once, in order, until unsubscribed. */
  subscribe(listener: BusListener, options?: SubscribeOptions): () => void;
  /**
   * The retained events published after `afterId`, in order: how a gateway node taking a session over
   * finds what the previous owner had not recorded yet.
   */
  history(afterId: string): Promise<DeliveredEvent[]>;
  /**
   * The id of the last event this node delivered or, before the first, of where it started reading: what
   * `history` continues from for a session that began before any event reached this node.
   */
  lastId(): string;
  /** Stops delivery at once; never closes a connection the bus was given. */
  close(): Promise<void>;
}

/** How many recent events a bus keeps for `history` (Redis trims its stream more loosely). */
export const BUS_HISTORY_SIZE = 10_000;

const EVENT_ID = /^(\d+)-(\d+)$/;

/** Orders two event ids of one bus (negative, 0, positive), exactly, however large the numbers. */
export function compareEventIds(a: string, b: string): number {
  const [, aMs = '', aSeq = ''] = EVENT_ID.exec(a) ?? invalidId(a);
  const [, bMs = '', bSeq = ''] = EVENT_ID.exec(b) ?? invalidId(b);
  return compareDecimal(aMs, bMs) || compareDecimal(aSeq, bSeq);
}

function invalidId(id: string): never {
  throw new TypeError(`not a bus event id: ${JSON.stringify(id)}`);
}

// Neither Redis nor MemoryBus writes leading zeros, so the longer number is the larger one.
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The JSON text a network adapter carries: only the event's own fields, whatever else the object holds. */
export function encodeEvent(event: BusEvent): string {
  const { type, data, audience } = event;
  return JSON.stringify(audience === undefined ? { type, data } : { type, data, audience });
}

/** The event in `text`, or undefined when it is not one (a foreign or corrupt entry). */
export function decodeEvent(text: string): BusEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value) || typeof value['type'] !== 'string' || !isObject(value['data'])) return undefined;
  const { type, data, audience } = value;
  if (audience === undefined) return { type, data };
  return isObject(audience) ? { type, data, audience: audience as Audience } : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const reportToStderr: BusErrorReporter = (error, event) => {
  console.error(
    event ? `bus: listener failed on ${event.type} id=${event.id}` : 'bus: transport failed',
    error,
  );
};

/**
 * The listeners of one node, shared by every adapter so that delivery behaves alike: in subscription
 * order, one throwing does not starve the others, and each subscription is its own even for one function.
 */
export class Subscribers {
  readonly #entries = new Set<{
    listener: BusListener;
    beforeDelivery: ((events: number) => void) | undefined;
    afterDelivery: (() => void) | undefined;
  }>();
  readonly #onError: BusErrorReporter;
  /** Nested `run`s under way: only the outermost one ends the run. */
  #depth = 0;
  /** Whether the run under way delivered anything: a read that found nothing tells nobody. */
  #delivered = false;

  constructor(onError: BusErrorReporter = reportToStderr) {
    this.#onError = onError;
  }

  add(listener: BusListener, options: SubscribeOptions = {}): () => void {
    const entry = { listener, beforeDelivery: options.beforeDelivery, afterDelivery: options.afterDelivery };
    this.#entries.add(entry);
    return () => {
      this.#entries.delete(entry);
    };
  }

  /** Delivers one event; outside `run`, it is a run of its own. */
  deliver(event: DeliveredEvent): void {
    if (this.#depth === 0) {
      this.run(() => this.deliver(event), 1);
      return;
    }
    this.#delivered = true;
    for (const { listener } of this.#entries) {
      try {
        listener(event);
      } catch (error) {
        this.#onError(error, event);
      }
    }
  }

  /**
   * Runs `deliveries` (synchronous calls of `deliver`, `events` of them at most), telling the subscribers
   * that asked before and after.
   */
  run(deliveries: () => void, events: number): void {
    if (this.#depth++ === 0 && events > 0) {
      for (const { beforeDelivery } of this.#entries) {
        if (beforeDelivery === undefined) continue;
        try {
          beforeDelivery(events);
        } catch (error) {
          this.#onError(error);
        }
      }
    }
    try {
      deliveries();
    } finally {
      if (--this.#depth === 0 && this.#delivered) {
        this.#delivered = false;
        for (const { afterDelivery } of this.#entries) {
          if (afterDelivery === undefined) continue;
          try {
            afterDelivery();
          } catch (error) {
            this.#onError(error);
          }
        }
      }
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

export interface MemoryBusOptions extends BusOptions {
  /**
   * Whether the last BUS_HISTORY_SIZE events are kept for `history`: what a node taking a session over from
   * another node on the same bus reads (nodes sharing one process's bus, in tests). A lone node takes none
   * over, and keeps none: the events' data would otherwise stay, every identify's presence among them, for
   * nothing. Default true.
   */
  history?: boolean;
}

/** One node. Ids are made as Redis makes stream ids: the clock's ms, never going back, and a sequence. */
export class MemoryBus implements Bus {
  readonly #subscribers: Subscribers;
  /** Undefined when the bus keeps no history. */
  readonly #history: DeliveredEvent[] | undefined;
  #lastId = '0-0';
  #lastMs = 0;
  #sequence = 0;
  /** Published, not yet delivered: the publishes of one turn, delivered together. */
  #pending: Array<{ event: DeliveredEvent; settle: () => void }> = [];

  constructor(options: MemoryBusOptions = {}) {
    this.#subscribers = new Subscribers(options.onError);
    this.#history = options.history === false ? undefined : [];
  }

  /**
   * The event gets its id at once; delivery (and its place in `history`) waits for the publishes of the
   * same turn, a fan-out of several events, to be delivered together in publish order, before any of them
   * settles: the gateway then writes each socket's frames of the run with one system call.
   */
  publish(event: BusEvent): Promise<void> {
    const delivered = { ...event, id: this.#nextId() };
    return new Promise<void>((settle) => {
      this.#pending.push({ event: delivered, settle });
      if (this.#pending.length === 1) queueMicrotask(() => this.#deliverPending());
    });
  }

  #deliverPending(): void {
    const pending = this.#pending;
    this.#pending = [];
    this.#subscribers.run(() => {
      const history = this.#history;
      for (const { event } of pending) {
        this.#lastId = event.id;
        if (history) {
          history.push(event);
          if (history.length > BUS_HISTORY_SIZE) history.shift();
        }
        this.#subscribers.deliver(event);
      }
    }, pending.length);
    for (const { settle } of pending) settle();
  }

  async history(afterId: string): Promise<DeliveredEvent[]> {
    if (!this.#history) throw new Error('this bus keeps no history (MemoryBus with history: false)');
    return this.#history.filter((event) => compareEventIds(event.id, afterId) > 0);
  }

  lastId(): string {
    return this.#lastId;
  }

  subscribe(listener: BusListener, options?: SubscribeOptions): () => void {
    return this.#subscribers.add(listener, options);
  }

  async close(): Promise<void> {
    this.#subscribers.clear();
  }

  #nextId(): string {
    const now = Date.now();
    if (now > this.#lastMs) {
      this.#lastMs = now;
      this.#sequence = 0;
    } else {
      this.#sequence += 1;
    }
    return `${this.#lastMs}-${this.#sequence}`;
  }
}
