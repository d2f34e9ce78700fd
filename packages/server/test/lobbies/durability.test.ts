import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LobbyLimits } from '@hearth/protocol';
import { type Bus, ManualClock, MemoryBus, MemorySessionStore } from '@hearth/server';
import { afterAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayers, playerSession } from '../../../../test-support/lobbies.js';
import {
  POSTGRES_URL,
  postgresAvailable,
  postgresSchema,
  REDIS_URL,
  redisAvailable,
  redisPrefix,
} from '../../../../test-support/services.js';

/**
 * Nothing said in a lobby is lost (issue 6): messages committed before the 201 are there after a restart
 * on each durable engine, and a member connected to another node receives every message.
 */

const T0 = Date.parse('2026-03-02T12:00:00Z');
const directory = mkdtempSync(join(tmpdir(), 'hearth-lobbies-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const withPostgres = await postgresAvailable();
const withRedis = await redisAvailable();

type Json = Record<string, unknown>;

/** Chat on one server, close it, open a new server on the same database: the history is all there. */
async function survivesRestart(databaseUrl: string): Promise<void> {
  const clock = new ManualClock(T0);
  const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 }, clock);
  let sent: Json[];
  let lobbyId: string;
  let bearers: string[];
  let bot: string;
  try {
    const game = await lobbyGame(first);
    const players = await lobbyPlayers(first, game, 4);
    const [alice, bob] = players;
    // All four create-or-join the same new secret at once: one lobby comes out of the race.
    const joined = await Promise.all(
      players.map((player) =>
        call<{ id: string }>(first, 'PUT', '/lobbies', player.bearer, { secret: 'durable' }),
      ),
    );
    expect(joined.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    lobbyId = joined[0]!.body.id;
    expect(new Set(joined.map((answer) => answer.body.id))).toEqual(new Set([lobbyId]));
    sent = [];
    for (let i = 0; i < 20; i++) {
      const author = i % 2 === 0 ? alice : bob;
      clock.advance(1);
      const message = await call<Json>(first, 'POST', `/lobbies/${lobbyId}/messages`, author.bearer, {
        content: `message ${i}`,
      });
      expect(message.status).toBe(201);
      sent.push(message.body);
    }
    bearers = [alice.bearer, bob.bearer];
    bot = game.bot;
  } finally {
    await first.close();
  }

  // The server comes back a minute later (a frozen clock would hand the new process the ids just used).
  clock.advance(60_000);
  const second = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 }, clock);
  try {
    for (const bearer of bearers) {
      const history = await call<Json[]>(second, 'GET', `/lobbies/${lobbyId}/messages?limit=200`, bearer);
      expect(history).toMatchObject({ status: 200 });
      expect(history.body).toEqual(sent.toReversed());
    }
    const lobby = await call<{ members: unknown[] }>(second, 'GET', `/lobbies/${lobbyId}`, bot);
    expect(lobby.body.members).toHaveLength(4);
    // And the chat goes on.
    const more = await call(second, 'POST', `/lobbies/${lobbyId}/messages`, bearers[0], { content: 'back' });
    expect(more.status).toBe(201);
    // The idle sweeper works on this engine too: nobody connected, default timeout passed, lobby gone.
    clock.advance(LobbyLimits.idleTimeoutDefaultSeconds * 1000 + 1);
    await second.services.lobbies.sweep();
    expect((await call(second, 'GET', `/lobbies/${lobbyId}`, bot)).status).toBe(404);
  } finally {
    await second.close();
  }
}

describe('messages survive a server restart', () => {
  it('on SQLite (a file)', async () => {
    await survivesRestart(`sqlite:${join(directory, 'restart.sqlite')}`);
  }, 30_000);

  describe.skipIf(!withPostgres)(`on PostgreSQL (${POSTGRES_URL})`, () => {
    const schema = postgresSchema();
    afterAll(() => schema.drop());
    it('keeps every message', async () => {
      await survivesRestart(schema.url);
    }, 30_000);
  });
});

/** Two nodes on one database sharing the bus: in process, or through Redis as two machines would. */
function twoNodes(name: string, backend: 'memory' | 'redis') {
  it('a member connected to the other node receives every message, in order', async () => {
    const clock = new ManualClock(T0);
    const bus: Bus = new MemoryBus();
    const sessions = new MemorySessionStore();
    const prefix = redisPrefix();
    const nodes: TestHearth[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        nodes.push(
          await startHearth(
            {
              databaseUrl: `sqlite:${join(directory, `${name}.sqlite`)}`,
              rateLimitGlobal: 1_000_000,
              workerId: i,
              ...(backend === 'redis' ? { redisUrl: REDIS_URL, redisPrefix: prefix } : {}),
            },
            clock,
            backend === 'memory' ? { shared: { bus, sessions } } : {},
          ),
        );
      }
      const [a, b] = nodes as [TestHearth, TestHearth];
      const game = await lobbyGame(a);
      const [alice, bob] = await lobbyPlayers(a, game, 2);
      const lobby = await call<{ id: string }>(a, 'PUT', '/lobbies', alice.bearer, { secret: 'across' });
      await call(a, 'PUT', '/lobbies', bob.bearer, { secret: 'across' });

      // Bob listens on node B; Alice talks through node A, and Bob answers through node B.
      const listener = await playerSession(b.url, bob);
      const sent: Json[] = [];
      for (let i = 0; i < 50; i++) {
        const [node, author] = i % 5 === 4 ? [b, bob] : [a, alice];
        const message = await call<Json>(node, 'POST', `/lobbies/${lobby.body.id}/messages`, author.bearer, {
          content: `message ${i}`,
        });
        expect(message.status).toBe(201);
        sent.push(message.body);
      }
      const received: Json[] = [];
      for (let i = 0; i < sent.length; i++) {
        received.push((await listener.client.nextDispatch('LOBBY_MESSAGE_CREATE')).d as Json);
      }
      expect(received).toEqual(sent);
      await listener.client.close();
    } finally {
      for (const node of nodes) await node.close();
      await bus.close();
    }
  }, 30_000);
}

describe('a member on another node', () => {
  describe('two nodes sharing an in-process bus', () => {
    twoNodes('memory-nodes', 'memory');
  });
  describe.skipIf(!withRedis)('two nodes sharing Redis (bus on Streams)', () => {
    twoNodes('redis-nodes', 'redis');
  });
});
