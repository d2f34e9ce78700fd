import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Config, ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  startIdentityProvider,
  type TestIdentityProvider,
  type TestIssuer,
} from '../../../../test-support/identity-provider.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';

const DAY = 24 * 60 * 60 * 1000;
const body = (code: number, message: string) => ({ code, message });
const CONFIG_NOT_FOUND = body(530008, 'OIDC configuration not found');

let idp: TestIdentityProvider;
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  idp = await startIdentityProvider();
});
afterAll(async () => {
  await idp.close();
});

async function enabledGame(hearth: TestHearth, publicClient = false): Promise<TestGame> {
  const game = await createGame(hearth, { publicClient });
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
  return game;
}

function configure(hearth: TestHearth, game: TestGame, provider: Record<string, unknown>) {
  return hearth.api('/applications/@me/identity-providers', {
    method: 'POST',
    auth: `Bot ${game.botToken}`,
    body: provider,
  });
}

function exchange(hearth: TestHearth, game: TestGame, token: string, type = 'OIDC') {
  return hearth.api('/partner-sdk/token', {
    method: 'POST',
    body: {
      client_id: game.id,
      client_secret: game.clientSecret,
      external_auth_type: type,
      external_auth_token: token,
    },
  });
}

async function expectRefusal(response: Promise<Response>, status: number, expected: object) {
  const answer = await response;
  expect(await answer.json()).toEqual(expected);
  expect(answer.status).toBe(status);
}

describe('OIDC configuration is validated when created (PROTOCOL.md §B.2; development loopback switch on)', () => {
  let hearth: TestHearth;
  let game: TestGame;
  beforeAll(async () => {
    hearth = await startHearth({ allowLoopbackUrls: true, providerCaFile: idp.caFile }, clock);
    game = await enabledGame(hearth);
  });
  afterAll(async () => hearth.close());

  it('accepts a valid issuer; HS256 among the announced algorithms is ignored', async () => {
    const issuer = await idp.addIssuer('valid-config');
    const response = await configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: game.id });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      application_id: game.id,
      type: 'OIDC',
      issuer: issuer.url,
      client_id: game.id,
      jwks_uri: `${issuer.url}/jwks`,
      id_token_signing_alg_values: ['RS256'],
      verification_url: null,
    });
    // The same issuer twice would make the configuration that verifies a token ambiguous.
    const twice = await configure(hearth, game, {
      type: 'OIDC',
      issuer: `${issuer.url}/`,
      client_id: 'other',
    });
    expect(twice.status).toBe(400);
    expect(await twice.json()).toMatchObject({
      code: 50035,
      errors: { issuer: { _errors: [{ code: 'BASE_TYPE_INVALID' }] } },
    });
    const listed = await hearth.api(`/applications/${game.id}/identity-providers`, {
      auth: `Bot ${game.botToken}`,
    });
    expect(((await listed.json()) as unknown[]).length).toBe(1);
  });

  it('refuses a discovery document answering with a redirect (not followed): 530008', async () => {
    const target = await idp.addIssuer('redirect-target');
    const issuer = await idp.addIssuer('redirecting', {
      discoveryRedirect: `${target.url}/.well-known/openid-configuration`,
    });
    await expectRefusal(
      configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: 'c' }),
      400,
      CONFIG_NOT_FOUND,
    );
  });

  it('refuses a key set answering with a redirect: 530009', async () => {
    const target = await idp.addIssuer('jwks-target');
    const issuer = await idp.addIssuer('jwks-redirecting', { jwksRedirect: `${target.url}/jwks` });
    await expectRefusal(
      configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: 'c' }),
      400,
      body(530009, 'OIDC JWKS not found'),
    );
  });

  it('refuses a discovery document naming another issuer: 530002', async () => {
    const issuer = await idp.addIssuer('wrong-issuer', {
      discovery: { issuer: 'https://elsewhere.example.com' },
    });
    await expectRefusal(
      configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: 'c' }),
      400,
      body(530002, 'ID token issuer mismatch'),
    );
  });

  it('refuses a provider announcing only HS256 (no allowed algorithm): 530008', async () => {
    const issuer = await idp.addIssuer('hs-only', {
      discovery: { id_token_signing_alg_values_supported: ['HS256'] },
    });
    await expectRefusal(
      configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: 'c' }),
      400,
      CONFIG_NOT_FOUND,
    );
  });

  it('refuses a missing discovery document: 530008', async () => {
    await expectRefusal(
      configure(hearth, game, { type: 'OIDC', issuer: `${idp.origin}/issuers/nobody`, client_id: 'c' }),
      400,
      CONFIG_NOT_FOUND,
    );
  });

  it.each([
    ['a non-https issuer', 'http://localhost/issuers/x'],
    ['an IP literal', 'https://10.1.2.3/issuer'],
    ['an IPv6 literal', 'https://[2001:db8::1]/issuer'],
    ['a .local host', 'https://issuer.local'],
    ['a .internal host', 'https://auth.corp.internal'],
    ['a .arpa host', 'https://1.0.0.10.in-addr.arpa'],
    ['a single-label host', 'https://issuer'],
    ['credentials', 'https://user:pass@auth.example.com'],
    ['a query', 'https://auth.example.com/?tenant=1'],
    ['a fragment', 'https://auth.example.com/#x'],
    ['no URL at all', 'not a url'],
  ])('refuses %s before fetching anything: 530008', async (_name, url) => {
    await expectRefusal(
      configure(hearth, game, { type: 'OIDC', issuer: url, client_id: 'c' }),
      400,
      CONFIG_NOT_FOUND,
    );
  });

  it('refuses bad bodies with 50035: missing client_id, unknown type, over-long issuer, the bot-issued type', async () => {
    for (const provider of [
      { type: 'OIDC', issuer: 'https://auth.example.com' },
      { type: 'NOPE', issuer: 'https://auth.example.com', client_id: 'c' },
      { type: 'OIDC', issuer: `https://auth.example.com/${'a'.repeat(2048)}`, client_id: 'c' },
      { type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN' },
      { type: 'STEAM_SESSION_TICKET' },
      { type: 'OIDC', issuer: 42, client_id: 'c' },
    ]) {
      const response = await configure(hearth, game, provider);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { code: number }).code).toBe(50035);
    }
  });

  it("refuses another application's providers path and unauthenticated callers", async () => {
    const other = await enabledGame(hearth);
    const response = await hearth.api(`/applications/${other.id}/identity-providers`, {
      auth: `Bot ${game.botToken}`,
    });
    expect(response.status).toBe(404);
    expect((await hearth.api('/applications/@me/identity-providers')).status).toBe(401);
  });
});

