import { RelationshipTypes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import {
  answer,
  connect,
  SkewClock,
  SOCIAL_SCOPES,
  socialEngines,
  socialPlayer,
  type TestPlayer,
} from './social-support.js';

/** Relationships (PROTOCOL.md §B.6): friends, requests, game friends, blocks, and their gateway events. */
const ENGINES = await socialEngines();

for (const engine of ENGINES)
  describe(`relationships on ${engine.name}`, () => {
    let hearth: TestHearth;
    let game: TestGame;
    let otherGame: TestGame;

    beforeAll(async () => {
      hearth = await startHearth({ rateLimitGlobal: 1_000_000, ...engine.overrides }, new SkewClock());
      game = await createGame(hearth);
      otherGame = await createGame(hearth);
    });
    afterAll(async () => {
      await hearth.close();
      await engine.drop();
    });

    const call = (player: TestPlayer, method: string, path: string, body?: unknown) =>
      hearth.api(path, { method, auth: player.bearer, ...(body === undefined ? {} : { body }) }).then(answer);
    const list = async (player: TestPlayer) =>
      (
        (await call(player, 'GET', '/users/@me/relationships')).body as Array<{ id: string; type: number }>
      ).map((r) => [r.id, r.type]);

    it('a request by username, then acceptance: both are friends, each told by RELATIONSHIP_ADD', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      const aliceWs = await connect(hearth, alice);
      const bobWs = await connect(hearth, bob);

      expect(await call(alice, 'POST', '/users/@me/relationships', { username: bob.username })).toEqual({
        status: 204,
        body: undefined,
      });
      expect((await aliceWs.nextDispatch('RELATIONSHIP_ADD')).d).toMatchObject({
        id: bob.id,
        type: RelationshipTypes.PendingOutgoing,
        user: { id: bob.id, username: bob.username },
      });
      expect((await bobWs.nextDispatch('RELATIONSHIP_ADD')).d).toMatchObject({
        id: alice.id,
        type: RelationshipTypes.PendingIncoming,
      });
      expect(await list(bob)).toEqual([[alice.id, RelationshipTypes.PendingIncoming]]);

      expect((await call(bob, 'PUT', `/users/@me/relationships/${alice.id}`, {})).status).toBe(204);
      expect((await aliceWs.nextDispatch('RELATIONSHIP_ADD')).d).toMatchObject({ id: bob.id, type: 1 });
      expect((await bobWs.nextDispatch('RELATIONSHIP_ADD')).d).toMatchObject({ id: alice.id, type: 1 });
      expect(await list(alice)).toEqual([[bob.id, RelationshipTypes.Friend]]);
      expect(await list(bob)).toEqual([[alice.id, RelationshipTypes.Friend]]);

      // Removing a friend ends it on both sides.
      expect((await call(alice, 'DELETE', `/users/@me/relationships/${bob.id}`)).status).toBe(204);
      expect((await bobWs.nextDispatch('RELATIONSHIP_REMOVE')).d).toEqual({
        id: alice.id,
        type: 1,
        nickname: null,
      });
      expect(await list(bob)).toEqual([]);
      await aliceWs.close();
      await bobWs.close();
    });

    it('rejecting an incoming request removes it on both sides', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`);
      expect((await call(bob, 'DELETE', `/users/@me/relationships/${alice.id}`)).status).toBe(204);
      expect(await list(alice)).toEqual([]);
      expect(await list(bob)).toEqual([]);
    });

    it('refuses: unknown username 80004, self 80003, unknown user 10013, bad type and id 50035', async () => {
      const alice = await socialPlayer(hearth, game);
      expect(await call(alice, 'POST', '/users/@me/relationships', { username: 'nobody-here' })).toEqual({
        status: 400,
        body: { code: 80004, message: 'No users with DiscordTag exist' },
      });
      expect(await call(alice, 'PUT', `/users/@me/relationships/${alice.id}`)).toEqual({
        status: 400,
        body: { code: 80003, message: 'Cannot send friend request to self' },
      });
      expect(await call(alice, 'PUT', '/users/@me/relationships/123456789012345678')).toEqual({
        status: 404,
        body: { code: 10013, message: 'Unknown User' },
      });
      const bob = await socialPlayer(hearth, game);
      expect(await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`, { type: 3 })).toMatchObject({
        status: 400,
        body: {
          code: 50035,
          errors: {
            type: {
              _errors: [{ code: 'BASE_TYPE_CHOICES', message: "Value must be one of ('-1', '1', '2')." }],
            },
          },
        },
      });
      expect(await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`, { type: 'x' })).toMatchObject({
        status: 400,
        body: { code: 50035 },
      });
      expect(await call(alice, 'PUT', '/users/@me/relationships/not-an-id')).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { user_id: {} } },
      });
      expect(
        await call(alice, 'POST', '/users/@me/relationships', { username: 'x'.repeat(33) }),
      ).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { username: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } },
      });
      expect(await call(alice, 'POST', '/users/@me/relationships', {})).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { username: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } } },
      });
    });

    it('needs relationships.read to read and relationships.write to change (50026)', async () => {
      const reader = await socialPlayer(hearth, game, 'identify');
      expect(await call(reader, 'GET', '/users/@me/relationships')).toEqual({
        status: 403,
        body: { code: 50026, message: 'Missing required OAuth2 scope' },
      });
      const writerless = await socialPlayer(hearth, game, 'identify relationships.read');
      expect((await call(writerless, 'GET', '/users/@me/relationships')).status).toBe(200);
      expect((await call(writerless, 'POST', '/users/@me/relationships', { username: 'a' })).status).toBe(
        403,
      );
      expect(await answer(await hearth.api('/users/@me/relationships'))).toMatchObject({ status: 401 });
    });

    it('at most 1,000 friends: the 1,000th is accepted, the 1,001st refused with 30002', async () => {
      const alice = await socialPlayer(hearth, game);
      const now = Date.now();
      // 999 friends written straight into storage: registering 999 players through HTTP would take minutes.
      const ids = Array.from(
        { length: 999 },
        (_, i) => `${9_000_000_000_000_000n + BigInt(now % 1_000_000) * 1000n + BigInt(i)}`,
      );
      await hearth.storage.db
        .insertInto('users')
        .values(
          ids.map((id) => ({
            id,
            username: `bulk${id}`,
            discriminator: '0',
            global_name: null,
            email: null,
            password_hash: null,
            avatar: null,
            bot: 0,
            flags: 0,
            created_at: now,
          })),
        )
        .execute();
      await hearth.storage.db
        .insertInto('relationships')
        .values(
          ids.flatMap((id) => [
            { user_id: alice.id, target_id: id, type: 1, since: now },
            { user_id: id, target_id: alice.id, type: 1, since: now },
          ]),
        )
        .execute();
      const bob = await socialPlayer(hearth, game);
      const carol = await socialPlayer(hearth, game);
      await call(bob, 'PUT', `/users/@me/relationships/${alice.id}`);
      expect((await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`)).status).toBe(204);
      expect((await list(alice)).length).toBe(1000);
      expect(await call(alice, 'PUT', `/users/@me/relationships/${carol.id}`)).toEqual({
        status: 400,
        body: { code: 30002, message: 'Maximum number of friends reached (1000)' },
      });
      // Carol's request reaches Alice, but accepting it would make 1,001.
      await call(carol, 'PUT', `/users/@me/relationships/${alice.id}`);
      expect(await call(alice, 'PUT', `/users/@me/relationships/${carol.id}`)).toEqual({
        status: 400,
        body: { code: 30002, message: 'Maximum number of friends reached (1000)' },
      });
      expect(await call(carol, 'PUT', `/users/@me/relationships/${alice.id}`)).toEqual({
        status: 204,
        body: undefined,
      });
    });

    it('game friends belong to one application and reach only that game’s sessions', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      // Bob in another game: same user, a token of the other application.
      const otherTokens = await grantTokens(hearth, otherGame, bob.sessionToken, SOCIAL_SCOPES);
      const bobElsewhere = { ...bob, bearer: `Bearer ${otherTokens.access_token}` };
      const bobElsewhereWs = await connect(hearth, bobElsewhere);
      const bobWs = await connect(hearth, bob);
      expect(await call(alice, 'POST', '/users/@me/game-relationships', { username: bob.username })).toEqual({
        status: 204,
        body: undefined,
      });
      expect((await bobWs.nextDispatch('GAME_RELATIONSHIP_ADD')).d).toMatchObject({
        id: alice.id,
        application_id: game.id,
        type: RelationshipTypes.PendingIncoming,
        user_id: bob.id,
        dm_access_type: 0,
      });
      expect((await call(bob, 'PUT', `/users/@me/game-relationships/${alice.id}`)).status).toBe(204);
      const games = (await call(alice, 'GET', '/users/@me/game-relationships')).body as Array<{
        id: string;
        type: number;
        application_id: string;
      }>;
      expect(games.map((g) => [g.id, g.type, g.application_id])).toEqual([[bob.id, 1, game.id]]);
      // Not a platform friendship, and nothing in another game.
      expect(await list(alice)).toEqual([]);
      expect((await call(bobElsewhere, 'GET', '/users/@me/game-relationships')).body).toEqual([]);
      // A later platform event proves the other game's session had nothing of this game's relationships.
      await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`);
      expect((await bobElsewhereWs.next((f) => f.op === 0)).t).toBe('RELATIONSHIP_ADD');
      await bobElsewhereWs.close();
      expect(await call(alice, 'PUT', `/users/@me/game-relationships/${bob.id}`, { type: 2 })).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { type: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } } },
      });
      expect(
        await answer(await hearth.api('/users/@me/game-relationships', { auth: alice.sessionToken })),
      ).toEqual({
        status: 401,
        body: { code: 0, message: '401: Unauthorized' },
      });
      await bobWs.close();
    });

    it('blocking ends every relationship in every game; unblocking restores nothing; the blocked cannot befriend', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`);
      await call(bob, 'PUT', `/users/@me/relationships/${alice.id}`);
      await call(alice, 'PUT', `/users/@me/game-relationships/${bob.id}`);
      await call(bob, 'PUT', `/users/@me/game-relationships/${alice.id}`);
      const bobWs = await connect(hearth, bob);

      expect((await call(alice, 'PUT', `/users/@me/relationships/${bob.id}`, { type: 2 })).status).toBe(204);
      expect(await list(alice)).toEqual([[bob.id, RelationshipTypes.Blocked]]);
      expect(await list(bob)).toEqual([]);
      expect((await call(bob, 'GET', '/users/@me/game-relationships')).body).toEqual([]);
      const removed = [
        await bobWs.next((f) => f.t === 'RELATIONSHIP_REMOVE'),
        await bobWs.next((f) => f.t === 'GAME_RELATIONSHIP_REMOVE'),
      ];
      expect(removed.map((f) => f.d)).toEqual([
        { id: alice.id, type: 1, nickname: null },
        { id: alice.id, application_id: game.id, type: 1, user_id: bob.id },
      ]);

      expect(await call(bob, 'PUT', `/users/@me/relationships/${alice.id}`)).toEqual({
        status: 400,
        body: { code: 80000, message: 'Incoming friend requests disabled.' },
      });
      expect(await call(bob, 'PUT', `/users/@me/game-relationships/${alice.id}`)).toEqual({
        status: 400,
        body: { code: 80000, message: 'Incoming friend requests disabled.' },
      });

      expect((await call(alice, 'DELETE', `/users/@me/relationships/${bob.id}`)).status).toBe(204);
      expect(await list(alice)).toEqual([]);
      expect(await list(bob)).toEqual([]);
      await bobWs.close();
    });
  });
