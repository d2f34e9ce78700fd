import type { Redis } from 'ioredis';
import {
  ENDED_WINDOW_KEPT_MS,
  type GatedCounts,
  type GatedHit,
  type Hit,
  type RateLimitStore,
  type WindowCount,
  windowOf,
} from './store.js';

// INCRBY and the expiry in one round trip; the expiry only cleans up, the window lives in the key.
const HIT = `local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

// Both counts of a request in one round trip; the second only if the first stayed within its limit.
const GATED_HIT = `local gate = redis.call('INCR', KEYS[1])
if gate == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
if gate > tonumber(ARGV[2]) then return {gate} end
local count = redis.call('INCR', KEYS[2])
if count == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
return {gate, count}`;

type WithHit = Redis & {
  hearthRateLimitHit(key: string, ttlMs: string, amount: string): Promise<number>;
  hearthRateLimitGatedHit(
    gateKey: string,
    nextKey: string,
    gateTtlMs: string,
    gateLimit: string,
    nextTtlMs: string,
  ): Promise<[number] | [number, number]>;
};

/** Counters shared by every node through Redis. The connection belongs to the caller. */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #redis: WithHit;

  constructor(redis: Redis) {
    redis.defineCommand('hearthRateLimitHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('hearthRateLimitGatedHit', { numberOfKeys: 2, lua: GATED_HIT });
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

  async hitGated(gate: GatedHit, next: Hit, now: number): Promise<GatedCounts> {
    const gateWindow = windowOf(gate.key, gate.windowMs, now);
    const nextWindow = windowOf(next.key, next.windowMs, now);
    const [gateCount, nextCount] = await this.#redis.hearthRateLimitGatedHit(
      `rl:${gateWindow.slot}`,
      `rl:${nextWindow.slot}`,
      String(gate.windowMs + ENDED_WINDOW_KEPT_MS),
      String(gate.limit),
      String(next.windowMs + ENDED_WINDOW_KEPT_MS),
    );
    return {
      gate: { count: gateCount, resetAt: gateWindow.resetAt },
      next: nextCount === undefined ? undefined : { count: nextCount, resetAt: nextWindow.resetAt },
    };
  }

  async peek(key: string, windowMs: number, now: number): Promise<WindowCount> {
    const { slot, resetAt } = windowOf(key, windowMs, now);
    const value = await this.#redis.get(`rl:${slot}`);
    return { count: value === null ? 0 : Number(value), resetAt };
  }

  async close(): Promise<void> {}
}
