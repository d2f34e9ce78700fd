import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  authorizationCode,
  consent,
  consentLocation,
  createGame,
  createPlayer,
  grantTokens,
  type TestGame,
  type Tokens,
  tokenRequest,
} from '../../../../test-support/oauth.js';

const REDIRECT = 'http://127.0.0.1/callback';
const clock = new ManualClock('2026-11-22T12:00:00Z');
let hearth: TestHearth;
let game: TestGame;
let other: TestGame;
let player: { token: string; user: { id: string } };

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  game = await createGame(hearth);
  other = await createGame(hearth);
  player = await createPlayer(hearth);
});
afterAll(() => hearth.close());

const invalidCode = { error: 'invalid_grant', error_description: 'Invalid "code" in request.' };
const invalidRefresh = { error: 'invalid_grant', error_description: 'Invalid "refresh_token" in request' };

async function expectOAuthError(response: Response, status: number, body: unknown): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(await response.json()).toEqual(body);
}

function exchange(
  code: string,
  extra: Record<string, string> = {},
  client: TestGame = game,
): Promise<Response> {
  return tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    client_id: client.id,
    client_secret: client.clientSecret,
    ...extra,
  });
}

const me = (accessToken: string) => hearth.api('/users/@me', { auth: `Bearer ${accessToken}` });

describe('RFC 6749 §4.1.2 authorization response', () => {
  it('redirects with a code and the state echoed byte for byte', async () => {
    const state = 'a b+c/d?e=f&g#h%20é';
    const location = await consentLocation(hearth, player.token, {
      client_id: game.id,
      response_type: 'code',
      scope: 'identify',
      redirect_uri: REDIRECT,
      state,
    });
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(location.searchParams.get('state')).toBe(state);
  });

  it('uses the first registered redirect URI when none is given', async () => {
    const location = await consentLocation(hearth, player.token, {
      client_id: game.id,
      response_type: 'code',
      scope: 'identify',
    });
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  });

  it('§4.1.2.1 the refusal of the player is access_denied with the state', async () => {
    const location = await consentLocation(
      hearth,
      player.token,
      { client_id: game.id, response_type: 'code', scope: 'identify', redirect_uri: REDIRECT, state: 's1' },
      false,
    );
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description: 'The resource owner or authorization server denied the request',
      state: 's1',
    });
  });

  it.each([
    ['an unsupported response_type', { response_type: 'token' }, 'unsupported_response_type'],
    ['an unknown scope', { scope: 'identify nonsense' }, 'invalid_scope'],
    ['an empty scope', { scope: '' }, 'invalid_scope'],
    ['a scope that needs approval', { scope: 'identify identify.premium' }, 'invalid_scope'],
    ['a client-credentials-only scope', { scope: 'applications.commands.update' }, 'invalid_scope'],
    ['a bad prompt', { prompt: 'login' }, 'invalid_request'],
    ['a bad integration_type', { integration_type: '7' }, 'invalid_request'],
  ])('§4.1.2.1 %s is redirected back as %s with the state', async (_, params, error) => {
    const location = await consentLocation(hearth, player.token, {
      client_id: game.id,
      response_type: 'code',
      scope: 'identify',
      redirect_uri: REDIRECT,
      state: 'kept',
      ...params,
    });
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('state')).toBe('kept');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('§4.1.2.1 an unknown client is never redirected', async () => {
    const response = await consent(hearth, player.token, {
      client_id: '123456789012345678',
      response_type: 'code',
      scope: 'identify',
      redirect_uri: REDIRECT,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        client_id: { _errors: [{ code: 'OAUTH2_INVALID_REQUEST', message: 'Unknown application' }] },
      },
    });
  });

  it('§10.6 a redirect URI that is not registered is never redirected to (open redirect)', async () => {
    for (const redirect of [
      'https://evil.example/callback',
      'http://127.0.0.1/callback/../evil',
      `${REDIRECT}/`,
    ]) {
      const response = await consent(hearth, player.token, {
        client_id: game.id,
        response_type: 'code',
        scope: 'identify',
        redirect_uri: redirect,
      });
      expect(response.status, redirect).toBe(400);
      const body = (await response.json()) as { code: number; errors: Record<string, unknown> };
      expect(body.code).toBe(50035);
      expect(Object.keys(body.errors)).toEqual(['redirect_uri']);
    }
  });

  it('asks for a session token: bots and missing tokens are refused', async () => {
    const params = { client_id: game.id, response_type: 'code', scope: 'identify' };
    expect((await consent(hearth, `Bot ${game.botToken}`, params)).status).toBe(403);
    const response = await hearth.api(`/oauth2/authorize?${new URLSearchParams(params)}`, {
      method: 'POST',
      body: { authorize: true },
    });
    expect(response.status).toBe(401);
  });
});

