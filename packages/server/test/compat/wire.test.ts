import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';

/**
 * Wire details existing clients compare byte for byte (issue 23): the JSON media type with no charset, the
 * `Via` of a 429, percent-encoded path segments, and the API-prefixed authorize URL. The real clients that
 * broke on each are driven in the other files of this folder; these pin the exact bytes.
 */

let hearth: TestHearth;
let game: TestGame;
let player: { token: string; id: string };

beforeAll(async () => {
  hearth = await startHearth();
  game = await createGame(hearth);
  const { user, token } = await createPlayer(hearth);
  player = { token, id: user.id };
});
afterAll(() => hearth.close());

describe('Content-Type of JSON answers is exactly application/json (discord.py compares the whole value)', () => {
  it.each([
    ['200', '/users/@me', 200],
    ['401 error body', '/applications/@me', 401],
    ['404 of an unknown route', '/no/such/route', 404],
    ['400 of a discontinued version', '/users/@me', 400, 'v6'],
  ])('%s', async (_name, path, status, version = 'v10') => {
    const response = await hearth.api(path, {
      ...(status === 401 ? {} : { auth: `Bot ${game.botToken}` }),
      version,
    });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json');
  });

  it('a 400 with an error tree', async () => {
    const response = await hearth.api('/applications/@me', {
      method: 'PATCH',
      auth: `Bot ${game.botToken}`,
      body: { flags: 1 },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/json');
  });

  it('HTML pages keep their charset', async () => {
    const page = await fetch(`${hearth.url}/oauth2/authorize`, { redirect: 'manual' });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });
});

describe('429 carries Via beside the rate-limit headers (the platform answers through its proxy)', () => {
  it('answers the global limit with Via: 1.1 hearth and the platform body', async () => {
    const limited = await startHearth({ rateLimitGlobal: 1 });
    try {
      const first = await limited.api('/gateway');
      expect(first.status).toBe(200);
      expect(first.headers.get('via')).toBeNull();
      const second = await limited.api('/gateway');
      expect(second.status).toBe(429);
      expect(second.headers.get('via')).toBe('1.1 hearth');
      expect(second.headers.get('content-type')).toBe('application/json');
      expect(second.headers.get('x-ratelimit-global')).toBe('true');
      expect(second.headers.get('retry-after')).toBe('1');
      expect(await second.json()).toMatchObject({ global: true, code: 0 });
    } finally {
      await limited.close();
    }
  });
});

describe('percent-encoded path segments route as their decoded form', () => {
  it.each([
    ['/users/%40me', 'user'],
    ['/users/%40%6De', 'user'],
  ])('%s', async (path) => {
    const response = await hearth.api(path, { auth: player.token });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string }).id).toBe(player.id);
  });

  it('/applications/%40me and /oauth2/applications/%40me', async () => {
    for (const path of ['/applications/%40me', '/oauth2/applications/%40me']) {
      const response = await hearth.api(path, { auth: `Bot ${game.botToken}` });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { id: string }).id).toBe(game.id);
    }
  });

  it('PATCH /users/%40me changes the user as /users/@me does', async () => {
    const response = await hearth.api('/users/%40me', {
      method: 'PATCH',
      auth: player.token,
      body: { global_name: 'Encoded' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: player.id, global_name: 'Encoded' });
  });

  it('an encoded slash stays inside its segment: /users/%40me%2Fconnections is not /users/@me/connections', async () => {
    // It reaches GET /users/{user.id} with the one segment `@me/connections`, which is no user id.
    const slash = await hearth.api('/users/%40me%2Fconnections', { auth: player.token });
    expect(slash.status).toBe(400);
    expect(await slash.json()).toMatchObject({ code: 50035, message: 'Invalid Form Body' });
  });
});

describe('the API-prefixed authorize URL leads to the consent page (@discordjs/core generateAuthorizationURL)', () => {
  it.each([['/api/oauth2/authorize'], ['/api/v10/oauth2/authorize'], ['/api/v9/oauth2/authorize']])(
    'GET %s redirects 302 to /oauth2/authorize with the same query',
    async (path) => {
      const query = `?client_id=${game.id}&response_type=code&scope=identify+email&state=a%2Fb`;
      const response = await fetch(`${hearth.url}${path}${query}`, { redirect: 'manual' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(`${hearth.url}/oauth2/authorize${query}`);
    },
  );

  it('without a query, to the bare page', async () => {
    const response = await fetch(`${hearth.url}/api/v10/oauth2/authorize`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${hearth.url}/oauth2/authorize`);
  });
});
