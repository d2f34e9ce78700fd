import { join } from 'node:path';
import { createHearth, ManualClock, testConfig } from '@hearth/server';
import { WebSocket, WebSocketServer } from 'ws';
import type { Benchmark, Figures, Result } from './benchmark.js';
import { median } from './lib/load.js';
import { progress } from './lib/progress.js';
import { scratchDir } from './lib/scratch.js';

const GUILDS = 100;
const MEMBERS = 1000;
const ROUNDS = 3;
const GUILDS_INTENT = 1;
const IDENTIFY_WINDOW_MS = 5_000;

/**
 * READY plus one GUILD_CREATE per guild for a bot in 100 guilds of 1,000 members: time from Identify to
 * the last GUILD_CREATE, and server heap held per guild by the session; beside a bare `ws` server sending
 * the very frames Hearth sent. In-process (the database is seeded directly, then both servers run here).
 */
const guildCreate: Benchmark = {
  name: 'guild-create',
  description: `READY + GUILD_CREATE for a bot in ${GUILDS} guilds of ${MEMBERS} members`,
  timeoutSeconds: 240,
  async run(): Promise<Result[]> {
    const dir = scratchDir('hearth-bench-');
    const clock = new ManualClock();
    const hearth = await createHearth({
      config: testConfig({ databaseUrl: `sqlite:${join(dir.path, 'guilds.sqlite')}`, rateLimitGlobal: 1e9 }),
      clock,
      deliverWebhooks: false,
    });
    try {
      const url = (await hearth.listen()).replace(/^http/, 'ws');
      progress(`  seeding ${GUILDS} guilds × ${MEMBERS} members`);
      const botToken = await seed(hearth);
      const hearthSide = { times: [] as number[], heap: [] as number[] };
      const bareSide = { times: [] as number[], heap: [] as number[] };
      let frames: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of round % 2 === 0 ? ['hearth', 'bare'] : ['bare', 'hearth']) {
          if (side === 'hearth') {
            clock.advance(IDENTIFY_WINDOW_MS);
            const measured = await measure(`${url}/gateway?v=10&encoding=json`, botToken);
            frames = measured.frames;
            hearthSide.times.push(measured.ms);
            hearthSide.heap.push(measured.heapPerGuild);
          } else {
            if (frames.length === 0) continue;
            const bare = await startBare(frames);
            const measured = await measure(bare.url, botToken);
            await bare.close();
            bareSide.times.push(measured.ms);
            bareSide.heap.push(measured.heapPerGuild);
          }
        }
      }
      const bytes = frames.reduce((sum, frame) => sum + Buffer.byteLength(frame), 0);
      const notes = [
        `${ROUNDS} rounds per side, alternating; medians. Both servers in this process; heap after a forced GC when --expose-gc`,
        `${frames.length} frames, ${(bytes / 1024).toFixed(0)} KiB in all; GUILD_CREATE lists the bot's own member (no GUILD_PRESENCES)`,
      ];
      const figures = (label: string, values: number[]): Figures => ({
        label,
        throughput: median(values),
        rounds: values,
      });
      return [
        result(
          'all guilds available',
          'ms',
          figures('bare ws', bareSide.times),
          figures('Hearth', hearthSide.times),
          notes,
        ),
        result(
          'heap per guild',
          'bytes',
          figures('bare ws', bareSide.heap),
          figures('Hearth', hearthSide.heap),
          [],
        ),
      ];
    } finally {
      await hearth.close();
      dir.remove();
    }
  },
};

export default guildCreate;

function result(metric: string, unit: string, baseline: Figures, hearth: Figures, notes: string[]): Result {
  return {
    metric,
    unit,
    baseline,
    hearth,
    ratio: hearth.throughput / baseline.throughput,
    lowerIsBetter: true,
    notes,
  };
}

/** One bot, 1,000 users, 100 guilds each with all of them, written straight into storage. */
async function seed(hearth: Awaited<ReturnType<typeof createHearth>>): Promise<string> {
  const { application, botToken } = await hearth.services.applications.createApplication({
    name: 'Bench Bot',
    redirect_uris: ['http://127.0.0.1/callback'],
  });
  const owner = await hearth.services.accounts.createUser({
    username: 'benchowner',
    email: 'owner@example.com',
    password: 'a long password',
  });
  const now = hearth.clock.now();
  const userIds: string[] = [];
  await hearth.storage.transaction(async (tx) => {
    for (let i = 0; i < MEMBERS - 2; i++) {
      const id = String(9_000_000_000_000_000n + BigInt(i));
      userIds.push(id);
      await tx
        .insertInto('users')
        .values({
          id,
          username: `member${i}`,
          discriminator: '0',
          global_name: null,
          email: null,
          password_hash: null,
          avatar: null,
          bot: 0,
          flags: 0,
          created_at: now,
        })
        .execute();
    }
  });
  for (let g = 0; g < GUILDS; g++) {
    const { id: guildId } = await hearth.services.guilds.createGuild(owner.user.id, { name: `Guild ${g}` });
    await hearth.storage.transaction(async (tx) => {
      for (let start = 0; start < userIds.length; start += 200) {
        await tx
          .insertInto('guild_members')
          .values(
            userIds
              .slice(start, start + 200)
              .map((userId) => ({ guild_id: guildId, user_id: userId, joined_at: now })),
          )
          .execute();
      }
    });
    await hearth.services.botInstalls.install({
      guildId,
      applicationId: application.id,
      permissions: 3072n,
      actorId: owner.user.id,
    });
  }
  return botToken;
}

/** Identifies and waits for READY and every GUILD_CREATE; answers the time, the frames and heap per guild. */
async function measure(
  url: string,
  token: string,
): Promise<{ ms: number; frames: string[]; heapPerGuild: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const socket = new WebSocket(url);
  const frames: string[] = [];
  const started = performance.now();
  const ms = await new Promise<number>((resolve, reject) => {
    let guilds = 0;
    socket.on('error', reject);
    socket.on('message', (data) => {
      const text = data.toString();
      const frame = JSON.parse(text) as { op: number; t: string | null };
      if (frame.op === 10) {
        socket.send(
          JSON.stringify({
            op: 2,
            d: {
              token,
              intents: GUILDS_INTENT,
              properties: { os: 'linux', browser: 'bench', device: 'bench' },
            },
          }),
        );
        return;
      }
      if (frame.op !== 0) return;
      frames.push(text);
      if (frame.t === 'GUILD_CREATE' && ++guilds === GUILDS) resolve(performance.now() - started);
    });
  });
  gc?.();
  // The session (and its resume buffer) is still open: what it holds is what a connected bot costs.
  const heapPerGuild = Math.max(0, (process.memoryUsage().heapUsed - before) / GUILDS);
  await new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.close(1000);
  });
  return { ms, frames, heapPerGuild };
}

/** A bare `ws` server that answers Identify with the recorded frames, keeping them as a session would. */
async function startBare(frames: readonly string[]): Promise<{ url: string; close: () => Promise<void> }> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  // Held as objects and serialized on send, as a session's resume buffer holds its dispatches.
  const held: unknown[][] = [];
  server.on('connection', (socket) => {
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41250 }, s: null, t: null }));
    socket.on('message', () => {
      const copy = frames.map((frame) => JSON.parse(frame) as unknown);
      held.push(copy);
      for (const frame of copy) socket.send(JSON.stringify(frame));
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `ws://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
