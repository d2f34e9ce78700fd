import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, ManualClock } from '@hearth/server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../../test-support/services.js';
import { secondsText } from '../src/http/rate-limit.js';
import { connectRedis } from '../src/redis.js';

/**
 * HTTP rate limits as clients see them (PROTOCOL.md §E.3): the X-RateLimit headers, the 429 bodies, the
 * global budget per identity, route buckets, the legacy alias's shared budget, and counters across nodes.
 */

const redisUp = await redisAvailable();

/** 2026-03-01T12:00:00Z, a whole minute: windows of 1 s, 5 s and 60 s all start here. */
const T0 = Date.UTC(2026, 2, 1, 12);
const T0_SECONDS = T0 / 1000; // 1772366400
const PASSWORD = 'correct horse battery';
const BUCKET_HASH = /^[0-9a-f]{32}$/;

const opened: TestHearth[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((hearth) => hearth.close()));
});

async function start(overrides: Partial<Config> = {}, clock = new ManualClock(T0)) {
  const hearth = await startHearth(overrides, clock);
  opened.push(hearth);
  return { hearth, clock };
}

let users = 0;
async function createUser(hearth: TestHearth): Promise<{ token: string; id: string; email: string }> {
  users++;
  const email = `limited${users}@example.com`;
  const { user, token } = await hearth.services.accounts.createUser({
    username: `limited${users}`,
    email,
    password: PASSWORD,
  });
  return { token, id: user.id, email };
}

/** Every rate-limit header, null when absent, so one toEqual states the whole set. */
function rateLimitHeaders(response: Response): Record<string, string | null> {
  const names = [
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'x-ratelimit-reset-after',
    'x-ratelimit-bucket',
    'x-ratelimit-scope',
    'x-ratelimit-global',
    'retry-after',
  ];
  return Object.fromEntries(names.map((name) => [name, response.headers.get(name)]));
}

/** The headers of a response that passed its limits. */
function passed(limit: number, remaining: number, resetAt: number, resetAfter: number) {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': resetAt.toFixed(3),
    'x-ratelimit-reset-after': resetAfter.toFixed(3),
    'x-ratelimit-bucket': expect.stringMatching(BUCKET_HASH),
    'x-ratelimit-scope': null,
    'x-ratelimit-global': null,
    'retry-after': null,
  };
}

async function expect429(response: Response, body: string): Promise<void> {
  expect(response.status).toBe(429);
  // Exactly, with no charset parameter, and with the Via the platform's 429s carry (discord.py needs both).
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('via')).toBe('1.1 hearth');
  expect(await response.text()).toBe(body);
}

const globalBody = (retryAfter: number) =>
  `{"message":"You are being rate limited.","retry_after":${retryAfter},"global":true,"code":0}`;

