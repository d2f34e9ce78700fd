import { sdkpp } from '@hearth/sdk';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import {
  startIdentityProvider,
  type TestIdentityProvider,
  type TestIssuer,
} from '../../../test-support/identity-provider.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';

/** Client::GetUserApplicationProfiles and its NoLock variant (seed: Library operations) against a live server. */

const { AuthenticationExternalAuthType: AuthType, Client } = sdkpp;
const clock = new ManualClock(Date.now());
let idp: TestIdentityProvider;
let issuer: TestIssuer;
let hearth: TestHearth;
let game: TestGame;

beforeAll(async () => {
  idp = await startIdentityProvider();
  issuer = await idp.addIssuer('profiles');
  hearth = await startHearth({ allowLoopbackUrls: true, providerCaFile: idp.caFile }, clock);
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

describe('GetUserApplicationProfiles (seed: game identity data from external identity providers)', () => {
  it('answers one UserApplicationProfileHandle per identity; NoLock reads what it answered, without a request', async () => {
    const client = new Client(`${hearth.url}/api`, hearth.url);
    expect(client.GetUserApplicationProfilesNoLock()).toEqual([]);
    const token = await client.GetProvisionalToken(
      BigInt(game.id),
      AuthType.OIDC,
      await issuer.sign(
        issuer.claims(game.id, clock.now(), { sub: 'player-42', preferred_username: 'Robin' }),
      ),
    );
    expect(token.result.Successful()).toBe(true);
    await client.UpdateToken(sdkpp.AuthorizationTokenType.Bearer, token.accessToken);
    const seen: unknown[][] = [];
    const outcome = await client.GetUserApplicationProfiles((...args) => seen.push(args));
    expect(outcome.result.Successful()).toBe(true);
    expect(seen).toEqual([[outcome.result, outcome.profiles]]);
    expect(outcome.profiles).toHaveLength(1);
    const [profile] = outcome.profiles;
    expect({
      avatarHash: profile?.AvatarHash(),
      metadata: profile?.Metadata(),
      providerId: profile?.ProviderId(),
      providerIssuedUserId: profile?.ProviderIssuedUserId(),
      providerType: profile?.ProviderType(),
      username: profile?.Username(),
    }).toEqual({
      avatarHash: '',
      metadata: '{}',
      providerId: issuer.url,
      providerIssuedUserId: 'player-42',
      providerType: 'OIDC',
      username: 'Robin',
    });
    const cached = client.GetUserApplicationProfilesNoLock();
    expect(cached.map((handle) => handle.ProviderIssuedUserId())).toEqual(['player-42']);
  });

  it('a player with no external identity has no profiles; no token is an error result, not a throw', async () => {
    const { token } = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, token, 'identify');
    const client = new Client(`${hearth.url}/api`, hearth.url);
    await client.UpdateToken(sdkpp.AuthorizationTokenType.Bearer, tokens.access_token);
    const outcome = await client.GetUserApplicationProfiles();
    expect(outcome.result.Successful()).toBe(true);
    expect(outcome.profiles).toEqual([]);
    const anonymous = await new Client(`${hearth.url}/api`, hearth.url).GetUserApplicationProfiles();
    expect(anonymous.result.Successful()).toBe(false);
    expect(anonymous.profiles).toEqual([]);
  });
});
