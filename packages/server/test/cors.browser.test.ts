import { RateLimitHeaders } from '@hearth/protocol';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CallbackServer,
  chromiumAvailable,
  launchChromium,
  startCallbackServer,
} from '../../../test-support/browser.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens } from '../../../test-support/oauth.js';

// Cross-origin calls to the API, as the platform answers them (discord-api-docs#1873): a web game on its own
// origin calls Hearth with a Bearer token.
const available = await chromiumAvailable();

let hearth: TestHearth;
let bearer: string;
let userId: string;

beforeAll(async () => {
  hearth = await startHearth();
  const game = await createGame(hearth);
  const { user, token } = await createPlayer(hearth);
  userId = user.id;
  bearer = `Bearer ${(await grantTokens(hearth, game, token, 'identify')).access_token}`;
});
afterAll(() => hearth.close());

const ORIGIN = 'https://game.example';

describe('CORS on the API (HTTP)', () => {
  it('answers a preflight with 204, any origin, the methods and headers a client sends, and no credentials', async () => {
    const response = await fetch(`${hearth.url}/api/v10/users/@me`, {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'PATCH',
        'access-control-request-headers': 'authorization, content-type, x-audit-log-reason',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    const methods = response.headers.get('access-control-allow-methods')?.split(', ');
    expect(methods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']));
    const headers = response.headers.get('access-control-allow-headers')?.split(', ');
    expect(headers).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-audit-log-reason']));
    expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
  });

  it('answers a preflight of a route that does not exist too: the request itself then gets its 404', async () => {
    const url = `${hearth.url}/api/v10/no-such-route`;
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    const response = await fetch(url, { headers: { origin: ORIGIN } });
    expect(response.status).toBe(404);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(await response.json()).toEqual({ code: 0, message: '404: Not Found' });
  });

  it('marks answers, errors and 429s included, readable by any origin, rate-limit headers exposed', async () => {
    const ok = await fetch(`${hearth.url}/api/v10/users/@me`, {
      headers: { origin: ORIGIN, authorization: bearer },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = ok.headers.get('access-control-expose-headers')?.split(', ');
    expect(exposed).toEqual(
      expect.arrayContaining([RateLimitHeaders.Remaining, RateLimitHeaders.RetryAfter, 'x-request-id']),
    );
    const refused = await fetch(`${hearth.url}/api/v10/users/@me`, {
      headers: { origin: ORIGIN, authorization: 'Bearer not-a-token' },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('leaves requests without Origin, and the pages, as they were', async () => {
    const plain = await fetch(`${hearth.url}/api/v10/users/@me`, { headers: { authorization: bearer } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const noPreflight = await fetch(`${hearth.url}/api/v10/users/@me`, { method: 'OPTIONS' });
    expect(noPreflight.status).toBe(404);
    const page = await fetch(`${hearth.url}/oauth2/authorize`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(page.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe.skipIf(!available)('CORS in Chromium: a page of another origin calls the API', () => {
  let browser: Browser;
  let site: CallbackServer;
  let page: Page;
  beforeAll(async () => {
    [browser, site] = await Promise.all([launchChromium(), startCallbackServer()]);
    page = await browser.newPage();
    await page.goto(site.url);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it('reads the user, a rate-limit header and an error body with fetch and a Bearer token', async () => {
    expect(new URL(site.url).origin).not.toBe(new URL(hearth.url).origin);
    const answers = await page.evaluate(
      async ({ api, authorization }) => {
        const me = await fetch(`${api}/users/@me`, { headers: { authorization } });
        const refused = await fetch(`${api}/users/@me`, { headers: { authorization: 'Bearer nope' } });
        return {
          status: me.status,
          user: (await me.json()) as { id: string },
          remaining: me.headers.get('x-ratelimit-remaining'),
          refused: { status: refused.status, body: (await refused.json()) as unknown },
        };
      },
      { api: `${hearth.url}/api/v10`, authorization: bearer },
    );
    expect(answers.status).toBe(200);
    expect(answers.user.id).toBe(userId);
    expect(Number(answers.remaining)).toBeGreaterThanOrEqual(0);
    expect(answers.refused).toEqual({ status: 401, body: { code: 0, message: '401: Unauthorized' } });
  });
});