describe('RFC 6749 §4.1.3 access token request', () => {
  it('§5.1 answers the token response with no-store', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    const response = await exchange(code);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    const body = (await response.json()) as Tokens;
    expect(Object.keys(body).sort()).toEqual([
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 604800, scope: 'identify' });
    const user = (await (await me(body.access_token)).json()) as { id: string };
    expect(user.id).toBe(player.user.id);
  });

  it('§4.1.2 a code is single use, and its replay revokes the tokens it issued', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    const tokens = (await (await exchange(code)).json()) as Tokens;
    expect((await me(tokens.access_token)).status).toBe(200);
    await expectOAuthError(await exchange(code), 400, invalidCode);
    expect((await me(tokens.access_token)).status).toBe(401);
    await expectOAuthError(
      await tokenRequest(hearth, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: game.id,
        client_secret: game.clientSecret,
      }),
      400,
      invalidRefresh,
    );
  });

  it('§4.1.2 a replayed code also revokes the tokens refreshed from the ones it issued', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    const first = (await (await exchange(code)).json()) as Tokens;
    const refreshed = await tokenRequest(hearth, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token!,
      client_id: game.id,
      client_secret: game.clientSecret,
    });
    expect(refreshed.status).toBe(200);
    const second = (await refreshed.json()) as Tokens;
    expect((await me(second.access_token)).status).toBe(200);
    await expectOAuthError(await exchange(code), 400, invalidCode);
    expect((await me(second.access_token)).status).toBe(401);
  });

  it('§4.1.2 a code expires after 10 minutes', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    clock.advance(10 * 60 * 1000);
    await expectOAuthError(await exchange(code), 400, invalidCode);
    const fresh = await authorizationCode(hearth, game, player.token);
    clock.advance(10 * 60 * 1000 - 1);
    expect((await exchange(fresh)).status).toBe(200);
  });

  it('§4.1.3 a code issued to another client is refused', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    await expectOAuthError(await exchange(code, {}, other), 400, invalidCode);
    // The failed attempt did not spend it for its rightful client.
    expect((await exchange(code)).status).toBe(200);
  });

  it('§4.1.3 redirect_uri must be the one of the authorization request (swap)', async () => {
    const code = await authorizationCode(hearth, game, player.token, {
      redirect_uri: 'http://127.0.0.1:5555/callback',
    });
    await expectOAuthError(
      await exchange(code, { redirect_uri: 'http://127.0.0.1:6666/callback' }),
      400,
      invalidCode,
    );
    await expectOAuthError(await exchange(code, { redirect_uri: REDIRECT }), 400, invalidCode);
    expect((await exchange(code, { redirect_uri: 'http://127.0.0.1:5555/callback' })).status).toBe(200);
  });

  it('exchanges made at once each get their own answer: a refused one fails none of the others', async () => {
    const twice = await authorizationCode(hearth, game, player.token);
    const fresh = await authorizationCode(hearth, game, player.token);
    // A code whose grant was ended (revocation deauthorizes) before it was exchanged.
    const leaver = await createPlayer(hearth);
    const orphan = await authorizationCode(hearth, game, leaver.token);
    const left = (await (
      await exchange(await authorizationCode(hearth, game, leaver.token))
    ).json()) as Tokens;
    const revoked = await tokenRequest(
      hearth,
      { token: left.access_token, client_id: game.id, client_secret: game.clientSecret },
      { path: '/oauth2/token/revoke' },
    );
    expect(revoked.status).toBe(200);

    const [first, second, third, fourth] = await Promise.all([
      exchange(twice),
      exchange(twice),
      exchange(fresh),
      exchange(orphan),
    ]);
    // One of the two spends the code; the other is refused (whether it also revokes depends on the order).
    expect([first!.status, second!.status].sort()).toEqual([200, 400]);
    await expectOAuthError([first!, second!].find((r) => r.status === 400)!, 400, invalidCode);
    expect(third!.status).toBe(200);
    const tokens = (await third!.json()) as Tokens;
    expect((await me(tokens.access_token)).status).toBe(200);
    await expectOAuthError(fourth!, 400, invalidCode);
  });

  it('refuses a code that does not exist', async () => {
    await expectOAuthError(await exchange('not-a-real-code'), 400, invalidCode);
  });

  it('§5.2 a missing code is invalid_request', async () => {
    await expectOAuthError(
      await tokenRequest(hearth, {
        grant_type: 'authorization_code',
        client_id: game.id,
        client_secret: game.clientSecret,
      }),
      400,
      { error: 'invalid_request', error_description: 'Missing "code" in request.' },
    );
  });
});

