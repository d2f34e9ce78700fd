import { sdkpp } from '@hearth/sdk';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import {
  startIdentityProvider,
  type TestIdentityProvider,
  type TestIssuer,
} from '../../../test-support/identity-provider.js';
import {
  authorizationCode,
  createGame,
  createPlayer,
  pkcePair,
  type TestGame,
} from '../../../test-support/oauth.js';

/**
 * The provisional-account operations of the library (seed, Library operations: UpdateToken,
 * UnmergeIntoProvisionalAccount; Authentication 5) against a live server and a live identity provider.
 */

const { AuthenticationExternalAuthType: AuthType, ErrorType, Client } = sdkpp;
const clock = new ManualClock(Date.now());
let idp: TestIdentityProvider;
let issuer: TestIssuer;
let hearth: TestHearth;
let game: TestGame;

beforeAll(async () => {
  idp = await startIdentityProvider();
  issuer = await idp.addIssuer('sdk');
  hearth = await startHearth(
    { allowLoopbackUrls: true, providerCaFile: idp.caFile, rateLimitGlobal: 1_000_000 },
    clock,
  );
  game = await createGame(hearth, { publicClient: true });
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
  const configured = await hearth.api('/applications/@me/identity-providers', {
    method: 'POST',
    auth: `Bot ${game.botToken}`,
    body: { type: 'OIDC', issuer: issuer.url, client_id: game.id },
  });
  expect(configured.status).toBe(201);
});
afterAll(async () => {
  await hearth.close();
  await idp.close();
});

function newClient(): sdkpp.Client {
  return new Client(`${hearth.url}/api`, hearth.url);
}

/** Resolves when the client reaches `status` (the status callback, no polling). */
function until(client: sdkpp.Client, status: sdkpp.ClientStatus): Promise<void> {
  return new Promise((resolve) => {
    client.SetStatusChangedCallback((now) => {
      if (now === status) resolve();
    });
  });
}

async function connect(client: sdkpp.Client, accessToken: string): Promise<void> {
  await client.UpdateToken(sdkpp.AuthorizationTokenType.Bearer, accessToken);
  const ready = until(client, Client.Status.Ready);
  client.Connect();
  await ready;
}

const idToken = (sub: string, extra: Record<string, unknown> = {}) =>
  issuer.sign(issuer.claims(game.id, clock.now(), { sub, ...extra }));

describe('provisional accounts through the library', () => {
  it('GetProvisionalToken → UpdateToken → Connect: the player is provisional; UpdateProvisionalAccountDisplayName names them', async () => {
    const client = newClient();
    const seen: unknown[][] = [];
    const outcome = await client.GetProvisionalToken(
      BigInt(game.id),
      AuthType.OIDC,
      await idToken('sdk-alice', { preferred_username: 'Alice' }),
      (...args) => seen.push(args),
    );
    expect(outcome.result.Successful()).toBe(true);
    expect(outcome).toMatchObject({ expiresIn: 604800, scopes: 'sdk.social_layer', refreshToken: '' });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[1]).toBe(outcome.accessToken);

    await connect(client, outcome.accessToken);
    const user = client.GetCurrentUserV2();
    expect(user?.IsProvisional()).toBe(true);
    expect(user?.DisplayName()).toBe('Alice');

    const results: sdkpp.ClientResult[] = [];
    const renamed = await client.UpdateProvisionalAccountDisplayName('Neo', (result) => results.push(result));
    expect(renamed.Successful()).toBe(true);
    expect(results).toEqual([renamed]);
    const me = await hearth.api('/users/@me', { auth: `Bearer ${outcome.accessToken}` });
    expect(await me.json()).toMatchObject({ global_name: 'Neo', provisional: true });

    for (const name of ['', 'n'.repeat(33)]) {
      const refused = await client.UpdateProvisionalAccountDisplayName(name);
      expect(refused.Type()).toBe(ErrorType.ValidationError);
    }
    client.Disconnect();
  });

  it('failures resolve with the platform code, never reject', async () => {
    const client = newClient();
    const expired = await client.GetProvisionalToken(
      game.id,
      AuthType.OIDC,
      await idToken('sdk-late', { exp: Math.floor(clock.now() / 1000) - 1 }),
    );
    expect(expired.result.Successful()).toBe(false);
    expect(expired.result.ErrorCode()).toBe(530001);
    expect(expired.result.Status()).toBe(400);
    expect(expired.accessToken).toBe('');
    const badId = await client.GetProvisionalToken('not-an-id', AuthType.OIDC, 'x');
    expect(badId.result.Type()).toBe(ErrorType.ValidationError);
    const badType = await client.UnmergeIntoProvisionalAccount(
      game.id,
      99 as sdkpp.AuthenticationExternalAuthType,
      'x',
    );
    expect(badType.Type()).toBe(ErrorType.ValidationError);
    const unconfigured = await client.GetProvisionalToken(game.id, AuthType.SteamSessionTicket, 'ticket');
    expect(unconfigured.result.ErrorCode()).toBe(530008);
  });

  it('GetTokenFromProvisionalMerge merges; the provisional flow then answers 530010; UnmergeIntoProvisionalAccount severs the link', async () => {
    const provisionalClient = newClient();
    const credential = await idToken('sdk-bob');
    const provisional = await provisionalClient.GetProvisionalToken(game.id, AuthType.OIDC, credential);
    await connect(provisionalClient, provisional.accessToken);
    const provisionalId = provisionalClient.GetCurrentUserV2()?.Id();
    const ended = until(provisionalClient, Client.Status.Disconnected);

    const player = await createPlayer(hearth);
    const { verifier, challenge } = pkcePair();
    const code = await authorizationCode(hearth, game, player.token, {
      scope: 'openid sdk.social_layer',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const fullClient = newClient();
    const merged = await fullClient.GetTokenFromProvisionalMerge(
      game.id,
      code,
      verifier,
      'http://127.0.0.1/callback',
      AuthType.OIDC,
      credential,
    );
    expect(merged.result.Successful()).toBe(true);
    expect(merged.refreshToken).not.toBe('');
    // The provisional account's session ends with its account.
    await ended;
    await connect(fullClient, merged.accessToken);
    expect(fullClient.GetCurrentUserV2()?.Id()).toBe(BigInt(player.user.id));
    expect(fullClient.GetCurrentUserV2()?.IsProvisional()).toBe(false);
    expect(provisionalId).not.toBe(BigInt(player.user.id));

    const again = await newClient().GetProvisionalToken(game.id, AuthType.OIDC, credential);
    expect(again.result.ErrorCode()).toBe(530010);

    const disconnected = until(fullClient, Client.Status.Disconnected);
    const unmerged = await newClient().UnmergeIntoProvisionalAccount(game.id, AuthType.OIDC, credential);
    expect(unmerged.Successful()).toBe(true);
    await disconnected;
    const reborn = await newClient().GetProvisionalToken(game.id, AuthType.OIDC, credential);
    expect(reborn.result.Successful()).toBe(true);
    const me = (await (await hearth.api('/users/@me', { auth: `Bearer ${reborn.accessToken}` })).json()) as {
      id: string;
    };
    expect(BigInt(me.id)).not.toBe(provisionalId);
    expect(me.id).not.toBe(player.user.id);
  });
});
