import { randomBytes } from 'node:crypto';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  FormErrors,
  OAuth2ErrorDescriptions,
  SCOPE_DESCRIPTIONS,
  type Scope,
} from '@hearth/protocol';
import type { Browser, BrowserContext, Page, Response as PageResponse } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type CallbackServer,
  chromiumAvailable,
  launchChromium,
  startCallbackServer,
} from '../../../../test-support/browser.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  createGame,
  createPlayer,
  pkcePair,
  type TestGame,
  type Tokens,
  tokenRequest,
} from '../../../../test-support/oauth.js';

const available = await chromiumAvailable();

const PASSWORD = 'a long password';
const REQUESTED: readonly Scope[] = ['openid', 'identify', 'email'];

let hearth: TestHearth;
let browser: Browser;
let callback: CallbackServer;
let game: TestGame;
let email: string;
let playerId: string;

let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  if (!available) return;
  [hearth, browser, callback] = await Promise.all([startHearth(), launchChromium(), startCallbackServer()]);
  game = await createGame(hearth, { redirectUris: [callback.url], name: 'Ember Quest' });
  const { user } = await createPlayer(hearth);
  email = user.email!;
  playerId = user.id;
});
afterAll(async () => {
  if (!available) return;
  await Promise.all([browser.close(), callback.close(), hearth.close()]);
});

beforeEach(async () => {
  if (!available) return;
  callback.received.length = 0;
  context = await browser.newContext();
  page = await context.newPage();
});
afterEach(async () => {
  if (available) await context.close();
});

/** The authorize URL a game opens: code flow with PKCE S256 and a random state (PROTOCOL.md §C.2). */
function authorizeUrl(params: { state: string; challenge: string; clientId?: string }): string {
  const query = new URLSearchParams({
    client_id: params.clientId ?? game.id,
    response_type: 'code',
    scope: REQUESTED.join(' '),
    state: params.state,
    redirect_uri: callback.url,
    code_challenge: params.challenge,
    code_challenge_method: 'S256',
  });
  return `${hearth.url}/oauth2/authorize?${query.toString().replace(/\+/g, '%20')}`;
}

async function open(url: string): Promise<PageResponse> {
  const response = await page.goto(url);
  if (!response) throw new Error(`no response for ${url}`);
  return response;
}

async function logIn(password: string): Promise<void> {
  await page.locator('#login').waitFor({ state: 'visible' });
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
}

/** Clicks and waits until the browser has loaded the game's callback. */
async function clickThroughToCallback(button: string): Promise<URL> {
  await Promise.all([
    page.waitForURL((url) => url.href.startsWith(`${callback.url}?`)),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  return new URL(page.url());
}

function expectPageHeaders(headers: Record<string, string>): void {
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
}

describe.skipIf(!available)('authorization endpoint in a browser (RFC 6749 §4.1.1–4.1.2, RFC 7636)', () => {
  it('logs the player in, lists each scope in words, and redirects with a code and the same state that PKCE redeems', async () => {
    const state = randomBytes(16).toString('base64url');
    const { verifier, challenge } = pkcePair();

    const response = await open(authorizeUrl({ state, challenge }));
    expect(response.status()).toBe(200);
    expectPageHeaders(response.headers());
    expect(await page.locator('h1').textContent()).toBe('Ember Quest');

    await logIn(PASSWORD);
    await page.locator('#consent').waitFor({ state: 'visible' });
    expect(await page.locator('#login').isHidden()).toBe(true);
    const items = page.locator('#scopes li[data-scope]');
    const shown: Array<[string | null, string | null]> = [];
    for (const item of await items.all()) {
      shown.push([await item.getAttribute('data-scope'), await item.textContent()]);
    }
    expect(shown).toEqual(REQUESTED.map((scope) => [scope, SCOPE_DESCRIPTIONS[scope]]));
    await page.screenshot({ path: '/tmp/consent.png' });

    const landed = await clickThroughToCallback('Authorize');
    expect([...landed.searchParams.keys()].sort()).toEqual(['code', 'state']);
    expect(landed.searchParams.get('state')).toBe(state);
    expect(callback.received.map((q) => q.toString())).toEqual([landed.searchParams.toString()]);
    expect(await page.locator('#done').textContent()).toBe('You can return to the game.');

    const exchanged = await tokenRequest(hearth, {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      redirect_uri: callback.url,
      code_verifier: verifier,
      client_id: game.id,
      client_secret: game.clientSecret,
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as Tokens;
    expect(tokens).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      refresh_token: expect.any(String),
      scope: 'openid identify email',
      id_token: expect.any(String),
    });
    const me = await hearth.api('/users/@me', { auth: `Bearer ${tokens.access_token}` });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: playerId, email, verified: true });
  });

  it('redirects a Cancel to the callback with error=access_denied and the state (RFC 6749 §4.1.2.1)', async () => {
    const state = randomBytes(16).toString('base64url');
    await open(authorizeUrl({ state, challenge: pkcePair().challenge }));
    await logIn(PASSWORD);
    await page.locator('#consent').waitFor({ state: 'visible' });

    const landed = await clickThroughToCallback('Cancel');
    expect(Object.fromEntries(landed.searchParams)).toEqual({
      error: 'access_denied',
      error_description: OAuth2ErrorDescriptions.accessDenied,
      state,
    });
    expect(callback.received).toHaveLength(1);
  });

  it('shows INVALID_LOGIN on the page for a wrong password and stays there', async () => {
    const url = authorizeUrl({ state: 'wrong-password', challenge: pkcePair().challenge });
    await open(url);
    const [login] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v10/auth/login'),
      logIn('not the password'),
    ]);
    expect(login.status()).toBe(400);

    const message = FormErrors.invalidLogin().message;
    await page.locator('#login-error').filter({ hasText: message }).waitFor();
    expect(await page.locator('#login-error').textContent()).toBe(message);
    expect(page.url()).toBe(url);
    expect(await page.locator('#login').isVisible()).toBe(true);
    expect(await page.locator('#consent').isHidden()).toBe(true);
    expect(callback.received).toEqual([]);
  });

  it('answers an unknown client_id with the error page (HTTP 400) and never redirects to the callback (RFC 6749 §4.1.2.1)', async () => {
    const url = authorizeUrl({
      state: 'unknown-client',
      challenge: pkcePair().challenge,
      clientId: '1234567890123456789',
    });
    const response = await open(url);
    expect(response.status()).toBe(400);
    expectPageHeaders(response.headers());
    expect(await page.locator('h1').textContent()).toBe('Something went wrong');
    expect(await page.locator('#error').textContent()).toBe('Unknown application');
    expect(await page.locator('#login-form').count()).toBe(0);
    expect(page.url()).toBe(url);
    expect(callback.received).toEqual([]);
  });
});
