import { join } from 'node:path';
import type { Benchmark, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import { createUser, startBareFastify, startHearth, startMinimalWork } from './lib/hearth.js';
import { compare, cpuNotes, type LoadPlan } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

const ROUTE = '/api/v10/users/@me';
/**
 * Ten seconds of warm-up per side: with two, a fresh Hearth server spent 93 µs of CPU per request over its
 * first rounds and 62 µs over its later ones in one run (its tiers of compiled code and its first collections
 * of the start's garbage still under way), so the ratio measured its start more than its read path.
 */
const PLAN: LoadPlan = { connections: 10, pipelining: 1, warmupSeconds: 10, rounds: 3, roundSeconds: 5 };

/**
 * Authenticated GET /api/v10/users/@me against Hearth (session lookup in SQLite, rate limiter on with a
 * budget it never reaches) beside bare Fastify answering the same body. Each server is a child process,
 * so neither shares an event loop with autocannon.
 */
const readPath: Benchmark = {
  name: 'read-path',
  description: 'authenticated GET /api/v10/users/@me',
  timeoutSeconds: 210,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    try {
      const database = `sqlite:${join(dir.path, 'bench.sqlite')}`;
      const { token } = await createUser(database);
      const hearth = await startHearth(database);
      servers.push(hearth);
      const headers = { authorization: token };
      const body = await fetchBody(`${hearth.url}${ROUTE}`, headers);

      const bare = await startBareFastify(['--body', body]);
      servers.push(bare);
      const bareBody = await fetchBody(`${bare.url}${ROUTE}`, headers);
      if (bareBody !== body) throw new Error(`baseline body differs from Hearth's:\n${bareBody}\n${body}`);

      const minimal = await startMinimalWork([
        '--mode',
        'read',
        '--database',
        join(dir.path, 'minimal.sqlite'),
        '--sample',
        body,
        '--token',
        token,
      ]);
      servers.push(minimal);
      const minimalBody = await fetchBody(`${minimal.url}${ROUTE}`, headers);
      if (minimalBody !== body) {
        throw new Error(`minimal-work body differs from Hearth's:\n${minimalBody}\n${body}`);
      }

      progress(
        `  Hearth ${hearth.url}, baselines ${bare.url} (bare) and ${minimal.url} (minimal work); ` +
          `${Buffer.byteLength(body)}-byte body`,
      );
      const hearthTarget = {
        label: 'Hearth',
        url: `${hearth.url}${ROUTE}`,
        headers,
        assertAlive: () => hearth.assertAlive(),
        cpuSeconds: () => hearth.cpuSeconds(),
      };
      const figures = await compare(
        {
          label: 'bare Fastify 5',
          url: `${bare.url}${ROUTE}`,
          headers,
          assertAlive: () => bare.assertAlive(),
          cpuSeconds: () => bare.cpuSeconds(),
        },
        hearthTarget,
        PLAN,
      );
      const minimalFigures = await compare(
        {
          label: 'minimal work',
          url: `${minimal.url}${ROUTE}`,
          headers,
          assertAlive: () => minimal.assertAlive(),
          cpuSeconds: () => minimal.cpuSeconds(),
        },
        hearthTarget,
        PLAN,
      );
      return [
        {
          metric: 'vs bare Fastify',
          unit: 'req/s',
          baseline: figures.baseline,
          hearth: figures.subject,
          ratio: figures.subject.throughput / figures.baseline.throughput,
          notes: [
            `${PLAN.connections} connections, pipelining ${PLAN.pipelining}, ${PLAN.warmupSeconds} s warm-up, ` +
              `${PLAN.rounds} rounds of ${PLAN.roundSeconds} s per side (AB BA AB), medians`,
            `identical ${Buffer.byteLength(body)}-byte JSON body from all three; every response 200`,
            ...cpuNotes(figures.subject, figures.baseline),
          ],
        },
        {
          metric: 'vs minimal work',
          unit: 'req/s',
          baseline: minimalFigures.baseline,
          hearth: minimalFigures.subject,
          ratio: minimalFigures.subject.throughput / minimalFigures.baseline.throughput,
          notes: [
            'minimal work: the token hashed (SHA-256), its session and user read in one indexed SQLite ' +
              'lookup (WAL, statement prepared once), the user serialized through a response schema',
            ...cpuNotes(minimalFigures.subject, minimalFigures.baseline),
          ],
        },
      ];
    } finally {
      await Promise.allSettled(servers.map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default readPath;

/** One request outside the measurement: the body both servers must answer, and proof that auth works. */
async function fetchBody(url: string, headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return text;
}
