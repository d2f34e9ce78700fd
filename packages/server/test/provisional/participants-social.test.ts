import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  approve,
  call,
  insertUsers,
  type LobbyPlayer,
  lobbyPlayer,
} from '../../../../test-support/lobbies.js';
import { createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';
import { type ProvisionalPlayer, provisionalPlayer } from '../../../../test-support/provisional.js';
import { socialEngines } from '../social/social-support.js';
import {
  BLOCKED,
  befriend,
  byUser,
  dmHistory,
  FRIEND,
  merge,
  relationshipsOf,
  sendDm,
} from './social-steps.js';

/**
 * The social layer's part of merge, unmerge and ban (PROTOCOL.md §B.3), at its edges: duplicates, the two
 * accounts befriending each other, a DM conflict, blocks both ways, and what a ban-driven unmerge copies.
 */

const ADMIN_TOKEN = 'admin-secret-for-tests-0123456789abcdef';
const clock = new ManualClock(Date.now());
let hearth: TestHearth;
let game: TestGame;
let external = 0;

/** A provisional player of the game, and the external id its game's server knows it by. */
async function provisional(): Promise<ProvisionalPlayer & { externalId: string }> {
  const externalId = `social-${++external}`;
  return { ...(await provisionalPlayer(hearth, game, externalId)), externalId };
}

/** Merges the provisional player into the full account; answers the full account's new bearer. */
async function mergeInto(full: LobbyPlayer, rook: ProvisionalPlayer): Promise<string> {
  const response = await merge(hearth, game, full.account.token, rook.accessToken);
  expect(response.status).toBe(200);
  return `Bearer ${((await response.json()) as { access_token: string }).access_token}`;
}

/** Fixture: `a` and each of `others` are friends (rows as the service writes them), for the 1,000 cap. */
async function insertFriendships(a: string, others: readonly string[]): Promise<void> {
  const since = hearth.clock.now();
  const rows = others.flatMap((b) => [
    { user_id: a, target_id: b, type: FRIEND, since },
    { user_id: b, target_id: a, type: FRIEND, since },
  ]);
  for (let i = 0; i < rows.length; i += 500) {
    await hearth.storage.db
      .insertInto('relationships')
      .values(rows.slice(i, i + 500))
      .execute();
  }
}

const engines = await socialEngines();
afterAll(async () => {
  for (const engine of engines) await engine.drop();
});

describe.each(engines)('social data across merge, unmerge and ban on $name', (engine) => {
  beforeAll(async () => {
    hearth = await startHearth(
      { ...engine.overrides, adminToken: ADMIN_TOKEN, rateLimitGlobal: 1_000_000 },
      clock,
    );
    game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
    // Lifts the 100-DMs pre-approval quota: one case writes 220 messages.
    await approve(hearth, game);
  });
  afterAll(() => hearth.close());

  it('a friend both accounts had stays one friendship; a friendship beats a pending request', async () => {
    const full = await lobbyPlayer(hearth, game);
    const rook = await provisional();
    const shared = await lobbyPlayer(hearth, game);
    const asked = await lobbyPlayer(hearth, game);
    for (const kind of ['relationships', 'game-relationships'] as const) {
      await befriend(hearth, kind, full, shared);
      await befriend(hearth, kind, rook, shared);
      await befriend(hearth, kind, rook, asked);
      // The full account's own request to `asked` is still pending.
      expect((await call(hearth, 'PUT', `/users/@me/${kind}/${asked.id}`, full.bearer, {})).status).toBe(204);
    }

    const merged = await mergeInto(full, rook);

    for (const kind of ['relationships', 'game-relationships'] as const) {
      const friends = byUser([shared.id, FRIEND], [asked.id, FRIEND]);
      expect(await relationshipsOf(hearth, merged, kind)).toEqual(friends);
      expect(await relationshipsOf(hearth, shared.bearer, kind)).toEqual([[full.id, FRIEND]]);
      expect(await relationshipsOf(hearth, asked.bearer, kind)).toEqual([[full.id, FRIEND]]);
    }
  });

  it('what the two accounts held towards each other is dropped, never a relationship with oneself', async () => {
    const full = await lobbyPlayer(hearth, game);
    const rook = await provisional();
    await befriend(hearth, 'relationships', rook, full);
    await befriend(hearth, 'game-relationships', full, rook);
    await sendDm(hearth, rook.bearer, full.id, 'note to self');
    await sendDm(hearth, full.bearer, rook.id, 'noted');
    expect(await dmHistory(hearth, full.bearer, rook.id)).toHaveLength(2);

    const merged = await mergeInto(full, rook);

    expect(await relationshipsOf(hearth, merged, 'relationships')).toEqual([]);
    expect(await relationshipsOf(hearth, merged, 'game-relationships')).toEqual([]);
    expect(await dmHistory(hearth, merged, full.id)).toEqual([]);
    // The conversation is gone with the provisional account, not turned into a channel with oneself.
    const summaries = await call<unknown[]>(hearth, 'GET', '/users/@me/message-summaries', merged);
    expect(summaries).toMatchObject({ status: 200, body: [] });
  });

  it('a DM conflict joins the existing channel (no group DMs), newest 200 kept, in time order', async () => {
    const full = await lobbyPlayer(hearth, game);
    const rook = await provisional();
    const pal = await lobbyPlayer(hearth, game);
    await befriend(hearth, 'game-relationships', full, pal);
    await befriend(hearth, 'game-relationships', rook, pal);
    // Interleaved in time: the merged history is ordered by when each message was sent.
    await sendDm(hearth, full.bearer, pal.id, 'full 1');
    clock.advance(1);
    await sendDm(hearth, rook.bearer, pal.id, 'rook 1');
    clock.advance(1);
    await sendDm(hearth, pal.bearer, full.id, 'to full');
    clock.advance(1);
    await sendDm(hearth, pal.bearer, rook.id, 'to rook');

    const merged = await mergeInto(full, rook);

    const expected = [
      [pal.id, 'to rook'],
      [pal.id, 'to full'],
      [full.id, 'rook 1'],
      [full.id, 'full 1'],
    ];
    expect(await dmHistory(hearth, merged, pal.id)).toEqual(expected);
    expect(await dmHistory(hearth, pal.bearer, full.id)).toEqual(expected);
    const summaries = await call<Array<{ user_id: string }>>(
      hearth,
      'GET',
      '/users/@me/message-summaries',
      pal.bearer,
    );
    expect(summaries.body.filter((s) => s.user_id === full.id)).toHaveLength(1);
  });

  it('a DM conflict keeps the 200 newest messages of both conversations', async () => {
    const full = await lobbyPlayer(hearth, game);
    const rook = await provisional();
    const pal = await lobbyPlayer(hearth, game);
    await befriend(hearth, 'relationships', full, pal);
    await befriend(hearth, 'relationships', rook, pal);
    for (let i = 0; i < 100; i++) {
      await sendDm(hearth, full.bearer, pal.id, `full ${i}`);
      clock.advance(1);
    }
    for (let i = 0; i < 120; i++) {
      await sendDm(hearth, rook.bearer, pal.id, `rook ${i}`);
      clock.advance(1);
    }

    const merged = await mergeInto(full, rook);

    const history = await dmHistory(hearth, merged, pal.id, 200);
    expect(history).toHaveLength(200);
    expect(history[0]).toEqual([full.id, 'rook 119']);
    expect(history[119]).toEqual([full.id, 'rook 0']);
    expect(history[120]).toEqual([full.id, 'full 99']);
    expect(history[199]).toEqual([full.id, 'full 20']);
  });

  it('blocks carry over both ways and end what the full account had with that user', async () => {
    const full = await lobbyPlayer(hearth, game);
    const rook = await provisional();
    const pest = await lobbyPlayer(hearth, game);
    const blocker = await lobbyPlayer(hearth, game);
    for (const other of [pest, blocker]) {
      await befriend(hearth, 'relationships', full, other);
      await befriend(hearth, 'game-relationships', full, other);
    }
    expect(
      (await call(hearth, 'PUT', `/users/@me/relationships/${pest.id}`, rook.bearer, { type: 2 })).status,
    ).toBe(204);
    expect(
      (await call(hearth, 'PUT', `/users/@me/relationships/${rook.id}`, blocker.bearer, { type: 2 })).status,
    ).toBe(204);

    const merged = await mergeInto(full, rook);

    expect(await relationshipsOf(hearth, merged, 'relationships')).toEqual([[pest.id, BLOCKED]]);
    expect(await relationshipsOf(hearth, merged, 'game-relationships')).toEqual([]);
    expect(await relationshipsOf(hearth, pest.bearer, 'relationships')).toEqual([]);
    expect(await relationshipsOf(hearth, blocker.bearer, 'relationships')).toEqual([[full.id, BLOCKED]]);
    expect(await relationshipsOf(hearth, blocker.bearer, 'game-relationships')).toEqual([]);
    const refused = await call(hearth, 'POST', `/users/${blocker.id}/messages`, merged, { content: 'hi?' });
    expect(refused).toMatchObject({ status: 400, body: { code: 50007 } });
  });

  it('a ban-driven unmerge: blockers, game friends and app-playing friends follow; DM history does not', async () => {
    const full = await lobbyPlayer(hearth, game);
    const rook = await provisional();
    const fullBearer = await mergeInto(full, rook);
    const blocker = await lobbyPlayer(hearth, game);
    const gamePal = await lobbyPlayer(hearth, game);
    const playingFriend = await lobbyPlayer(hearth, game);
    // A platform friend who never authorized this game: befriended with session tokens only.
    const outsider = await createPlayer(hearth);
    const session = { id: full.id, bearer: full.account.token };
    await befriend(hearth, 'relationships', session, { id: outsider.user.id, bearer: outsider.token });
    await befriend(hearth, 'relationships', { id: full.id, bearer: fullBearer }, playingFriend);
    await befriend(hearth, 'game-relationships', { id: full.id, bearer: fullBearer }, gamePal);
    await sendDm(hearth, fullBearer, gamePal.id, 'before the ban');
    expect(
      (await call(hearth, 'PUT', `/users/@me/relationships/${full.id}`, blocker.bearer, { type: 2 })).status,
    ).toBe(204);

    const ban = await hearth.api(`/admin/users/${full.id}/ban`, {
      method: 'PUT',
      headers: { authorization: `Admin ${ADMIN_TOKEN}` },
      body: { reason: 'spam' },
    });
    expect(ban.status).toBe(200);
    // The game's server asks again for its player: the restricted provisional account answers.
    const restricted = await provisionalPlayer(hearth, game, rook.externalId);
    const restrictedBearer = restricted.bearer;
    const restrictedId = restricted.id;

    // Whoever blocked the banned account blocks the restricted one too; the original block stays.
    const blocks = byUser([full.id, BLOCKED], [restrictedId, BLOCKED]);
    expect(await relationshipsOf(hearth, blocker.bearer, 'relationships')).toEqual(blocks);
    const refused = await call(hearth, 'POST', `/users/${blocker.id}/messages`, restrictedBearer, {
      content: 'hey',
    });
    expect(refused).toMatchObject({ status: 400, body: { code: 50007 } });
    // In-game friends move; platform friends who play the game are copied, the others are not.
    expect(await relationshipsOf(hearth, restrictedBearer, 'game-relationships')).toEqual([
      [gamePal.id, FRIEND],
    ]);
    expect(await relationshipsOf(hearth, gamePal.bearer, 'game-relationships')).toEqual([
      [restrictedId, FRIEND],
    ]);
    expect(await relationshipsOf(hearth, restrictedBearer, 'relationships')).toEqual([
      [playingFriend.id, FRIEND],
    ]);
    const keptBoth = byUser([full.id, FRIEND], [restrictedId, FRIEND]);
    expect(await relationshipsOf(hearth, playingFriend.bearer, 'relationships')).toEqual(keptBoth);
    expect(await relationshipsOf(hearth, outsider.token, 'relationships')).toEqual([[full.id, FRIEND]]);
    // The DM history stays with the banned account.
    expect(await dmHistory(hearth, restrictedBearer, gamePal.id)).toEqual([]);
    expect(await dmHistory(hearth, gamePal.bearer, full.id)).toEqual([[full.id, 'before the ban']]);
  });

  it('the 1,000-friend cap holds: a merge leaves the newest friendship over it, an unmerge skips a full friend', async () => {
    const full = await lobbyPlayer(hearth, game);
    const crowded = await lobbyPlayer(hearth, game);
    const bulk = await insertUsers(hearth, 999);
    // The full account: 998 friends and `crowded` (999). `crowded`: 999 friends and the full account (1,000).
    await insertFriendships(full.id, bulk.slice(0, 998));
    await insertFriendships(crowded.id, bulk);
    await befriend(hearth, 'relationships', full, crowded);
    const rook = await provisional();
    const older = await lobbyPlayer(hearth, game);
    const newer = await lobbyPlayer(hearth, game);
    await befriend(hearth, 'relationships', rook, older);
    clock.advance(1);
    await befriend(hearth, 'relationships', rook, newer);

    const merged = await mergeInto(full, rook);

    const friends = await relationshipsOf(hearth, merged, 'relationships');
    expect(friends).toHaveLength(1000);
    expect(friends).toContainEqual([older.id, FRIEND]);
    expect(friends).not.toContainEqual([newer.id, FRIEND]);
    expect(await relationshipsOf(hearth, newer.bearer, 'relationships')).toEqual([]);

    const unmerged = await call(
      hearth,
      'POST',
      '/partner-sdk/provisional-accounts/unmerge/bot',
      `Bot ${game.botToken}`,
      {
        external_user_id: rook.externalId,
      },
    );
    expect(unmerged.status).toBe(204);
    const reborn = await provisionalPlayer(hearth, game, rook.externalId);
    // `older` plays the game and has room: copied. `crowded` plays it too, but is at 1,000: not copied.
    expect(await relationshipsOf(hearth, reborn.bearer, 'relationships')).toEqual([[older.id, FRIEND]]);
    const crowdedFriends = await relationshipsOf(hearth, crowded.bearer, 'relationships');
    expect(crowdedFriends).toHaveLength(1000);
    expect(crowdedFriends).not.toContainEqual([reborn.id, FRIEND]);
  });
});
