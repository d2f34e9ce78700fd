import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { lobbyGame, lobbyPlayer } from '../../../test-support/lobbies.js';
import type { TestGame } from '../../../test-support/oauth.js';

/**
 * Bad input never crashes and never answers 500 (house rule): every route of the social layer, lobbies,
 * provisional accounts, webhooks and entitlements, called with malformed bodies, ids and credentials,
 * answers a 4xx with the platform's error body (or the RFC 6749 body on the token endpoints).
 */

const ID = '1234567890123456789';
const ROUTES: ReadonlyArray<readonly [method: string, path: string]> = [
  ['POST', '/lobbies'],
  ['PUT', '/lobbies'],
  ['GET', '/lobbies/:lobby'],
  ['PATCH', '/lobbies/:lobby'],
  ['PUT', '/lobbies/:lobby/members/:user'],
  ['POST', '/lobbies/:lobby/members/bulk'],
  ['POST', '/lobbies/:lobby/messages'],
  ['GET', '/lobbies/:lobby/messages?limit=:limit'],
  ['PATCH', '/lobbies/:lobby/messages/:message'],
  ['PUT', '/lobbies/:lobby/messages/:message/moderation-metadata'],
  ['GET', '/users/@me/relationships'],
  ['POST', '/users/@me/relationships'],
  ['PUT', '/users/@me/relationships/:user'],
  ['GET', '/users/@me/game-relationships'],
  ['POST', '/users/@me/game-relationships'],
  ['PUT', '/users/@me/game-relationships/:user'],
  ['POST', '/users/:user/messages'],
  ['GET', '/users/:user/messages?limit=:limit'],
  ['PATCH', '/users/:user/messages/:dm'],
  ['POST', '/users/:user/messages/:dm/activity-invite/accept'],
  ['GET', '/users/@me/message-summaries'],
  ['PUT', '/partner-sdk/dms/:me/:user/messages/:dm/moderation-metadata'],
  ['POST', '/partner-sdk/token/bot'],
  ['POST', '/partner-sdk/token'],
  ['POST', '/partner-sdk/provisional-accounts/unmerge'],
  ['POST', '/partner-sdk/provisional-accounts/unmerge/bot'],
  ['PATCH', '/users/@me/account'],
  ['GET', '/applications/:app/identity-providers'],
  ['POST', '/applications/@me/identity-providers'],
  ['PATCH', '/applications/@me/identity-providers/:user'],
  ['PUT', '/admin/users/:user/ban'],
  ['PATCH', '/applications/@me'],
  ['GET', '/applications/:app/skus'],
  ['GET', '/applications/:app/entitlements?sku_ids=:user&limit=:limit'],
  ['POST', '/applications/:app/entitlements'],
  ['GET', '/applications/:app/entitlements/:user'],
  ['POST', '/applications/:app/entitlements/:user/consume'],
  ['GET', '/users/@me/applications/:app/entitlements'],
  ['GET', '/skus/:user/subscriptions?user_id=:me'],
  // Deletes last: they end what the others use.
  ['DELETE', '/lobbies/:lobby/messages/:message'],
  ['DELETE', '/users/:user/messages/:dm'],
  ['DELETE', '/users/@me/relationships/:user'],
  ['DELETE', '/users/@me/game-relationships/:user'],
  ['DELETE', '/applications/@me/identity-providers/:user'],
  ['DELETE', '/applications/:app/entitlements/:user'],
  ['DELETE', '/lobbies/:lobby/members/@me'],
  ['DELETE', '/lobbies/:lobby/members/:user'],
  ['DELETE', '/lobbies/:lobby'],
];

