import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../../test-support/services.js';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';
import { RedisRateLimitStore } from '../src/ratelimit/redis-store.js';
import { gatedHit, type RateLimitStore } from '../src/ratelimit/store.js';
import { connectRedis } from '../src/redis.js';

/**
 * One contract for every rate-limit store (STYLE.md rule 6): fixed windows computed from the caller's
 * clock, so a test clock, the HTTP limiter and the gateway agree whichever store holds the counters.
 */
interface StoreUnderTest {
  name: string;
  available: boolean;
  open(): Promise<RateLimitStore>;
  close(): Promise<void>;
}

const redisUp = await redisAvailable();
const prefix = redisPrefix();
const connections: Redis[] = [];

async function redisConnection(keyPrefix = prefix): Promise<Redis> {
  const redis = await connectRedis(REDIS_URL, keyPrefix);
  connections.push(redis);
  return redis;
}

/** Deletes every key under `keyPrefix`; SCAN patterns are not prefixed by ioredis, so use a bare connection. */
async function deleteKeys(keyPrefix: string): Promise<number> {
  const redis = await connectRedis(REDIS_URL, '');
  try {
    let deleted = 0;
    for await (const keys of redis.scanStream({ match: `${keyPrefix}*`, count: 1000 })) {
      const batch = keys as string[];
      if (batch.length > 0) deleted += await redis.del(...batch);
    }
    return deleted;
  } finally {
    await redis.quit();
  }
}

async function closeRedis(): Promise<void> {
  await deleteKeys(prefix);
  await Promise.all(connections.splice(0).map((redis) => redis.quit()));
}

const stores: StoreUnderTest[] = [
  {
    name: 'MemoryRateLimitStore',
    available: true,
    open: async () => new MemoryRateLimitStore(),
    close: async () => {},
  },
  {
    name: 'RedisRateLimitStore',
    available: redisUp,
    open: async () => new RedisRateLimitStore(await redisConnection()),
    close: closeRedis,
  },
];

/** 2026-01-01T00:00:00Z: a multiple of every window below, so window ends are easy to state. */
const T0 = Date.UTC(2026, 0, 1);

/** A key no other test (or earlier run against the same Redis) has touched. */
const freshKey = (name: string) => `${name}:${randomBytes(6).toString('hex')}`;

