import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayOpcodes } from '@hearth/protocol';
import { type Bus, ManualClock, MemoryBus, MemorySessionStore } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../../../test-support/services.js';
import { RESUME_WINDOW_MS } from '../../src/gateway/sessions.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const directory = mkdtempSync(join(tmpdir(), 'hearth-nodes-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const withRedis = await redisAvailable();

/**
 * Three nodes in one process (STYLE.md rule 7) on one database, sharing the bus and the session store:
 * in memory (one process), or through Redis as separate machines would.
 */
function cluster(name: string, backend: 'memory' | 'redis') {
  const nodes: TestHearth[] = [];
  let game: TestGame;
  const bus: Bus = new MemoryBus();
  // One clock for the cluster, moved past the identify window (1 per 5 s per bot) instead of sleeping.
  const clock = new ManualClock();
  beforeAll(async () => {
    const databaseUrl = `sqlite:${join(directory, `${name}.sqlite`)}`;
    const prefix = redisPrefix();
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startHearth(
          {
            databaseUrl,
            rateLimitGlobal: 1_000_000,
            workerId: i,
            ...(backend === 'redis' ? { redisUrl: REDIS_URL, redisPrefix: prefix } : {}),
          },
          clock,
          backend === 'memory' ? { shared: { bus, sessions: sharedSessions } } : {},
        ),
      );
    }
    game = await createGame(nodes[0]!);
  });
  const sharedSessions = new MemorySessionStore();
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await bus.close();
  });

  async function identified(node: TestHearth) {
    const client = await GatewayClient.connect(node.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
    const ready = await client.nextDispatch('READY');
    return { client, sessionId: (ready.d as { session_id: string }).session_id };
  }

  const eventsOf = (frames: GatewayFrame[]) =>
    frames.filter((f) => f.t === 'NODE_EVENT').map((f) => (f.d as { n: number }).n);

  it('an event published on any node reaches the sessions on every node', async () => {
    const sessions = [];
    for (const node of nodes) {
      sessions.push(await identified(node));
      clock.advance(5_000);
    }
    for (const [i, node] of nodes.entries()) {
      await node.bus.publish({ type: 'NODE_EVENT', data: { n: i }, audience: { applicationId: game.id } });
    }
    for (const { client } of sessions) {
      for (let i = 0; i < 3; i++) await client.nextDispatch('NODE_EVENT');
      expect(eventsOf(client.frames)).toEqual([0, 1, 2]);
      client.socket.close(1000);
    }
  }, 30_000);

  it('a session identified on node A resumes on node B and misses nothing', async () => {
    const [a, b, c] = nodes as [TestHearth, TestHearth, TestHearth];
    clock.advance(5_000);
    const { client, sessionId } = await identified(a);
    await a.bus.publish({ type: 'NODE_EVENT', data: { n: 1 }, audience: { applicationId: game.id } });
    const first = await client.nextDispatch('NODE_EVENT');
    client.socket.close(4000);
    await client.closed;
    // While the client is away, events come from every node.
    for (const [n, node] of [
      [2, a],
      [3, b],
      [4, c],
      [5, a],
    ] as const) {
      await node.bus.publish({ type: 'NODE_EVENT', data: { n }, audience: { applicationId: game.id } });
    }
    const resumed = await GatewayClient.connect(b.url);
    await resumed.nextOp(GatewayOpcodes.Hello);
    resumed.send({ op: 6, d: { token: game.botToken, session_id: sessionId, seq: first.s } });
    await resumed.nextDispatch('RESUMED');
    expect(eventsOf(resumed.frames)).toEqual([2, 3, 4, 5]);
    const seqs = resumed.frames.filter((f) => f.op === 0).map((f) => f.s as number);
    expect(seqs).toEqual(seqs.map((_, i) => (first.s as number) + 1 + i));
    // Node B owns it now: new events arrive once, and node A no longer holds the session.
    await c.bus.publish({ type: 'NODE_EVENT', data: { n: 6 }, audience: { applicationId: game.id } });
    await resumed.nextDispatch('NODE_EVENT');
    expect(eventsOf(resumed.frames)).toEqual([2, 3, 4, 5, 6]);
    await expect.poll(() => a.gateway.registry.get(sessionId)).toBeUndefined();
    expect(b.gateway.registry.get(sessionId)?.attached).toBeDefined();
    resumed.socket.close(1000);
  }, 30_000);
}

describe('three nodes sharing an in-process bus and session store', () => {
  cluster('memory', 'memory');
});

describe.skipIf(!withRedis)('three nodes sharing Redis (bus on Streams, sessions in Redis)', () => {
  cluster('redis', 'redis');
});

describe('the resume window (PROTOCOL.md §D.3: resumable "for a few minutes")', () => {
  it('a client that does not come back within it is forgotten on the node and in the shared store', async () => {
    const clock = new ManualClock();
    const sessions = new MemorySessionStore();
    const hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock, { shared: { sessions } });
    try {
      const game = await createGame(hearth);
      const client = await GatewayClient.connect(hearth.url);
      await client.nextOp(GatewayOpcodes.Hello);
      client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
      const ready = await client.nextDispatch('READY');
      const sessionId = (ready.d as { session_id: string }).session_id;
      client.socket.close(4000);
      await client.closed;

      clock.advance(RESUME_WINDOW_MS - 1);
      hearth.gateway.sweep();
      expect(await sessions.peek(sessionId)).toBeDefined();
      clock.advance(1);
      hearth.gateway.sweep();
      expect(hearth.gateway.registry.get(sessionId)).toBeUndefined();
      await expect.poll(() => sessions.peek(sessionId)).toBeUndefined();

      const late = await GatewayClient.connect(hearth.url);
      await late.nextOp(GatewayOpcodes.Hello);
      late.send({ op: 6, d: { token: game.botToken, session_id: sessionId, seq: ready.s } });
      expect(await late.next()).toMatchObject({ op: GatewayOpcodes.InvalidSession, d: false });
      late.socket.close(1000);
    } finally {
      await hearth.close();
    }
  });
});