describe('X-RateLimit headers on every routed response (PROTOCOL.md §E.3)', () => {
  it('carries Limit, Remaining, Reset, Reset-After and Bucket on 200, 201 and 400 answers, and no 429-only header', async () => {
    const { hearth } = await start();
    const { token, email } = await createUser(hearth);
    // Default bucket: 5 s holding five seconds of the global rate (50/s); password routes: 10 per 60 s.
    const defaultBucket = passed(250, 249, T0_SECONDS + 5, 5);
    const passwordBucket = passed(10, 9, T0_SECONDS + 60, 60);

    const gateway = await hearth.api('/gateway');
    expect(gateway.status).toBe(200);
    expect(rateLimitHeaders(gateway)).toEqual(defaultBucket);

    const me = await hearth.api('/users/@me', { auth: token });
    expect(me.status).toBe(200);
    expect(rateLimitHeaders(me)).toEqual(defaultBucket);

    const rename = await hearth.api('/users/@me', {
      method: 'PATCH',
      auth: token,
      body: { global_name: 'L' },
    });
    expect(rename.status).toBe(200);
    expect(rateLimitHeaders(rename)).toEqual(defaultBucket);

    const register = await hearth.api('/auth/register', {
      method: 'POST',
      body: { username: 'fresh.one', email: 'fresh@example.com', password: PASSWORD },
    });
    expect(register.status).toBe(201);
    expect(rateLimitHeaders(register)).toEqual(passwordBucket);

    const badLogin = await hearth.api('/auth/login', {
      method: 'POST',
      auth: token,
      body: { login: email, password: 'not the password' },
    });
    expect(badLogin.status).toBe(400);
    expect(rateLimitHeaders(badLogin)).toEqual(passwordBucket);
  });

  it('X-RateLimit-Remaining counts down and Reset-After follows the clock while Reset stays put', async () => {
    const { hearth, clock } = await start();
    const seen: Record<string, string | null>[] = [];
    for (let i = 0; i < 3; i++) {
      seen.push(rateLimitHeaders(await hearth.api('/gateway')));
      clock.advance(1250);
    }
    expect(seen).toEqual([
      passed(250, 249, T0_SECONDS + 5, 5),
      passed(250, 248, T0_SECONDS + 5, 3.75),
      passed(250, 247, T0_SECONDS + 5, 2.5),
    ]);
  });

  it('a route has one bucket under /api/v10, /api/v9 and /api: one X-RateLimit-Bucket, one Remaining', async () => {
    const { hearth } = await start();
    const { token } = await createUser(hearth);
    const responses = [
      await hearth.api('/users/@me', { auth: token, version: 'v10' }),
      await hearth.api('/users/@me', { auth: token, version: 'v9' }),
      await hearth.api('/users/@me', { auth: token, version: '' }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    const buckets = responses.map((r) => r.headers.get('x-ratelimit-bucket'));
    expect(buckets[0]).toMatch(BUCKET_HASH);
    expect(new Set(buckets).size).toBe(1);
    expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['249', '248', '247']);
  });

  it('different routes (template or method) have different buckets and separate Remaining', async () => {
    const { hearth } = await start();
    const { token } = await createUser(hearth);
    const responses = [
      await hearth.api('/gateway', { auth: token }),
      await hearth.api('/users/@me', { auth: token }),
      await hearth.api('/users/@me', { method: 'PATCH', auth: token, body: {} }),
      await hearth.api('/auth/login', { method: 'POST', auth: token, body: {} }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 400]);
    const buckets = responses.map((r) => r.headers.get('x-ratelimit-bucket'));
    for (const bucket of buckets) expect(bucket).toMatch(BUCKET_HASH);
    expect(new Set(buckets).size).toBe(4);
    expect(responses.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['249', '249', '249', '9']);
  });
});

describe('global rate limit per identity (PROTOCOL.md §E.3)', () => {
  it('answers 429 {"message":"You are being rate limited.","retry_after":…,"global":true,"code":0} past the limit', async () => {
    const { hearth, clock } = await start({ rateLimitGlobal: 3 });
    clock.advance(250);
    for (let i = 0; i < 3; i++) expect((await hearth.api('/gateway')).status).toBe(200);

    const limited = await hearth.api('/gateway');
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-global')).toBe('true');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('global');
    await expect429(limited, globalBody(0.75));
  });

  it('one identity spends one global budget across routes', async () => {
    const { hearth } = await start({ rateLimitGlobal: 3 });
    const { token } = await createUser(hearth);
    expect((await hearth.api('/users/@me', { auth: token })).status).toBe(200);
    expect((await hearth.api('/gateway', { auth: token })).status).toBe(200);
    expect((await hearth.api('/users/@me', { auth: token, version: 'v9' })).status).toBe(200);
    const limited = await hearth.api('/users/@me', { method: 'PATCH', auth: token, body: {} });
    expect(limited.headers.get('x-ratelimit-scope')).toBe('global');
    await expect429(limited, globalBody(1));
  });

  it('two identities (two user tokens, and the anonymous caller) do not share a global budget', async () => {
    const { hearth } = await start({ rateLimitGlobal: 3 });
    const alice = await createUser(hearth);
    const bob = await createUser(hearth);
    for (let i = 0; i < 3; i++)
      expect((await hearth.api('/users/@me', { auth: alice.token })).status).toBe(200);
    await expect429(await hearth.api('/users/@me', { auth: alice.token }), globalBody(1));

    for (let i = 0; i < 3; i++)
      expect((await hearth.api('/users/@me', { auth: bob.token })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await hearth.api('/gateway')).status).toBe(200);
    await expect429(await hearth.api('/users/@me', { auth: bob.token }), globalBody(1));
    await expect429(await hearth.api('/gateway'), globalBody(1));
  });

  it('advancing the clock to the reset lets requests through again, with a full budget', async () => {
    const { hearth, clock } = await start({ rateLimitGlobal: 3 });
    for (let i = 0; i < 3; i++) expect((await hearth.api('/gateway')).status).toBe(200);
    clock.advance(999);
    const stillLimited = await hearth.api('/gateway');
    expect(stillLimited.headers.get('retry-after')).toBe('1');
    await expect429(stillLimited, globalBody(0.001));

    clock.advance(1);
    for (let i = 0; i < 3; i++) expect((await hearth.api('/gateway')).status).toBe(200);
    await expect429(await hearth.api('/gateway'), globalBody(1));
  });
});

describe('route buckets (PROTOCOL.md §E.3)', () => {
  it('exceeding POST /auth/login (10 per 60 s) answers 429 with global:false and X-RateLimit-Scope: user', async () => {
    const { hearth, clock } = await start();
    const { email } = await createUser(hearth);
    clock.advance(15_000);
    const login = { login: email, password: 'not the password' };
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 10; i++) {
      const response = await hearth.api('/auth/login', { method: 'POST', body: login });
      expect(response.status).toBe(400);
      remaining.push(response.headers.get('x-ratelimit-remaining'));
    }
    expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);

    const limited = await hearth.api('/auth/login', { method: 'POST', body: login });
    expect(rateLimitHeaders(limited)).toEqual({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': (T0_SECONDS + 60).toFixed(3),
      'x-ratelimit-reset-after': '45.000',
      'x-ratelimit-bucket': expect.stringMatching(BUCKET_HASH),
      'x-ratelimit-scope': 'user',
      'x-ratelimit-global': null,
      'retry-after': '45',
    });
    await expect429(
      limited,
      '{"message":"You are being rate limited.","retry_after":45,"global":false,"code":0}',
    );
  });

  it('an exhausted route bucket leaves other routes and other identities alone', async () => {
    const { hearth } = await start();
    const { email, token } = await createUser(hearth);
    const login = { login: email, password: 'not the password' };
    for (let i = 0; i < 10; i++) await hearth.api('/auth/login', { method: 'POST', body: login });
    expect((await hearth.api('/auth/login', { method: 'POST', body: login })).status).toBe(429);

    expect((await hearth.api('/gateway')).status).toBe(200);
    const asUser = await hearth.api('/auth/login', { method: 'POST', auth: token, body: login });
    expect(asUser.status).toBe(400);
    expect(asUser.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('advancing the clock past X-RateLimit-Reset opens a fresh window of the route bucket', async () => {
    const { hearth, clock } = await start();
    const { email, id } = await createUser(hearth);
    for (let i = 0; i < 10; i++) {
      await hearth.api('/auth/login', { method: 'POST', body: { login: email, password: 'wrong password' } });
    }
    clock.advance(59_999);
    const limited = await hearth.api('/auth/login', {
      method: 'POST',
      body: { login: email, password: PASSWORD },
    });
    await expect429(
      limited,
      '{"message":"You are being rate limited.","retry_after":0.001,"global":false,"code":0}',
    );

    clock.advance(1);
    const ok = await hearth.api('/auth/login', {
      method: 'POST',
      body: { login: email, password: PASSWORD },
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { user_id: string }).user_id).toBe(id);
    expect(rateLimitHeaders(ok)).toEqual(passed(10, 9, T0_SECONDS + 120, 60));
  });
});

describe('legacy /api alias: one global budget shared by every caller', () => {
  const sharedBody = (retryAfter: number) =>
    `{"message":"The resource is being rate limited.","retry_after":${retryAfter},"global":true,"code":0}`;

  it('answers 429 "The resource is being rate limited." with scope shared once all callers together pass the limit', async () => {
    const { hearth } = await start({ rateLimitGlobal: 3 });
    const alice = await createUser(hearth);
    const bob = await createUser(hearth);
    expect((await hearth.api('/users/@me', { auth: alice.token, version: '' })).status).toBe(200);
    expect((await hearth.api('/users/@me', { auth: alice.token, version: '' })).status).toBe(200);
    expect((await hearth.api('/users/@me', { auth: bob.token, version: '' })).status).toBe(200);

    const limited = await hearth.api('/gateway', { version: '' });
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('shared');
    expect(limited.headers.get('x-ratelimit-global')).toBe('true');
    await expect429(limited, sharedBody(1));
    await expect429(await hearth.api('/users/@me', { auth: bob.token, version: '' }), sharedBody(1));
  });

  it('/api/v10 calls by the same callers keep their own budgets while the alias is exhausted', async () => {
    const { hearth, clock } = await start({ rateLimitGlobal: 3 });
    const alice = await createUser(hearth);
    const bob = await createUser(hearth);
    for (const caller of [alice, bob, alice]) {
      expect((await hearth.api('/users/@me', { auth: caller.token, version: '' })).status).toBe(200);
    }
    clock.advance(500);
    await expect429(await hearth.api('/users/@me', { auth: alice.token, version: '' }), sharedBody(0.5));

    for (const caller of [alice, bob]) {
      for (let i = 0; i < 3; i++) {
        expect((await hearth.api('/users/@me', { auth: caller.token, version: 'v10' })).status).toBe(200);
      }
    }
    expect((await hearth.api('/gateway', { version: 'v10' })).status).toBe(200);
  });

  it('advancing the clock past the reset opens the alias again', async () => {
    const { hearth, clock } = await start({ rateLimitGlobal: 3 });
    for (let i = 0; i < 3; i++) expect((await hearth.api('/gateway', { version: '' })).status).toBe(200);
    await expect429(await hearth.api('/gateway', { version: '' }), sharedBody(1));
    clock.advance(1000);
    expect((await hearth.api('/gateway', { version: '' })).status).toBe(200);
  });
});

describe('counters across nodes', () => {
  let sqliteDir: string | undefined;
  afterAll(() => {
    if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
  });

  /** Two nodes on one database (so a token works on both) and one clock. */
  async function twoNodes(overrides: Partial<Config>) {
    sqliteDir ??= mkdtempSync(join(tmpdir(), 'hearth-rate-limits-'));
    const databaseUrl = `sqlite:${join(sqliteDir, `${opened.length}-${Date.now()}.sqlite`)}`;
    const clock = new ManualClock(T0);
    const { hearth: a } = await start({ databaseUrl, rateLimitGlobal: 3, ...overrides }, clock);
    const { hearth: b } = await start({ databaseUrl, rateLimitGlobal: 3, ...overrides }, clock);
    const { token } = await createUser(a);
    return { a, b, clock, token };
  }

  it('without Redis each node counts alone (the in-process store is per node)', async () => {
    const { a, b, token } = await twoNodes({});
    for (let i = 0; i < 3; i++) expect((await a.api('/users/@me', { auth: token })).status).toBe(200);
    await expect429(await a.api('/users/@me', { auth: token }), globalBody(1));
    expect((await b.api('/users/@me', { auth: token })).status).toBe(200);
  });

  describe.skipIf(!redisUp)('with Redis', () => {
    const prefix = redisPrefix();
    afterAll(async () => {
      // SCAN patterns are not prefixed by ioredis: look the keys up on a bare connection.
      const redis = await connectRedis(REDIS_URL, '');
      try {
        for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
          const batch = keys as string[];
          if (batch.length > 0) await redis.del(...batch);
        }
      } finally {
        await redis.quit();
      }
    });

    it('two servers with one redisUrl/redisPrefix share one global budget and one route bucket per identity', async () => {
      const { a, b, clock, token } = await twoNodes({ redisUrl: REDIS_URL, redisPrefix: prefix });
      const first = await a.api('/users/@me', { auth: token });
      const second = await b.api('/users/@me', { auth: token });
      const third = await a.api('/users/@me', { auth: token });
      expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
      expect([first, second, third].map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual([
        '14',
        '13',
        '12',
      ]);
      expect(second.headers.get('x-ratelimit-bucket')).toBe(first.headers.get('x-ratelimit-bucket'));

      await expect429(await b.api('/users/@me', { auth: token }), globalBody(1));
      await expect429(await a.api('/gateway', { auth: token }), globalBody(1));

      clock.advance(1000);
      expect((await b.api('/users/@me', { auth: token })).status).toBe(200);
    });
  });
});

describe('X-RateLimit-Reset and -Reset-After texts', () => {
  it('are the seconds `toFixed(3)` writes, for every whole number of milliseconds', () => {
    const samples = [
      0, 1, 9, 10, 99, 100, 999, 1000, 1001, 4999, 5000, 60_000, 1_795_955_365_000, 1_795_955_365_007,
    ];
    for (let ms = 0; ms < 20_000; ms += 7) samples.push(ms);
    for (const ms of samples) expect(secondsText(ms)).toBe((ms / 1000).toFixed(3));
    // Anything else (a clock with fractions, a negative span) is written by toFixed itself.
    for (const ms of [2.5, -1, Number.NaN]) expect(secondsText(ms)).toBe((ms / 1000).toFixed(3));
  });
});
