import { randomBytes } from 'node:crypto';
import { WEBHOOK_TIMEOUT_MS } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/logger.js';
import type { Storage } from '../../storage/database.js';
import { recordedWebhookEvent, skippedWebhookEvents } from '../../storage/outbox.js';
import type { WebhooksService } from './service.js';
import * as store from './store.js';

export interface DeliveryWorkerDeps {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  webhooks: WebhooksService;
  /** How often the queue is read when nothing wakes the worker (`--webhook-poll-ms`). */
  pollMs: number;
  /** Rows leased per read, delivered concurrently. */
  batchSize?: number;
}

/**
 * A lease outlives the slowest attempt many times over; a node that dies holding one only delays the row
 * until the lease passes, and another node (or this one, restarted) delivers it.
 */
const LEASE_MS = 10 * WEBHOOK_TIMEOUT_MS;

/** The delivery log keeps finished events this long, then forgets them (checked at most hourly). */
export const LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Reads the durable outbox and delivers what is due. It polls, and wakes at once when a transaction of this
 * node recorded an event; other nodes' events are found by their own workers or by the next poll.
 */
export class DeliveryWorker {
  readonly #deps: DeliveryWorkerDeps;
  readonly #node = randomBytes(6).toString('hex');
  #round = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;
  #unsubscribe: (() => void) | undefined;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(deps: DeliveryWorkerDeps) {
    this.#deps = deps;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#unsubscribe = this.#deps.storage.onCommit((tx) => {
      const skipped = skippedWebhookEvents(tx);
      if (skipped.length > 0) this.#deps.webhooks.reportSkipped(skipped);
      if (recordedWebhookEvent(tx)) this.wake();
    });
    this.wake();
  }

  /** Reads the queue now (or right after the read in progress). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      if (this.#stopped) return;
      if (this.#again) this.wake();
      else this.#timer = setTimeout(() => this.wake(), this.#deps.pollMs);
    });
  }

  /** Stops polling and waits for the deliveries in flight (at most one attempt's timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
    await this.#running;
  }

  async #drain(): Promise<void> {
    const { storage, clock, logger, webhooks } = this.#deps;
    const limit = this.#deps.batchSize ?? 64;
    try {
      let claimed: store.OutboxRow[];
      do {
        this.#again = false;
        const now = clock.now();
        const owner = `${this.#node}:${++this.#round}`;
        claimed = await store.claimDue(storage.db, { owner, now, leaseUntil: now + LEASE_MS, limit });
        if (claimed.length > 0) await webhooks.deliverBatch(owner, claimed);
      } while (!this.#stopped && (claimed.length === limit || this.#again));
      await this.#prune();
    } catch (error) {
      logger.error({ component: 'webhooks', err: error }, 'webhook delivery round failed');
    }
  }

  async #prune(): Promise<void> {
    const now = this.#deps.clock.now();
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    const removed = await store.pruneFinished(this.#deps.storage.db, now - LOG_RETENTION_MS);
    if (removed > 0) this.#deps.logger.info({ component: 'webhooks', removed }, 'webhook log pruned');
  }
}