function rateLimitStoreContract(underTest: StoreUnderTest): void {
  describe.skipIf(!underTest.available)(`rate-limit store contract: ${underTest.name}`, () => {
    let store: RateLimitStore;

    beforeAll(async () => {
      store = await underTest.open();
    });
    afterAll(async () => {
      await store?.close();
      await underTest.close();
    });

    it('hit() answers the count after the hit: 1, 2, 3 within one window', async () => {
      const key = freshKey('counts');
      expect(await store.hit(key, 1000, T0)).toEqual({ count: 1, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 10)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 999)).toEqual({ count: 3, resetAt: T0 + 1000 });
    });

    it('hit() with an amount counts that many (limits by size): 300, then 300 + 1, then 301 + 200', async () => {
      const key = freshKey('amounts');
      expect(await store.hit(key, 1000, T0, 300)).toEqual({ count: 300, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 1)).toEqual({ count: 301, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 2, 200)).toEqual({ count: 501, resetAt: T0 + 1000 });
      expect(await store.peek(key, 1000, T0 + 3)).toEqual({ count: 501, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 1000, 7)).toEqual({ count: 7, resetAt: T0 + 2000 });
    });

    it('windows are fixed and computed from `now`: resetAt is the end of the window containing now', async () => {
      const key = freshKey('fixed');
      expect(await store.hit(key, 5000, T0 + 1234)).toEqual({ count: 1, resetAt: T0 + 5000 });
      expect(await store.hit(key, 5000, T0 + 4999)).toEqual({ count: 2, resetAt: T0 + 5000 });
    });

    it('the count restarts at 1 once `now` reaches resetAt, even one millisecond later (not sliding)', async () => {
      const key = freshKey('restart');
      await store.hit(key, 1000, T0 + 998);
      expect(await store.hit(key, 1000, T0 + 999)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 1000)).toEqual({ count: 1, resetAt: T0 + 2000 });
      expect(await store.hit(key, 1000, T0 + 1001)).toEqual({ count: 2, resetAt: T0 + 2000 });
      expect(await store.hit(key, 1000, T0 + 7500)).toEqual({ count: 1, resetAt: T0 + 8000 });
    });

    it('an ended window keeps its own count: a clock moved back reads the old window', async () => {
      const key = freshKey('past');
      await store.hit(key, 1000, T0);
      await store.hit(key, 1000, T0 + 1);
      await store.hit(key, 1000, T0 + 1000);
      expect(await store.peek(key, 1000, T0 + 500)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.peek(key, 1000, T0 + 1500)).toEqual({ count: 1, resetAt: T0 + 2000 });
    });

    it('hits alternating between an ended window and the current one each count in their own', async () => {
      const key = freshKey('alternating');
      await store.hit(key, 1000, T0);
      expect(await store.hit(key, 1000, T0 + 1000)).toEqual({ count: 1, resetAt: T0 + 2000 });
      expect(await store.hit(key, 1000, T0 + 999)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 1999)).toEqual({ count: 2, resetAt: T0 + 2000 });
      expect(await store.hit(key, 1000, T0 + 2000)).toEqual({ count: 1, resetAt: T0 + 3000 });
    });

    it('peek() answers 0 and the window end for a key never hit', async () => {
      expect(await store.peek(freshKey('untouched'), 60_000, T0 + 15_000)).toEqual({
        count: 0,
        resetAt: T0 + 60_000,
      });
    });

    it('peek() reads the count without counting', async () => {
      const key = freshKey('peek');
      await store.hit(key, 1000, T0);
      await store.hit(key, 1000, T0);
      expect(await store.peek(key, 1000, T0 + 1)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.peek(key, 1000, T0 + 2)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.hit(key, 1000, T0 + 3)).toEqual({ count: 3, resetAt: T0 + 1000 });
    });

    it('different keys count independently', async () => {
      const a = freshKey('a');
      const b = freshKey('b');
      await store.hit(a, 1000, T0);
      await store.hit(a, 1000, T0);
      expect(await store.hit(b, 1000, T0)).toEqual({ count: 1, resetAt: T0 + 1000 });
      expect(await store.peek(a, 1000, T0)).toEqual({ count: 2, resetAt: T0 + 1000 });
    });

    it('one key with different window sizes counts independently', async () => {
      const key = freshKey('sizes');
      await store.hit(key, 1000, T0 + 100);
      await store.hit(key, 1000, T0 + 100);
      expect(await store.hit(key, 60_000, T0 + 100)).toEqual({ count: 1, resetAt: T0 + 60_000 });
      expect(await store.peek(key, 1000, T0 + 100)).toEqual({ count: 2, resetAt: T0 + 1000 });
      expect(await store.peek(key, 60_000, T0 + 100)).toEqual({ count: 1, resetAt: T0 + 60_000 });
    });

    it('a gated hit counts its second key only while the gate stays within its limit', async () => {
      const gate = { key: freshKey('gate'), windowMs: 1000, limit: 2 };
      const route = { key: freshKey('route'), windowMs: 60_000 };
      expect(await gatedHit(store, gate, route, T0 + 10)).toEqual({
        gate: { count: 1, resetAt: T0 + 1000 },
        next: { count: 1, resetAt: T0 + 60_000 },
      });
      expect(await gatedHit(store, gate, route, T0 + 20)).toEqual({
        gate: { count: 2, resetAt: T0 + 1000 },
        next: { count: 2, resetAt: T0 + 60_000 },
      });
      // Over the gate's limit: the gate counts, the second key does not.
      expect(await gatedHit(store, gate, route, T0 + 30)).toEqual({
        gate: { count: 3, resetAt: T0 + 1000 },
        next: undefined,
      });
      expect(await store.peek(route.key, 60_000, T0 + 40)).toEqual({ count: 2, resetAt: T0 + 60_000 });
      // The gate's next window lets the second key count again, in its own (longer) window.
      expect(await gatedHit(store, gate, route, T0 + 1000)).toEqual({
        gate: { count: 1, resetAt: T0 + 2000 },
        next: { count: 3, resetAt: T0 + 60_000 },
      });
      expect(await store.hit(gate.key, 1000, T0 + 1001)).toEqual({ count: 2, resetAt: T0 + 2000 });
    });

    it('50 concurrent hits count exactly 50, each answering a distinct count', async () => {
      const key = freshKey('concurrent');
      const results = await Promise.all(Array.from({ length: 50 }, () => store.hit(key, 1000, T0 + 500)));
      expect(results.map((r) => r.count).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      expect(new Set(results.map((r) => r.resetAt))).toEqual(new Set([T0 + 1000]));
      expect(await store.peek(key, 1000, T0 + 500)).toEqual({ count: 50, resetAt: T0 + 1000 });
    });
  });
}

