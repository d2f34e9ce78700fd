import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { hearthServe } from '../../../../test-support/cli.js';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { RedisServer } from '../../../../test-support/redis-server.js';
import { redisPrefix } from '../../../../test-support/services.js';
import { RESUME_WINDOW_MS } from '../../src/gateway/sessions.js';

/**
 * Issue 21, Redis is an accelerator, never a single point of failure. Each suite runs a redis-server of its
 * own on a free loopback port and kills it (its data goes with it): events committed while it is away or
 * across its restart reach every session entitled to them, sessions survive and resume on any node, and
 * requests never answer 500 for it. Figures are printed per trial; every loss must be 0.
 */

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const haveRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!haveRedisServer && process.env['HEARTH_REQUIRE_SERVICES'] === '1')
  throw new Error('redis-server is required (HEARTH_REQUIRE_SERVICES=1) but not on PATH');
/** Bounded in count and time (issue 21): one trial each in the suite; raise it when hunting a race. */
const TRIALS = [1];
const directory = mkdtempSync(join(tmpdir(), 'hearth-redis-failures-'));
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function ownRedis(): Promise<RedisServer> {
  const redis = await RedisServer.start();
  cleanups.push(() => redis.kill());
  return redis;
}

async function node(
  databaseUrl: string,
  redis: RedisServer,
  prefix: string,
  workerId: number,
  clock?: ManualClock,
): Promise<TestHearth> {
  const hearth = await startHearth(
    { databaseUrl, redisUrl: redis.url, redisPrefix: prefix, rateLimitGlobal: 1_000_000, workerId },
    clock,
  );
  cleanups.push(() => hearth.close());
  return hearth;
}

interface Client {
  gateway: GatewayClient;
  sessionId: string;
  /** The event numbers received, in order, across resumes. */
  received: number[];
}

async function identify(url: string, token: string): Promise<Client> {
  const gateway = await GatewayClient.connect(url);
  await gateway.nextOp(GatewayOpcodes.Hello);
  gateway.send({ op: 2, d: { token, properties: PROPERTIES, intents: 0 } });
  const ready = await gateway.nextDispatch('READY', 15_000);
  cleanups.push(async () => {
    await client.gateway.close();
  });
  const client: Client = { gateway, sessionId: (ready.d as { session_id: string }).session_id, received: [] };
  return client;
}

/** The events of one trial that the client holds, from every connection it had. */
function collect(client: Client, type: string): number[] {
  return client.gateway.frames.filter((f) => f.op === 0 && f.t === type).map((f) => (f.d as { n: number }).n);
}

/** Closes as a dropped network would (resumable), and resumes on `url` from the last seq received. */
async function resumeOn(client: Client, url: string, token: string): Promise<void> {
  const lastSeq = client.gateway.frames.filter((f) => f.op === 0).at(-1)?.s ?? null;
  client.received.push(...collect(client, 'TRIAL_EVENT'));
  await client.gateway.close(4000);
  const gateway = await GatewayClient.connect(url);
  await gateway.nextOp(GatewayOpcodes.Hello);
  gateway.send({ op: 6, d: { token, session_id: client.sessionId, seq: lastSeq } });
  cleanups.push(async () => {
    await gateway.close();
  });
  client.gateway = gateway;
  const resumed = await gateway.next(
    (f) => f.t === 'RESUMED' || f.op === GatewayOpcodes.InvalidSession,
    15_000,
  );
  expect(resumed.t, `session ${client.sessionId} resumes`).toBe('RESUMED');
  // Sequence numbers go on where the client left them: nothing skipped, nothing repeated.
  const seqs = gateway.frames.filter((f) => f.op === 0).map((f) => f.s as number);
  expect(seqs).toEqual(seqs.map((_, i) => (lastSeq ?? 0) + 1 + i));
}

/** Waits until every client holds `count` trial events (or reports what it holds after a bound). */
async function allReceived(clients: Client[], count: number): Promise<void> {
  await expect
    .poll(() => clients.map((c) => c.received.length + collect(c, 'TRIAL_EVENT').length), { timeout: 20_000 })
    .toEqual(clients.map(() => count));
}

function report(label: string, sent: number, clients: Client[]): number {
  let lost = 0;
  const parts = clients.map((client, i) => {
    const got = [...client.received, ...collect(client, 'TRIAL_EVENT')];
    const missed = sent - new Set(got).size;
    const repeated = got.length - new Set(got).size;
    lost += missed + repeated;
    return `client ${i}: ${got.length} received, ${missed} missed, ${repeated} repeated`;
  });
  console.log(`${label}: ${sent} events sent; ${parts.join('; ')}`);
  return lost;
}