describe('RFC 6749 §2.3 client authentication', () => {
  it('accepts HTTP Basic', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    const response = await tokenRequest(
      hearth,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      { basic: [game.id, game.clientSecret] },
    );
    expect(response.status).toBe(200);
  });

  it('§5.2 a wrong secret is 401 invalid_client with WWW-Authenticate', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    const response = await exchange(code, { client_secret: 'wrong' });
    expect(response.headers.get('www-authenticate')).toBe('Basic realm="hearth"');
    await expectOAuthError(response, 401, { error: 'invalid_client' });
    const basic = await tokenRequest(
      hearth,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      { basic: [game.id, 'wrong'] },
    );
    await expectOAuthError(basic, 401, { error: 'invalid_client' });
  });

  it('§2.3 two authentication methods at once are refused', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    const response = await tokenRequest(
      hearth,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_secret: game.clientSecret },
      { basic: [game.id, game.clientSecret] },
    );
    await expectOAuthError(response, 400, {
      error: 'invalid_request',
      error_description: 'Use one client authentication method',
    });
  });

  it('a confidential client without its secret is invalid_client', async () => {
    const code = await authorizationCode(hearth, game, player.token);
    await expectOAuthError(
      await tokenRequest(hearth, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: game.id,
      }),
      401,
      { error: 'invalid_client' },
    );
  });

  it.each([
    ['an unknown client id', { client_id: '99999', client_secret: 'x' }],
    ['a non-numeric client id', { client_id: 'abc', client_secret: 'x' }],
    ['no client at all', {}],
  ])('%s is invalid_client', async (_, client) => {
    await expectOAuthError(
      await tokenRequest(hearth, { grant_type: 'authorization_code', code: 'x', ...client }),
      401,
      {
        error: 'invalid_client',
      },
    );
  });
});

describe('RFC 6749 §3.2 token endpoint requests', () => {
  it('refuses JSON bodies with unsupported_grant_type, as the platform does', async () => {
    const response = await hearth.api('/oauth2/token', {
      method: 'POST',
      body: { grant_type: 'client_credentials', client_id: game.id, client_secret: game.clientSecret },
    });
    await expectOAuthError(response, 400, { error: 'unsupported_grant_type' });
    const broken = await hearth.api('/oauth2/token', {
      method: 'POST',
      body: '{"grant_type":',
      headers: { 'content-type': 'application/json' },
    });
    await expectOAuthError(broken, 400, { error: 'unsupported_grant_type' });
  });

  it('§5.2 an unknown grant type is unsupported_grant_type', async () => {
    await expectOAuthError(
      await tokenRequest(hearth, {
        grant_type: 'password',
        client_id: game.id,
        client_secret: game.clientSecret,
      }),
      400,
      { error: 'unsupported_grant_type' },
    );
  });

  it('§3.1 a repeated parameter is invalid_request', async () => {
    const response = await hearth.api('/oauth2/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&scope=identify&scope=email&client_id=${game.id}&client_secret=${game.clientSecret}`,
    });
    await expectOAuthError(response, 400, {
      error: 'invalid_request',
      error_description: '"scope" must be given once, as a string',
    });
  });

  it('serves the same endpoint on /api/v9 and the legacy /api alias', async () => {
    for (const version of ['v9', '']) {
      const response = await hearth.api('/oauth2/token', {
        method: 'POST',
        version,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: 'identify',
          client_id: game.id,
          client_secret: game.clientSecret,
        }).toString(),
      });
      expect(response.status).toBe(200);
    }
  });
});