describe('ID tokens are verified strictly, each failure with its own code (PROTOCOL.md §B.2)', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let issuer: TestIssuer;
  beforeAll(async () => {
    hearth = await startHearth({ allowLoopbackUrls: true, providerCaFile: idp.caFile }, clock);
    game = await enabledGame(hearth);
    issuer = await idp.addIssuer('tokens');
    expect(
      (await configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: game.id })).status,
    ).toBe(201);
  });
  afterAll(async () => hearth.close());

  const claims = (extra = {}) => issuer.claims(game.id, clock.now(), extra);

  it('answers a provisional token for a valid ID token; preferred_username is the display name', async () => {
    const token = await issuer.sign(claims({ sub: 'alice', preferred_username: 'Alice' }));
    const response = await exchange(hearth, game, token);
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Record<string, unknown>;
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 604800, scope: 'sdk.social_layer' });
    expect(typeof tokens['id_token']).toBe('string');
    // Confidential client, OIDC: the deprecated refresh token is still given, and still works.
    expect(typeof tokens['refresh_token']).toBe('string');
    const refreshed = await hearth.api('/oauth2/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: String(tokens['refresh_token']),
        client_id: game.id,
        client_secret: game.clientSecret,
      }).toString(),
    });
    expect(refreshed.status).toBe(200);
    const me = await hearth.api('/users/@me', { auth: `Bearer ${tokens['access_token']}` });
    const user = (await me.json()) as { id: string };
    expect(user).toMatchObject({ global_name: 'Alice', provisional: true });
    // The same identity again: the same account.
    const again = (await (await exchange(hearth, game, token)).json()) as { access_token: string };
    const meAgain = await hearth.api('/users/@me', { auth: `Bearer ${again.access_token}` });
    expect(((await meAgain.json()) as { id: string }).id).toBe(user.id);
  });

  it('expired: 530001', async () => {
    const now = Math.floor(clock.now() / 1000);
    const token = await issuer.sign(claims({ iat: now - 7200, exp: now - 60 }));
    await expectRefusal(exchange(hearth, game, token), 400, body(530001, 'ID token expired'));
  });

  it('wrong issuer: 530002', async () => {
    const token = await issuer.sign(claims({ iss: 'https://other.example.com' }));
    await expectRefusal(exchange(hearth, game, token), 400, body(530002, 'ID token issuer mismatch'));
  });

  it('wrong audience: 530003', async () => {
    const token = await issuer.sign(claims({ aud: ['someone-else'] }));
    await expectRefusal(exchange(hearth, game, token), 400, body(530003, 'ID token audience mismatch'));
  });

  it('iat more than 7 days ago: 530004', async () => {
    const now = clock.now();
    const iat = Math.floor((now - 7 * DAY - 60_000) / 1000);
    const token = await issuer.sign(claims({ iat, exp: Math.floor(now / 1000) + 3600 }));
    await expectRefusal(exchange(hearth, game, token), 400, body(530004, 'ID token issued too long ago'));
  });

  it('missing kid: 530027', async () => {
    const token = await issuer.sign(claims(), { kid: null });
    await expectRefusal(
      exchange(hearth, game, token),
      400,
      body(530027, 'OIDC JWT is missing the kid header'),
    );
  });

  it('HS256: 530020', async () => {
    const token = await issuer.sign(claims(), {
      alg: 'HS256',
      secret: new TextEncoder().encode('x'.repeat(32)),
    });
    await expectRefusal(exchange(hearth, game, token), 400, body(530020, 'Invalid OIDC JWT'));
  });

  it('unknown kid: 530020', async () => {
    const token = await issuer.sign(claims(), { kid: 'rotated-away' });
    await expectRefusal(exchange(hearth, game, token), 400, body(530020, 'Invalid OIDC JWT'));
  });

  it('a signature by another key under the right kid, a missing sub, garbage: 530020', async () => {
    const impostor = await idp.addIssuer('impostor');
    const forged = await impostor.sign(claims(), { kid: issuer.kid });
    await expectRefusal(exchange(hearth, game, forged), 400, body(530020, 'Invalid OIDC JWT'));
    const noSub = await issuer.sign(claims({ sub: undefined }));
    await expectRefusal(exchange(hearth, game, noSub), 400, body(530020, 'Invalid OIDC JWT'));
    await expectRefusal(exchange(hearth, game, 'not.a.jwt'), 400, body(530020, 'Invalid OIDC JWT'));
  });

  it('a type the application has not configured: 530008', async () => {
    const token = await issuer.sign(claims());
    await expectRefusal(exchange(hearth, game, token, 'APPLE_ID_TOKEN'), 400, CONFIG_NOT_FOUND);
  });

  it('client authentication (530007) and the approval (530000) come first', async () => {
    const token = await issuer.sign(claims());
    await expectRefusal(
      hearth.api('/partner-sdk/token', {
        method: 'POST',
        body: {
          client_id: game.id,
          client_secret: 'wrong',
          external_auth_type: 'OIDC',
          external_auth_token: token,
        },
      }),
      400,
      body(530007, 'Invalid client secret'),
    );
    await expectRefusal(
      hearth.api('/partner-sdk/token', {
        method: 'POST',
        body: { client_id: game.id, external_auth_type: 'OIDC', external_auth_token: token },
      }),
      400,
      body(530007, 'Invalid client secret'),
    );
    const plain = await createGame(hearth);
    await expectRefusal(
      exchange(hearth, plain, token),
      400,
      body(530000, 'Application is not enabled for provisional accounts'),
    );
  });

  it('bad bodies: 50035 (missing fields, unknown type, a token over 10240 characters)', async () => {
    for (const sent of [
      {},
      { client_id: game.id, external_auth_type: 'OIDC' },
      { client_id: game.id, external_auth_type: 'SAML', external_auth_token: 'x' },
      { client_id: game.id, external_auth_type: 'OIDC', external_auth_token: 'x'.repeat(10241) },
      { client_id: 'abc', external_auth_type: 'OIDC', external_auth_token: 'x' },
    ]) {
      const response = await hearth.api('/partner-sdk/token', { method: 'POST', body: sent });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { code: number }).code).toBe(50035);
    }
  });
});

