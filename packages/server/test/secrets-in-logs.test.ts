import { GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { startIdentityProvider, type TestIdentityProvider } from '../../../test-support/identity-provider.js';
import {
  authorizationCode,
  createGame,
  pkcePair,
  type TestGame,
  type Tokens,
  tokenRequest,
} from '../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../test-support/webhook-receiver.js';

/**
 * Issue 21, secrets: the OAuth flows (authorization code with PKCE, refresh, client credentials,
 * revocation), provisional accounts (bot-minted and OIDC), signed webhook events and the bot's gateway
 * session all run on a server logging at `trace`, its most verbose level; no credential any of them used
 * or produced appears in any log line (seed, Authentication 8).
 */

let hearth: TestHearth;
let idp: TestIdentityProvider;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

function keep(name: string, value: string | undefined): string {
  if (!value) throw new Error(`no ${name} to keep`);
  secrets.set(name, value);
  return value;
}

async function ok(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBeLessThan(300);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

async function oauthFlows(game: TestGame): Promise<void> {
  const registered = await ok(
    await hearth.api('/auth/register', {
      method: 'POST',
      body: { username: 'secret.player', email: 'secret@example.com', password: 'pw secret 6e1f0a' },
    }),
    'register',
  );
  const session = keep('session token (register)', registered['token'] as string);
  keep('password', 'pw secret 6e1f0a');
  const login = await ok(
    await hearth.api('/auth/login', {
      method: 'POST',
      body: { login: 'secret@example.com', password: 'pw secret 6e1f0a' },
    }),
    'login',
  );
  keep('session token (login)', login['token'] as string);

  // Authorization code with PKCE (RFC 7636), then the token, userinfo, refresh and revocation.
  const { verifier, challenge } = pkcePair();
  keep('PKCE verifier', verifier);
  const code = keep(
    'authorization code',
    await authorizationCode(hearth, game, session, {
      scope: 'openid identify',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
  );
  const exchange = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: 'http://127.0.0.1/callback',
    code_verifier: verifier,
  };
  const tokens = (await ok(
    await tokenRequest(hearth, exchange, { basic: [game.id, game.clientSecret] }),
    'code exchange',
  )) as unknown as Tokens;
  const access = keep('access token', tokens.access_token);
  keep('ID token', tokens.id_token);
  const refresh = keep('refresh token', tokens.refresh_token);
  await ok(await hearth.api('/oauth2/userinfo', { auth: `Bearer ${access}` }), 'userinfo');
  await ok(await hearth.api('/users/@me', { auth: `Bearer ${access}` }), 'users/@me as bearer');
  const refreshed = (await ok(
    await tokenRequest(
      hearth,
      { grant_type: 'refresh_token', refresh_token: refresh },
      {
        basic: [game.id, game.clientSecret],
      },
    ),
    'refresh',
  )) as unknown as Tokens;
  keep('refreshed access token', refreshed.access_token);
  keep('rotated refresh token', refreshed.refresh_token);
  const credentials = (await ok(
    await tokenRequest(hearth, {
      grant_type: 'client_credentials',
      scope: 'identify',
      client_id: game.id,
      client_secret: game.clientSecret,
    }),
    'client credentials',
  )) as unknown as Tokens;
  keep('client credentials token', credentials.access_token);
  await ok(
    await tokenRequest(
      hearth,
      { token: refreshed.access_token },
      { path: '/oauth2/token/revoke', basic: [game.id, game.clientSecret] },
    ),
    'revoke',
  );
  // A revoked token presented again, and a wrong client secret: refusals carry the secret in the request.
  expect((await hearth.api('/users/@me', { auth: `Bearer ${refreshed.access_token}` })).status).toBe(401);
  expect(
    (
      await tokenRequest(
        hearth,
        { grant_type: 'client_credentials' },
        { basic: [game.id, `${game.clientSecret}x`] },
      )
    ).status,
  ).toBe(401);
  // The same code again is refused (RFC 6749 §4.1.2), revoking its tokens: the refusal must not log it.
  const replay = await tokenRequest(hearth, exchange, { basic: [game.id, game.clientSecret] });
  expect(replay.status).toBe(400);
}

async function provisionalFlows(game: TestGame): Promise<void> {
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['ProvisionalAccountsEnabled'] });
  const minted = await ok(
    await hearth.api('/partner-sdk/token/bot', {
      method: 'POST',
      auth: `Bot ${game.botToken}`,
      body: { external_user_id: 'secret-external-player' },
    }),
    'provisional token (bot)',
  );
  const provisional = keep('provisional access token (bot)', minted['access_token'] as string);
  await ok(
    await hearth.api('/users/@me/account', {
      method: 'PATCH',
      auth: `Bearer ${provisional}`,
      body: { global_name: 'Secretive' },
    }),
    'provisional account',
  );
  const issuer = await idp.addIssuer('secrets');
  await ok(
    await hearth.api('/applications/@me/identity-providers', {
      method: 'POST',
      auth: `Bot ${game.botToken}`,
      body: { type: 'OIDC', issuer: issuer.url, client_id: game.id },
    }),
    'identity provider',
  );
  const idToken = keep(
    'external ID token',
    await issuer.sign(issuer.claims(game.id, hearth.clock.now(), { sub: 'secret-oidc-player' })),
  );
  const exchanged = await ok(
    await hearth.api('/partner-sdk/token', {
      method: 'POST',
      body: {
        client_id: game.id,
        client_secret: game.clientSecret,
        external_auth_type: 'OIDC',
        external_auth_token: idToken,
      },
    }),
    'provisional token (OIDC)',
  );
  keep('provisional access token (OIDC)', exchanged['access_token'] as string);
  keep('provisional refresh token (OIDC)', exchanged['refresh_token'] as string | undefined);
}

async function webhookAndBotFlows(game: TestGame): Promise<void> {
  const bot = `Bot ${game.botToken}`;
  await ok(
    await hearth.api('/applications/@me', {
      method: 'PATCH',
      auth: bot,
      body: { event_webhooks_url: receiver.url },
    }),
    'event webhooks URL (signed PING)',
  );
  await ok(
    await hearth.api('/applications/@me', {
      method: 'PATCH',
      auth: bot,
      body: { event_webhooks_types: ['ENTITLEMENT_CREATE'] },
    }),
    'event webhooks types',
  );
  const sku = await hearth.services.entitlements.createSku(game.id, {
    name: 'Secret Sword',
    type: 'durable',
  });
  const owner = await hearth.services.accounts.createUser({
    username: 'secret.buyer',
    email: 'buyer@example.com',
    password: 'pw buyer 91c2',
  });
  keep('session token (service)', owner.token);
  await ok(
    await hearth.api(`/applications/${game.id}/entitlements`, {
      method: 'POST',
      auth: bot,
      body: { sku_id: sku.id, owner_id: owner.user.id, owner_type: 2 },
    }),
    'test entitlement',
  );
  await receiver.until((deliveries) => deliveries.some((d) => d.verified && d.body.event));

  // The bot's gateway session: IDENTIFY carries the token, once right and once wrong.
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({
    op: 2,
    d: { token: bot, intents: 0, properties: { os: 'linux', browser: 'x', device: 'x' } },
  });
  expect((await client.next()).t).toBe('READY');
  await client.close();
  const wrong = await GatewayClient.connect(hearth.url);
  await wrong.nextOp(GatewayOpcodes.Hello);
  wrong.send({
    op: 2,
    d: { token: `${bot}x`, intents: 0, properties: { os: 'linux', browser: 'x', device: 'x' } },
  });
  expect((await wrong.waitClose()).code).toBe(4004);
}

/** Issue 22: the metrics token, right and wrong, in the scraper's header; probes and request ids. */
const METRICS_TOKEN = 'metrics secret 4d1c9e0b7a35f2e8c6d4b1a0f9e8d7c6';

async function operationsFlows(): Promise<void> {
  keep('metrics token', METRICS_TOKEN);
  const scrape = (authorization: string) => fetch(`${hearth.url}/metrics`, { headers: { authorization } });
  expect((await scrape(`Bearer ${METRICS_TOKEN}`)).status).toBe(200);
  expect((await scrape(`Bearer ${METRICS_TOKEN}x`)).status).toBe(401);
  expect((await scrape(METRICS_TOKEN)).status).toBe(401);
  expect((await fetch(`${hearth.url}/readyz`)).status).toBe(200);
  // A request id that tries to smuggle a token is replaced, never logged.
  const session = secrets.get('session token (login)') ?? '';
  const smuggled = await fetch(`${hearth.url}/healthz`, { headers: { 'x-request-id': `id ${session}` } });
  expect(smuggled.headers.get('x-request-id')).not.toContain(session);
}

beforeAll(async () => {
  idp = await startIdentityProvider();
  hearth = await startHearth({
    logLevel: 'trace',
    allowLoopbackUrls: true,
    providerCaFile: idp.caFile,
    metricsToken: METRICS_TOKEN,
  });
  const game = await createGame(hearth);
  const application = await hearth.services.applications.getApplication(game.id);
  receiver = await WebhookReceiver.listen(application?.verifyKey ?? '');
  keep('client secret', game.clientSecret);
  keep('bot token', game.botToken);
  keep('bot token secret part', game.botToken.split('.')[2]);
  await oauthFlows(game);
  await provisionalFlows(game);
  await webhookAndBotFlows(game);
  await operationsFlows();
  // The private keys: the OIDC signing keys and the application's webhook signing key.
  for (const row of await hearth.storage.db.selectFrom('signing_keys').select('private_jwk').execute()) {
    keep(`OIDC private key ${secrets.size}`, (JSON.parse(row.private_jwk) as { d?: string }).d);
  }
  const app = await hearth.storage.db
    .selectFrom('applications')
    .select('signing_key')
    .where('id', '=', game.id)
    .executeTakeFirstOrThrow();
  keep('webhook signing key', app.signing_key);
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await hearth?.close();
  await idp?.close();
});

describe('no credential reaches a log line at the most verbose level (issue 21)', () => {
  it('logs at trace, so that every line any component writes is seen', () => {
    expect(hearth.logger.level).toBe('trace');
    expect(hearth.logs.length).toBeGreaterThan(20);
    expect(hearth.logs.some((line) => line.includes('"msg":"webhooks ping"'))).toBe(true);
  });

  it('writes none of the tokens, codes, secrets, passwords and private keys the flows used', () => {
    expect(secrets.size).toBeGreaterThanOrEqual(20);
    const leaks = [...secrets].flatMap(([name, secret]) =>
      hearth.logs.filter((line) => line.includes(secret)).map((line) => `${name}: ${line.slice(0, 300)}`),
    );
    expect(leaks).toEqual([]);
  });
});