describe.skipIf(!haveRedisServer)('Redis restarted during cross-node fan-out', () => {
  it('no event is missed, no session ends, and sessions resume on the other node', async () => {
    const redis = await ownRedis();
    const databaseUrl = `sqlite:${join(directory, 'fan-out.sqlite')}`;
    const prefix = redisPrefix();
    // One clock for both nodes, moved past the identify window (1 per 5 s per bot) instead of sleeping.
    const clock = new ManualClock();
    const a = await node(databaseUrl, redis, prefix, 1, clock);
    const b = await node(databaseUrl, redis, prefix, 2, clock);
    const game: TestGame = await createGame(a);
    const onA = await identify(a.url, game.botToken);
    clock.advance(5_000);
    const onB = await identify(b.url, game.botToken);
    const clients = [onA, onB];
    const nodes = [a, b];
    const publish = (n: number) =>
      nodes[n % 2]!.bus.publish({ type: 'TRIAL_EVENT', data: { n }, audience: { applicationId: game.id } });

    let n = 0;
    for (const trial of TRIALS) {
      const PER_PHASE = 20;
      // Before, during the outage, and after the restart (empty), every publish acknowledged.
      for (let i = 0; i < PER_PHASE; i++) await publish(n++);
      await redis.kill();
      for (let i = 0; i < PER_PHASE; i++) await publish(n++);
      await redis.restart();
      for (let i = 0; i < PER_PHASE; i++) await publish(n++);
      await allReceived(clients, n);
      for (const client of clients) expect(client.gateway.socket.readyState).toBe(WebSocket.OPEN);

      // The clients drop while Redis is away again and come back on the other node (trial 2: their own).
      const [first, second] = trial === 1 ? [b, a] : [a, b];
      await resumeOn(onA, first.url, game.botToken);
      await redis.kill();
      for (let i = 0; i < PER_PHASE; i++) await publish(n++);
      await resumeOn(onB, second.url, game.botToken);
      await redis.restart();
      for (let i = 0; i < PER_PHASE; i++) await publish(n++);
      await allReceived(clients, n);
      expect(report(`redis restart, trial ${trial}`, n, clients)).toBe(0);
      for (const client of clients) {
        expect([...client.received, ...collect(client, 'TRIAL_EVENT')]).toEqual([...Array(n).keys()]);
      }
    }
  }, 180_000);

  it('a session lasts however long it goes without an event, and is removed a window after its node died', async () => {
    const redis = await ownRedis();
    const databaseUrl = `sqlite:${join(directory, 'quiet.sqlite')}`;
    const prefix = redisPrefix();
    const clock = new ManualClock();
    const a = await node(databaseUrl, redis, prefix, 3, clock);
    const b = await node(databaseUrl, redis, prefix, 4, clock);
    const game = await createGame(a);
    const client = await identify(a.url, game.botToken);
    // An hour without an event, Redis emptied meanwhile: the session is still held and still live.
    await redis.restart();
    for (let minutes = 0; minutes < 60; minutes += 10) {
      clock.advance(10 * 60_000);
      a.gateway.sweep();
      b.gateway.sweep();
    }
    await a.bus.publish({ type: 'QUIET_EVENT', data: {}, audience: { applicationId: game.id } });
    await client.gateway.nextDispatch('QUIET_EVENT');
    expect(client.gateway.socket.readyState).toBe(WebSocket.OPEN);
    expect(a.gateway.registry.get(client.sessionId)?.attached).toBeDefined();

    // Its node stops holding it (as a dead node would): within the window it resumes on B…
    const held = a.gateway.registry.get(client.sessionId)!;
    a.gateway.registry.remove(held);
    clock.advance(RESUME_WINDOW_MS);
    b.gateway.sweep();
    await resumeOn(client, b.url, game.botToken);
    await client.gateway.close(4000);
    // …and, left alone by every node past the window, it is gone.
    b.gateway.registry.remove(b.gateway.registry.get(client.sessionId)!);
    clock.advance(RESUME_WINDOW_MS + 60_000);
    b.gateway.sweep();
    await expect
      .poll(async () => {
        const late = await GatewayClient.connect(b.url);
        await late.nextOp(GatewayOpcodes.Hello);
        late.send({ op: 6, d: { token: game.botToken, session_id: client.sessionId, seq: 1 } });
        const answer = await late.next(() => true);
        await late.close();
        return answer.op;
      })
      .toBe(GatewayOpcodes.InvalidSession);
  }, 60_000);
});

