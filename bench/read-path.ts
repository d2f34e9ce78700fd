import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Benchmark, Result } from './benchmark.js';
import { runNode, type ServerProcess, startServer } from './lib/children.js';
import { compare, type LoadPlan } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HEARTH = join(ROOT, 'packages/server/bin/hearth.js');
const BARE_FASTIFY = join(ROOT, 'bench/baseline/bare-fastify.ts');
const ROUTE = '/api/v10/users/@me';
const HOST = '127.0.0.1';
const PLAN: LoadPlan = { connections: 10, pipelining: 1, warmupSeconds: 2, rounds: 3, roundSeconds: 5 };

/**
 * Authenticated GET /api/v10/users/@me against Hearth (session lookup in SQLite, rate limiter on with a
 * budget it never reaches) beside bare Fastify answering the same body. Each server is a child process,
 * so neither shares an event loop with autocannon.
 */
const readPath: Benchmark = {
  name: 'read-path',
  description: 'authenticated GET /api/v10/users/@me',
  timeoutSeconds: 90,
  async run(): Promise<Result> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    try {
      const database = `sqlite:${join(dir.path, 'bench.sqlite')}`;
      const { token } = await createUser(database);
      const hearth = await startServer({
        name: 'hearth serve',
        args: [
          HEARTH,
          'serve',
          '--host',
          HOST,
          '--port',
          '0',
          '--database',
          database,
          '--log-level',
          'warn',
          '--rate-limit-global',
          '1000000000',
        ],
        cwd: ROOT,
        ready: /^hearth listening on (http:\/\/\S+)$/,
        timeoutMs: 30_000,
      });
      servers.push(hearth);
      const headers = { authorization: token };
      const body = await fetchBody(`${hearth.url}${ROUTE}`, headers);

      const bare = await startServer({
        name: 'bare-fastify',
        args: ['--import', 'tsx', BARE_FASTIFY, '--host', HOST, '--body', body],
        cwd: ROOT,
        ready: /^bare-fastify listening on (http:\/\/\S+)$/,
        timeoutMs: 30_000,
      });
      servers.push(bare);
      const bareBody = await fetchBody(`${bare.url}${ROUTE}`, headers);
      if (bareBody !== body) throw new Error(`baseline body differs from Hearth's:\n${bareBody}\n${body}`);

      progress(`  Hearth ${hearth.url}, baseline ${bare.url}; ${Buffer.byteLength(body)}-byte body`);
      const figures = await compare(
        {
          label: 'bare Fastify 5',
          url: `${bare.url}${ROUTE}`,
          headers,
          assertAlive: () => bare.assertAlive(),
        },
        { label: 'Hearth', url: `${hearth.url}${ROUTE}`, headers, assertAlive: () => hearth.assertAlive() },
        PLAN,
      );
      return {
        unit: 'req/s',
        baseline: figures.baseline,
        hearth: figures.subject,
        ratio: figures.subject.throughput / figures.baseline.throughput,
        notes: [
          `${PLAN.connections} connections, pipelining ${PLAN.pipelining}, ${PLAN.warmupSeconds} s warm-up, ` +
            `${PLAN.rounds} rounds of ${PLAN.roundSeconds} s per side (AB BA AB), medians`,
          `identical ${Buffer.byteLength(body)}-byte JSON body from both; every response 200`,
        ],
      };
    } finally {
      await Promise.allSettled(servers.map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default readPath;

/** `hearth users create` on the database the server will open; returns the session token. */
async function createUser(database: string): Promise<{ token: string }> {
  const stdout = await runNode({
    name: 'hearth users create',
    args: [
      HEARTH,
      'users',
      'create',
      '--username',
      'bench',
      '--email',
      'bench@example.com',
      '--password',
      'bench password',
      '--json',
    ],
    cwd: ROOT,
    env: { HEARTH_DATABASE_URL: database },
    timeoutMs: 30_000,
  });
  const created: unknown = JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
  if (typeof created !== 'object' || created === null || !('token' in created)) {
    throw new Error(`hearth users create printed no token: ${stdout}`);
  }
  const { token } = created;
  if (typeof token !== 'string') throw new Error(`hearth users create printed no token: ${stdout}`);
  return { token };
}

/** One request outside the measurement: the body both servers must answer, and proof that auth works. */
async function fetchBody(url: string, headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return text;
}
