import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ID_TOKEN_SIGNING_ALG } from '@hearth/protocol';
import autocannon from 'autocannon';
import type { Benchmark, Result } from './benchmark.js';
import type { ServerProcess } from './lib/children.js';
import {
  createApplication,
  createUser,
  startBareFastify,
  startHearth,
  startMinimalWork,
} from './lib/hearth.js';
import { compare, cpuNotes, type LoadPlan } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

const TOKEN = '/api/v10/oauth2/token';
const AUTHORIZE = '/api/v10/oauth2/authorize';
const REDIRECT_URI = 'http://127.0.0.1/callback';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const PLAN: LoadPlan = {
  connections: 10,
  pipelining: 1,
  warmupSeconds: 2,
  rounds: 3,
  roundSeconds: 2.5,
  counted: { probeRequests: 200, maxRunRequests: 60_000 },
};
/** `openid`: each exchange signs an ID token, the costliest step no implementation can skip. */
const SCOPE = 'openid identify';
/** Consent calls in flight while minting codes. */
const MINTERS = 8;

interface Client {
  id: string;
  clientSecret: string;
}

/**
 * POST /api/v10/oauth2/token with grant_type=authorization_code, every request spending a different code:
 * Hearth (client authentication, code lookup and spend, token rows written in a SQLite transaction, rate
 * limiter on) beside bare Fastify parsing the same form and answering a token response of the same shape
 * and size. Codes are single use, so before each Hearth run the codes it needs are minted through the
 * consent API, outside the measurement; every run then makes exactly that many requests.
 */
