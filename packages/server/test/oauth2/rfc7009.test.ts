import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  consentLocation,
  createGame,
  createPlayer,
  grantTokens,
  type TestGame,
  type Tokens,
  tokenRequest,
} from '../../../../test-support/oauth.js';
import type { BusEvent } from '../../src/bus/bus.js';

let hearth: TestHearth;
let game: TestGame;
let other: TestGame;
const events: BusEvent[] = [];

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  hearth.bus.subscribe((event) => events.push(event));
  game = await createGame(hearth);
  other = await createGame(hearth);
});
afterAll(() => hearth.close());

const revoke = (token: string, client: TestGame, extra: Record<string, string> = {}) =>
  tokenRequest(
    hearth,
    { token, client_id: client.id, client_secret: client.clientSecret, ...extra },
    { path: '/oauth2/token/revoke' },
  );
const refresh = (tokens: Tokens, client: TestGame = game) =>
  tokenRequest(hearth, {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token!,
    client_id: client.id,
    client_secret: client.clientSecret,
  });
const me = (tokens: Tokens) => hearth.api('/users/@me', { auth: `Bearer ${tokens.access_token}` });
const outbox = (type: string) =>
  hearth.storage.db.selectFrom('outbox').selectAll().where('type', '=', type).orderBy('id').execute();

describe('RFC 7009 token revocation', () => {
  it('§2.2 revoking an access token answers 200 {} and ends every token of that app for that user', async () => {
    const player = await createPlayer(hearth);
    const first = await grantTokens(hearth, game, player.token);
    const second = await grantTokens(hearth, game, player.token, 'identify email');
    const elsewhere = await grantTokens(hearth, other, player.token);
    const response = await revoke(first.access_token, game);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
    for (const tokens of [first, second]) expect((await me(tokens)).status).toBe(401);
    expect((await me(elsewhere)).status).toBe(200);
  });

  it('a refresh after revocation is invalid_grant, worded as the platform words it', async () => {
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token);
    await revoke(tokens.refresh_token!, game, { token_type_hint: 'refresh_token' });
    const response = await refresh(tokens);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'Invalid "refresh_token" in request',
    });
  });

  it('emits APPLICATION_DEAUTHORIZED once, on the bus and in the webhook outbox, with the serialized user', async () => {
    const player = await createPlayer(hearth, 'deauthorized.player');
    const tokens = await grantTokens(hearth, game, player.token);
    const before = (await outbox('APPLICATION_DEAUTHORIZED')).length;
    await revoke(tokens.access_token, game);
    await revoke(tokens.access_token, game);
    await refresh(tokens);
    const rows = await outbox('APPLICATION_DEAUTHORIZED');
    expect(rows.length - before).toBe(1);
    const row = rows.at(-1)!;
    expect(row.application_id).toBe(game.id);
    const data = JSON.parse(row.payload) as { user: { id: string; username: string } };
    expect(data.user).toMatchObject({ id: player.user.id, username: 'deauthorized.player' });
    const published = events.filter(
      (e) =>
        e.type === 'APPLICATION_DEAUTHORIZED' && (e.data['user'] as { id: string }).id === player.user.id,
    );
    expect(published).toHaveLength(1);
    expect(published[0]?.data['application_id']).toBe(game.id);
  });

  it('a new authorization emits APPLICATION_AUTHORIZED with the scopes; consenting again to the same scopes does not', async () => {
    const player = await createPlayer(hearth);
    const params = {
      client_id: game.id,
      response_type: 'code',
      scope: 'identify email',
      redirect_uri: 'http://127.0.0.1/callback',
      integration_type: '1',
    };
    await consentLocation(hearth, player.token, params);
    await consentLocation(hearth, player.token, params);
    const mine = (await outbox('APPLICATION_AUTHORIZED')).filter(
      (row) => (JSON.parse(row.payload) as { user: { id: string } }).user.id === player.user.id,
    );
    expect(mine).toHaveLength(1);
    expect(JSON.parse(mine[0]!.payload)).toMatchObject({
      integration_type: 1,
      scopes: ['identify', 'email'],
    });
  });

  it('§2.2 an unknown token answers 200 and changes nothing', async () => {
    const response = await revoke('not-a-token', game);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({});
  });

  it("§2.1 a client cannot revoke another client's token", async () => {
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token);
    expect((await revoke(tokens.access_token, other)).status).toBe(200);
    expect((await me(tokens)).status).toBe(200);
  });

  it('§2.1 a public client may revoke with its client_id alone; a confidential one needs its secret', async () => {
    const publicGame = await createGame(hearth, { publicClient: true });
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token);
    const withoutSecret = await tokenRequest(
      hearth,
      { token: tokens.access_token, client_id: game.id },
      { path: '/oauth2/token/revoke' },
    );
    expect(withoutSecret.status).toBe(401);
    expect(await withoutSecret.json()).toEqual({ error: 'invalid_client' });
    expect((await me(tokens)).status).toBe(200);
    const answer = await tokenRequest(
      hearth,
      { token: 'anything', client_id: publicGame.id },
      { path: '/oauth2/token/revoke' },
    );
    expect(answer.status).toBe(200);
  });

  it('§2.2.1 an unknown token_type_hint is unsupported_token_type; a missing token is invalid_request', async () => {
    const hinted = await revoke('x', game, { token_type_hint: 'id_token' });
    expect(hinted.status).toBe(400);
    expect(await hinted.json()).toEqual({ error: 'unsupported_token_type' });
    const missing = await tokenRequest(
      hearth,
      { client_id: game.id, client_secret: game.clientSecret },
      { path: '/oauth2/token/revoke' },
    );
    expect(await missing.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Missing "token" in request.',
    });
  });

  it('after revocation the player must consent again: prompt=none answers consent_required', async () => {
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token);
    const params = {
      client_id: game.id,
      response_type: 'code',
      scope: 'identify',
      redirect_uri: 'http://127.0.0.1/callback',
      prompt: 'none',
      state: 'p',
    };
    expect((await consentLocation(hearth, player.token, params)).searchParams.get('code')).not.toBeNull();
    await revoke(tokens.access_token, game);
    const location = await consentLocation(hearth, player.token, params);
    expect(location.searchParams.get('error')).toBe('consent_required');
    expect(location.searchParams.get('state')).toBe('p');
  });
});
