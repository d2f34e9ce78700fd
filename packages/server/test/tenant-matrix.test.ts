import {
  CLIENT_CREDENTIALS_SCOPES,
  DEFAULT_COMMUNICATION_SCOPES,
  expandScopes,
  isScope,
  type Scope,
} from '@hearth/protocol';
import { ManualClock, type RegisteredRoute } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayer } from '../../../test-support/lobbies.js';
import { createPlayer, grantTokens, type TestGame, tokenRequest } from '../../../test-support/oauth.js';

/**
 * Tenant boundaries (issue 21). A lobby member is a player of that application (it authorized it, or is a
 * provisional account of it); strangers and other applications' bot users are refused. A client_credentials
 * token carries only what that grant allows (the owner's identity and the application's management), never
 * a player's social actions. The matrix runs every route the server registered against every kind of
 * credential and compares with who may call it, read from each route's own `auth` config.
 */

const T0 = Date.parse('2026-02-01T00:00:00Z');
const clock = new ManualClock(T0);
const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
const MISSING_SCOPE = { code: 50026, message: 'Missing required OAuth2 scope' };

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
});
afterAll(() => hearth.close());

const shape = ({ status, body }: { status: number; body: unknown }) => ({ status, body });

async function clientCredentials(game: TestGame, scope: string): Promise<Response> {
  return tokenRequest(hearth, {
    grant_type: 'client_credentials',
    scope,
    client_id: game.id,
    client_secret: game.clientSecret,
  });
}

describe('lobby members are players of the lobby’s application', () => {
  it('a user who never authorized the application is refused on create, modify and add (50001), dropped by bulk', async () => {
    const game = await lobbyGame(hearth);
    const player = await lobbyPlayer(hearth, game);
    const stranger = await createPlayer(hearth);
    const strangerId = stranger.user.id;
    expect(
      shape(await call(hearth, 'POST', '/lobbies', game.bot, { members: [{ id: strangerId }] })),
    ).toEqual({ status: 403, body: MISSING_ACCESS });
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: player.id }],
    });
    expect(lobby.status).toBe(201);
    const path = `/lobbies/${lobby.body.id}`;
    expect(shape(await call(hearth, 'PUT', `${path}/members/${strangerId}`, game.bot))).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(
      shape(
        await call(hearth, 'PATCH', path, game.bot, { members: [{ id: player.id }, { id: strangerId }] }),
      ),
    ).toEqual({ status: 403, body: MISSING_ACCESS });
    const bulk = await call<{ id: string }[]>(hearth, 'POST', `${path}/members/bulk`, game.bot, [
      { id: strangerId },
      { id: player.id, additional_name: 'kept' },
    ]);
    expect(bulk.status).toBe(200);
    expect(bulk.body.map((m) => m.id)).toEqual([player.id]);
    const got = await call<{ members: { id: string }[] }>(hearth, 'GET', path, game.bot);
    expect(got.body.members.map((m) => m.id)).toEqual([player.id]);
  });

  it("another application's bot user, and a player of another application only, are refused", async () => {
    const game = await lobbyGame(hearth);
    const other = await lobbyGame(hearth);
    const otherPlayer = await lobbyPlayer(hearth, other);
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot);
    for (const id of [other.botUserId, game.botUserId, otherPlayer.id]) {
      expect(shape(await call(hearth, 'PUT', `/lobbies/${lobby.body.id}/members/${id}`, game.bot))).toEqual({
        status: 403,
        body: MISSING_ACCESS,
      });
    }
    // Once the player authorizes this game too, the same call admits them.
    await lobbyPlayer(hearth, game, otherPlayer.account);
    expect(
      (await call(hearth, 'PUT', `/lobbies/${lobby.body.id}/members/${otherPlayer.id}`, game.bot)).status,
    ).toBe(200);
  });
});

