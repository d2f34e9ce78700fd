import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRE_APPROVAL_LIMIT } from '@hearth/protocol';
import { type Bus, ManualClock, MemoryBus, MemorySessionStore } from '@hearth/server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { GatewayFrame } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  approve,
  call,
  type LobbyPlayer,
  lobbyGame,
  lobbyPlayers,
  type PlayerSession,
  playerSession,
} from '../../../../test-support/lobbies.js';
import { POSTGRES_URL, postgresAvailable, postgresSchema } from '../../../../test-support/services.js';

/**
 * A node keeps each lobby's member list under the lobby's `members_version` and reuses it for messages
 * (issue 20). Whatever changes the members — on this node, on another node, by cascade — the very next
 * message goes to the members as they are then; and the game's approval is read anew for every message.
 * Who gets nothing is proved by the next message they do get, never by waiting.
 */

const T0 = Date.parse('2026-03-02T12:00:00Z');
const directory = mkdtempSync(join(tmpdir(), 'hearth-member-lists-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const withPostgres = await postgresAvailable();
const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
// The clock stands still: the whole 2-hour window is still to run.
const RATE_LIMITED = { message: 'You are being rate limited.', retry_after: 7200, global: false, code: 0 };

type Json = Record<string, unknown>;

const nodes: TestHearth[] = [];
const sessions: PlayerSession[] = [];
let bus: Bus | undefined;
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.client.close()));
  for (const node of nodes.splice(0)) await node.close();
  await bus?.close();
  bus = undefined;
}, 60_000);

/** One node, or two on one database (a SQLite file by default) sharing an in-process bus and session store. */
async function start(count: 1 | 2, name: string, databaseUrl?: string): Promise<[TestHearth, TestHearth]> {
  const clock = new ManualClock(T0);
  const shared = { bus: new MemoryBus(), sessions: new MemorySessionStore() };
  bus = shared.bus;
  for (let i = 0; i < count; i++) {
    nodes.push(
      await startHearth(
        {
          databaseUrl: databaseUrl ?? `sqlite:${join(directory, `${name}.sqlite`)}`,
          rateLimitGlobal: 1_000_000,
          workerId: i,
        },
        clock,
        { shared },
      ),
    );
  }
  const [a, b = a] = nodes as [TestHearth, TestHearth?];
  return [a, b];
}

async function connect(node: TestHearth, player: LobbyPlayer): Promise<PlayerSession> {
  const session = await playerSession(node.url, player);
  sessions.push(session);
  return session;
}

async function send(node: TestHearth, player: LobbyPlayer, lobbyId: string, content: string) {
  const answer = await call<Json>(node, 'POST', `/lobbies/${lobbyId}/messages`, player.bearer, { content });
  expect(answer.status).toBe(201);
  return answer.body;
}

/** The next LOBBY_MESSAGE_CREATE's content: the first message this session was sent since the last one. */
async function nextMessage(session: PlayerSession): Promise<unknown> {
  return ((await session.client.nextDispatch('LOBBY_MESSAGE_CREATE')).d as Json)['content'];
}

/** Every dispatch a session was sent carries the next sequence number, READY's being 1. */
function expectConsecutive(frames: readonly GatewayFrame[]): void {
  const seqs = frames.filter((frame) => frame.op === 0).map((frame) => frame.s);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
}

/**
 * Messages through `talk` while members change through `manage` (the same node, or the other one): the
 * member list `talk` holds must never outlive a change.
 */