const tokenExchange: Benchmark = {
  name: 'token-exchange',
  description: 'POST /api/v10/oauth2/token, authorization_code grant, a fresh code per request',
  timeoutSeconds: 120,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const servers: ServerProcess[] = [];
    try {
      const database = `sqlite:${join(dir.path, 'bench.sqlite')}`;
      const { token } = await createUser(database);
      const client = await createApplication(database, REDIRECT_URI);
      const hearth = await startHearth(database);
      servers.push(hearth);
      const mint = (count: number) => mintCodes(hearth.url, token, client, count);

      // One exchange outside the measurement: the response the baseline will answer, and proof the flow works.
      const code = (await mint(1))[0]!;
      const sample = await exchange(`${hearth.url}${TOKEN}`, formBody(client, code));
      const bare = await startBareFastify(['--token-body', sample]);
      servers.push(bare);
      const bareSample = await exchange(`${bare.url}${TOKEN}`, formBody(client, fakeCode(code.length)));
      if (bareSample !== sample)
        throw new Error(`baseline body differs from Hearth's:\n${bareSample}\n${sample}`);

      const minimal = await startMinimalWork([
        '--mode',
        'token',
        '--database',
        join(dir.path, 'minimal.sqlite'),
        '--sample',
        sample,
      ]);
      servers.push(minimal);
      const minimalCodes = (count: number) => mintMinimal(minimal.url, client, code.length, count);
      await exchange(`${minimal.url}${TOKEN}`, formBody(client, (await minimalCodes(1))[0]!));

      const sizes = { baseline: new Set<number>(), minimal: new Set<number>(), hearth: new Set<number>() };
      progress(
        `  Hearth ${hearth.url}, baselines ${bare.url} (bare) and ${minimal.url} (minimal work); ` +
          `${Buffer.byteLength(sample)}-byte token response`,
      );
      const hearthTarget = {
        label: 'Hearth',
        url: `${hearth.url}${TOKEN}`,
        method: 'POST' as const,
        headers: FORM,
        bodies: async (count: number) => {
          const started = performance.now();
          const codes = await mint(count);
          progress(`  minted ${count} codes in ${((performance.now() - started) / 1000).toFixed(1)} s`);
          return codes.map((fresh) => formBody(client, fresh));
        },
        check: (status: number, body: string) => checkTokens(status, body, sizes.hearth),
        assertAlive: () => hearth.assertAlive(),
        cpuSeconds: () => hearth.cpuSeconds(),
      };
      const bareFigures = await compare(
        {
          label: 'bare Fastify 5',
          url: `${bare.url}${TOKEN}`,
          method: 'POST',
          headers: FORM,
          // Codes of the same length, never repeated, so that both sides get requests of the same size.
          bodies: async (count) =>
            Array.from({ length: count }, () => formBody(client, fakeCode(code.length))),
          check: (status, body) => checkTokens(status, body, sizes.baseline),
          assertAlive: () => bare.assertAlive(),
          cpuSeconds: () => bare.cpuSeconds(),
        },
        hearthTarget,
        PLAN,
      );
      const minimalFigures = await compare(
        {
          label: 'minimal work',
          url: `${minimal.url}${TOKEN}`,
          method: 'POST',
          headers: FORM,
          bodies: async (count) => (await minimalCodes(count)).map((fresh) => formBody(client, fresh)),
          check: (status, body) => checkTokens(status, body, sizes.minimal),
          assertAlive: () => minimal.assertAlive(),
          cpuSeconds: () => minimal.cpuSeconds(),
        },
        hearthTarget,
        PLAN,
      );
      const plan =
        `${PLAN.connections} connections, pipelining ${PLAN.pipelining}, ${PLAN.warmupSeconds} s warm-up, ` +
        `${PLAN.rounds} rounds of about ${PLAN.roundSeconds} s per side (AB BA AB), medians; each run ` +
        `makes as many requests as its side would answer in that time at its best rate so far`;
      return [
        {
          metric: 'vs bare Fastify',
          unit: 'req/s',
          baseline: bareFigures.baseline,
          hearth: bareFigures.subject,
          ratio: bareFigures.subject.throughput / bareFigures.baseline.throughput,
          notes: [
            plan,
            `every request a different code (Hearth's minted through the consent API before each run, not ` +
              `timed), scope "${SCOPE}" (an ID token signed per request); every response 200 with an ` +
              `access_token, bodies of ${describeSizes(sizes.baseline)} bytes (bare Fastify) and ` +
              `${describeSizes(sizes.hearth)} bytes (Hearth)`,
            ...cpuNotes(bareFigures.subject, bareFigures.baseline),
          ],
        },
        {
          metric: 'vs minimal work',
          unit: 'req/s',
          baseline: minimalFigures.baseline,
          hearth: minimalFigures.subject,
          ratio: minimalFigures.subject.throughput / minimalFigures.baseline.throughput,
          notes: [
            `minimal work: code row read by key, spent and token row written in one SQLite transaction ` +
              `(WAL, synchronous NORMAL), one ${ID_TOKEN_SIGNING_ALG} ID token signed; bodies of ` +
              `${describeSizes(sizes.minimal)} bytes`,
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

export default tokenExchange;

/**
 * `count` fresh codes, by the consent call of the authorize page (POST /oauth2/authorize with the player's
 * session token, answering `{"location": "…?code=…"}`), MINTERS at a time. autocannon sends them: it costs
 * the shared CPUs far less than fetch, and minting takes about as long as the exchanges it feeds.
 */
async function mintCodes(
  base: string,
  sessionToken: string,
  client: Client,
  count: number,
): Promise<string[]> {
  const query = new URLSearchParams({
    client_id: client.id,
    response_type: 'code',
    scope: SCOPE,
    redirect_uri: REDIRECT_URI,
  });
  const path = `${AUTHORIZE}?${query}`;
  const codes: string[] = [];
  let problem: string | undefined;
  const result = await autocannon({
    url: `${base}${path}`,
    connections: Math.min(MINTERS, count),
    pipelining: 1,
    amount: count,
    sampleInt: 20,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path,
        headers: { authorization: sessionToken, 'content-type': 'application/json' },
        body: JSON.stringify({ authorize: true }),
        onResponse: (status, text) => {
          const code = status === 200 ? codeIn(text) : undefined;
          if (code !== undefined) codes.push(code);
          else problem ??= `consent answered ${status} without a code: ${text}`;
        },
      },
    ],
  });
  if (problem !== undefined) throw new Error(problem);
  if (result.errors > 0 || result.timeouts > 0 || codes.length !== count) {
    throw new Error(
      `minting ${count} codes: ${codes.length} minted, ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  if (new Set(codes).size !== count) throw new Error('consent answered the same code twice');
  return codes;
}

/** The code in a consent answer's redirect location, if any. */
function codeIn(text: string): string | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== 'object' || body === null || !('location' in body)) return undefined;
    if (typeof body.location !== 'string') return undefined;
    return new URL(body.location).searchParams.get('code') ?? undefined;
  } catch {
    return undefined;
  }
}

/** `count` codes stored by the minimal-work baseline, of the length Hearth's codes have. */
async function mintMinimal(base: string, client: Client, length: number, count: number): Promise<string[]> {
  const response = await fetch(`${base}/_mint`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ count, length, client_id: client.id }),
    signal: AbortSignal.timeout(60_000),
  });
  if (!response.ok) throw new Error(`minimal-work /_mint answered ${response.status}`);
  return (await response.json()) as string[];
}

function formBody(client: Client, code: string): string {
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: client.id,
    client_secret: client.clientSecret,
  }).toString();
}

/** A random base64url string of `length` characters, like a code but known to no server. */
function fakeCode(length: number): string {
  return randomBytes(Math.ceil((length * 3) / 4))
    .toString('base64url')
    .slice(0, length);
}

/** One exchange outside the measurement; answers the body, which must be a token response. */
async function exchange(url: string, body: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: FORM,
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  const problem = checkTokens(response.status, text, new Set());
  if (problem !== undefined) throw new Error(`POST ${url}: ${problem}`);
  return text;
}

/** What is wrong with a token endpoint's answer, or undefined for 200 with an access_token; notes its size. */
function checkTokens(status: number, body: string, sizes: Set<number>): string | undefined {
  if (status !== 200) return `answered ${status}: ${body}`;
  let tokens: unknown;
  try {
    tokens = JSON.parse(body);
  } catch {
    return `answered 200 with a body that is not JSON: ${body}`;
  }
  if (
    typeof tokens !== 'object' ||
    tokens === null ||
    !('access_token' in tokens) ||
    typeof tokens.access_token !== 'string' ||
    tokens.access_token === ''
  ) {
    return `answered 200 without an access_token: ${body}`;
  }
  sizes.add(Buffer.byteLength(body));
  return undefined;
}

function describeSizes(sizes: Set<number>): string {
  const all = [...sizes];
  const low = Math.min(...all);
  const high = Math.max(...all);
  return low === high ? `${low}` : `${low}–${high}`;
}
