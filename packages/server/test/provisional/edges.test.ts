import { GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  authorizationCode,
  createGame,
  createPlayer,
  grantTokens,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';

const ADMIN_TOKEN = 'another-admin-secret-0123456789abcdefgh';
const clock = new ManualClock(Date.now());
let hearth: TestHearth;
let game: TestGame;
let counter = 0;

beforeAll(async () => {
  hearth = await startHearth({ adminToken: ADMIN_TOKEN, rateLimitGlobal: 1_000_000 }, clock);
  game = await enabledGame();
});
afterAll(() => hearth.close());

async function enabledGame(publicClient = false): Promise<TestGame> {
  const created = await createGame(hearth, { publicClient });
  await hearth.services.applications.adminUpdate(created.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
  return created;
}

function botToken(body: unknown, target = game, auth = `Bot ${target.botToken}`) {
  return hearth.api('/partner-sdk/token/bot', { method: 'POST', auth, body });
}

async function provisional(target = game): Promise<{ token: string; externalId: string; userId: string }> {
  const externalId = `edge-${++counter}`;
  const response = await botToken({ external_user_id: externalId }, target);
  expect(response.status).toBe(200);
  const { access_token } = (await response.json()) as { access_token: string };
  const me = (await (await hearth.api('/users/@me', { auth: `Bearer ${access_token}` })).json()) as {
    id: string;
  };
  return { token: access_token, externalId, userId: me.id };
}

async function mergeWith(playerToken: string, fields: Record<string, string>, target = game) {
  const code = await authorizationCode(hearth, target, playerToken, { scope: 'openid sdk.social_layer' });
  return tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: 'http://127.0.0.1/callback',
    client_id: target.id,
    client_secret: target.clientSecret,
    ...fields,
  });
}

