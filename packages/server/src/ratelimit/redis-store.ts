import type { Redis } from 'ioredis';
import { ENDED_WINDOW_KEPT_MS, type RateLimitStore, type WindowCount, windowOf } from './store.js';

// INCRBY and the expiry in one round trip; the expiry only cleans up, the window lives in the key.
const HIT = `local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

type WithHit = Redis & { hearthRateLimitHit(key: string, ttlMs: string, amount: string): Promise<number> };

/** Counters shared by every node through Redis. The connection belongs to the caller. */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #redis: WithHit;

  constructor(redis: Redis) {
    redis.defineCommand('hearthRateLimitHit', { numberOfKeys: 1, lua: HIT });
    this.#redis = redis as WithHit;
  }

  async hit(key: string, windowMs: number, now: number, amount = 1): Promise<WindowCount> {
    const { slot, resetAt } = windowOf(key, windowMs, now);
    const count = await this.#redis.hearthRateLimitHit(
      `rl:${slot}`,
      String(windowMs + ENDED_WINDOW_KEPT_MS),
      String(amount),
    );
    return { count, resetAt };
  }

  async peek(key: string, windowMs: number, now: number): Promise<WindowCount> {
    const { slot, resetAt } = windowOf(key, windowMs, now);
    const value = await this.#redis.get(`rl:${slot}`);
    return { count: value === null ? 0 : Number(value), resetAt };
  }

  async close(): Promise<void> {}
}
