import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../../../test-support/browser.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { consentLocation, createPlayer } from '../../../test-support/oauth.js';
import { sdkpp } from '../src/index.js';

const available = await chromiumAvailable();

const PASSWORD = 'a long password';
const LOOPBACK_CALLBACK = /^http:\/\/127\.0\.0\.1:\d+\/callback$/;

let hearth: TestHearth;
let browser: Browser | undefined;
let appId: string;
let player: { id: string; email: string; token: string };

let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  [hearth, browser] = await Promise.all([
    startHearth(),
    available ? launchChromium() : Promise.resolve(undefined),
  ]);
  const created = await hearth.services.applications.createApplication({
    name: 'Ember Quest',
    redirect_uris: ['http://127.0.0.1/callback'],
    public_client: true,
  });
  appId = created.application.id;
  const { user, token } = await createPlayer(hearth);
  player = { id: user.id, email: user.email!, token };
});
afterAll(async () => {
  await Promise.all([browser?.close(), hearth?.close()]);
});

type Decision = 'authorize' | 'cancel';

/**
 * A client whose opener drives the consent page in the headless page: it starts the interaction and returns
 * at once, as a real opener does. `flow` settles when the interaction is over; a failed interaction aborts
 * the authorization so that the test fails with the interaction's error instead of waiting forever.
 */
function browserClient(interact: (url: string) => Promise<void>): {
  client: sdkpp.Client;
  opened: string[];
  flow: () => Promise<void>;
} {
  const opened: string[] = [];
  let running: Promise<void> = Promise.reject(new Error('the opener was never called'));
  running.catch(() => undefined);
  const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, {
    opener: (url) => {
      opened.push(url);
      running = interact(url).catch((error: unknown) => {
        client.AbortAuthorize();
        throw error;
      });
      running.catch(() => undefined);
    },
  });
  client.SetApplicationId(appId);
  return { client, opened, flow: () => running };
}

/** Logs the player in on the consent page and answers it. */
async function consentInPage(url: string, decision: Decision): Promise<void> {
  await page.goto(url);
  await page.locator('#login-email').fill(player.email);
  await page.locator('#login-password').fill(PASSWORD);
  await page.locator('#login-submit').click();
  await Promise.all([
    page.waitForURL(
      (landed) => landed.origin.startsWith('http://127.0.0.1:') && landed.pathname === '/callback',
    ),
    page.locator(`#${decision}`).click(),
  ]);
}

function communicationArgs(verifier?: sdkpp.AuthorizationCodeVerifier): sdkpp.AuthorizationArgs {
  const args = new sdkpp.AuthorizationArgs();
  args.SetScopes(sdkpp.Client.GetDefaultCommunicationScopes());
  if (verifier) args.SetCodeChallenge(verifier.Challenge());
  return args;
}