async function membersFollowChanges(manage: TestHearth, talk: TestHearth): Promise<void> {
  const game = await lobbyGame(manage);
  const [alice, bob, carol, dave] = await lobbyPlayers(manage, game, 4);
  const lobby = await call<{ id: string }>(manage, 'PUT', '/lobbies', alice.bearer, { secret: 'lists' });
  const lobbyId = lobby.body.id;
  for (const player of [bob, carol]) {
    expect((await call(manage, 'PUT', '/lobbies', player.bearer, { secret: 'lists' })).status).toBe(200);
  }
  // Listeners on both nodes: delivery follows the sender's member list, wherever a member is connected.
  const [b, c, d] = [await connect(talk, bob), await connect(manage, carol), await connect(talk, dave)];

  // The talking node reads the list and keeps it.
  await send(talk, alice, lobbyId, 'one');
  expect([await nextMessage(b), await nextMessage(c)]).toEqual(['one', 'one']);

  // Carol is removed: the very next message is not hers, and she can no longer post.
  const path = `/lobbies/${lobbyId}/members/${carol.id}`;
  expect((await call(manage, 'DELETE', path, game.bot)).status).toBe(204);
  await send(talk, alice, lobbyId, 'two');
  expect(await nextMessage(b)).toBe('two');
  const refused = await call(talk, 'POST', `/lobbies/${lobbyId}/messages`, carol.bearer, { content: 'hey' });
  expect({ status: refused.status, body: refused.body }).toEqual({ status: 403, body: MISSING_ACCESS });

  // Dave is added and Carol comes back: the next message reaches both, and Carol's first is this one.
  expect((await call(manage, 'PUT', `/lobbies/${lobbyId}/members/${dave.id}`, game.bot, {})).status).toBe(
    200,
  );
  expect((await call(manage, 'PUT', '/lobbies', carol.bearer, { secret: 'lists' })).status).toBe(200);
  await send(talk, alice, lobbyId, 'three');
  expect([await nextMessage(b), await nextMessage(c), await nextMessage(d)]).toEqual([
    'three',
    'three',
    'three',
  ]);

  // A member's update shows in the next message (the name it is sent under).
  const named = await call(manage, 'PUT', `/lobbies/${lobbyId}/members/${dave.id}`, game.bot, {
    additional_name: 'D',
  });
  expect(named.status).toBe(200);
  const fromDave = await send(talk, dave, lobbyId, 'four');
  expect(fromDave['lobby_member']).toEqual({ additional_name: 'D' });
  expect((await b.client.nextDispatch('LOBBY_MESSAGE_CREATE')).d).toEqual(fromDave);

  // The lobby is deleted: the next message is refused, not sent to the members it had.
  expect((await call(manage, 'DELETE', `/lobbies/${lobbyId}`, game.bot)).status).toBe(204);
  const gone = await call(talk, 'POST', `/lobbies/${lobbyId}/messages`, alice.bearer, { content: 'five' });
  expect(gone.status).toBe(404);

  for (const session of [b, c, d]) expectConsecutive(session.client.frames);
}

/** The pre-approval budget of messages (§A.3) is spent, lifted by approval, and back the moment it is revoked. */
async function approvalFollowsChanges(manage: TestHearth, talk: TestHearth): Promise<void> {
  const game = await lobbyGame(manage, { approved: false });
  const [alice] = await lobbyPlayers(manage, game, 1);
  const lobby = await call<{ id: string }>(manage, 'PUT', '/lobbies', alice.bearer, { secret: 'approval' });
  const path = `/lobbies/${lobby.body.id}/messages`;
  for (let i = 0; i < PRE_APPROVAL_LIMIT.limit; i++) await send(talk, alice, lobby.body.id, `m${i}`);
  const limited = await call(talk, 'POST', path, alice.bearer, { content: 'over' });
  expect({ status: limited.status, body: limited.body }).toEqual({ status: 429, body: RATE_LIMITED });

  await approve(manage, game);
  await send(talk, alice, lobby.body.id, 'approved');

  await manage.services.applications.adminUpdate(game.id, {
    revoke_flags: ['CommunicationFeaturesApproved'],
  });
  const again = await call(talk, 'POST', path, alice.bearer, { content: 'revoked' });
  expect({ status: again.status, body: again.body }).toEqual({ status: 429, body: RATE_LIMITED });
}

