import { DirectMessageLimits, PRE_APPROVAL_LIMIT } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { type ProvisionalPlayer, provisionalPlayer } from '../../../../test-support/provisional.js';
import {
  answer,
  connect,
  SkewClock,
  socialEngines,
  socialPlayer,
  type TestPlayer,
} from './social-support.js';

/**
 * Direct messages for games (PROTOCOL.md §B.5), moderation metadata (§B.4), GAME_DIRECT_MESSAGE_* webhook
 * events (§F.4). Provisional accounts are minted by the game's server (POST /partner-sdk/token/bot, §B.2).
 */
const ENGINES = await socialEngines();

for (const engine of ENGINES)
  describe(`game direct messages on ${engine.name}`, () => {
    let hearth: TestHearth;
    let game: TestGame;
    let clock: SkewClock;

    beforeAll(async () => {
      clock = new SkewClock();
      hearth = await startHearth({ rateLimitGlobal: 1_000_000, ...engine.overrides }, clock);
      game = await approvedGame();
    });
    afterAll(async () => {
      await hearth.close();
      await engine.drop();
    });

    /**
     * A game past the pre-approval limits, so that only the test of those limits meets them, and allowed to
     * mint provisional accounts.
     */
    async function approvedGame(): Promise<TestGame> {
      const created = await createGame(hearth);
      await hearth.services.applications.adminUpdate(created.id, {
        grant_flags: ['CommunicationFeaturesApproved', 'ProvisionalAccountsEnabled'],
      });
      return created;
    }

    /** A full or a provisional player: requests need only who they are and their token. */
    type Participant = Pick<TestPlayer | ProvisionalPlayer, 'id' | 'bearer'>;

    const call = (player: Participant, method: string, path: string, body?: unknown) =>
      hearth.api(path, { method, auth: player.bearer, ...(body === undefined ? {} : { body }) }).then(answer);
    const send = (from: Participant, to: Participant, body: unknown) =>
      call(from, 'POST', `/users/${to.id}/messages`, body);

    async function friends(a: Participant, b: Participant): Promise<void> {
      await call(a, 'PUT', `/users/@me/relationships/${b.id}`);
      await call(b, 'PUT', `/users/@me/relationships/${a.id}`);
    }

    async function outbox(type: string) {
      const rows = await hearth.storage.db
        .selectFrom('outbox')
        .selectAll()
        .where('type', '=', type)
        .execute();
      return rows.map((row) => ({
        applicationId: row.application_id,
        data: JSON.parse(row.payload) as Record<string, unknown>,
      }));
    }

    it('friends exchange messages: the message object, MESSAGE_CREATE to both, history, the webhook outbox', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await friends(alice, bob);
      const bobWs = await connect(hearth, bob);

      const sent = await send(alice, bob, { content: 'hello bob', metadata: { level: '3' }, nonce: 'n-1' });
      expect(sent.status).toBe(200);
      const message = sent.body as Record<string, unknown>;
      expect(message).toMatchObject({
        type: 0,
        content: 'hello bob',
        author: { id: alice.id, username: alice.username },
        recipient_id: bob.id,
        flags: 1 << 16,
        application_id: game.id,
        metadata: { level: '3' },
        nonce: 'n-1',
        edited_timestamp: null,
      });
      expect(message['channel_id']).toMatch(/^\d+$/);
      expect((await bobWs.nextDispatch('MESSAGE_CREATE')).d).toEqual(message);

      const reply = (await send(bob, alice, { content: 'hi alice' })).body as {
        channel_id: string;
        id: string;
      };
      expect(reply.channel_id).toBe(message['channel_id']);
      const history = (await call(alice, 'GET', `/users/${bob.id}/messages`)).body as Array<{ id: string }>;
      expect(history.map((m) => m.id)).toEqual([reply.id, message['id']]);
      expect((await call(bob, 'GET', `/users/${alice.id}/messages?limit=1`)).body).toMatchObject([
        { id: reply.id },
      ]);

      const [created] = (await outbox('GAME_DIRECT_MESSAGE_CREATE')).filter(
        (e) => e.data['id'] === message['id'],
      );
      expect(created).toEqual({
        applicationId: game.id,
        data: {
          ...message,
          channel: {
            id: message['channel_id'],
            type: 1,
            recipients: [expect.objectContaining({ id: alice.id }), expect.objectContaining({ id: bob.id })],
          },
        },
      });
      await bobWs.close();
    });

    it('GAME_DIRECT_MESSAGE_CREATE is recorded only while a participant has a session of the game (§F.4)', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await friends(alice, bob);
      const offline = (await send(alice, bob, { content: 'nobody in game' })).body as { id: string };
      const aliceWs = await connect(hearth, alice);
      const online = (await send(alice, bob, { content: 'alice in game' })).body as { id: string };
      const recorded = (await outbox('GAME_DIRECT_MESSAGE_CREATE')).map((e) => e.data['id']);
      expect([recorded.includes(offline.id), recorded.includes(online.id)]).toEqual([false, true]);
      await aliceWs.close();
    });

    it('strangers may write only while the recipient is in the game; blocked, self, bots and unknown users never', async () => {
      const alice = await socialPlayer(hearth, game);
      const stranger = await socialPlayer(hearth, game);
      const refused = { status: 400, body: { code: 50007, message: 'Cannot send messages to this user' } };
      expect(await send(alice, stranger, { content: 'hi' })).toEqual(refused);
      const strangerWs = await connect(hearth, stranger);
      expect((await send(alice, stranger, { content: 'hi' })).status).toBe(200);
      await strangerWs.close(1000);

      const blocker = await socialPlayer(hearth, game);
      await friends(alice, blocker);
      await call(blocker, 'PUT', `/users/@me/relationships/${alice.id}`, { type: 2 });
      expect(await send(alice, blocker, { content: 'hi' })).toEqual(refused);
      expect(await send(blocker, alice, { content: 'hi' })).toEqual(refused);
      expect(await send(alice, alice, { content: 'me' })).toEqual(refused);
      expect(await call(alice, 'POST', `/users/${game.botUserId}/messages`, { content: 'bot' })).toEqual(
        refused,
      );
      expect(await call(alice, 'POST', '/users/123456789012345678/messages', { content: 'x' })).toEqual({
        status: 404,
        body: { code: 10013, message: 'Unknown User' },
      });
    });

    it('content: empty 50006, 2,000 characters taken, 2,001 refused; metadata 25 keys taken, 26 refused', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await friends(alice, bob);
      const empty = { status: 400, body: { code: 50006, message: 'Cannot send an empty message' } };
      expect(await send(alice, bob, {})).toEqual(empty);
      expect(await send(alice, bob, { content: '   ' })).toEqual(empty);
      expect((await send(alice, bob, { content: 'x'.repeat(DirectMessageLimits.contentMax) })).status).toBe(
        200,
      );
      expect(await send(alice, bob, { content: 'x'.repeat(DirectMessageLimits.contentMax + 1) })).toEqual({
        status: 400,
        body: {
          code: 50035,
          message: 'Invalid Form Body',
          errors: {
            content: {
              _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }],
            },
          },
        },
      });
      const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
      expect((await send(alice, bob, { content: 'm', metadata: keys(25) })).status).toBe(200);
      expect(await send(alice, bob, { content: 'm', metadata: keys(26) })).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { metadata: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } },
      });
      expect(await send(alice, bob, { content: 'm', metadata: { k: 'v'.repeat(1025) } })).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { metadata: { k: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } } },
      });
      expect(await send(alice, bob, { content: 5 })).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { content: {} } },
      });
      for (const limit of [0, 201, 'x']) {
        expect(await call(alice, 'GET', `/users/${bob.id}/messages?limit=${limit}`)).toMatchObject({
          status: 400,
          body: { code: 50035, errors: { limit: {} } },
        });
      }
      expect((await call(alice, 'GET', `/users/${bob.id}/messages?limit=200`)).status).toBe(200);
    });

    it('history: at most 200 messages and 72 hours', async () => {
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await friends(alice, bob);
      const first = (await send(alice, bob, { content: 'old' })).body as { id: string };
      // The clock also runs in real time, so the edge is approached with a minute to spare on each side.
      clock.advance(DirectMessageLimits.historyMaxAgeMs - 60_000);
      expect(((await call(bob, 'GET', `/users/${alice.id}/messages`)).body as unknown[]).length).toBe(1);
      clock.advance(60_000);
      await send(alice, bob, { content: 'new' });
      expect(
        ((await call(bob, 'GET', `/users/${alice.id}/messages`)).body as Array<{ id: string }>).map(
          (m) => m.id,
        ),
      ).not.toContain(first.id);

      for (let i = 0; i < DirectMessageLimits.historyMaxMessages; i++)
        await send(bob, alice, { content: `m${i}` });
      const all = (await call(alice, 'GET', `/users/${bob.id}/messages?limit=200`)).body as Array<{
        content: string;
      }>;
      expect(all).toHaveLength(200);
      expect(all[0]?.content).toBe('m199');
      expect(all.at(-1)?.content).toBe('m0');
    });

    it(`an unapproved game sends ${PRE_APPROVAL_LIMIT.limit} DMs per 2 h; the next is 429; approval lifts it`, async () => {
      const unapproved = await createGame(hearth);
      const alice = await socialPlayer(hearth, unapproved);
      const bob = await socialPlayer(hearth, unapproved);
      await friends(alice, bob);
      for (let i = 0; i < PRE_APPROVAL_LIMIT.limit; i++) {
        expect((await send(alice, bob, { content: `m${i}` })).status).toBe(200);
      }
      const response = await hearth.api(`/users/${alice.id}/messages`, {
        method: 'POST',
        auth: bob.bearer,
        body: { content: 'over' },
      });
      expect(response.status).toBe(429);
      expect(response.headers.get('x-ratelimit-scope')).toBe('shared');
      const body = (await response.json()) as { retry_after: number };
      expect(body).toEqual({
        message: 'You are being rate limited.',
        retry_after: body.retry_after,
        global: false,
        code: 0,
      });
      expect(body.retry_after).toBeGreaterThan(0);
      expect(body.retry_after).toBeLessThanOrEqual(PRE_APPROVAL_LIMIT.windowMs / 1000);
      expect(Number(response.headers.get('retry-after'))).toBe(Math.ceil(body.retry_after));

      await hearth.services.applications.adminUpdate(unapproved.id, {
        grant_flags: ['CommunicationFeaturesApproved'],
      });
      expect((await send(bob, alice, { content: 'approved now' })).status).toBe(200);
    });

    it('moderation metadata: the game’s bot sets it (204), the participants see it in that game only; an edit clears it', async () => {
      const other = await approvedGame();
      const alice = await socialPlayer(hearth, game);
      const bob = await socialPlayer(hearth, game);
      await friends(alice, bob);
      const bobWs = await connect(hearth, bob);
      const message = (await send(alice, bob, { content: 'bad words' })).body as { id: string };
      await bobWs.nextDispatch('MESSAGE_CREATE');
      const path = `/partner-sdk/dms/${bob.id}/${alice.id}/messages/${message.id}/moderation-metadata`;
      const bot = (token: string, body: unknown) =>
        hearth.api(path, { method: 'PUT', auth: `Bot ${token}`, body }).then(answer);

      const metadata = {
        action: 'hide',
        reason: 'profanity',
        severity: 'x'.repeat(2000),
        replacement: '***',
        k5: 'v',
      };
      expect(await bot(game.botToken, metadata)).toEqual({ status: 204, body: undefined });
      expect((await bobWs.nextDispatch('MESSAGE_UPDATE')).d).toMatchObject({
        id: message.id,
        moderation_metadata: metadata,
      });
      expect((await call(alice, 'GET', `/users/${bob.id}/messages`)).body).toMatchObject([
        { id: message.id, moderation_metadata: metadata },
      ]);
      expect((await outbox('GAME_DIRECT_MESSAGE_UPDATE')).filter((e) => e.data['id'] === message.id)).toEqual(
        [],
      );

      expect(await bot(other.botToken, { action: 'show' })).toEqual({
        status: 404,
        body: { code: 10008, message: 'Unknown Message' },
      });
      expect(await bot(game.botToken, { ...metadata, k6: 'v' })).toMatchObject({
        status: 400,
        body: { code: 50035 },
      });
      expect(await bot(game.botToken, { k: 'x'.repeat(2001) })).toEqual({
        status: 400,
        body: {
          code: 50035,
          message: 'Invalid Form Body',
          errors: {
            k: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
          },
        },
      });
      expect(await bot(game.botToken, { k: 5 })).toMatchObject({
        status: 400,
        body: { errors: { k: { _errors: [{ code: 'BASE_TYPE_STRING' }] } } },
      });
      expect(await answer(await hearth.api(path, { method: 'PUT', auth: alice.bearer, body: {} }))).toEqual({
        status: 401,
        body: { code: 0, message: '401: Unauthorized' },
      });

      // Only the author edits; the edit clears the metadata and goes to the webhook outbox.
      expect(await call(bob, 'PATCH', `/users/${alice.id}/messages/${message.id}`, { content: 'x' })).toEqual(
        {
          status: 403,
          body: { code: 50005, message: 'Cannot edit a message authored by another user' },
        },
      );
      const edited = await call(alice, 'PATCH', `/users/${bob.id}/messages/${message.id}`, {
        content: 'kind words',
      });
      expect(edited.status).toBe(200);
      expect(edited.body).not.toHaveProperty('moderation_metadata');
      expect(edited.body).toMatchObject({ content: 'kind words', edited_timestamp: expect.any(String) });
      expect(
        (await outbox('GAME_DIRECT_MESSAGE_UPDATE')).filter((e) => e.data['id'] === message.id),
      ).toHaveLength(1);

      expect((await call(alice, 'DELETE', `/users/${bob.id}/messages/${message.id}`)).status).toBe(204);
      expect((await bobWs.nextDispatch('MESSAGE_DELETE')).d).toMatchObject({ id: message.id });
      expect(
        (await outbox('GAME_DIRECT_MESSAGE_DELETE')).filter((e) => e.data['id'] === message.id),
      ).toHaveLength(1);
      expect(await call(alice, 'DELETE', `/users/${bob.id}/messages/${message.id}`)).toEqual({
        status: 404,
        body: { code: 10008, message: 'Unknown Message' },
      });
      await bobWs.close();
    });

    it('between a full and a provisional account messages persist; between two provisional ones they are ephemeral', async () => {
      const full = await socialPlayer(hearth, game);
      const p1 = await provisionalPlayer(hearth, game, `dm-p1-${full.id}`);
      const p2 = await provisionalPlayer(hearth, game, `dm-p2-${full.id}`);
      await friends(full, p1);
      await friends(p1, p2);

      const kept = (await send(full, p1, { content: 'to provisional' })).body as {
        id: string;
        channel_id: string;
      };
      expect(kept.channel_id).not.toBe(p1.id);
      expect((await call(p1, 'GET', `/users/${full.id}/messages`)).body).toMatchObject([{ id: kept.id }]);

      // connect() reads only the bearer token: a provisional account has no session token to give it.
      const p2Ws = await connect(hearth, { ...p2, sessionToken: '' });
      const ephemeral = (await send(p1, p2, { content: 'just in game' })).body as {
        id: string;
        channel_id: string;
      };
      expect(ephemeral.channel_id).toBe(p2.id);
      expect((await p2Ws.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
        id: ephemeral.id,
        channel_id: p2.id,
      });
      expect((await call(p2, 'GET', `/users/${p1.id}/messages`)).body).toEqual([]);
      const [webhook] = (await outbox('GAME_DIRECT_MESSAGE_CREATE')).filter(
        (e) => e.data['id'] === ephemeral.id,
      );
      expect(webhook?.data['channel']).toMatchObject({ id: p2.id, type: 1 });
      await p2Ws.close();
    });

    it('scopes: reading needs dm_channels.messages.read; activities.invites.write alone sends only invites', async () => {
      const alice = await socialPlayer(hearth, game, 'identify activities.invites.write');
      const bob = await socialPlayer(hearth, game);
      await friends(bob, alice);
      expect(await call(alice, 'GET', `/users/${bob.id}/messages`)).toEqual({
        status: 403,
        body: { code: 50026, message: 'Missing required OAuth2 scope' },
      });
      expect(await send(alice, bob, { content: 'hi' })).toMatchObject({
        status: 400,
        body: { code: 50035, errors: { content: { _errors: [{ code: 'UNKNOWN_FIELD' }] } } },
      });
      const identifyOnly = await socialPlayer(hearth, game, 'identify');
      expect(await send(identifyOnly, bob, { content: 'hi' })).toEqual({
        status: 403,
        body: { code: 50026, message: 'Missing required OAuth2 scope' },
      });
      expect(
        await answer(
          await hearth.api(`/users/${bob.id}/messages`, {
            method: 'POST',
            auth: `Bot ${game.botToken}`,
            body: { content: 'x' },
          }),
        ),
      ).toEqual({
        status: 403,
        body: { code: 20001, message: 'Bots cannot use this endpoint' },
      });
    });
  });