describe.skipIf(!available)('Client.Authorize through a real browser (seed: Library operations)', () => {
  beforeEach(async () => {
    context = await browser!.newContext();
    page = await context.newPage();
  });
  afterEach(async () => {
    await context.close();
  });

  it('authorizes with PKCE over a loopback redirect, and GetToken, RefreshToken and RevokeToken manage the tokens it yields', async () => {
    const { client, opened, flow } = browserClient((url) => consentInPage(url, 'authorize'));
    const verifier = client.CreateAuthorizationCodeVerifier();

    const authorized = await client.Authorize(communicationArgs(verifier));
    await flow();
    // The player's browser reached the SDK's loopback listener and was told to go back to the game.
    expect(await page.locator('h1').textContent()).toBe('You are signed in');
    expect(authorized.result.ToString()).toBe('ClientResult(success)');
    expect(authorized.result.Successful()).toBe(true);
    expect(authorized.code).not.toBe('');
    expect(authorized.redirectUri).toMatch(LOOPBACK_CALLBACK);
    expect(opened).toHaveLength(1);
    const query = Object.fromEntries(new URL(opened[0]!).searchParams);
    expect(query).toEqual({
      client_id: appId,
      response_type: 'code',
      scope: 'openid sdk.social_layer',
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      redirect_uri: authorized.redirectUri,
      code_challenge: verifier.Challenge().Challenge(),
      code_challenge_method: 'S256',
    });

    const tokens = await client.GetToken(appId, authorized.code, verifier.Verifier(), authorized.redirectUri);
    expect(tokens.result.Successful()).toBe(true);
    expect(tokens).toMatchObject({
      tokenType: sdkpp.AuthorizationTokenType.Bearer,
      expiresIn: 604800,
      scopes: 'openid sdk.social_layer',
    });
    expect(tokens.accessToken).not.toBe('');
    expect(tokens.refreshToken).not.toBe('');

    const me = await hearth.api('/users/@me', { auth: `Bearer ${tokens.accessToken}` });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(player.id);

    const refreshed = await client.RefreshToken(appId, tokens.refreshToken);
    expect(refreshed.result.Successful()).toBe(true);
    expect(refreshed).toMatchObject({ expiresIn: 604800, scopes: 'openid sdk.social_layer' });
    expect(refreshed.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.refreshToken).not.toBe(tokens.refreshToken);
    expect(refreshed.accessToken).not.toBe('');
    expect(refreshed.refreshToken).not.toBe('');

    const revoked = await client.RevokeToken(appId, refreshed.accessToken);
    expect(revoked.Successful()).toBe(true);

    const refused = await hearth.api('/users/@me', { auth: `Bearer ${refreshed.accessToken}` });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ code: 0, message: '401: Unauthorized' });
    const gone = await client.RefreshToken(appId, refreshed.refreshToken);
    expect(gone.result.Type()).toBe(sdkpp.ErrorType.AuthorizationFailed);
    expect(gone.result.Error()).toBe('invalid_grant');
    expect(gone.result.Status()).toBe(400);
    expect(gone.accessToken).toBe('');
  });

  it('reports a player who clicks Cancel as ErrorType.Aborted, not as a server authorization error (seed: Errors)', async () => {
    const { client, flow } = browserClient((url) => consentInPage(url, 'cancel'));

    const authorized = await client.Authorize(communicationArgs(client.CreateAuthorizationCodeVerifier()));
    await flow();
    expect(authorized.result.Type()).toBe(sdkpp.ErrorType.Aborted);
    expect(authorized.result.Error()).toBe('access_denied');
    expect(authorized.code).toBe('');
    expect(authorized.redirectUri).toMatch(LOOPBACK_CALLBACK);
  });

  it('reports a scope the application may not have (identify.premium) as ErrorType.AuthorizationFailed with invalid_scope, redirected before any login', async () => {
    const { client, flow } = browserClient(async (url) => {
      await page.goto(url);
    });
    const args = communicationArgs(client.CreateAuthorizationCodeVerifier());
    args.SetScopes(`${sdkpp.Client.GetDefaultCommunicationScopes()} identify.premium`);

    const authorized = await client.Authorize(args);
    await flow();
    expect(authorized.result.Type()).toBe(sdkpp.ErrorType.AuthorizationFailed);
    expect(authorized.result.Error()).toBe('invalid_scope: Scope identify.premium needs approval');
    expect(authorized.code).toBe('');
    expect(await page.locator('#login-email').count()).toBe(0);
  });
});

describe('Client.Authorize with a custom scheme (seed: AuthorizationArgs rules 4–5)', () => {
  it('redirects to discord-<application id>:/authorize/callback when CustomSchemeParam is unset, and that URI redeems the code with PKCE and no secret', async () => {
    let delivered: Promise<boolean> = Promise.resolve(false);
    const opened: string[] = [];
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, {
      redirect: sdkpp.customSchemeRedirect,
      opener: (url) => {
        opened.push(url);
        // What the platform's app does on a phone: consent, then the OS hands the scheme URL to the game.
        delivered = consentLocation(hearth, player.token, Object.fromEntries(new URL(url).searchParams)).then(
          (location) => client.HandleAuthorizeRedirect(location.href),
          (error: unknown) => {
            client.AbortAuthorize();
            throw error;
          },
        );
        delivered.catch(() => undefined);
      },
    });
    client.SetApplicationId(appId);
    const verifier = client.CreateAuthorizationCodeVerifier();
    const args = communicationArgs(verifier);
    expect(args.CustomSchemeParam()).toBeUndefined();

    const authorized = await client.Authorize(args);
    expect(await delivered).toBe(true);
    const redirectUri = `discord-${appId}:/authorize/callback`;
    expect(new URL(opened[0]!).searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(authorized.result.Successful()).toBe(true);
    expect(authorized.redirectUri).toBe(redirectUri);
    expect(authorized.code).not.toBe('');

    const tokens = await client.GetToken(appId, authorized.code, verifier.Verifier(), authorized.redirectUri);
    expect(tokens.result.Successful()).toBe(true);
    expect(tokens).toMatchObject({ expiresIn: 604800, scopes: 'openid sdk.social_layer' });
    const me = await hearth.api('/users/@me', { auth: `Bearer ${tokens.accessToken}` });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(player.id);
  });
});
