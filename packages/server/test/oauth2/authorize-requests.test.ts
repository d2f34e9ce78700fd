import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import type { BusEvent } from '../../src/bus/bus.js';

/**
 * POST /users/@me/authorize-requests: the platform client's entry point that makes a game's SDK receive
 * AUTHORIZE_REQUEST (seed, Library operations: RegisterAuthorizeRequestCallback; Events: AUTHORIZE_REQUEST).
 * The server's part is the bus event and its audience; the SDK suite follows it to the game's callback.
 */

let hearth: TestHearth;
let game: TestGame;
let player: { user: { id: string }; token: string };
const events: BusEvent[] = [];

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  hearth.bus.subscribe((event) => events.push(event));
  game = await createGame(hearth, { publicClient: true });
  player = await createPlayer(hearth);
});
afterAll(() => hearth.close());
beforeEach(() => {
  events.length = 0;
});

const request = (auth: string | undefined, body: unknown) =>
  hearth.api('/users/@me/authorize-requests', {
    method: 'POST',
    ...(auth === undefined ? {} : { auth }),
    ...(body === undefined ? {} : { body }),
  });

const authorizeRequests = () => events.filter((event) => event.type === 'AUTHORIZE_REQUEST');

describe('POST /users/@me/authorize-requests with the player session token', () => {
  it('answers 204 with no body and publishes AUTHORIZE_REQUEST for this player and this game only', async () => {
    const response = await request(player.token, { application_id: game.id, scopes: 'openid identify' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(authorizeRequests()).toEqual([
      expect.objectContaining({
        type: 'AUTHORIZE_REQUEST',
        data: { application_id: game.id, scopes: 'openid identify' },
        audience: { users: [player.user.id], applicationId: game.id },
      }),
    ]);
  });

  it("scopes default to the SDK's communication scopes, `openid sdk.social_layer`", async () => {
    expect((await request(player.token, { application_id: game.id })).status).toBe(204);
    expect(authorizeRequests().map((event) => event.data)).toEqual([
      { application_id: game.id, scopes: 'openid sdk.social_layer' },
    ]);
  });

  it('extra whitespace between scopes is dropped: the game passes the string to Authorize as it is', async () => {
    const scopes = '  openid\tsdk.social_layer_presence  ';
    expect((await request(player.token, { application_id: game.id, scopes })).status).toBe(204);
    expect(authorizeRequests()[0]?.data['scopes']).toBe('openid sdk.social_layer_presence');
  });

  it('an unknown application is 404 Unknown Application (10002), and nothing is published', async () => {
    const response = await request(player.token, { application_id: '123456789012345678' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: 10002, message: 'Unknown Application' });
    expect(authorizeRequests()).toEqual([]);
  });
});

describe('validation: 400 Invalid Form Body (50035), nothing published', () => {
  it.each([
    ['no application_id', {}, 'application_id'],
    ['an application_id that is no snowflake', { application_id: 'abc' }, 'application_id'],
    ['a numeric application_id', { application_id: 42 }, 'application_id'],
    ['scopes that are not a string', { application_id: '1', scopes: ['openid'] }, 'scopes'],
    ['empty scopes', { application_id: '1', scopes: '' }, 'scopes'],
  ])('%s', async (_name, body, field) => {
    const response = await request(player.token, body);
    expect(response.status).toBe(400);
    const answer = (await response.json()) as { code: number; errors: Record<string, unknown> };
    expect(answer.code).toBe(50035);
    expect(Object.keys(answer.errors)).toContain(field);
    expect(authorizeRequests()).toEqual([]);
  });

  it('an unknown scope, or only whitespace, is BASE_TYPE_INVALID at scopes', async () => {
    for (const scopes of ['openid no.such.scope', '   ']) {
      const response = await request(player.token, { application_id: game.id, scopes });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        code: 50035,
        message: 'Invalid Form Body',
        errors: { scopes: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
      });
    }
    expect(authorizeRequests()).toEqual([]);
  });
});

describe('who may call: the platform client only (a session token)', () => {
  it('a bot token is 403 Bots cannot use this endpoint (20001): a game cannot prompt its own players', async () => {
    const response = await request(`Bot ${game.botToken}`, { application_id: game.id });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { code: number }).code).toBe(20001);
    expect(authorizeRequests()).toEqual([]);
  });

  it("a game's bearer token is 401, and so is no token at all", async () => {
    const tokens = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    for (const auth of [`Bearer ${tokens.access_token}`, undefined]) {
      const response = await request(auth, { application_id: game.id });
      expect(response.status).toBe(401);
    }
    expect(authorizeRequests()).toEqual([]);
  });
});
