import type { Clock } from '../kernel/clock.js';
import { RateLimitedError } from '../kernel/errors.js';
import type { RateLimitStore } from './store.js';

/**
 * Limits a service keeps beyond the HTTP buckets: counted per key of the service's choosing (for example
 * per application and route family), shared by every node through the rate-limit store.
 */
export class Quotas {
  readonly #counters: RateLimitStore;
  readonly #clock: Clock;

  constructor(counters: RateLimitStore, clock: Clock) {
    this.#counters = counters;
    this.#clock = clock;
  }

  /** Counts one use (or `amount`, for a limit by size); past the limit, throws the 429 the caller answers with. */
  async spend(key: string, quota: { limit: number; windowMs: number }, amount = 1): Promise<void> {
    const now = this.#clock.now();
    const window = await this.#counters.hit(`quota:${key}`, quota.windowMs, now, amount);
    if (window.count > quota.limit) throw new RateLimitedError((window.resetAt - now) / 1000);
  }
}
