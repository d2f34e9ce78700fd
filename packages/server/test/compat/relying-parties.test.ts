import * as oauth from 'oauth4webapi';
import * as openid from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consentLocation, createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';

/**
 * openid-client and oauth4webapi as relying parties of Hearth (issue 23: real peers): discovery, the
 * authorization code grant with PKCE, the ID token, UserInfo and refresh, each validated by the library.
 * The consent step is the authorize page's own call (test-support/oauth.ts), made with the library's URL.
 */

const REDIRECT_URI = 'http://127.0.0.1/callback';
const SCOPE = 'openid identify email';

let hearth: TestHearth;
let game: TestGame;
let player: { id: string; token: string; username: string };

beforeAll(async () => {
  hearth = await startHearth();
  game = await createGame(hearth, { redirectUris: [REDIRECT_URI] });
  const created = await createPlayer(hearth);
  player = { id: created.user.id, token: created.token, username: created.user.username };
});
afterAll(() => hearth.close());

/** The player consents to the library's authorization URL; answers where the page sends the browser. */
function consentTo(authorizationUrl: URL): Promise<URL> {
  expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${hearth.url}/oauth2/authorize`);
  return consentLocation(hearth, player.token, Object.fromEntries(authorizationUrl.searchParams));
}

describe('openid-client 6 as a relying party', () => {
  it('discovers Hearth, runs the code flow with PKCE, reads UserInfo and refreshes', async () => {
    const config = await openid.discovery(new URL(hearth.url), game.id, game.clientSecret, undefined, {
      execute: [openid.allowInsecureRequests],
    });
    expect(config.serverMetadata().issuer).toBe(hearth.url);

    const verifier = openid.randomPKCECodeVerifier();
    const state = openid.randomState();
    const authorizationUrl = openid.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: SCOPE,
      code_challenge: await openid.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const callback = await consentTo(authorizationUrl);

    const tokens = await openid.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.token_type).toBe('bearer');
    const claims = tokens.claims();
    expect(claims).toMatchObject({ iss: hearth.url, sub: player.id, aud: [game.id] });

    const info = await openid.fetchUserInfo(config, tokens.access_token, player.id);
    expect(info).toEqual({
      sub: player.id,
      email: `${player.username}@example.com`,
      email_verified: true,
      preferred_username: player.username,
      locale: 'en-US',
    });

    const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect((await openid.fetchUserInfo(config, refreshed.access_token, player.id)).sub).toBe(player.id);
  });
});

describe('oauth4webapi 3 as a relying party', () => {
  const options = { [oauth.allowInsecureRequests]: true };
  const client: oauth.Client = { client_id: '' };

  it('discovers Hearth, runs the code flow with PKCE and a nonce, reads UserInfo and refreshes', async () => {
    client.client_id = game.id;
    const issuer = new URL(hearth.url);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
    const clientAuth = oauth.ClientSecretBasic(game.clientSecret);

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: game.id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: SCOPE,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    }).toString();
    const callback = await consentTo(authorizationUrl);

    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      REDIRECT_URI,
      verifier,
      options,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    expect(claims).toMatchObject({ iss: hearth.url, sub: player.id, nonce });

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      claims.sub,
      await oauth.userInfoRequest(as, client, result.access_token, options),
    );
    expect(info).toMatchObject({ sub: player.id, preferred_username: player.username });
    expect('nickname' in info).toBe(false);
    expect('picture' in info).toBe(false);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, result.refresh_token!, options),
    );
    expect(refreshed.access_token).not.toBe(result.access_token);
  });

  it('reads the RFC 6750 challenge of a UserInfo 401: Bearer error="invalid_token"', async () => {
    client.client_id = game.id;
    const issuer = new URL(hearth.url);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, options));
    const response = await oauth.userInfoRequest(as, client, 'not-a-token', options);
    const error = await oauth.processUserInfoResponse(as, client, oauth.skipSubjectCheck, response).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = error as oauth.WWWAuthenticateChallengeError;
    expect(challenge.status).toBe(401);
    expect(challenge.cause).toEqual([{ scheme: 'bearer', parameters: { error: 'invalid_token' } }]);
  });
});
