import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  consent,
  consentLocation,
  createGame,
  createPlayer,
  pkcePair,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';

/**
 * OAuth 2.0 for Native Apps (RFC 8252) and the platform's redirect rules (PROTOCOL.md §C.3, seed rules 4–5):
 * loopback IP redirects on any port, exact matching everywhere else, custom schemes only with PKCE, and no
 * redirect at all when the redirect URI cannot be trusted (RFC 6749 §4.1.2.1).
 */

const LOOPBACK = 'http://127.0.0.1/callback';
const MISMATCH = 'Mismatching redirect URI.';
const NEEDS_PKCE = 'A custom scheme redirect needs PKCE';
const FRAGMENT = 'redirect_uri must not have a fragment';
const INVALID_CODE = { error: 'invalid_grant', error_description: 'Invalid "code" in request.' };

let hearth: TestHearth;
let playerToken: string;

beforeAll(async () => {
  hearth = await startHearth();
  playerToken = (await createPlayer(hearth)).token;
});

afterAll(async () => {
  await hearth.close();
});

function authorizeParams(game: TestGame, redirectUri: string, extra: Record<string, string> = {}) {
  return {
    client_id: game.id,
    response_type: 'code',
    scope: 'identify',
    redirect_uri: redirectUri,
    state: 'st4te',
    ...extra,
  };
}

/** The authorize page as a browser would fetch it, never following a redirect. */
function authorizePage(query: string): Promise<Response> {
  return fetch(`${hearth.url}/oauth2/authorize?${query}`, { redirect: 'manual' });
}

/**
 * RFC 6749 §4.1.2.1: a redirect URI that cannot be trusted is reported to the player, never redirected to.
 * Both the consent call and the browser page are checked, with their exact answers.
 */
async function expectRefused(params: Record<string, string>, message: string): Promise<void> {
  const decision = await consent(hearth, playerToken, params);
  expect(decision.status).toBe(400);
  expect(decision.headers.get('location')).toBeNull();
  expect(await decision.json()).toEqual({
    code: 50035,
    message: 'Invalid Form Body',
    errors: { redirect_uri: { _errors: [{ code: 'OAUTH2_INVALID_REQUEST', message }] } },
  });

  const page = await authorizePage(new URLSearchParams(params).toString());
  expect(page.status).toBe(400);
  expect(page.headers.get('location')).toBeNull();
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(await page.text()).toContain(`<p id="error" role="alert">${message}</p>`);
}

/** The player approves; answers the code after checking it went to exactly `redirectUri`, with the state. */
async function expectCodeAt(params: Record<string, string>, redirectUri: string): Promise<string> {
  const page = await authorizePage(new URLSearchParams(params).toString());
  expect(page.status).toBe(200);
  expect(page.headers.get('location')).toBeNull();
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');

  const location = await consentLocation(hearth, playerToken, params);
  const [target, query = ''] = location.href.split('?');
  expect(target).toBe(redirectUri);
  const answer = new URLSearchParams(query);
  expect([...answer.keys()]).toEqual(['code', 'state']);
  expect(answer.get('state')).toBe('st4te');
  const code = answer.get('code');
  if (code === null) throw new Error(`no code in ${location.href}`);
  return code;
}

function redeem(game: TestGame, code: string, redirectUri: string | undefined, verifier?: string) {
  return tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code,
    ...(redirectUri === undefined ? {} : { redirect_uri: redirectUri }),
    client_id: game.id,
    client_secret: game.clientSecret,
    ...(verifier === undefined ? {} : { code_verifier: verifier }),
  });
}

async function expectTokens(response: Response): Promise<void> {
  expect(response.status).toBe(200);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual([
    'access_token',
    'expires_in',
    'refresh_token',
    'scope',
    'token_type',
  ]);
  expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 604800, scope: 'identify' });
}

