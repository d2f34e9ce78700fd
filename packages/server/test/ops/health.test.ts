import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { parseExposition, sampleValue } from '../../../../test-support/prometheus.js';
import {
  POSTGRES_URL,
  postgresAvailable,
  postgresSchema,
  REDIS_URL,
  redisAvailable,
  redisPrefix,
} from '../../../../test-support/services.js';
import { TcpProxy, targetOf } from '../../../../test-support/tcp-proxy.js';

/**
 * Issue 22, health: `/healthz` says the process answers; `/readyz` says the node can serve (database,
 * Redis when configured, every migration applied), and recovers on its own when they come back.
 */

async function probe(hearth: TestHearth, path: '/healthz' | '/readyz') {
  const response = await fetch(`${hearth.url}${path}`);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('cache-control')).toBe('no-store');
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('on SQLite', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth?.close());

  it('/healthz answers 200 while the process is up, outside /api', async () => {
    expect(await probe(hearth, '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect((await hearth.api('/healthz')).status).toBe(404);
  });

  it('/readyz answers 200 with each check', async () => {
    expect(await probe(hearth, '/readyz')).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { database: { status: 'ok' }, migrations: { status: 'ok' } },
        failing: [],
      },
    });
  });

  it('/readyz answers 503 naming the migrations while one is not applied, and 200 once it is', async () => {
    const { db } = hearth.storage;
    const last = await sql<{ name: string; timestamp: string }>`
      SELECT name, timestamp FROM kysely_migration ORDER BY name DESC LIMIT 1`.execute(db);
    const row = last.rows[0];
    if (!row) throw new Error('no migration recorded');
    await sql`DELETE FROM kysely_migration WHERE name = ${row.name}`.execute(db);
    try {
      expect(await probe(hearth, '/readyz')).toEqual({
        status: 503,
        body: {
          status: 'unavailable',
          checks: {
            database: { status: 'ok' },
            migrations: { status: 'failing', error: `not applied: ${row.name}` },
          },
          failing: ['migrations'],
        },
      });
    } finally {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${row.name}, ${row.timestamp})`.execute(
        db,
      );
    }
    expect((await probe(hearth, '/readyz')).status).toBe(200);
  });

  it('ignores query strings and refuses other methods as any unknown route', async () => {
    expect((await fetch(`${hearth.url}/readyz?verbose=1`)).status).toBe(200);
    const post = await fetch(`${hearth.url}/healthz`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(await post.json()).toEqual({ message: '404: Not Found', code: 0 });
  });
});

describe.runIf(await postgresAvailable())('on PostgreSQL and Redis behind proxies that are cut', async () => {
  const withRedis = await redisAvailable();
  const schema = postgresSchema();
  let database: TcpProxy;
  let redis: TcpProxy | undefined;
  let hearth: TestHearth;

  beforeAll(async () => {
    database = await TcpProxy.start(targetOf(POSTGRES_URL, 5432));
    redis = withRedis ? await TcpProxy.start(targetOf(REDIS_URL, 6379)) : undefined;
    hearth = await startHearth({
      metrics: true,
      databaseUrl: database.rewrite(schema.url),
      ...(redis ? { redisUrl: redis.rewrite(REDIS_URL).replace(/\/$/, ''), redisPrefix: redisPrefix() } : {}),
    });
  });
  afterAll(async () => {
    database?.restore();
    redis?.restore();
    await hearth?.close();
    await database?.close();
    await redis?.close();
    await schema.drop();
  });

  const ok = { status: 'ok' };

  it('is ready with every dependency up', async () => {
    expect(await probe(hearth, '/readyz')).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { database: ok, migrations: ok, ...(withRedis ? { redis: ok } : {}) },
        failing: [],
      },
    });
  });

  it('reports the PostgreSQL pool in /metrics', async () => {
    const families = parseExposition(await (await fetch(`${hearth.url}/metrics`)).text());
    const pool = (state: string) => sampleValue(families, 'hearth_database_pool_connections', { state });
    expect(pool('total')).toBeGreaterThanOrEqual(1);
    expect(pool('idle')).toBeLessThanOrEqual(pool('total') ?? 0);
    expect(pool('waiting')).toBeGreaterThanOrEqual(0);
  });

  it('answers 503 naming the database while PostgreSQL is unreachable, and 200 after, without a restart', async () => {
    database.cut();
    const down = await probe(hearth, '/readyz');
    expect(down.status).toBe(503);
    expect(down.body['status']).toBe('unavailable');
    expect(down.body['failing']).toEqual(['database', 'migrations']);
    const checks = down.body['checks'] as Record<string, { status: string; error?: string }>;
    expect(checks['database']).toEqual({ status: 'failing', error: expect.any(String) });
    // No address or credential of the database in what any client can read.
    expect(JSON.stringify(down.body)).not.toContain('postgres@');
    // The process itself still answers.
    expect((await probe(hearth, '/healthz')).status).toBe(200);

    database.restore();
    await vi.waitFor(async () => expect((await probe(hearth, '/readyz')).status).toBe(200), {
      timeout: 10_000,
      interval: 50,
    });
    // And it serves again: a request that reads the database.
    expect((await hearth.api('/gateway')).status).toBe(200);
  });

  it.runIf(withRedis)(
    'answers 503 naming Redis while it is unreachable, and 200 once it reconnects',
    async () => {
      redis?.cut();
      await vi.waitFor(
        async () => {
          const down = await probe(hearth, '/readyz');
          expect(down.status).toBe(503);
          expect(down.body['failing']).toEqual(['redis']);
        },
        { timeout: 10_000, interval: 50 },
      );
      redis?.restore();
      await vi.waitFor(async () => expect((await probe(hearth, '/readyz')).status).toBe(200), {
        timeout: 15_000,
        interval: 100,
      });
    },
  );
});
