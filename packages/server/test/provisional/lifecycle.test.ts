import { GatewayCloseCodes, GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyPlayer } from '../../../../test-support/lobbies.js';
import {
  createGame,
  createPlayer,
  type TestGame,
  type Tokens,
  tokenRequest,
} from '../../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import * as social from './social-steps.js';

const ADMIN_TOKEN = 'admin-secret-for-tests-0123456789abcdef';
const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const clock = new ManualClock(Date.now());
let hearth: TestHearth;
let game: TestGame;
const published: Array<{ type: string; data: Record<string, unknown> }> = [];

const postgresUp = await postgresAvailable();
const postgres = postgresUp ? postgresSchema() : undefined;
afterAll(async () => postgres?.drop());
const ENGINES = [
  { engine: 'SQLite', databaseUrl: 'sqlite::memory:', available: true },
  { engine: 'PostgreSQL', databaseUrl: postgres?.url ?? '', available: postgresUp },
];

async function start(databaseUrl: string): Promise<void> {
  hearth = await startHearth({ databaseUrl, adminToken: ADMIN_TOKEN, rateLimitGlobal: 1_000_000 }, clock);
  published.length = 0;
  hearth.bus.subscribe((event) => {
    published.push({ type: event.type, data: event.data as Record<string, unknown> });
  });
  game = await createGame(hearth);
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
}

// ---- Helpers through the public interfaces ----

function botToken(externalUserId: string, extra: Record<string, unknown> = {}, target = game) {
  return hearth.api('/partner-sdk/token/bot', {
    method: 'POST',
    auth: `Bot ${target.botToken}`,
    body: { external_user_id: externalUserId, ...extra },
  });
}

async function provisionalToken(
  externalUserId: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const response = await botToken(externalUserId, extra);
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function me(accessToken: string): Promise<Response> {
  return hearth.api('/users/@me', { auth: `Bearer ${accessToken}` });
}

async function userOf(
  accessToken: string,
): Promise<{ id: string; global_name: string | null; provisional?: true }> {
  const response = await me(accessToken);
  expect(response.status).toBe(200);
  return (await response.json()) as { id: string; global_name: string | null; provisional?: true };
}

/** The player consents, and the game exchanges the code with the provisional credential (PROTOCOL.md §B.3). */
function merge(playerToken: string, provisional: string, target = game): Promise<Response> {
  return social.merge(hearth, target, playerToken, provisional);
}

function refresh(tokens: Tokens): Promise<Response> {
  return tokenRequest(hearth, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token ?? '',
    client_id: game.id,
    client_secret: game.clientSecret,
  });
}

async function sdkSession(accessToken: string) {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: `Bearer ${accessToken}`, properties: PROPERTIES } });
  const ready = await client.nextDispatch('READY');
  return { client, user: (ready.d as { user: Record<string, unknown> }).user };
}

function admin(method: 'PUT' | 'DELETE', userId: string, body?: unknown, token = ADMIN_TOKEN) {
  return hearth.api(`/admin/users/${userId}/ban`, {
    method,
    headers: { authorization: `Admin ${token}` },
    ...(body === undefined ? {} : { body }),
  });
}

const deauthorizations = async (userId: string) =>
  (
    await hearth.storage.db
      .selectFrom('outbox')
      .selectAll()
      .where('type', '=', 'APPLICATION_DEAUTHORIZED')
      .where('application_id', '=', game.id)
      .execute()
  ).filter((row) => (JSON.parse(row.payload) as { user: { id: string } }).user.id === userId);

/** Where the external identity points: a bot token request answers 530010 naming the full account once merged. */
async function linkedTo(externalUserId: string): Promise<string | 'provisional'> {
  const response = await botToken(externalUserId);
  if (response.status === 200) return 'provisional';
  const refused = (await response.json()) as { code: number; user_id: string };
  expect(refused.code).toBe(530010);
  return refused.user_id;
}

const INVALID_REFRESH = { error: 'invalid_grant', error_description: 'Invalid "refresh_token" in request' };