const merge = (playerToken: string, token: string, target = game) =>
  mergeWith(
    playerToken,
    { external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN', external_auth_token: token },
    target,
  );

async function expectBody(response: Promise<Response> | Response, status: number, expected: object) {
  const answer = await response;
  expect(await answer.json()).toEqual(expected);
  expect(answer.status).toBe(status);
}

async function expectFormError(response: Promise<Response>) {
  const answer = await response;
  expect(answer.status).toBe(400);
  expect(((await answer.json()) as { code: number }).code).toBe(50035);
}

describe('POST /partner-sdk/token/bot (PROTOCOL.md §B.2)', () => {
  it('answers the provisional token response; a 32-character preferred name is the display name', async () => {
    const response = await botToken({
      external_user_id: 'x'.repeat(1024),
      preferred_global_name: 'n'.repeat(32),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const tokens = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(tokens).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'scope',
      'token_type',
    ]);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 604800, scope: 'sdk.social_layer' });
    const me = await hearth.api('/users/@me', { auth: `Bearer ${tokens['access_token']}` });
    expect(await me.json()).toMatchObject({ global_name: 'n'.repeat(32), provisional: true });
  });

  it('refuses bad bodies with 50035: empty or 1025-character ids, 0 or 33-character names, wrong types', async () => {
    for (const body of [
      {},
      { external_user_id: '' },
      { external_user_id: 'x'.repeat(1025) },
      { external_user_id: 42 },
      { external_user_id: 'ok', preferred_global_name: '' },
      { external_user_id: 'ok', preferred_global_name: 'n'.repeat(33) },
      { external_user_id: 'ok', provisional_user_id: 'abc' },
    ]) {
      await expectFormError(botToken(body));
    }
  });

  it('needs the application bot: 401 without credentials or with a bearer token; 530000 unless enabled', async () => {
    await expectBody(
      hearth.api('/partner-sdk/token/bot', { method: 'POST', body: { external_user_id: 'a' } }),
      401,
      { code: 0, message: '401: Unauthorized' },
    );
    const { token } = await provisional();
    const asBearer = await botToken({ external_user_id: 'a' }, game, `Bearer ${token}`);
    expect(asBearer.status).toBe(401);
    const plain = await createGame(hearth);
    await expectBody(botToken({ external_user_id: 'a' }, plain), 400, {
      code: 530000,
      message: 'Application is not enabled for provisional accounts',
    });
  });

  it('a revoked approval refuses the very next request, and a new one admits it again', async () => {
    const target = await enabledGame();
    expect((await botToken({ external_user_id: 'approval' }, target)).status).toBe(200);
    await hearth.services.applications.adminUpdate(target.id, {
      revoke_flags: ['ProvisionalAccountsEnabled'],
    });
    await expectBody(botToken({ external_user_id: 'approval' }, target), 400, {
      code: 530000,
      message: 'Application is not enabled for provisional accounts',
    });
    await hearth.services.applications.adminUpdate(target.id, {
      grant_flags: ['ProvisionalAccountsEnabled'],
    });
    expect((await botToken({ external_user_id: 'approval' }, target)).status).toBe(200);
  });

  it('requests made at once each get their own answer; one new identity asked twice is one account', async () => {
    const full = await createPlayer(hearth);
    const claimed = await provisional();
    const claimedMerge = await merge(full.token, claimed.token);
    expect(claimedMerge.status).toBe(200);
    const ids = ['burst-a', 'burst-b', 'burst-same', 'burst-same', claimed.externalId];
    const answers = await Promise.all(ids.map((id) => botToken({ external_user_id: id })));
    expect(answers.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // The merged identity is a full account now: refused, and the requests beside it still committed.
    expect(answers[4]!.status).toBe(400);
    expect(((await answers[4]!.json()) as { code: number }).code).toBe(530010);
    const users = await Promise.all(
      answers.slice(0, 4).map(async (answer) => {
        const { access_token } = (await answer.json()) as { access_token: string };
        const me = await hearth.api('/users/@me', { auth: `Bearer ${access_token}` });
        expect(me.status).toBe(200);
        return ((await me.json()) as { id: string }).id;
      }),
    );
    expect(new Set(users).size).toBe(3);
    expect(users[2]).toBe(users[3]);
  });

  it("keeps each application's identities apart: the same external id is another account elsewhere", async () => {
    const other = await enabledGame();
    const here = await botToken({ external_user_id: 'shared-id' });
    const there = await botToken({ external_user_id: 'shared-id' }, other);
    const idOf = async (response: Response) => {
      const { access_token } = (await response.json()) as { access_token: string };
      return (
        (await (await hearth.api('/users/@me', { auth: `Bearer ${access_token}` })).json()) as { id: string }
      ).id;
    };
    expect(await idOf(here)).not.toBe(await idOf(there));
  });

  it('a bot-issued token is exchanged at /partner-sdk/token for a fresh one; a full account token is not', async () => {
    const publicGame = await enabledGame(true);
    const { token, userId } = await provisional(publicGame);
    const response = await hearth.api('/partner-sdk/token', {
      method: 'POST',
      body: {
        client_id: publicGame.id,
        external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
        external_auth_token: token,
      },
    });
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string };
    const me = (await (await hearth.api('/users/@me', { auth: `Bearer ${access_token}` })).json()) as {
      id: string;
    };
    expect(me.id).toBe(userId);
    await expectBody(
      hearth.api('/partner-sdk/token', {
        method: 'POST',
        body: {
          client_id: publicGame.id,
          external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
          external_auth_token: 'nope',
        },
      }),
      403,
      { code: 50025, message: 'Invalid OAuth2 access token provided' },
    );
  });
});

