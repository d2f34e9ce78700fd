import { join } from 'node:path';
import type { Benchmark, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import { createProvisionalGame, startBareFastify, startHearth, startMinimalWork } from './lib/hearth.js';
import { compare, cpuNotes, type LoadPlan } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

const ROUTE = '/api/v10/partner-sdk/token/bot';
const PLAN: LoadPlan = {
  connections: 10,
  pipelining: 1,
  warmupSeconds: 2,
  rounds: 3,
  roundSeconds: 2.5,
  counted: { probeRequests: 200, maxRunRequests: 60_000 },
};

/**
 * POST /api/v10/partner-sdk/token/bot (PROTOCOL.md §B.2) against Hearth (bot authentication, identity
 * lookup, provisional account and identity created for a new player, grant, token row and a signed ID token
 * in one SQLite transaction, rate limiter on) beside bare Fastify parsing the same JSON and answering a
 * token response of the same shape and size, and beside the minimal-work baseline (baseline/minimal-work.ts:
 * bot token lookup, find-or-create, token row and one signed ID token in one SQLite transaction). Two loads: every request a new player (find-or-create
 * creates), and one returning player (find-or-create finds).
 */
const provisionalToken: Benchmark = {
  name: 'provisional-token',
  description: 'POST /api/v10/partner-sdk/token/bot, new and returning players',
  timeoutSeconds: 180,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    try {
      const database = `sqlite:${join(dir.path, 'bench.sqlite')}`;
      const game = await createProvisionalGame(database);
      const hearth = await startHearth(database);
      servers.push(hearth);
      const headers = { authorization: `Bot ${game.botToken}`, 'content-type': 'application/json' };
      const sample = await issue(`${hearth.url}${ROUTE}`, headers, body('returning-player'));
      const bare = await startBareFastify(['--provisional-body', sample]);
      servers.push(bare);
      const bareSample = await issue(`${bare.url}${ROUTE}`, headers, body('returning-player'));
      if (Buffer.byteLength(bareSample) !== Buffer.byteLength(sample)) {
        throw new Error(`baseline body differs in size from Hearth's:\n${bareSample}\n${sample}`);
      }
      const minimal = await startMinimalWork([
        '--mode',
        'provisional',
        '--database',
        join(dir.path, 'minimal.sqlite'),
        '--sample',
        sample,
        '--bot-token',
        game.botToken,
      ]);
      servers.push(minimal);
      await issue(`${minimal.url}${ROUTE}`, headers, body('returning-player'));
      progress(
        `  Hearth ${hearth.url}, baselines ${bare.url} (bare) and ${minimal.url} (minimal work); ` +
          `${Buffer.byteLength(sample)}-byte token response`,
      );
      let players = 0;
      const results: Result[] = [];
      for (const load of [
        { metric: 'new players', bodies: (count: number) => fresh(count, () => `player-${++players}`) },
        { metric: 'returning player', bodies: (count: number) => fresh(count, () => 'returning-player') },
      ]) {
        const target = (label: string, server: ServerProcess) => ({
          label,
          url: `${server.url}${ROUTE}`,
          method: 'POST' as const,
          headers,
          bodies: async (count: number) => load.bodies(count),
          check: checkTokens,
          assertAlive: () => server.assertAlive(),
          cpuSeconds: () => server.cpuSeconds(),
        });
        for (const against of [
          { name: 'bare Fastify', target: target('bare Fastify 5', bare) },
          { name: 'minimal work', target: target('minimal work', minimal) },
        ]) {
          progress(`  ${load.metric} vs ${against.name}`);
          const figures = await compare(against.target, target('Hearth', hearth), PLAN);
          results.push({
            metric: `${load.metric} vs ${against.name}`,
            unit: 'req/s',
            baseline: figures.baseline,
            hearth: figures.subject,
            ratio: figures.subject.throughput / figures.baseline.throughput,
            notes: [
              `${load.metric} vs ${against.name}: ${PLAN.connections} connections, pipelining ` +
                `${PLAN.pipelining}, ${PLAN.warmupSeconds} s warm-up, ${PLAN.rounds} rounds of about ` +
                `${PLAN.roundSeconds} s per side (AB BA AB), medians; every response 200 with an ` +
                `access_token and an id_token`,
              ...cpuNotes(figures.subject, figures.baseline),
            ],
          });
        }
      }
      return results;
    } finally {
      await Promise.allSettled(servers.map((server) => server.stop()));
      dir.remove();
    }
  },
};

export default provisionalToken;

function body(externalUserId: string): string {
  return JSON.stringify({ external_user_id: externalUserId, preferred_global_name: 'Bench Player' });
}

async function fresh(count: number, id: () => string): Promise<string[]> {
  return Array.from({ length: count }, () => body(id()));
}

/** One request outside the measurement: the response the baseline answers, and proof the flow works. */
async function issue(url: string, headers: Record<string, string>, payload: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: payload,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const problem = checkTokens(response.status, text);
  if (problem !== undefined) throw new Error(`POST ${url}: ${problem}`);
  return text;
}

function checkTokens(status: number, text: string): string | undefined {
  if (status !== 200) return `answered ${status}: ${text}`;
  try {
    const tokens = JSON.parse(text) as { access_token?: unknown; id_token?: unknown };
    if (typeof tokens.access_token !== 'string' || typeof tokens.id_token !== 'string') {
      return `answered 200 without access_token and id_token: ${text}`;
    }
  } catch {
    return `answered 200 with a body that is not JSON: ${text}`;
  }
  return undefined;
}