describe.each(ENGINES)(
  'the account-link lifecycle on $engine (seed, States: account link; PROTOCOL.md §B.1–B.3)',
  ({ databaseUrl, available }) => {
    beforeAll(async () => {
      if (available) await start(databaseUrl);
    });
    afterAll(async () => {
      if (available) await hearth.close();
    });

    it.skipIf(!available)(
      'provisional play → merge → unmerge → ban → refused merge (530017) → refresh invalid_grant → APPLICATION_DEAUTHORIZED',
      async () => {
        // Other domains' data (lobby memberships, friends, DM history) is checked here by the participants that
        // move it: add their assertions at the marked steps.

        // 1. Provisional play: the game's server vouches for player-42; the SDK connects as a provisional user.
        const t1 = await provisionalToken('player-42', { preferred_global_name: 'Rook' });
        const provisional = await userOf(t1);
        expect(provisional).toMatchObject({ global_name: 'Rook', provisional: true });
        expect(await hearth.services.accounts.isProvisional(provisional.id)).toBe(true);
        const play = await sdkSession(t1);
        expect(play.user).toMatchObject({ id: provisional.id, provisional: true });
        expect(await linkedTo('player-42')).toBe('provisional');
        // It joins a lobby by secret, makes a game friend and a platform friend, and talks with the game
        // friend (a full account: their DMs are persisted, PROTOCOL.md §B.5).
        const rook = { id: provisional.id, bearer: `Bearer ${t1}` };
        const gameFriend = await lobbyPlayer(hearth, game);
        const platformFriend = await lobbyPlayer(hearth, game);
        const joined = await call<{ id: string }>(hearth, 'PUT', '/lobbies', rook.bearer, {
          secret: 'lifecycle',
        });
        expect(joined.status).toBe(200);
        const lobbyId = joined.body.id;
        expect(await social.lobbyMembers(hearth, `Bot ${game.botToken}`, lobbyId)).toEqual([provisional.id]);
        await social.befriend(hearth, 'game-relationships', rook, gameFriend);
        await social.befriend(hearth, 'relationships', rook, platformFriend);
        await social.sendDm(hearth, rook.bearer, gameFriend.id, 'gg');
        await social.sendDm(hearth, gameFriend.bearer, provisional.id, 'rematch?');
        expect(await social.relationshipsOf(hearth, rook.bearer, 'game-relationships')).toEqual([
          [gameFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, rook.bearer, 'relationships')).toEqual([
          [platformFriend.id, social.FRIEND],
        ]);
        const conversation = (me: string): Array<[string, string]> => [
          [gameFriend.id, 'rematch?'],
          [me, 'gg'],
        ];
        expect(await social.dmHistory(hearth, rook.bearer, gameFriend.id)).toEqual(
          conversation(provisional.id),
        );

        // 2. Merge into a full account through /oauth2/token.
        const player = await createPlayer(hearth);
        await hearth.services.accounts.modifyUser(player.user.id, { global_name: 'Full Name' });
        const merged = await merge(player.token, t1);
        expect(merged.status).toBe(200);
        const fullTokens = (await merged.json()) as Tokens;
        expect(fullTokens.refresh_token).toBeTypeOf('string');
        expect((await userOf(fullTokens.access_token)).id).toBe(player.user.id);
        expect((await userOf(fullTokens.access_token)).provisional).toBeUndefined();
        // The identity moved; the provisional account, its tokens and its SDK session are gone.
        expect(await linkedTo('player-42')).toBe(player.user.id);
        expect((await me(t1)).status).toBe(401);
        expect(await play.client.waitClose()).toMatchObject({ code: GatewayCloseCodes.AuthenticationFailed });
        expect(await hearth.services.accounts.getUser(provisional.id)).toBeUndefined();
        expect(await hearth.services.accounts.isProvisional(provisional.id)).toBe(false);
        expect(published).toContainEqual({
          type: 'USER_MERGE_OPERATION_COMPLETED',
          data: expect.objectContaining({ source_user_id: provisional.id }),
        });
        // A merge is not an unlink: no webhook for the player.
        expect(await deauthorizations(player.user.id)).toHaveLength(0);
        // The lobby membership, both friends and the DM history are the full account's now.
        const full = `Bearer ${fullTokens.access_token}`;
        expect(await social.lobbyMembers(hearth, `Bot ${game.botToken}`, lobbyId)).toEqual([player.user.id]);
        expect(await social.relationshipsOf(hearth, full, 'game-relationships')).toEqual([
          [gameFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, full, 'relationships')).toEqual([
          [platformFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, gameFriend.bearer, 'game-relationships')).toEqual([
          [player.user.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, platformFriend.bearer, 'relationships')).toEqual([
          [player.user.id, social.FRIEND],
        ]);
        expect(await social.dmHistory(hearth, full, gameFriend.id)).toEqual(conversation(player.user.id));
        expect(await social.dmHistory(hearth, gameFriend.bearer, player.user.id)).toEqual(
          conversation(player.user.id),
        );
        const gone = await call(hearth, 'GET', `/users/${provisional.id}/messages`, gameFriend.bearer);
        expect(gone).toMatchObject({ status: 404, body: { code: 10013 } });

        // 3. Unmerge (the game's server): a new provisional account with a new id; every token and session ends.
        const linked = await sdkSession(fullTokens.access_token);
        const unmerged = await hearth.api('/partner-sdk/provisional-accounts/unmerge/bot', {
          method: 'POST',
          auth: `Bot ${game.botToken}`,
          body: { external_user_id: 'player-42' },
        });
        expect(unmerged.status).toBe(204);
        expect(await linked.client.waitClose()).toEqual({
          code: GatewayCloseCodes.AuthenticationFailed,
          reason: 'Authorization revoked',
        });
        expect((await me(fullTokens.access_token)).status).toBe(401);
        expect(await (await refresh(fullTokens)).json()).toEqual(INVALID_REFRESH);
        expect(await deauthorizations(player.user.id)).toHaveLength(1);
        expect(await linkedTo('player-42')).toBe('provisional');
        const t2 = await provisionalToken('player-42');
        const reborn = await userOf(t2);
        expect(reborn.id).not.toBe(provisional.id);
        expect(reborn.id).not.toBe(player.user.id);
        // The global name goes with the identity to the new provisional account.
        expect(reborn).toMatchObject({ global_name: 'Full Name', provisional: true });
        // The lobby membership and the game friend follow the identity; so does the platform friend, who
        // plays the game. The DM history stays with the full account, which keeps its platform friends.
        const rebornBearer = `Bearer ${t2}`;
        expect(await social.lobbyMembers(hearth, `Bot ${game.botToken}`, lobbyId)).toEqual([reborn.id]);
        expect(await social.relationshipsOf(hearth, rebornBearer, 'game-relationships')).toEqual([
          [gameFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, gameFriend.bearer, 'game-relationships')).toEqual([
          [reborn.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, rebornBearer, 'relationships')).toEqual([
          [platformFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, player.token, 'relationships')).toEqual([
          [platformFriend.id, social.FRIEND],
        ]);
        expect(await social.dmHistory(hearth, rebornBearer, gameFriend.id)).toEqual([]);
        expect(await social.dmHistory(hearth, gameFriend.bearer, player.user.id)).toEqual(
          conversation(player.user.id),
        );

        // Link again, so that the ban finds a linked account.
        const relinked = await merge(player.token, t2);
        expect(relinked.status).toBe(200);
        const bannedTokens = (await relinked.json()) as Tokens;
        expect(await linkedTo('player-42')).toBe(player.user.id);
        // The game friend comes back; the platform friend both accounts had is one friendship, not two.
        const relinkedBearer = `Bearer ${bannedTokens.access_token}`;
        expect(await social.relationshipsOf(hearth, relinkedBearer, 'game-relationships')).toEqual([
          [gameFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, relinkedBearer, 'relationships')).toEqual([
          [platformFriend.id, social.FRIEND],
        ]);
        expect(await social.relationshipsOf(hearth, platformFriend.bearer, 'relationships')).toEqual([
          [player.user.id, social.FRIEND],
        ]);
        const beforeBan = (await deauthorizations(player.user.id)).length;
        // One identify per user per 5 s (PROTOCOL.md §D.3): this player identified at step 3.
        clock.advance(6_000);
        const bannedSession = await sdkSession(bannedTokens.access_token);

        // 4. Ban: the link becomes a restricted provisional account; every token is deleted at once.
        const ban = await admin('PUT', player.user.id, { reason: 'cheating' });
        expect(ban.status).toBe(200);
        expect(await ban.json()).toEqual({ user_id: player.user.id, expires_at: null });
        // Read now: once the clock jumps a year (step 5), the delivery worker may prune finished events.
        const afterBan = await deauthorizations(player.user.id);
        expect(await bannedSession.client.waitClose()).toMatchObject({
          code: GatewayCloseCodes.AuthenticationFailed,
        });
        expect((await me(bannedTokens.access_token)).status).toBe(401);
        expect((await hearth.api('/users/@me', { auth: player.token })).status).toBe(401);
        const t3 = await provisionalToken('player-42');
        const restricted = await userOf(t3);
        expect(restricted).toMatchObject({ provisional: true, global_name: 'Full Name' });
        expect(restricted.id).not.toBe(reborn.id);
        // The ban's split moves the in-game friend to the restricted account too.
        expect(await social.relationshipsOf(hearth, `Bearer ${t3}`, 'game-relationships')).toEqual([
          [gameFriend.id, social.FRIEND],
        ]);

        // 5. Merging the restricted account anywhere fails while the ban is in force (permanent: always).
        const someoneElse = await createPlayer(hearth);
        const refused = await merge(someoneElse.token, t3);
        expect(refused.status).toBe(400);
        expect(await refused.json()).toEqual({ code: 530017, message: 'Merge source user is banned' });
        clock.advance(365 * 24 * 60 * 60 * 1000);
        const t3b = await provisionalToken('player-42');
        // A year on, the earlier user session has expired (--session-lifetime-days): sign someone in anew.
        const aYearLater = await createPlayer(hearth);
        expect((await merge(aYearLater.token, t3b)).status).toBe(400);
        expect(await linkedTo('player-42')).toBe('provisional');

        // 6. The deleted token's refresh answers invalid_grant (seed, Authentication 4).
        const refreshed = await refresh(bannedTokens);
        expect(refreshed.status).toBe(400);
        expect(await refreshed.json()).toEqual(INVALID_REFRESH);

        // 7. APPLICATION_DEAUTHORIZED: recorded for the webhook and published on the bus, with the user.
        expect(afterBan.length - beforeBan).toBe(1);
        expect(JSON.parse(afterBan.at(-1)!.payload)).toMatchObject({ user: { id: player.user.id } });
        expect(
          published.filter(
            (e) =>
              e.type === 'APPLICATION_DEAUTHORIZED' &&
              e.data['application_id'] === game.id &&
              (e.data['user'] as { id: string }).id === player.user.id,
          ),
        ).toHaveLength(2);
      },
    );
  },
);