describe('merge refusals (PROTOCOL.md §B.3)', () => {
  it('530010 names the full account once the identity is merged', async () => {
    const player = await createPlayer(hearth);
    const source = await provisional();
    expect((await merge(player.token, source.token)).status).toBe(200);
    await expectBody(botToken({ external_user_id: source.externalId }), 400, {
      code: 530010,
      message: 'User account is non-provisional and should be authed through OAuth2',
      user_id: player.user.id,
      provider_type: 'DISCORD_BOT',
      provider_id: null,
      provider_issued_user_id: source.externalId,
    });
  });

  it("the full account's SDK sessions receive USER_MERGE_OPERATION_COMPLETED", async () => {
    const player = await createPlayer(hearth);
    const existing = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    const session = await GatewayClient.connect(hearth.url);
    await session.nextOp(GatewayOpcodes.Hello);
    session.send({
      op: 2,
      d: { token: `Bearer ${existing.access_token}`, properties: { os: 'linux', browser: 't', device: 't' } },
    });
    await session.nextDispatch('READY');
    const source = await provisional();
    expect((await merge(player.token, source.token)).status).toBe(200);
    const event = await session.nextDispatch('USER_MERGE_OPERATION_COMPLETED');
    expect(event.d).toEqual({ merge_operation_id: expect.any(String), source_user_id: source.userId });
    await session.close();
  });

  it('530023 when the full account already holds an identity for the application', async () => {
    const player = await createPlayer(hearth);
    expect((await merge(player.token, (await provisional()).token)).status).toBe(200);
    await expectBody(merge(player.token, (await provisional()).token), 400, {
      code: 530023,
      message: 'User already has an external identity for this application',
    });
  });

  it('530014 when the source is a full account; 50025 for an unknown or foreign token; the code stays usable', async () => {
    const player = await createPlayer(hearth);
    const full = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    const other = await createPlayer(hearth);
    await expectBody(merge(other.token, full.access_token), 400, {
      code: 530014,
      message: 'Merge source user is not provisional',
    });
    const invalid = { code: 50025, message: 'Invalid OAuth2 access token provided' };
    await expectBody(merge(other.token, 'not-a-token'), 403, invalid);
    const elsewhere = await enabledGame();
    await expectBody(merge(other.token, (await provisional(elsewhere)).token), 403, invalid);
  });

  it('530000 when the application is not enabled; invalid_request for half a merge or an unknown type', async () => {
    const plain = await createGame(hearth);
    const player = await createPlayer(hearth);
    await expectBody(merge(player.token, (await provisional()).token, plain), 400, {
      code: 530000,
      message: 'Application is not enabled for provisional accounts',
    });
    for (const fields of [
      { external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN' },
      { external_auth_token: 'x' },
      { external_auth_type: 'SAML', external_auth_token: 'x' },
    ]) {
      const response = await mergeWith(player.token, fields);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    }
  });

  it('a temporary ban refuses the merge until it ends', async () => {
    const player = await createPlayer(hearth);
    const source = await provisional();
    expect((await merge(player.token, source.token)).status).toBe(200);
    const ban = await hearth.api(`/admin/users/${player.user.id}/ban`, {
      method: 'PUT',
      headers: { authorization: `Admin ${ADMIN_TOKEN}` },
      body: { duration_seconds: 3600 },
    });
    expect(ban.status).toBe(200);
    const restricted = (await (await botToken({ external_user_id: source.externalId })).json()) as {
      access_token: string;
    };
    const destination = await createPlayer(hearth);
    await expectBody(merge(destination.token, restricted.access_token), 400, {
      code: 530017,
      message: 'Merge source user is banned',
    });
    clock.advance(3601_000);
    expect((await merge(destination.token, restricted.access_token)).status).toBe(200);
  });
});

describe('unmerge refusals', () => {
  const unmergeBot = (body: unknown) =>
    hearth.api('/partner-sdk/provisional-accounts/unmerge/bot', {
      method: 'POST',
      auth: `Bot ${game.botToken}`,
      body,
    });

  it('404 for an unknown identity, 50229 for one that is still provisional, 50035 for bad bodies', async () => {
    await expectBody(unmergeBot({ external_user_id: 'never-seen' }), 404, {
      code: 10013,
      message: 'Unknown User',
    });
    const { externalId } = await provisional();
    await expectBody(unmergeBot({ external_user_id: externalId }), 400, {
      code: 50229,
      message: 'Invalid user type',
    });
    await expectFormError(unmergeBot({}));
    await expectFormError(unmergeBot({ external_user_id: 'x'.repeat(1025) }));
  });

  it('a public client unmerges with the player token (UnmergeIntoProvisionalAccount); others need the secret', async () => {
    const publicGame = await enabledGame(true);
    const source = await provisional(publicGame);
    const player = await createPlayer(hearth);
    const merged = await merge(player.token, source.token, publicGame);
    const { access_token } = (await merged.json()) as { access_token: string };
    const unmerge = (client_id: string, token: string) =>
      hearth.api('/partner-sdk/provisional-accounts/unmerge', {
        method: 'POST',
        body: {
          client_id,
          external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
          external_auth_token: token,
        },
      });
    await expectBody(unmerge(game.id, access_token), 400, { code: 530007, message: 'Invalid client secret' });
    expect((await unmerge(publicGame.id, access_token)).status).toBe(204);
    expect((await hearth.api('/users/@me', { auth: `Bearer ${access_token}` })).status).toBe(401);
  });
});

describe('display names and the admin API', () => {
  const rename = (token: string, body: unknown) =>
    hearth.api('/users/@me/account', { method: 'PATCH', auth: `Bearer ${token}`, body });

  it('a provisional account renames itself (1–32 characters); a full account needs the approved scope', async () => {
    const { token } = await provisional();
    const renamed = await rename(token, { global_name: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ global_name: 'Renamed', provisional: true });
    await expectFormError(rename(token, { global_name: 'n'.repeat(33) }));
    await expectFormError(rename(token, { global_name: '' }));
    await expectFormError(rename(token, {}));
    const player = await createPlayer(hearth);
    const full = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    await expectBody(rename(full.access_token, { global_name: 'x' }), 400, {
      code: 50229,
      message: 'Invalid user type',
    });
    expect(
      (await hearth.api('/users/@me/account', { method: 'PATCH', body: { global_name: 'x' } })).status,
    ).toBe(401);
  });

  it('bans need the admin token; unknown users are 404; a ban is lifted once', async () => {
    const player = await createPlayer(hearth);
    const call = (method: string, auth: string | undefined, userId = player.user.id, body?: unknown) =>
      hearth.api(`/admin/users/${userId}/ban`, {
        method,
        ...(auth ? { headers: { authorization: auth } } : {}),
        ...(body === undefined ? {} : { body }),
      });
    expect((await call('PUT', undefined, player.user.id, {})).status).toBe(401);
    expect((await call('PUT', 'Admin wrong', player.user.id, {})).status).toBe(401);
    expect((await call('PUT', `Bot ${game.botToken}`, player.user.id, {})).status).toBe(401);
    const admin = `Admin ${ADMIN_TOKEN}`;
    await expectBody(call('PUT', admin, '123', {}), 404, { code: 10013, message: 'Unknown User' });
    await expectFormError(call('PUT', admin, player.user.id, { duration_seconds: 0 }));
    await expectFormError(call('PUT', admin, player.user.id, { duration_seconds: 'soon' }));
    const { userId } = await provisional();
    await expectBody(call('PUT', admin, userId, {}), 400, { code: 50229, message: 'Invalid user type' });
    expect((await call('PUT', admin, player.user.id, { duration_seconds: 60 })).status).toBe(200);
    // Banned: the account signs in nowhere, and its session tokens are gone.
    const login = { login: `${player.user.username}@example.com`, password: 'a long password' };
    expect((await hearth.api('/auth/login', { method: 'POST', body: login })).status).toBe(403);
    expect((await hearth.api('/users/@me', { auth: player.token })).status).toBe(401);
    expect((await call('DELETE', admin)).status).toBe(204);
    expect((await hearth.api('/auth/login', { method: 'POST', body: login })).status).toBe(200);
    expect((await call('DELETE', admin)).status).toBe(404);
  });

  it('without a configured admin token the admin API refuses everyone', async () => {
    const closed = await startHearth({}, clock);
    try {
      const response = await closed.api('/admin/users/1/ban', {
        method: 'PUT',
        headers: { authorization: `Admin ${ADMIN_TOKEN}` },
        body: {},
      });
      expect(response.status).toBe(401);
    } finally {
      await closed.close();
    }
  });
});