describe.skipIf(!haveRedisServer)('requests while Redis is away', () => {
  it('are never answered 500: rate limits count per node until Redis is back', async () => {
    const redis = await ownRedis();
    const clock = new ManualClock();
    const hearth = await startHearth(
      {
        databaseUrl: `sqlite:${join(directory, 'limits.sqlite')}`,
        redisUrl: redis.url,
        redisPrefix: redisPrefix(),
        rateLimitGlobal: 5,
      },
      clock,
    );
    cleanups.push(() => hearth.close());
    const game = await createGame(hearth);
    const statuses: number[] = [];
    const request = async (i: number) => {
      const response =
        i % 2 === 0
          ? await hearth.api('/users/@me', { auth: `Bot ${game.botToken}` })
          : await hearth.api('/applications/@me', {
              method: 'PATCH',
              auth: `Bot ${game.botToken}`,
              body: { description: `write ${i}` },
            });
      await response.arrayBuffer();
      statuses.push(response.status);
      return response.status;
    };
    // One window each (the clock stands still within it): 5 requests pass, the 6th is limited.
    const window = async () => {
      clock.advance(1_000);
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await request(i));
      return answers;
    };
    expect(await window()).toEqual([200, 200, 200, 200, 200, 429]);
    await redis.kill();
    const during = [await window(), await window()];
    await redis.restart();
    await expect.poll(() => window(), { timeout: 20_000 }).toEqual([200, 200, 200, 200, 200, 429]);
    const errors = statuses.filter((status) => status >= 500).length;
    console.log(
      `rate limits without Redis: ${statuses.length} requests, ${during.flat().length} during the outage, ` +
        `${errors} answered 5xx`,
    );
    expect(errors).toBe(0);
    // While Redis is away, the limit still holds, per node.
    expect(during).toEqual([
      [200, 200, 200, 200, 200, 429],
      [200, 200, 200, 200, 200, 429],
    ]);
  }, 60_000);
});

describe.skipIf(!haveRedisServer)('a node killed while its sessions resume on another', () => {
  it('no event is missed (kill -9 of a `hearth serve` process)', async () => {
    const redis = await ownRedis();
    const databaseUrl = `sqlite:${join(directory, 'killed.sqlite')}`;
    const prefix = redisPrefix();
    const survivor = await node(databaseUrl, redis, prefix, 5);
    for (const trial of TRIALS) {
      const { server, url } = await hearthServe(
        [
          '--database',
          databaseUrl,
          '--redis',
          redis.url,
          '--redis-prefix',
          prefix,
          '--rate-limit-global',
          '1000000',
          '--worker-id',
          String(10 + trial),
          '--log-level',
          'warn',
        ],
        {},
      );
      cleanups.push(async () => {
        server.child.kill('SIGKILL');
        await server.exited;
      });
      // Three bots, one session each on the doomed node.
      const games = [await createGame(survivor), await createGame(survivor), await createGame(survivor)];
      const clients = [];
      for (const game of games) clients.push(await identify(url, game.botToken));
      let n = 0;
      const publish = async () => {
        const k = n++;
        for (const game of games)
          await survivor.bus.publish({
            type: 'TRIAL_EVENT',
            data: { n: k },
            audience: { applicationId: game.id },
          });
      };
      for (let i = 0; i < 30; i++) await publish();
      // Killed mid-stream: events keep coming while its clients find out and resume on the survivor.
      const stream = (async () => {
        for (let i = 0; i < 30; i++) await publish();
      })();
      server.child.kill('SIGKILL');
      await server.exited;
      await stream;
      for (const [i, client] of clients.entries()) {
        const closed = await client.gateway.closed;
        expect(closed.code).toBe(1006);
        await resumeOn(client, survivor.url, games[i]!.botToken);
      }
      for (let i = 0; i < 30; i++) await publish();
      await allReceived(clients, n);
      expect(report(`node killed, trial ${trial}`, n, clients)).toBe(0);
      for (const client of clients) {
        expect([...client.received, ...collect(client, 'TRIAL_EVENT')]).toEqual([...Array(n).keys()]);
      }
    }
  }, 180_000);
});