describe('lobby member lists kept between messages (issue 20)', () => {
  it('one node: removed, added, updated members and a deleted lobby apply to the next message', async () => {
    const [node] = await start(1, 'one-node');
    await membersFollowChanges(node, node);
  }, 30_000);

  it('two nodes: changes made on one apply to the next message sent through the other', async () => {
    const [a, b] = await start(2, 'two-nodes');
    await membersFollowChanges(a, b);
  }, 30_000);

  describe.skipIf(!withPostgres)(`on PostgreSQL (${POSTGRES_URL})`, () => {
    const schema = postgresSchema();
    afterAll(() => schema.drop());
    it('two nodes: changes made on one apply to the next message sent through the other', async () => {
      const [a, b] = await start(2, 'postgres', schema.url);
      await membersFollowChanges(a, b);
    }, 120_000);
  });

  it('a member row the database removes on its own (a cascade, another process) applies to the next message', async () => {
    const [node] = await start(1, 'cascade');
    const game = await lobbyGame(node);
    const [alice, bob, carol] = await lobbyPlayers(node, game, 3);
    const lobby = await call<{ id: string }>(node, 'PUT', '/lobbies', alice.bearer, { secret: 'cascade' });
    for (const player of [bob, carol])
      await call(node, 'PUT', '/lobbies', player.bearer, { secret: 'cascade' });
    const [b, c] = [await connect(node, bob), await connect(node, carol)];
    await send(node, alice, lobby.body.id, 'before');
    expect([await nextMessage(b), await nextMessage(c)]).toEqual(['before', 'before']);
    // Carol's row goes without any service of this node seeing it, as a cascade or a CLI process does.
    await node.storage.db
      .deleteFrom('lobby_members')
      .where('lobby_id', '=', lobby.body.id)
      .where('user_id', '=', carol.id)
      .execute();
    await send(node, alice, lobby.body.id, 'after');
    expect(await nextMessage(b)).toBe('after');
    // She joins again: the first message she is sent since 'before' is the one after her return.
    expect((await call(node, 'PUT', '/lobbies', carol.bearer, { secret: 'cascade' })).status).toBe(200);
    await send(node, alice, lobby.body.id, 'again');
    expect([await nextMessage(b), await nextMessage(c)]).toEqual(['again', 'again']);
  }, 30_000);
});

/**
 * The author of a message is kept between messages (issue 20): a change to the user, by this node or another
 * process, shows in the very next message, and a deleted author sends nothing more.
 */
async function authorFollowsChanges(manage: TestHearth, talk: TestHearth): Promise<void> {
  const game = await lobbyGame(manage);
  const [alice, bob] = await lobbyPlayers(manage, game, 2);
  const lobby = await call<{ id: string }>(manage, 'PUT', '/lobbies', alice.bearer, { secret: 'author' });
  await call(manage, 'PUT', '/lobbies', bob.bearer, { secret: 'author' });
  const b = await connect(talk, bob);
  const authorName = (message: Json) => (message['author'] as Json)['global_name'];
  const first = await send(talk, alice, lobby.body.id, 'one');
  expect(authorName(first)).not.toBe('Alice Renamed');
  await nextMessage(b);

  // Written as another process would (the CLI, an operator): no service of the talking node sees it.
  await manage.storage.db
    .updateTable('users')
    .set({ global_name: 'Alice Renamed' })
    .where('id', '=', alice.id)
    .execute();
  const renamed = await send(talk, alice, lobby.body.id, 'two');
  expect(authorName(renamed)).toBe('Alice Renamed');
  expect((await b.client.nextDispatch('LOBBY_MESSAGE_CREATE')).d).toEqual(renamed);

  // Her user goes, and her membership with it (a cascade): her token may still be presented.
  await manage.storage.db.deleteFrom('users').where('id', '=', alice.id).execute();
  const refused = await call(talk, 'POST', `/lobbies/${lobby.body.id}/messages`, alice.bearer, {
    content: 'three',
  });
  expect(refused.status).toBeGreaterThanOrEqual(400);
  expect(refused.status).toBeLessThan(500);
  await send(talk, bob, lobby.body.id, 'from bob');
  expect(await nextMessage(b)).toBe('from bob');
}

describe('the author of a message is kept until a change (issue 20)', () => {
  it('one node: a changed author shows in the next message, a deleted one sends nothing', async () => {
    const [node] = await start(1, 'author-one');
    await authorFollowsChanges(node, node);
  }, 30_000);

  it('two nodes on one database: changed through one, shown by the next message sent through the other', async () => {
    const [a, b] = await start(2, 'author-two');
    await authorFollowsChanges(a, b);
  }, 30_000);
});