/** Wrong ids, each put in every position of a path: unknown, garbage, an overflow, a negative number. */
const BAD_IDS = [ID, 'abc', '99999999999999999999999', '-1'];
/** Bodies: none, JSON of every wrong shape, deep nesting, long strings, and text that is not JSON. */
const BODIES: ReadonlyArray<{ body?: unknown; type?: string }> = [
  {},
  { body: 'null', type: 'application/json' },
  { body: [] },
  { body: [{ id: {} }] },
  { body: '"text"', type: 'application/json' },
  { body: '12', type: 'application/json' },
  { body: { content: 5, secret: [], metadata: 'x', members: {}, type: 'x', limit: -1, id: null } },
  {
    body: {
      content: 'x'.repeat(5000),
      secret: { a: 1 },
      metadata: { k: { nested: true } },
      global_name: 'y'.repeat(100),
      external_user_id: 7,
      event_webhooks_url: 'not a url',
      activity: { type: 'join' },
    },
  },
  { body: JSON.parse(`${'{"a":'.repeat(64)}1${'}'.repeat(64)}`) },
  { body: '{"content":', type: 'application/json' },
  { body: 'content=hi&content=again&secret=a', type: 'application/x-www-form-urlencoded' },
  { body: '--x\r\nbroken', type: 'multipart/form-data; boundary=x' },
];

describe('no 500s: malformed requests to every new route get a 4xx and an error body', () => {
  let hearth: TestHearth;
  let game: TestGame & { bot: string };
  let credentials: string[];
  /** Real ids of things the player may touch: the same routes with these reach the rules, not the 404s. */
  let real: Record<string, string>;

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
    game = await lobbyGame(hearth);
    const player = await lobbyPlayer(hearth, game);
    const friend = await lobbyPlayer(hearth, game);
    credentials = [game.bot, player.bearer, 'Bearer not-a-token', 'Admin nope'];
    const ok = async (path: string, auth: string, body: unknown) => {
      const response = await hearth.api(path, { method: 'POST', auth, body });
      expect(response.status, `${path}: ${await response.clone().text()}`).toBeLessThan(300);
      return (await response.json()) as { id: string };
    };
    const lobby = await hearth.api('/lobbies', {
      method: 'PUT',
      auth: player.bearer,
      body: { secret: 'fz' },
    });
    const lobbyId = ((await lobby.json()) as { id: string }).id;
    await hearth.api(`/lobbies/${lobbyId}/members/${friend.id}`, { method: 'PUT', auth: game.bot, body: {} });
    const message = await ok(`/lobbies/${lobbyId}/messages`, player.bearer, { content: 'hi' });
    await hearth.api(`/users/@me/game-relationships/${friend.id}`, {
      method: 'PUT',
      auth: player.bearer,
      body: {},
    });
    await hearth.api(`/users/@me/game-relationships/${player.id}`, {
      method: 'PUT',
      auth: friend.bearer,
      body: {},
    });
    const dm = await hearth.api(`/users/${friend.id}/messages`, {
      method: 'POST',
      auth: player.bearer,
      body: { content: 'hello' },
    });
    real = {
      lobby: lobbyId,
      message: message.id,
      user: friend.id,
      me: player.id,
      app: game.id,
      dm: dm.status < 300 ? ((await dm.json()) as { id: string }).id : ID,
      limit: '10',
    };
  });
  afterAll(() => hearth.close());

  it.each(ROUTES)('%s %s', async (method, template) => {
    const failures: string[] = [];
    const paths = [
      template.replace(/:(\w+)/g, (_, name: string) => real[name] ?? ID),
      ...BAD_IDS.map((id) => template.replace(/:(\w+)/g, id)),
    ];
    for (const path of paths) {
      for (const auth of [...credentials, undefined]) {
        for (const { body, type } of method === 'GET' || method === 'DELETE' ? [{}] : BODIES) {
          const response = await hearth.api(path, {
            method,
            ...(auth ? { auth } : {}),
            ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
            headers: { 'content-type': type ?? 'application/json' },
          });
          const text = await response.text();
          const parsed = text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
          const wellFormed =
            response.status === 204 ||
            (parsed !== undefined &&
              (typeof parsed['code'] === 'number' ||
                typeof parsed['error'] === 'string' ||
                response.status < 300));
          if (response.status >= 500 || !wellFormed) {
            failures.push(
              `${response.status} ${method} ${path} auth=${auth?.slice(0, 6)} body=${String(body)?.slice(0, 40)}: ${text.slice(0, 200)}`,
            );
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('the server still serves after all of it', async () => {
    const response = await hearth.api('/gateway');
    expect(response.status).toBe(200);
  });
});