describe('production mode: loopback issuers fail the hostname rules; the CA is trusted only when configured', () => {
  it('refuses https://127.0.0.1 and https://localhost issuers with the switch off (the default)', async () => {
    const hearth = await startHearth({ providerCaFile: idp.caFile, allowLoopbackUrls: false }, clock);
    try {
      const game = await enabledGame(hearth);
      const issuer = await idp.addIssuer('production');
      const ip = issuer.url.replace('localhost', '127.0.0.1');
      for (const url of [issuer.url, ip]) {
        await expectRefusal(
          configure(hearth, game, { type: 'OIDC', issuer: url, client_id: 'c' }),
          400,
          CONFIG_NOT_FOUND,
        );
      }
    } finally {
      await hearth.close();
    }
  });

  it('does not trust the test CA without --provider-ca-file', async () => {
    const hearth = await startHearth({ allowLoopbackUrls: true }, clock);
    try {
      const game = await enabledGame(hearth);
      const issuer = await idp.addIssuer('untrusted');
      await expectRefusal(
        configure(hearth, game, { type: 'OIDC', issuer: issuer.url, client_id: 'c' }),
        400,
        CONFIG_NOT_FOUND,
      );
    } finally {
      await hearth.close();
    }
  });
});

describe('existing configurations are not re-validated until edited (seed, Authentication 6)', () => {
  it('keeps serving a configuration made under looser rules, and validates it again when it is edited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hearth-oidc-'));
    const databaseUrl = `sqlite:${join(dir, 'hearth.sqlite')}`;
    const base: Partial<Config> = { databaseUrl, providerCaFile: idp.caFile };
    try {
      const issuer = await idp.addIssuer('grandfathered');
      const before = await startHearth({ ...base, allowLoopbackUrls: true }, clock);
      const game = await enabledGame(before);
      const created = await configure(before, game, { type: 'OIDC', issuer: issuer.url, client_id: game.id });
      const { id } = (await created.json()) as { id: string };
      await before.close();

      const after = await startHearth({ ...base, allowLoopbackUrls: false }, clock);
      try {
        const token = await issuer.sign(issuer.claims(game.id, clock.now()));
        expect((await exchange(after, game, token)).status).toBe(200);
        await expectRefusal(
          after.api(`/applications/@me/identity-providers/${id}`, {
            method: 'PATCH',
            auth: `Bot ${game.botToken}`,
            body: { client_id: game.id },
          }),
          400,
          CONFIG_NOT_FOUND,
        );
        // The refused edit changed nothing: the configuration still serves.
        expect((await exchange(after, game, token)).status).toBe(200);
      } finally {
        await after.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Steam session tickets and EOS access tokens go to the configured verification endpoint', () => {
  let hearth: TestHearth;
  let game: TestGame;
  beforeAll(async () => {
    hearth = await startHearth({ allowLoopbackUrls: true, providerCaFile: idp.caFile }, clock);
    game = await enabledGame(hearth);
    for (const type of ['STEAM_SESSION_TICKET', 'EPIC_ONLINE_SERVICES_ACCESS_TOKEN']) {
      const response = await configure(hearth, game, { type, verification_url: idp.verificationUrl });
      expect(response.status).toBe(201);
    }
  });
  afterAll(async () => hearth.close());

  it('a ticket the provider accepts gives a provisional account named by the provider', async () => {
    idp.acceptTicket('steam-ticket-1', { user_id: '7656119', display_name: 'Gordon' });
    const response = await exchange(hearth, game, 'steam-ticket-1', 'STEAM_SESSION_TICKET');
    expect(response.status).toBe(200);
    const { access_token } = (await response.json()) as { access_token: string; refresh_token?: string };
    const me = await hearth.api('/users/@me', { auth: `Bearer ${access_token}` });
    expect(await me.json()).toMatchObject({ global_name: 'Gordon', provisional: true });
  });

  it('a ticket the provider refuses: 50025; an EOS access token works the same way', async () => {
    await expectRefusal(
      exchange(hearth, game, 'forged', 'STEAM_SESSION_TICKET'),
      403,
      body(50025, 'Invalid OAuth2 access token provided'),
    );
    idp.acceptTicket('eos-token', { user_id: 'eos-1' });
    expect((await exchange(hearth, game, 'eos-token', 'EPIC_ONLINE_SERVICES_ACCESS_TOKEN')).status).toBe(200);
  });

  it('a verification URL must pass the same URL rules', async () => {
    const response = await configure(hearth, game, {
      type: 'STEAM_SESSION_TICKET',
      verification_url: 'http://verify.example.com',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: number }).code).toBe(50035);
  });
});

describe('--provider-ca-file', () => {
  it('refuses to start with an unreadable or non-PEM file, naming the setting', async () => {
    await expect(startHearth({ providerCaFile: '/nonexistent/ca.pem' })).rejects.toThrow(
      /^--provider-ca-file: cannot read \/nonexistent\/ca\.pem/,
    );
    const dir = mkdtempSync(join(tmpdir(), 'hearth-ca-'));
    try {
      const file = join(dir, 'ca.pem');
      writeFileSync(file, 'not a certificate');
      await expect(startHearth({ providerCaFile: file })).rejects.toThrow('holds no PEM certificate');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
