import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BusWake } from './database-bus.js';

/**
 * Redis as an accelerator of the database's event log: a node that appended publishes a nudge on a
 * channel, and every other node reads the log at once instead of at its next poll. Nothing is carried
 * here, so nothing is lost when Redis restarts or is away: nodes then read at their poll interval.
 */
export class RedisWake implements BusWake {
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #channel: string;
  /** This node's nudges come back to it too; they are told apart by this tag and ignored. */
  readonly #self = randomBytes(6).toString('hex');
  readonly #listeners = new Set<() => void>();

  /** `redis` publishes and stays the caller's; subscribing takes a duplicate, since it holds the connection. */
  constructor(redis: Redis) {
    this.#redis = redis;
    // ioredis prefixes keys, not channels: the deployment's prefix keeps deployments apart here too.
    this.#channel = `${redis.options.keyPrefix ?? ''}bus:wake`;
    // Subscribed again on every `ready` below, where a failure is caught: ioredis's own resubscription
    // after a reconnection leaves a rejection unhandled when the connection drops again meanwhile.
    // `lazyConnect` is not inherited: a lazy subscriber would wait for a command that never comes, and
    // every other node would then read only at its poll interval.
    this.#subscriber = redis.duplicate({ autoResubscribe: false, lazyConnect: false });
    this.#subscriber.on('error', () => {
      // Reconnection is ioredis's (it subscribes again); meanwhile the log is polled.
    });
    this.#subscriber.on('message', (_channel: string, from: string) => {
      if (from !== this.#self) this.#wakeAll();
    });
    this.#subscriber.on('ready', () => {
      this.#subscriber.subscribe(this.#channel).catch(() => {});
      // Back after an outage: what was appended meanwhile is read now, not at the next poll.
      this.#wakeAll();
    });
  }

  notify(): void {
    // Queued nudges would only arrive late; while Redis is away the others poll anyway.
    if (this.#redis.status !== 'ready') return;
    this.#redis.publish(this.#channel, this.#self).catch(() => {});
  }

  listen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#subscriber.disconnect();
  }

  #wakeAll(): void {
    for (const listener of this.#listeners) listener();
  }
}