describe('RFC 6749 §6 refreshing an access token', () => {
  const refresh = (refreshToken: string, extra: Record<string, string> = {}, client: TestGame = game) =>
    tokenRequest(hearth, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.id,
      client_secret: client.clientSecret,
      ...extra,
    });

  it('rotates: a new pair, and the old access token keeps working until it expires', async () => {
    const first = await grantTokens(hearth, game, player.token);
    const response = await refresh(first.refresh_token!);
    expect(response.status).toBe(200);
    const second = (await response.json()) as Tokens;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.scope).toBe('identify');
    expect((await me(second.access_token)).status).toBe(200);
    expect((await me(first.access_token)).status).toBe(200);
  });

  it('a spent refresh token presented again revokes the whole family', async () => {
    const first = await grantTokens(hearth, game, player.token);
    const second = (await (await refresh(first.refresh_token!)).json()) as Tokens;
    await expectOAuthError(await refresh(first.refresh_token!), 400, invalidRefresh);
    expect((await me(second.access_token)).status).toBe(401);
    await expectOAuthError(await refresh(second.refresh_token!), 400, invalidRefresh);
  });

  it('a refresh token of one client is refused to another (tokens of one app on another)', async () => {
    const tokens = await grantTokens(hearth, game, player.token);
    await expectOAuthError(await refresh(tokens.refresh_token!, {}, other), 400, invalidRefresh);
    expect((await refresh(tokens.refresh_token!)).status).toBe(200);
  });

  it('§6 may narrow the scope but never widen it', async () => {
    const tokens = await grantTokens(hearth, game, player.token, 'identify email');
    const narrowed = (await (await refresh(tokens.refresh_token!, { scope: 'identify' })).json()) as Tokens;
    expect(narrowed.scope).toBe('identify');
    await expectOAuthError(await refresh(narrowed.refresh_token!, { scope: 'identify guilds' }), 400, {
      error: 'invalid_scope',
    });
  });

  it('an access token expires after 604800 seconds', async () => {
    const tokens = await grantTokens(hearth, game, player.token);
    clock.advance(604800 * 1000 - 1);
    expect((await me(tokens.access_token)).status).toBe(200);
    clock.advance(1);
    expect((await me(tokens.access_token)).status).toBe(401);
    expect((await refresh(tokens.refresh_token!)).status).toBe(200);
  });

  it('an unknown refresh token is invalid_grant with the platform wording', async () => {
    await expectOAuthError(await refresh('nope'), 400, invalidRefresh);
  });
});

describe('RFC 6749 §4.4 client credentials', () => {
  it("issues an access token without a refresh token, standing for the application's owner", async () => {
    const response = await tokenRequest(hearth, {
      grant_type: 'client_credentials',
      scope: 'identify',
      client_id: game.id,
      client_secret: game.clientSecret,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Tokens;
    expect(body.refresh_token).toBeUndefined();
    expect(body.scope).toBe('identify');
    const user = (await (await me(body.access_token)).json()) as { id: string };
    expect(user.id).toBe(game.ownerId);
  });

  it('needs the client secret even for a public client', async () => {
    const publicGame = await createGame(hearth, { publicClient: true });
    await expectOAuthError(
      await tokenRequest(hearth, {
        grant_type: 'client_credentials',
        scope: 'identify',
        client_id: publicGame.id,
      }),
      401,
      { error: 'invalid_client' },
    );
  });

  it.each(['', 'bot', 'openid', 'identify.premium', 'nonsense'])(
    'refuses scope "%s" with invalid_scope',
    async (scope) => {
      await expectOAuthError(
        await tokenRequest(hearth, {
          grant_type: 'client_credentials',
          scope,
          client_id: game.id,
          client_secret: game.clientSecret,
        }),
        400,
        { error: 'invalid_scope' },
      );
    },
  );
});

describe('bearer tokens on the API', () => {
  it('a token without the route scope is 403 code 50026', async () => {
    const tokens = await grantTokens(hearth, game, player.token, 'email');
    const response = await me(tokens.access_token);
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ code: 50026, message: 'Missing required OAuth2 scope' });
  });

  it('sdk.social_layer expands to identify (seed, rule 2)', async () => {
    const tokens = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    expect((await me(tokens.access_token)).status).toBe(200);
  });
});