describe('OAuth 2.0 for Native Apps (RFC 8252)', () => {
  describe('§7.3 loopback interface redirection', () => {
    it('§7.3 loopback redirect ignores the port, and §4.1.3 the code is redeemed with exactly that redirect_uri', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      const redirectUri = 'http://127.0.0.1:53682/callback';
      const code = await expectCodeAt(authorizeParams(game, redirectUri), redirectUri);

      // RFC 6749 §4.1.3: the token request must repeat the very redirect_uri of the authorization request.
      for (const other of [LOOPBACK, 'http://127.0.0.1:53683/callback']) {
        const refused = await redeem(game, code, other);
        expect(refused.status).toBe(400);
        expect(await refused.json()).toEqual(INVALID_CODE);
      }
      const omitted = await redeem(game, code, undefined);
      expect(omitted.status).toBe(400);
      expect(await omitted.json()).toEqual(INVALID_CODE);

      await expectTokens(await redeem(game, code, redirectUri));
    });

    it('§7.3 any ephemeral port matches, and so does the registered URI itself', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      for (const redirectUri of [
        LOOPBACK,
        'http://127.0.0.1:1/callback',
        'http://127.0.0.1:65535/callback',
      ]) {
        const code = await expectCodeAt(authorizeParams(game, redirectUri), redirectUri);
        await expectTokens(await redeem(game, code, redirectUri));
      }
    });

    it('§7.3 an IPv6 loopback redirect http://[::1]:<port>/callback matches a registered http://[::1]/callback', async () => {
      const game = await createGame(hearth, { redirectUris: ['http://[::1]/callback'] });
      const redirectUri = 'http://[::1]:49152/callback';
      const code = await expectCodeAt(authorizeParams(game, redirectUri), redirectUri);
      await expectTokens(await redeem(game, code, redirectUri));
    });

    it('§7.3 the loopback literal must be the registered one: [::1] does not stand in for 127.0.0.1', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, 'http://[::1]:49152/callback'), MISMATCH);
    });

    it('§8.3 localhost is not a loopback IP: refused unless registered exactly', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, 'http://localhost:53682/callback'), MISMATCH);
      await expectRefused(authorizeParams(game, 'http://localhost/callback'), MISMATCH);

      const registered = await createGame(hearth, { redirectUris: ['http://localhost/callback'] });
      const code = await expectCodeAt(
        authorizeParams(registered, 'http://localhost/callback'),
        'http://localhost/callback',
      );
      await expectTokens(await redeem(registered, code, 'http://localhost/callback'));
      // Not a loopback IP literal, so the port is not ignored.
      await expectRefused(authorizeParams(registered, 'http://localhost:53682/callback'), MISMATCH);
    });

    it('§7.3 only the port is ignored: another path, query, trailing slash or scheme on loopback is refused', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      for (const redirectUri of [
        'http://127.0.0.1:53682/other',
        'http://127.0.0.1:53682/Callback',
        'http://127.0.0.1:53682/callback/',
        'http://127.0.0.1:53682/callback?next=1',
        'http://127.0.0.1:53682/',
        'https://127.0.0.1:53682/callback',
      ]) {
        await expectRefused(authorizeParams(game, redirectUri), MISMATCH);
      }
    });

    it('§7.3 a registered query is part of the match on any port', async () => {
      const game = await createGame(hearth, { redirectUris: ['http://127.0.0.1/callback?app=1'] });
      const redirectUri = 'http://127.0.0.1:53682/callback?app=1';
      const location = await consentLocation(hearth, playerToken, authorizeParams(game, redirectUri));
      expect(location.origin + location.pathname).toBe('http://127.0.0.1:53682/callback');
      expect([...location.searchParams.keys()]).toEqual(['app', 'code', 'state']);
      expect(location.searchParams.get('app')).toBe('1');
      await expectRefused(authorizeParams(game, 'http://127.0.0.1:53682/callback?app=2'), MISMATCH);
      await expectRefused(authorizeParams(game, 'http://127.0.0.1:53682/callback'), MISMATCH);
    });
  });

  describe('RFC 6749 §3.1.2 exact matching of other redirect URIs', () => {
    it('§3.1.2.3 a non-loopback https redirect must match exactly: port, trailing slash and path matter', async () => {
      const registered = 'https://game.example/oauth/callback';
      const game = await createGame(hearth, { redirectUris: [registered] });
      const code = await expectCodeAt(authorizeParams(game, registered), registered);
      await expectTokens(await redeem(game, code, registered));

      for (const redirectUri of [
        'https://game.example:8443/oauth/callback',
        'https://game.example/oauth/callback/',
        'https://game.example/oauth/other',
        'https://game.example/oauth/callback?x=1',
        'http://game.example/oauth/callback',
        'https://www.game.example/oauth/callback',
      ]) {
        await expectRefused(authorizeParams(game, redirectUri), MISMATCH);
      }
    });

    it('§3.1.2 a redirect_uri with a fragment is refused, even an otherwise matching one', async () => {
      const game = await createGame(hearth, {
        redirectUris: [LOOPBACK, 'https://game.example/oauth/callback'],
      });
      await expectRefused(authorizeParams(game, 'http://127.0.0.1:53682/callback#x'), FRAGMENT);
      await expectRefused(authorizeParams(game, 'http://127.0.0.1/callback#'), FRAGMENT);
      await expectRefused(authorizeParams(game, 'https://game.example/oauth/callback#done'), FRAGMENT);
    });

    it('§3.1 a redirect_uri given twice is refused without redirect', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      const query = new URLSearchParams([
        ['client_id', game.id],
        ['response_type', 'code'],
        ['scope', 'identify'],
        ['redirect_uri', LOOPBACK],
        ['redirect_uri', 'https://evil.example/callback'],
      ]).toString();
      const decision = await hearth.api(`/oauth2/authorize?${query}`, {
        method: 'POST',
        auth: playerToken,
        body: { authorize: true },
      });
      expect(decision.status).toBe(400);
      expect(await decision.json()).toEqual({
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          redirect_uri: {
            _errors: [{ code: 'OAUTH2_INVALID_REQUEST', message: '"redirect_uri" is given more than once' }],
          },
        },
      });
      const page = await authorizePage(query);
      expect(page.status).toBe(400);
      expect(page.headers.get('location')).toBeNull();
      expect(await page.text()).toContain(
        '<p id="error" role="alert">&#34;redirect_uri&#34; is given more than once</p>',
      );
    });
  });

  describe('§7.1 private-use URI scheme redirection, §8.1 with PKCE (seed rule 5)', () => {
    it('§7.1 the default mobile scheme discord-<application id>:/authorize/callback is accepted with PKCE though not registered', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      const redirectUri = `discord-${game.id}:/authorize/callback`;
      const { verifier, challenge } = pkcePair();
      const code = await expectCodeAt(
        authorizeParams(game, redirectUri, { code_challenge: challenge, code_challenge_method: 'S256' }),
        redirectUri,
      );
      const withoutVerifier = await redeem(game, code, redirectUri);
      expect(withoutVerifier.status).toBe(400);
      expect(await withoutVerifier.json()).toEqual(INVALID_CODE);
      await expectTokens(await redeem(game, code, redirectUri, verifier));
    });

    it('§8.1 the default mobile scheme is refused without PKCE', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, `discord-${game.id}:/authorize/callback`), NEEDS_PKCE);
      // A method alone is not PKCE.
      await expectRefused(
        authorizeParams(game, `discord-${game.id}:/authorize/callback`, { code_challenge_method: 'S256' }),
        NEEDS_PKCE,
      );
    });

    it("§7.1 another application's default scheme is refused even with PKCE", async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      const other = await createGame(hearth, { redirectUris: [LOOPBACK] });
      const { challenge } = pkcePair();
      await expectRefused(
        authorizeParams(game, `discord-${other.id}:/authorize/callback`, {
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
        MISMATCH,
      );
    });

    it('§7.1 a registered custom scheme mygame:/authorize/callback is accepted with PKCE and refused without', async () => {
      const redirectUri = 'mygame:/authorize/callback';
      const game = await createGame(hearth, { redirectUris: [redirectUri] });
      const { verifier, challenge } = pkcePair();
      const code = await expectCodeAt(
        authorizeParams(game, redirectUri, { code_challenge: challenge, code_challenge_method: 'S256' }),
        redirectUri,
      );
      await expectTokens(await redeem(game, code, redirectUri, verifier));

      await expectRefused(authorizeParams(game, redirectUri), NEEDS_PKCE);
    });

    it('§7.1 an unregistered custom scheme is refused even with PKCE', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK, 'mygame:/authorize/callback'] });
      const { challenge } = pkcePair();
      const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
      for (const redirectUri of [
        'othergame:/authorize/callback',
        'mygame:/authorize/other',
        'discord:/authorize/callback',
        'javascript:alert(document.domain)//',
      ]) {
        await expectRefused(authorizeParams(game, redirectUri, pkce), MISMATCH);
      }
    });
  });

  describe('RFC 6749 §10.15 open redirectors', () => {
    it('§10.15 redirect_uri=https://evil.example/callback is refused without redirect', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, 'https://evil.example/callback'), MISMATCH);
    });

    it('§10.15 a host that merely starts with 127.0.0.1 (http://127.0.0.1.evil.example/callback) is refused', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, 'http://127.0.0.1.evil.example/callback'), MISMATCH);
      await expectRefused(authorizeParams(game, 'http://127.0.0.1.evil.example:53682/callback'), MISMATCH);
    });

    it('§10.15 userinfo that looks like loopback (http://127.0.0.1@evil.example/callback) is refused', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, 'http://127.0.0.1@evil.example/callback'), MISMATCH);
      await expectRefused(authorizeParams(game, 'http://127.0.0.1:53682@evil.example/callback'), MISMATCH);
    });

    it('§4.1.2.1 an untrusted redirect_uri is refused before any other error could be redirected', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(
        authorizeParams(game, 'https://evil.example/callback', { response_type: 'token', scope: 'nonsense' }),
        MISMATCH,
      );
      await expectRefused(
        authorizeParams(game, 'https://evil.example/callback', { prompt: 'none' }),
        MISMATCH,
      );
    });

    it('§4.1.2.1 a redirect_uri that is not an absolute URI is refused without redirect', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      await expectRefused(authorizeParams(game, '//evil.example/callback'), 'Invalid redirect_uri');
      await expectRefused(authorizeParams(game, '/callback'), 'Invalid redirect_uri');
    });

    it('§4.1.2.1 the player refusing still goes only to the accepted loopback redirect', async () => {
      const game = await createGame(hearth, { redirectUris: [LOOPBACK] });
      const location = await consentLocation(
        hearth,
        playerToken,
        authorizeParams(game, 'http://127.0.0.1:53682/callback'),
        false,
      );
      expect(location.origin + location.pathname).toBe('http://127.0.0.1:53682/callback');
      expect(Object.fromEntries(location.searchParams)).toEqual({
        error: 'access_denied',
        error_description: 'The resource owner or authorization server denied the request',
        state: 'st4te',
      });
    });
  });
});
