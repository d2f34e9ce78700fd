import { join } from 'node:path';
import { snowflakeFromTimestamp, snowflakeTimestamp } from '@hearth/protocol';
import { createHearth, ManualClock, testConfig } from '@hearth/server';
import { sql } from 'kysely';
import type { Benchmark, Figures, Result } from './benchmark.js';
import { median, percentile } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

const MESSAGES = 100_000;
const VOCABULARY = 20_000;
const ROUNDS = 3;
/** Every query of the set, per side per round. */
const REPEATS = 20;
const PAGE = 25;
const TARGET_P99_MS = 50;

type Hearth = Awaited<ReturnType<typeof createHearth>>;

/**
 * Search Guild Messages over 100,000 messages on SQLite: p99 of `GET /guilds/{id}/messages/search` (the
 * whole route over HTTP: FTS5 query, count, permissions, message objects) beside the same search as a
 * `LIKE '%term%'` scan of the messages table (SQL only: count and first page), in the same run and file.
 */
const search: Benchmark = {
  name: 'search',
  description: `guild message search over ${MESSAGES.toLocaleString('en')} messages (FTS5) vs a LIKE scan`,
  timeoutSeconds: 600,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-search-');
    const clock = new ManualClock();
    const hearth = await createHearth({
      config: testConfig({ databaseUrl: `sqlite:${join(dir.path, 'search.sqlite')}`, rateLimitGlobal: 1e9 }),
      clock,
      deliverWebhooks: false,
    });
    try {
      const url = await hearth.listen();
      const seeded = await seed(hearth, clock);
      const queries = pickQueries(seeded.frequency);
      const searchUrl = (words: readonly string[]) =>
        `${url}/api/v10/guilds/${seeded.guildId}/messages/search?content=${encodeURIComponent(words.join(' '))}&limit=${PAGE}`;
      const hearthRun = async (words: readonly string[]) => {
        const response = await fetch(searchUrl(words), { headers: { authorization: seeded.token } });
        if (response.status !== 200)
          throw new Error(`search answered ${response.status}: ${await response.text()}`);
        const body = (await response.json()) as { total_results: number };
        return body.total_results;
      };
      const likeRun = (words: readonly string[]) => likeScan(hearth, seeded, words);
      // Both sides agree on what is searched (LIKE also matches inside longer words: never fewer hits).
      const hits = new Map<string, number>();
      for (const words of queries) {
        const [indexed, scanned] = [await hearthRun(words), await likeRun(words)];
        if (indexed === 0 || scanned < indexed)
          throw new Error(`"${words.join(' ')}": the index found ${indexed}, LIKE ${scanned}`);
        hits.set(words.join(' '), indexed);
      }
      const sides = { hearth: [] as Sample[], like: [] as Sample[] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of round % 2 === 0 ? (['hearth', 'like'] as const) : (['like', 'hearth'] as const)) {
          sides[side].push(await measure(queries, side === 'hearth' ? hearthRun : likeRun));
        }
      }
      const hearthFigures = figures('Hearth search (HTTP, FTS5)', sides.hearth);
      const likeFigures = figures("LIKE '%term%' scan (SQL only)", sides.like);
      const p99 = hearthFigures.latencyP99Ms ?? Number.NaN;
      return [
        {
          metric: 'queries',
          unit: 'queries/s',
          baseline: likeFigures,
          hearth: hearthFigures,
          ratio: hearthFigures.throughput / likeFigures.throughput,
          notes: [
            `${MESSAGES.toLocaleString('en')} messages of 8–16 words from a ${VOCABULARY.toLocaleString('en')}-word Zipf vocabulary, one guild, SQLite file; indexed by the rebuild job in ${seeded.indexSeconds.toFixed(1)} s`,
            `queries (hits): ${queries.map((words) => `"${words.join(' ')}" (${hits.get(words.join(' ')) ?? '?'})`).join(', ')}; first page of ${PAGE}, newest first, with total_results`,
            `${ROUNDS} rounds per side alternating, ${REPEATS} × each query per round, one at a time; Hearth's figure includes HTTP, JSON and permissions, the baseline's does not`,
            `Hearth search p99 ${p99.toFixed(2)} ms: target < ${TARGET_P99_MS} ms ${p99 < TARGET_P99_MS ? 'met' : 'NOT met'}`,
          ],
        },
      ];
    } finally {
      await hearth.close();
      dir.remove();
    }
  },
};

export default search;

interface Seeded {
  guildId: string;
  channelId: string;
  token: string;
  /** How many messages hold each word (by vocabulary rank). */
  frequency: Map<string, number>;
  indexSeconds: number;
}

interface Sample {
  /** Each query's latency, ms. */
  latencies: number[];
  seconds: number;
}