describe('the approval of the game is read for every message (issue 20)', () => {
  it('one node: revoking CommunicationFeaturesApproved brings the pre-approval limit back at once', async () => {
    const [node] = await start(1, 'approval-one');
    await approvalFollowsChanges(node, node);
  }, 30_000);

  it('two nodes: revoked on one, limited on the other at once', async () => {
    const [a, b] = await start(2, 'approval-two');
    await approvalFollowsChanges(a, b);
  }, 30_000);
});

describe('messages sent in the same turn are committed together (group commit, issue 20)', () => {
  it('each is answered as alone: refusals to their senders, the rest stored and delivered once, in order', async () => {
    const [node] = await start(1, 'group');
    const game = await lobbyGame(node);
    const [alice, bob, stranger] = await lobbyPlayers(node, game, 3);
    const lobby = await call<{ id: string }>(node, 'PUT', '/lobbies', alice.bearer, { secret: 'group' });
    await call(node, 'PUT', '/lobbies', bob.bearer, { secret: 'group' });
    const b = await connect(node, bob);
    const { lobbies } = node.services;
    const as = (player: LobbyPlayer) => ({ applicationId: game.id, userId: player.id });
    // Asked for in one turn: they share one transaction.
    const outcomes = await Promise.allSettled([
      lobbies.sendMessage(as(alice), lobby.body.id, { content: 'g0' }),
      lobbies.sendMessage(as(stranger), lobby.body.id, { content: 'not a member' }),
      lobbies.sendMessage(as(bob), lobby.body.id, { content: 'g1' }),
      lobbies.sendMessage(as(alice), '1', { content: 'no such lobby' }),
      lobbies.sendMessage(as(alice), lobby.body.id, { content: 'g2' }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const codes = outcomes.flatMap((o) =>
      o.status === 'rejected' ? [(o.reason as { code: number }).code] : [],
    );
    expect(codes).toEqual([50001, 10031]);
    const sent = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    for (const message of sent)
      expect((await b.client.nextDispatch('LOBBY_MESSAGE_CREATE')).d).toEqual(message);
    const history = await call<Json[]>(node, 'GET', `/lobbies/${lobby.body.id}/messages`, bob.bearer);
    expect(history.body).toEqual(sent.toReversed());
    // And the next message, alone, finds nothing left of the group.
    await send(node, alice, lobby.body.id, 'after');
    expect(await nextMessage(b)).toBe('after');
    expect(b.client.pending().filter((frame) => frame.t === 'LOBBY_MESSAGE_CREATE')).toEqual([]);
  }, 30_000);

  it("a group's frames, written to each socket together, are text frames of JSON.stringify({op, d, s, t}), byte for byte", async () => {
    const [node] = await start(1, 'group-bytes');
    const game = await lobbyGame(node);
    const [alice, bob] = await lobbyPlayers(node, game, 2);
    const lobby = await call<{ id: string }>(node, 'PUT', '/lobbies', alice.bearer, { secret: 'bytes' });
    await call(node, 'PUT', '/lobbies', bob.bearer, { secret: 'bytes' });
    const b = await connect(node, bob);
    const as = { applicationId: game.id, userId: alice.id };
    // Other scripts than ASCII: each frame is bytes copied from the body's encoding, not a string.
    const contents = ['gg ✓', 'à demain 👋', 'こんにちは', 'plain'];
    const sent = await Promise.all(
      contents.map((content) => node.services.lobbies.sendMessage(as, lobby.body.id, { content })),
    );
    for (const message of sent)
      expect((await b.client.nextDispatch('LOBBY_MESSAGE_CREATE')).d).toEqual(message);
    const raw = b.client.messages.filter(
      (message) => (JSON.parse(message.bytes.toString('utf8')) as GatewayFrame).t === 'LOBBY_MESSAGE_CREATE',
    );
    expect(raw).toHaveLength(contents.length);
    for (const message of raw) {
      const frame = JSON.parse(message.bytes.toString('utf8')) as GatewayFrame;
      expect(message.binary).toBe(false);
      expect(message.bytes).toEqual(
        Buffer.from(JSON.stringify({ op: 0, d: frame.d, s: frame.s, t: frame.t })),
      );
    }
    expectConsecutive(b.client.frames);
  }, 30_000);
});