describe('a client_credentials token is the owner, never a player', () => {
  it.each([
    'sdk.social_layer',
    'lobbies.write',
    'relationships.write',
    'gateway.connect',
    'identify lobbies.write',
  ])('the grant refuses scope "%s" with invalid_scope', async (scope) => {
    const game = await lobbyGame(hearth);
    const response = await clientCredentials(game, scope);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_scope' });
  });

  it('joins no lobby by secret and sends no friend request, even with a token issued with social scopes', async () => {
    const game = await lobbyGame(hearth);
    const granted = await clientCredentials(game, 'identify');
    expect(granted.status).toBe(200);
    const { access_token } = (await granted.json()) as { access_token: string };
    const bearer = `Bearer ${access_token}`;
    const me = await call<{ id: string }>(hearth, 'GET', '/users/@me', bearer);
    expect(me.body.id).toBe(game.ownerId);
    // A token row as an older server issued it: the same grant, with the social layer's scopes.
    await hearth.storage.db
      .updateTable('oauth_tokens')
      .set({ scopes: `identify ${DEFAULT_COMMUNICATION_SCOPES}` })
      .where('application_id', '=', game.id)
      .where('client_credentials', '=', 1)
      .execute();
    const target = await lobbyPlayer(hearth, game);
    expect(shape(await call(hearth, 'PUT', '/lobbies', bearer, { secret: 'owner-joins' }))).toEqual({
      status: 403,
      body: MISSING_SCOPE,
    });
    const friend = await call(hearth, 'POST', '/users/@me/relationships', bearer, {
      username: (await call<{ username: string }>(hearth, 'GET', '/users/@me', target.bearer)).body.username,
    });
    expect(friend.status).toBe(403);
    expect((await call(hearth, 'GET', '/users/@me', bearer)).status).toBe(200);
    // Nor is the owner a player of the game because of it.
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot);
    expect(
      shape(await call(hearth, 'PUT', `/lobbies/${lobby.body.id}/members/${game.ownerId}`, game.bot)),
    ).toEqual({ status: 403, body: MISSING_ACCESS });
  });
});

// ---- The matrix ----

type Credential =
  | { name: string; kind: 'none' }
  | { name: string; kind: 'bot' | 'user' | 'dead'; header: string }
  | { name: string; kind: 'bearer'; header: string; scopes: ReadonlySet<Scope> };

const ID = '1000000000000000001';

/** Who may call, from the route's `auth` config alone (http/auth.ts `assertAdmitted`). */
function admits(auth: NonNullable<RegisteredRoute['auth']>, credential: Credential): boolean {
  switch (credential.kind) {
    case 'none':
    case 'dead':
      return false;
    case 'bot':
      return auth.bot === true;
    case 'user':
      return auth.user === true;
    case 'bearer':
      return auth.bearer?.every((scope) => credential.scopes.has(scope)) === true;
  }
}

/**
 * Routes whose rule is finer than their `auth` config (the service decides from the body or the caller),
 * with the rule for the request the matrix sends (an empty body).
 */
const REFINED: Readonly<
  Record<string, (auth: NonNullable<RegisteredRoute['auth']>, c: Credential) => boolean>
> = {
  // Bots cannot create guilds (the platform's rule); the route shares its guild-member config.
  'POST /api/v10/guilds': (auth, c) => c.kind !== 'bot' && admits(auth, c),
  // A plain message needs dm_channels.messages.write; an invite, activities.invites.write (by its body).
  'POST /api/v10/users/:user_id/messages': (_auth, c) =>
    c.kind === 'bearer' &&
    (c.scopes.has('dm_channels.messages.write') || c.scopes.has('activities.invites.write')),
};

/** An answer of the admission check itself rather than of the route. */
function refusedAtTheDoor(status: number, body: unknown): boolean {
  const code = (body as { code?: unknown } | null)?.code;
  return status === 401 || (status === 403 && (code === 20001 || code === 20002 || code === 50026));
}