/** A deterministic generator (mulberry32): the same data on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vo',
  'shi',
  'dra',
  'gon',
  'el',
  'um',
  'ix',
  'qua',
  'zen',
  'por',
];

function vocabulary(): string[] {
  const words = new Set<string>();
  const next = random(7);
  while (words.size < VOCABULARY) {
    let word = '';
    const length = 2 + Math.floor(next() * 3);
    for (let i = 0; i < length; i++) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    words.add(word);
  }
  return [...words];
}

/** The guild, its owner and channel through the services; 100,000 messages straight into the table. */
async function seed(hearth: Hearth, clock: ManualClock): Promise<Seeded> {
  const owner = await hearth.services.accounts.createUser({
    username: 'searchowner',
    email: 'search@example.com',
    password: 'a long password',
  });
  const guild = await hearth.services.guilds.createGuild(owner.user.id, { name: 'Search Bench' });
  const { id: channelId } = await hearth.services.channels.createChannel(
    owner.user.id,
    guild.id,
    { name: 'general', type: 0 },
    null,
  );
  const words = vocabulary();
  // Zipf: the word of rank r is drawn with weight 1/r.
  const weights = words.map((_, rank) => 1 / (rank + 1));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const cumulative = new Float64Array(words.length);
  let running = 0;
  for (let i = 0; i < words.length; i++) cumulative[i] = running += weights[i]! / total;
  const next = random(42);
  const draw = () => {
    const target = next();
    let low = 0;
    let high = words.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return words[low]!;
  };
  const frequency = new Map<string, number>();
  progress(`  writing ${MESSAGES.toLocaleString('en')} messages`);
  const start = BigInt(snowflakeFromTimestamp(clock.now() - MESSAGES * 1000));
  await hearth.storage.transaction(async (tx) => {
    for (let offset = 0; offset < MESSAGES; offset += 500) {
      const rows = [];
      for (let n = offset; n < Math.min(MESSAGES, offset + 500); n++) {
        const id = String(start + (BigInt(n) << 22n) * 1000n);
        const count = 8 + Math.floor(next() * 9);
        const chosen = Array.from({ length: count }, draw);
        for (const word of new Set(chosen)) frequency.set(word, (frequency.get(word) ?? 0) + 1);
        rows.push({
          id,
          channel_id: channelId,
          guild_id: guild.id,
          author_id: owner.user.id,
          content: chosen.join(' '),
          created_at: snowflakeTimestamp(id),
        });
      }
      await tx.insertInto('messages').values(rows).execute();
    }
  });
  progress('  indexing them with the rebuild job');
  const began = performance.now();
  await hearth.services.searchIndex.rebuild(guild.id);
  const index = hearth.services.searchIndex;
  for (;;) {
    clock.advance(5_000);
    if ((await index.runBatches()) === 0) break;
  }
  const indexSeconds = (performance.now() - began) / 1000;
  return { guildId: guild.id, channelId, token: owner.token, frequency, indexSeconds };
}

/** A rare, a middling and a common word, and two two-word queries. */
function pickQueries(frequency: Map<string, number>): string[][] {
  const byCount = [...frequency.entries()].sort((a, b) => b[1] - a[1]);
  const near = (target: number) =>
    byCount.reduce((best, entry) =>
      Math.abs(entry[1] - target) < Math.abs(best[1] - target) ? entry : best,
    )[0];
  const common = near(10_000);
  const middling = near(1_000);
  const rare = near(20);
  return [[rare], [middling], [common], [common, middling], [middling, near(500)]];
}

/** The same search as a scan: every word as `LIKE '%word%'`, the count and the first page. */
async function likeScan(hearth: Hearth, seeded: Seeded, words: readonly string[]): Promise<number> {
  const db = hearth.storage.db;
  const likes = sql.join(
    words.map((word) => sql`content LIKE ${`%${word}%`}`),
    sql` AND `,
  );
  const where = sql`guild_id = ${seeded.guildId} AND channel_id = ${seeded.channelId} AND ${likes}`;
  const counted = await sql<{ n: number }>`SELECT count(*) AS n FROM messages WHERE ${where}`.execute(db);
  await sql`SELECT * FROM messages WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`.execute(
    db,
  );
  return Number(counted.rows[0]?.n ?? 0);
}

async function measure(queries: readonly string[][], run: (words: readonly string[]) => Promise<number>) {
  const latencies: number[] = [];
  const began = performance.now();
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    for (const words of queries) {
      const start = performance.now();
      await run(words);
      latencies.push(performance.now() - start);
    }
  }
  return { latencies, seconds: (performance.now() - began) / 1000 };
}

function figures(label: string, samples: readonly Sample[]): Figures {
  const rounds = samples.map((sample) => sample.latencies.length / sample.seconds);
  const sorted = (sample: Sample) => Float64Array.from(sample.latencies).sort();
  return {
    label,
    throughput: median(rounds),
    latencyP50Ms: median(samples.map((sample) => percentile(sorted(sample), 0.5))),
    latencyP99Ms: median(samples.map((sample) => percentile(sorted(sample), 0.99))),
    rounds,
  };
}