for (const store of stores) rateLimitStoreContract(store);

describe.skipIf(!redisUp)('RedisRateLimitStore across nodes', () => {
  afterAll(closeRedis);

  it("a gated hit is one command to Redis: a request's two counts cost one round trip", async () => {
    const redis = await redisConnection();
    const store = new RedisRateLimitStore(redis);
    let commands = 0;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
      commands++;
      return send(...args);
    };
    const gate = { key: freshKey('gate-trip'), windowMs: 1000, limit: 10 };
    const counts = await gatedHit(store, gate, { key: freshKey('route-trip'), windowMs: 1000 }, T0);
    expect(counts.next).toEqual({ count: 1, resetAt: T0 + 1000 });
    expect(commands).toBe(1);
  });

  it('two stores on two connections share one count (many nodes, one budget)', async () => {
    const nodeA = new RedisRateLimitStore(await redisConnection());
    const nodeB = new RedisRateLimitStore(await redisConnection());
    const key = freshKey('shared');
    expect(await nodeA.hit(key, 1000, T0)).toEqual({ count: 1, resetAt: T0 + 1000 });
    expect(await nodeB.hit(key, 1000, T0 + 1)).toEqual({ count: 2, resetAt: T0 + 1000 });
    expect(await nodeA.hit(key, 1000, T0 + 2)).toEqual({ count: 3, resetAt: T0 + 1000 });
    expect(await nodeB.peek(key, 1000, T0 + 3)).toEqual({ count: 3, resetAt: T0 + 1000 });
  });

  it('50 concurrent hits split over two nodes count exactly 50', async () => {
    const nodes = [
      new RedisRateLimitStore(await redisConnection()),
      new RedisRateLimitStore(await redisConnection()),
    ];
    const key = freshKey('shared-concurrent');
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => nodes[i % 2]!.hit(key, 1000, T0 + 500)),
    );
    expect(results.map((r) => r.count).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(await nodes[0]!.peek(key, 1000, T0 + 500)).toEqual({ count: 50, resetAt: T0 + 1000 });
  });

  it('stores with different key prefixes (two deployments on one Redis) do not share counts', async () => {
    const otherPrefix = redisPrefix();
    try {
      const ours = new RedisRateLimitStore(await redisConnection());
      const theirs = new RedisRateLimitStore(await redisConnection(otherPrefix));
      const key = freshKey('deployments');
      await ours.hit(key, 1000, T0);
      await ours.hit(key, 1000, T0);
      expect(await theirs.hit(key, 1000, T0)).toEqual({ count: 1, resetAt: T0 + 1000 });
      expect(await ours.peek(key, 1000, T0)).toEqual({ count: 2, resetAt: T0 + 1000 });
    } finally {
      expect(await deleteKeys(otherPrefix)).toBe(1);
    }
  });

  it('every counter key lives under the connection prefix and expires', async () => {
    const store = new RedisRateLimitStore(await redisConnection());
    const key = freshKey('ttl');
    await store.hit(key, 1000, T0);
    const bare = await connectRedis(REDIS_URL, '');
    try {
      const keys: string[] = [];
      for await (const batch of bare.scanStream({ match: `${prefix}*${key}*` }))
        keys.push(...(batch as string[]));
      expect(keys).toHaveLength(1);
      expect(keys[0]!.startsWith(prefix)).toBe(true);
      // The window lives in the key; the expiry only cleans up, so it must exist and outlast the window.
      expect(await bare.pttl(keys[0]!)).toBeGreaterThan(1000);
    } finally {
      await bare.quit();
    }
  });
});