describe('every route × every kind of credential (the table is each route’s auth config)', () => {
  it('admits exactly the credentials its auth config names, and refuses the others at the door', async () => {
    const game = await lobbyGame(hearth);
    const other = await lobbyGame(hearth);
    const routes = hearth.routes.filter(
      (route) => route.url.startsWith('/api/v10/') && route.auth !== undefined,
    );
    const required = new Set<string>(routes.flatMap((route) => route.auth?.bearer ?? []));

    // Expired first: the clock then moves past its 7 days, and every other credential is made after.
    const doomed = await lobbyPlayer(hearth, game);
    clock.advance(7 * 24 * 60 * 60 * 1000 + 1000);
    const owner = await createPlayer(hearth);
    const revoked = await lobbyPlayer(hearth, game);
    expect((await revoked.revoke()).status).toBe(200);
    const credentials: Credential[] = [
      { name: 'no credential', kind: 'none' },
      { name: 'user session', kind: 'user', header: owner.token },
      { name: 'bot', kind: 'bot', header: game.bot },
      { name: 'expired bearer', kind: 'dead', header: doomed.bearer },
      { name: 'revoked bearer', kind: 'dead', header: revoked.bearer },
      { name: 'unknown bot token', kind: 'dead', header: `Bot ${game.botToken}x` },
    ];
    const social = await lobbyPlayer(hearth, game);
    credentials.push({
      name: `bearer ${DEFAULT_COMMUNICATION_SCOPES}`,
      kind: 'bearer',
      header: social.bearer,
      scopes: expandScopes(DEFAULT_COMMUNICATION_SCOPES.split(' ').filter(isScope)),
    });
    const otherPlayer = await lobbyPlayer(hearth, other);
    credentials.push({
      name: "another application's bearer",
      kind: 'bearer',
      header: otherPlayer.bearer,
      scopes: expandScopes(DEFAULT_COMMUNICATION_SCOPES.split(' ').filter(isScope)),
    });
    const skipped: string[] = [];
    for (const scope of [...required].filter(isScope)) {
      try {
        const tokens = await grantTokens(hearth, game, owner.token, scope);
        credentials.push({
          name: `bearer ${scope}`,
          kind: 'bearer',
          header: `Bearer ${tokens.access_token}`,
          scopes: expandScopes([scope]),
        });
      } catch {
        skipped.push(scope);
      }
    }
    const ownerScopes = CLIENT_CREDENTIALS_SCOPES.filter(
      (scope) => required.has(scope) || scope === 'identify',
    );
    const granted = await clientCredentials(
      game,
      ownerScopes.filter((s) => s !== 'identify.premium').join(' '),
    );
    expect(granted.status).toBe(200);
    const cc = (await granted.json()) as { access_token: string; scope: string };
    credentials.push({
      name: 'client credentials',
      kind: 'bearer',
      header: `Bearer ${cc.access_token}`,
      scopes: expandScopes(cc.scope.split(' ').filter(isScope)),
    });

    const mismatches: string[] = [];
    let requests = 0;
    for (const route of routes) {
      const path = route.url.replace('/api/v10', '').replace(/:[a-z_]+/g, ID);
      for (const method of [route.method].filter((m) => m !== 'HEAD')) {
        for (const credential of credentials) {
          // Logout ends the session it is called with: give it one of its own.
          const header =
            credential.kind === 'user' && path === '/auth/logout'
              ? (await createPlayer(hearth)).token
              : 'header' in credential
                ? credential.header
                : undefined;
          const body = ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined;
          let answer = await call(hearth, method, path, header, body);
          // A route's own tight bucket (sign-in, password) is spent before admission: wait it out.
          if (answer.status === 429) {
            clock.advance(Math.ceil(Number((answer.body as { retry_after: number }).retry_after) + 1) * 1000);
            answer = await call(hearth, method, path, header, body);
          }
          requests++;
          expect(answer.status, `${method} ${path} as ${credential.name}`).toBeLessThan(500);
          const refine = REFINED[`${method} ${route.url}`];
          const expected = refine ? refine(route.auth!, credential) : admits(route.auth!, credential);
          const refused = refusedAtTheDoor(answer.status, answer.body);
          if (expected === refused) {
            mismatches.push(
              `${method} ${route.url} as ${credential.name}: expected ${expected ? 'admitted' : 'refused'}, got ${answer.status} ${JSON.stringify(answer.body)}`,
            );
          }
        }
      }
    }
    console.log(
      `tenant matrix: ${routes.length} routes × ${credentials.length} credentials, ${requests} requests, ` +
        `${mismatches.length} mismatches; scopes without a grantable token: ${skipped.join(', ') || 'none'}`,
    );
    expect(mismatches).toEqual([]);
  }, 600_000);
});
