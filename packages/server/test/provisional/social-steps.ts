import { expect } from 'vitest';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { call } from '../../../../test-support/lobbies.js';
import { authorizationCode, type TestGame, tokenRequest } from '../../../../test-support/oauth.js';

/**
 * What a merge or an unmerge moved, observed the way players and the game's backend see it: lobby
 * members, relationships, DM history (PROTOCOL.md §A, §B.5, §B.6).
 */

export const FRIEND = 1;
export const BLOCKED = 2;

export type RelationshipKind = 'relationships' | 'game-relationships';

/** The lobby's members, as the game's backend (`Bot <token>`) sees them. */
export async function lobbyMembers(hearth: TestHearth, bot: string, lobbyId: string): Promise<string[]> {
  const lobby = await call<{ members: Array<{ id: string }> }>(hearth, 'GET', `/lobbies/${lobbyId}`, bot);
  expect(lobby.status).toBe(200);
  return lobby.body.members.map((member) => member.id);
}

/** `[other user, type]` of each relationship or game relationship of the caller, by user id. */
export async function relationshipsOf(
  hearth: TestHearth,
  auth: string,
  kind: RelationshipKind,
): Promise<Array<[string, number]>> {
  const listed = await call<Array<{ id: string; type: number }>>(hearth, 'GET', `/users/@me/${kind}`, auth);
  expect(listed.status).toBe(200);
  return byUser(...listed.body.map((row): [string, number] => [row.id, row.type]));
}

/** `a` asks, `b` accepts: a friendship (`relationships`) or a game friendship. */
export async function befriend(
  hearth: TestHearth,
  kind: RelationshipKind,
  a: { id: string; bearer: string },
  b: { id: string; bearer: string },
): Promise<void> {
  expect((await call(hearth, 'PUT', `/users/@me/${kind}/${b.id}`, a.bearer, {})).status).toBe(204);
  expect((await call(hearth, 'PUT', `/users/@me/${kind}/${a.id}`, b.bearer, {})).status).toBe(204);
}

/** `[author, content]` of the caller's DM history with `otherId`, newest first. */
export async function dmHistory(
  hearth: TestHearth,
  auth: string,
  otherId: string,
  limit = 50,
): Promise<Array<[string, string]>> {
  const listed = await call<Array<{ author: { id: string }; content: string }>>(
    hearth,
    'GET',
    `/users/${otherId}/messages?limit=${limit}`,
    auth,
  );
  expect(listed.status).toBe(200);
  return listed.body.map((message) => [message.author.id, message.content]);
}

export async function sendDm(hearth: TestHearth, auth: string, recipientId: string, content: string) {
  const sent = await call(hearth, 'POST', `/users/${recipientId}/messages`, auth, { content });
  expect(sent.status).toBe(200);
}

/** `[user, type]` pairs in the order `relationshipsOf` answers them (by user id). */
export function byUser(...rows: Array<[string, number]>): Array<[string, number]> {
  return rows.sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1));
}

/**
 * A merge (PROTOCOL.md §B.3): the player consents with the session token of the full account, and the
 * game exchanges the code together with the provisional account's access token.
 */
export async function merge(
  hearth: TestHearth,
  game: TestGame,
  playerToken: string,
  provisionalAccessToken: string,
): Promise<Response> {
  const code = await authorizationCode(hearth, game, playerToken, { scope: 'openid sdk.social_layer' });
  return tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: 'http://127.0.0.1/callback',
    client_id: game.id,
    client_secret: game.clientSecret,
    external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
    external_auth_token: provisionalAccessToken,
  });
}
