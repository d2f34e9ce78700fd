import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bus, MemoryBus, MemorySessionStore } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { connect, SkewClock, socialPlayer, type TestPlayer } from './social-support.js';

/** Presence across nodes goes through the bus (PROTOCOL.md §B.8; DESIGN: many nodes). */
describe('presence on two nodes sharing a database and a bus', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-presence-'));
  const bus: Bus = new MemoryBus();
  const sessions = new MemorySessionStore();
  const clock = new SkewClock();
  const nodes: TestHearth[] = [];
  let game: TestGame;

  beforeAll(async () => {
    const databaseUrl = `sqlite:${join(directory, 'social.sqlite')}`;
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000, workerId: i }, clock, {
          shared: { bus, sessions },
        }),
      );
    }
    game = await createGame(nodes[0]!);
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await bus.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('a player on node A is seen online, in activity, and offline by a friend on node B; READY on B knows', async () => {
    const [a, b] = nodes as [TestHearth, TestHearth];
    const alice = await socialPlayer(a, game);
    const bob = await socialPlayer(a, game);
    const put = (p: TestPlayer, id: string) =>
      a.api(`/users/@me/relationships/${id}`, { method: 'PUT', auth: p.bearer });
    await put(alice, bob.id);
    await put(bob, alice.id);

    const bobWs = await connect(b, bob);
    const aliceWs = await connect(a, alice);
    const update = () => bobWs.nextDispatch('PRESENCE_UPDATE');
    expect((await update()).d).toMatchObject({ user: { id: alice.id }, status: 'online' });
    aliceWs.send({
      op: 3,
      d: { status: 'idle', activities: [{ name: 'on node A', type: 0 }], since: null, afk: true },
    });
    expect((await update()).d).toMatchObject({ status: 'idle', activities: [{ name: 'on node A' }] });

    // A second session of Bob, on node A this time, learns Alice's presence in READY from node A's replica.
    const bobOnA = await connect(a, bob);
    const readyOnA = bobOnA.frames.find((f) => f.t === 'READY')!.d as { presences: unknown[] };
    expect(readyOnA.presences).toMatchObject([{ user: { id: alice.id }, status: 'idle' }]);

    await aliceWs.close(1000);
    expect((await update()).d).toMatchObject({ user: { id: alice.id }, status: 'offline' });
    await bobWs.close();
    await bobOnA.close();
  });
});
