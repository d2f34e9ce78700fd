import {
  ApplicationFlags,
  FormErrors,
  GatewayOpcodes,
  JSONErrors,
  MAX_REDIRECT_URIS,
} from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { type PortalAnswer, PortalClient } from './portal-client.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

let hearth: TestHearth;
let alice: PortalClient;
let aliceCsrf: string;
let aliceId: string;
let bob: PortalClient;
let bobCsrf: string;
/** Alice's application, made through the portal. */
let appId: string;

/** The application ids in the list page. */
function listed(page: PortalAnswer): string[] {
  return [...page.html.matchAll(/href="\/developers\/applications\/(\d+)"/g)].map((m) => m[1] ?? '');
}

/** The error messages a page shows, each as `field: message` (or the message alone). */
function errorsOn(page: PortalAnswer): string[] {
  const list = /<ul role="alert" id="errors">([\s\S]*?)<\/ul>/.exec(page.html)?.[1] ?? '';
  return [...list.matchAll(/<li data-field="([^"]*)">(?:<strong>[^<]*<\/strong>: )?([^<]*)<\/li>/g)].map(
    ([, field, message]) => (field ? `${field}: ${message}` : (message ?? '')),
  );
}

async function createApp(client: PortalClient, csrf: string, name: string): Promise<string> {
  const answer = await client.post('/developers/applications', { csrf, name });
  expect(answer.status, answer.html.slice(0, 400)).toBe(303);
  return /\/developers\/applications\/(\d+)$/.exec(answer.location ?? '')?.[1] ?? '';
}

beforeAll(async () => {
  hearth = await startHearth();
  const [a, b] = await Promise.all([createPlayer(hearth, 'portalalice'), createPlayer(hearth, 'portalbob')]);
  aliceId = a.user.id;
  alice = new PortalClient(hearth);
  bob = new PortalClient(hearth);
  aliceCsrf = await alice.signIn(a.user.email ?? '');
  bobCsrf = await bob.signIn(b.user.email ?? '');
  appId = await createApp(alice, aliceCsrf, 'Ember Quest');
});
afterAll(() => hearth.close());

describe('signing in (the same user sessions as POST /auth/login)', () => {
  it('shows the login form with a form token in an HttpOnly, SameSite=Lax cookie, not Secure over http', async () => {
    const page = await new PortalClient(hearth).get('/developers');
    expect(page.status).toBe(200);
    expect(page.html).toContain('action="/developers/login"');
    const cookie = page.setCookies.find((c) => c.startsWith('hearth_portal_login='));
    expect(cookie).toMatch(/; Path=\/developers; HttpOnly; SameSite=Lax$/);
  });

  it('refuses a sign-in without the login form token, or with another one (403)', async () => {
    const client = new PortalClient(hearth);
    await client.get('/developers');
    const without = await client.post('/developers/login', {
      login: 'portalalice@example.com',
      password: 'a long password',
    });
    expect(without.status).toBe(403);
    const forged = await client.post('/developers/login', {
      csrf: 'x'.repeat(32),
      login: 'portalalice@example.com',
      password: 'a long password',
    });
    expect(forged.status).toBe(403);
    expect(forged.setCookies.some((c) => c.startsWith('hearth_portal='))).toBe(false);
  });

  it("shows the API's words for a wrong password, keeping the email", async () => {
    const client = new PortalClient(hearth);
    const login = await client.get('/developers');
    const answer = await client.post('/developers/login', {
      csrf: PortalClient.csrfOf(login.html),
      login: 'portalalice@example.com',
      password: 'not the password',
    });
    expect(answer.status).toBe(400);
    expect(errorsOn(answer)).toEqual([
      `login: ${FormErrors.invalidLogin().message}`,
      `password: ${FormErrors.invalidLogin().message}`,
    ]);
    expect(answer.html).toContain('value="portalalice@example.com"');
  });

  it('sets the session cookie HttpOnly and SameSite=Lax; the session is a user session of the API', async () => {
    const { user } = await createPlayer(hearth, 'portalcarol');
    const client = new PortalClient(hearth);
    await client.signIn(user.email ?? '');
    const token = client.cookies.get('hearth_portal') ?? '';
    const me = await hearth.api('/users/@me', { auth: token });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(user.id);
  });

  it('signs out: the session ends for the API too, and the portal asks to sign in again', async () => {
    const { user } = await createPlayer(hearth, 'portaldave');
    const client = new PortalClient(hearth);
    const csrf = await client.signIn(user.email ?? '');
    const token = client.cookies.get('hearth_portal') ?? '';
    const out = await client.post('/developers/logout', { csrf });
    expect(out.status).toBe(303);
    expect(out.setCookies.some((c) => c.startsWith('hearth_portal=;') && /Max-Age=0/.test(c))).toBe(true);
    expect((await hearth.api('/users/@me', { auth: token })).status).toBe(401);
    client.cookies.set('hearth_portal', token);
    expect((await client.get('/developers')).html).toContain('action="/developers/login"');
  });

  it('sends an unsigned visitor of an application page to the sign-in page', async () => {
    const answer = await new PortalClient(hearth).get(`/developers/applications/${appId}`);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/developers');
  });
});

describe('secure cookies behind https', () => {
  it('marks the cookies Secure when the public URL is https', async () => {
    const secure = await startHearth({ publicUrl: 'https://portal.example' });
    try {
      const response = await fetch(`${boundOf(secure)}/developers`);
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('hearth_portal_login='));
      expect(cookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await secure.close();
    }
  });
});

/** The address a test server listens on (its public URL may be another). */
function boundOf(server: TestHearth): string {
  const address = server.http.server.address();
  if (typeof address !== 'object' || address === null) throw new Error('not listening');
  return `http://127.0.0.1:${address.port}`;
}

describe('CSRF: every POST carries the session form token', () => {
  it('refuses a form without the token, or with another session’s, and changes nothing', async () => {
    const before = listed(await alice.get('/developers'));
    for (const csrf of [undefined, bobCsrf, '']) {
      const answer = await alice.post('/developers/applications', {
        ...(csrf === undefined ? {} : { csrf }),
        name: 'Forged',
      });
      expect(answer.status).toBe(403);
      expect(answer.html).toContain('id="forbidden"');
    }
    expect(listed(await alice.get('/developers'))).toEqual(before);
    const secretReset = await alice.post(`/developers/applications/${appId}/oauth2/reset-secret`, {
      csrf: bobCsrf,
    });
    expect(secretReset.status).toBe(403);
    expect(secretReset.html).not.toContain('id="client-secret"');
  });

  it('answers JSON and other bodies on form routes with a 4xx page, never a 5xx', async () => {
    const response = await fetch(`${hearth.url}/developers/applications/${appId}/general`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: `hearth_portal=${alice.cookies.get('hearth_portal')}`,
      },
      body: JSON.stringify({ csrf: [aliceCsrf], description: { a: 1 } }),
    });
    expect(response.status).toBe(403);
  });
});

describe('applications: only the user’s own', () => {
  it('lists the user’s applications and not another user’s', async () => {
    expect(listed(await alice.get('/developers'))).toContain(appId);
    expect(listed(await bob.get('/developers'))).not.toContain(appId);
  });

  it('makes the signed-in user the owner of a new application', async () => {
    const application = await hearth.services.applications.getApplication(appId);
    expect(application?.ownerId).toBe(aliceId);
  });

  it("shows the API's words for a name of the wrong length", async () => {
    for (const name of ['E', 'E'.repeat(33)]) {
      const answer = await alice.post('/developers/applications', { csrf: aliceCsrf, name });
      expect(answer.status).toBe(400);
      expect(errorsOn(answer)).toEqual([`name: ${FormErrors.badLength(2, 32).message}`]);
      expect(answer.html).toContain(`value="${name}"`);
    }
  });

  it('answers a 404 page for another user’s application, on every page and form', async () => {
    for (const path of ['', '/oauth2', '/bot', '/webhooks']) {
      const answer = await bob.get(`/developers/applications/${appId}${path}`);
      expect(answer.status).toBe(404);
      expect(answer.html).toContain('id="not-found"');
      expect(answer.html).not.toContain('Ember Quest');
    }
    const secret = await bob.post(`/developers/applications/${appId}/oauth2/reset-secret`, { csrf: bobCsrf });
    expect(secret.status).toBe(404);
    expect(secret.html).not.toContain('id="client-secret"');
    const general = await bob.post(`/developers/applications/${appId}/general`, {
      csrf: bobCsrf,
      description: 'mine',
    });
    expect(general.status).toBe(404);
    expect((await hearth.services.applications.getApplication(appId))?.description).not.toBe('mine');
    for (const id of ['0', 'abc', '1'.repeat(30)]) {
      expect((await alice.get(`/developers/applications/${id}`)).status).toBe(404);
    }
  });

  it('escapes every user value: a name with <script> is shown as text', async () => {
    const name = '<script>x</script>';
    const id = await createApp(alice, aliceCsrf, name);
    for (const page of [await alice.get('/developers'), await alice.get(`/developers/applications/${id}`)]) {
      expect(page.html).not.toContain('<script>x</script>');
      expect(page.html).toContain('&#60;script&#62;x&#60;/script&#62;');
    }
    const saved = await alice.post(`/developers/applications/${id}/general`, {
      csrf: aliceCsrf,
      description: '"><img src=x onerror=alert(1)>',
      tags: '<b>',
    });
    expect(saved.status).toBe(303);
    const page = await alice.get(`/developers/applications/${id}`);
    expect(page.html).not.toContain('<img src=x');
    expect(page.html).toContain('&#34;&#62;&#60;img src=x onerror=alert(1)&#62;');
    expect(page.html).toContain('value="&#60;b&#62;"');
  });
});

describe('general information', () => {
  it('saves the description and tags through PATCH /applications/@me’s rules', async () => {
    const answer = await alice.post(`/developers/applications/${appId}/general`, {
      csrf: aliceCsrf,
      description: 'A game of embers',
      tags: 'rpg, coop',
    });
    expect(answer.status).toBe(303);
    const application = await hearth.services.applications.getApplication(appId);
    expect(application?.description).toBe('A game of embers');
    expect(application?.tags).toEqual(['rpg', 'coop']);
    expect((await alice.get(`/developers/applications/${appId}?saved=1`)).html).toContain('id="notice"');
  });

  it("shows the API's words for a description over 400 characters, a long tag and six tags", async () => {
    const long = await alice.post(`/developers/applications/${appId}/general`, {
      csrf: aliceCsrf,
      description: 'd'.repeat(401),
      tags: 't'.repeat(21),
    });
    expect(long.status).toBe(400);
    expect(errorsOn(long)).toEqual([
      `description: ${FormErrors.maxLength(400).message}`,
      `tags.0: ${FormErrors.badLength(1, 20).message}`,
    ]);
    const many = await alice.post(`/developers/applications/${appId}/general`, {
      csrf: aliceCsrf,
      description: '',
      tags: 'a,b,c,d,e,f',
    });
    expect(errorsOn(many)).toEqual([`tags: ${FormErrors.maxItems(5).message}`]);
    expect((await hearth.services.applications.getApplication(appId))?.tags).toEqual(['rpg', 'coop']);
  });
});

describe('OAuth2', () => {
  it('adds and removes redirect URIs', async () => {
    const added = await alice.post(`/developers/applications/${appId}/oauth2/redirect-uris`, {
      csrf: aliceCsrf,
      redirect_uri: 'http://127.0.0.1/callback',
    });
    expect(added.status).toBe(303);
    const page = await alice.get(`/developers/applications/${appId}/oauth2`);
    expect(page.html).toContain('<code data-redirect-uri>http://127.0.0.1/callback</code>');
    await alice.post(`/developers/applications/${appId}/oauth2/redirect-uris`, {
      csrf: aliceCsrf,
      redirect_uri: 'http://127.0.0.1/other',
    });
    const removed = await alice.post(`/developers/applications/${appId}/oauth2/redirect-uris`, {
      csrf: aliceCsrf,
      remove: '1',
    });
    expect(removed.status).toBe(303);
    expect((await hearth.services.applications.getApplication(appId))?.redirectUris).toEqual([
      'http://127.0.0.1/callback',
    ]);
  });

  it(`shows the API's words for an over-long URI and for more than ${MAX_REDIRECT_URIS}`, async () => {
    const long = await alice.post(`/developers/applications/${appId}/oauth2/redirect-uris`, {
      csrf: aliceCsrf,
      redirect_uri: `https://example.com/${'a'.repeat(2048)}`,
    });
    expect(long.status).toBe(400);
    expect(errorsOn(long)).toEqual([`redirect_uris.1: ${FormErrors.badLength(1, 2048).message}`]);
    const empty = await alice.post(`/developers/applications/${appId}/oauth2/redirect-uris`, {
      csrf: aliceCsrf,
      redirect_uri: '',
    });
    expect(errorsOn(empty)).toEqual([`redirect_uris.1: ${FormErrors.badLength(1, 2048).message}`]);
    const id = await createApp(alice, aliceCsrf, 'Many Redirects');
    for (let i = 0; i < MAX_REDIRECT_URIS; i++) {
      await alice.post(`/developers/applications/${id}/oauth2/redirect-uris`, {
        csrf: aliceCsrf,
        redirect_uri: `https://example.com/${i}`,
      });
    }
    const over = await alice.post(`/developers/applications/${id}/oauth2/redirect-uris`, {
      csrf: aliceCsrf,
      redirect_uri: 'https://example.com/over',
    });
    expect(over.status).toBe(400);
    expect(errorsOn(over)).toEqual([`redirect_uris: ${FormErrors.maxItems(MAX_REDIRECT_URIS).message}`]);
  });

  it('resets the client secret, shows it once, and the new secret authenticates the client', async () => {
    const answer = await alice.post(`/developers/applications/${appId}/oauth2/reset-secret`, {
      csrf: aliceCsrf,
    });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain(`<code id="client-id">${appId}</code>`);
    const secret = /<code id="client-secret">([^<]+)<\/code>/.exec(answer.html)?.[1] ?? '';
    expect(secret.length).toBeGreaterThan(20);
    expect(await hearth.services.applications.authenticateClient(appId, secret)).toBeDefined();
    for (const path of ['', '/oauth2', '/bot', '/webhooks']) {
      expect((await alice.get(`/developers/applications/${appId}${path}`)).html).not.toContain(secret);
    }
    expect((await alice.get('/developers')).html).not.toContain(secret);
  });

  it('switches the public client on and off', async () => {
    await alice.post(`/developers/applications/${appId}/oauth2/public-client`, {
      csrf: aliceCsrf,
      public_client: 'true',
    });
    expect((await hearth.services.applications.getApplication(appId))?.publicClient).toBe(true);
    await alice.post(`/developers/applications/${appId}/oauth2/public-client`, { csrf: aliceCsrf });
    expect((await hearth.services.applications.getApplication(appId))?.publicClient).toBe(false);
  });

  it('generates an authorize URL the authorize page accepts, for eligible scopes only', async () => {
    const query = new URLSearchParams([
      ['scope', 'identify'],
      ['scope', 'email'],
      ['scope', 'not.a.scope'],
      ['redirect_uri', 'http://127.0.0.1/callback'],
      ['integration_type', '1'],
    ]);
    const page = await alice.get(`/developers/applications/${appId}/oauth2?${query}`);
    const generated =
      /<code id="generated-url">([^<]+)<\/code>/.exec(page.html)?.[1]?.replace(/&#38;/g, '&') ?? '';
    const url = new URL(generated);
    expect(url.pathname).toBe('/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: appId,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1/callback',
      integration_type: '1',
      scope: 'identify email',
    });
    const consent = await fetch(generated);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('data-scope="email"');
  });
});

describe('bot', () => {
  it('resets the bot token once: the new one authenticates, the old one no longer does', async () => {
    const id = await createApp(alice, aliceCsrf, 'Token Game');
    const first = await alice.post(`/developers/applications/${id}/bot/reset-token`, { csrf: aliceCsrf });
    const old = /<code id="bot-token">([^<]+)<\/code>/.exec(first.html)?.[1] ?? '';
    // A gateway session identified with the old token is closed by the reset, not left running.
    const session = await GatewayClient.connect(hearth.url);
    await session.nextOp(GatewayOpcodes.Hello);
    session.send({ op: GatewayOpcodes.Identify, d: { token: old, intents: 0, properties: PROPERTIES } });
    await session.nextDispatch('READY');
    const second = await alice.post(`/developers/applications/${id}/bot/reset-token`, { csrf: aliceCsrf });
    expect(await session.waitClose()).toEqual({ code: 4004, reason: 'Session ended' });
    const token = /<code id="bot-token">([^<]+)<\/code>/.exec(second.html)?.[1] ?? '';
    expect(token).not.toBe(old);
    expect((await hearth.api('/applications/@me', { auth: `Bot ${token}` })).status).toBe(200);
    expect((await hearth.api('/applications/@me', { auth: `Bot ${old}` })).status).toBe(401);
    expect((await alice.get(`/developers/applications/${id}/bot`)).html).not.toContain(token);
  });

  it('switches the privileged intents (limited flags) while the application reaches fewer than 10,000 users', async () => {
    const page = await alice.get(`/developers/applications/${appId}/bot`);
    expect(page.html).toContain('id="review-state">No review needed');
    const saved = await alice.post(`/developers/applications/${appId}/bot/intents`, {
      csrf: aliceCsrf,
      presence: 'true',
      message_content: 'true',
    });
    expect(saved.status).toBe(303);
    const flags = (await hearth.services.applications.getApplication(appId))?.flags ?? 0n;
    expect(flags & ApplicationFlags.GatewayPresenceLimited).toBe(ApplicationFlags.GatewayPresenceLimited);
    expect(flags & ApplicationFlags.GatewayMessageContentLimited).toBe(
      ApplicationFlags.GatewayMessageContentLimited,
    );
    expect(flags & ApplicationFlags.GatewayGuildMembersLimited).toBe(0n);
    await alice.post(`/developers/applications/${appId}/bot/intents`, { csrf: aliceCsrf });
    expect(
      ((await hearth.services.applications.getApplication(appId))?.flags ?? 0n) &
        ApplicationFlags.GatewayPresenceLimited,
    ).toBe(0n);
  });
});

describe('webhooks', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    const application = await hearth.services.applications.requireApplication(appId);
    receiver = await WebhookReceiver.listen(application.verifyKey);
  });
  afterAll(() => receiver.close());

  it("shows the API's words for a URL Hearth would never call", async () => {
    const answer = await alice.post(`/developers/applications/${appId}/webhooks`, {
      csrf: aliceCsrf,
      url: 'ftp://example.com/hook',
      enabled: 'true',
    });
    expect(answer.status).toBe(400);
    expect(errorsOn(answer)).toEqual([`event_webhooks_url: ${FormErrors.url().message}`]);
    expect(answer.html).toContain('value="ftp://example.com/hook"');
  });

  it('refuses a URL that does not answer the signed PING with 204, in the API’s words', async () => {
    receiver.policy = () => 500;
    try {
      const answer = await alice.post(`/developers/applications/${appId}/webhooks`, {
        csrf: aliceCsrf,
        url: receiver.url,
        enabled: 'true',
      });
      expect(answer.status).toBe(400);
      expect(errorsOn(answer)).toEqual([
        `event_webhooks_url: ${FormErrors.eventWebhooksUrlInvalid().message}`,
      ]);
      expect((await hearth.services.webhooks.settings(appId)).url).toBeNull();
    } finally {
      receiver.policy = () => 204;
    }
  });

  it('saves a URL the PING verified, with the chosen event types', async () => {
    const pings = receiver.deliveries.length;
    const answer = await alice.post(`/developers/applications/${appId}/webhooks`, {
      csrf: aliceCsrf,
      url: receiver.url,
      enabled: 'true',
      event_types: ['APPLICATION_AUTHORIZED', 'ENTITLEMENT_CREATE'],
    });
    expect(answer.status).toBe(303);
    expect(receiver.deliveries.length).toBe(pings + 1);
    expect(receiver.deliveries.at(-1)?.verified).toBe(true);
    expect(receiver.deliveries.at(-1)?.body.type).toBe(0);
    expect(await hearth.services.webhooks.settings(appId)).toMatchObject({
      url: receiver.url,
      status: 2,
      types: ['APPLICATION_AUTHORIZED', 'ENTITLEMENT_CREATE'],
    });
    const page = await alice.get(`/developers/applications/${appId}/webhooks`);
    expect(page.html).toContain('id="webhooks-status">enabled');
  });

  it('refuses an unknown event type and a replay of an event that is not the application’s', async () => {
    const answer = await alice.post(`/developers/applications/${appId}/webhooks`, {
      csrf: aliceCsrf,
      url: receiver.url,
      enabled: 'true',
      event_types: ['NOT_AN_EVENT'],
    });
    expect(answer.status).toBe(400);
    expect(errorsOn(answer)[0]).toMatch(/^event_webhooks_types\.0: /);
    const replay = await alice.post(`/developers/applications/${appId}/webhooks/replay`, {
      csrf: aliceCsrf,
      event_id: '12345',
    });
    expect(replay.status).toBe(404);
    expect(errorsOn(replay)).toHaveLength(1);
  });
});

describe('Social SDK settings', () => {
  const providers = `/developers/applications/${'{id}'}/social-sdk/identity-providers`;
  const path = (suffix = '') => providers.replace('{id}', appId) + suffix;

  it('shows the approvals the operator grants', async () => {
    const page = await alice.get(`/developers/applications/${appId}/social-sdk`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="provisional-state">not enabled');
    expect(page.html).toContain('id="communication-state">pre-approval limits apply');
  });

  it("shows an OIDC issuer's refusal in the API's words and says what to fix", async () => {
    const issuer = 'https://user:secret@issuer.example.com';
    const answer = await alice.post(path(), { csrf: aliceCsrf, type: 'OIDC', issuer, client_id: 'game' });
    expect(answer.status).toBe(400);
    const errors = errorsOn(answer);
    expect(errors[0]).toBe(JSONErrors.ProvisionalOIDCConfigurationNotFound.message);
    expect(errors[1]).toMatch(
      /^issuer: Hearth could not read a valid discovery document at https:\/\/user:secret@issuer\.example\.com\/\.well-known\/openid-configuration\. The issuer must be an https URL/,
    );
    expect(answer.html).toContain(`value="${issuer}"`);
    const missing = await alice.post(path(), {
      csrf: aliceCsrf,
      type: 'OIDC',
      issuer: '',
      client_id: 'game',
    });
    expect(errorsOn(missing)).toEqual([`issuer: ${FormErrors.required().message}`]);
    const unknown = await alice.post(path(), { csrf: aliceCsrf, type: 'NOT_A_TYPE' });
    expect(errorsOn(unknown)[0]).toMatch(/^type: /);
  });

  it('adds a ticket provider with its verification URL and removes it; another application’s provider is unknown', async () => {
    const added = await alice.post(path(), {
      csrf: aliceCsrf,
      type: 'STEAM_SESSION_TICKET',
      verification_url: 'https://verify.example.com/steam?key=1',
    });
    expect(added.status).toBe(303);
    const page = await alice.get(`/developers/applications/${appId}/social-sdk`);
    const providerId = /data-provider-id="(\d+)"/.exec(page.html)?.[1] ?? '';
    expect(page.html).toContain('https://verify.example.com/steam?key=1');
    const otherApp = await createApp(alice, aliceCsrf, 'Other Game');
    const wrong = await alice.post(
      `/developers/applications/${otherApp}/social-sdk/identity-providers/remove`,
      {
        csrf: aliceCsrf,
        provider_id: providerId,
      },
    );
    expect(wrong.status).toBe(404);
    expect(errorsOn(wrong)).toEqual([JSONErrors.GeneralNotFound.message]);
    const removed = await alice.post(path('/remove'), { csrf: aliceCsrf, provider_id: providerId });
    expect(removed.status).toBe(303);
    expect(await hearth.services.identityProviders.list(appId)).toEqual([]);
  });
});

describe('SKUs and test entitlements', () => {
  const path = (suffix: string) => `/developers/applications/${appId}/monetization${suffix}`;

  it("creates a SKU, refusing a bad name in the API's words", async () => {
    const empty = await alice.post(path('/skus'), { csrf: aliceCsrf, name: '', type: 'durable' });
    expect(empty.status).toBe(400);
    expect(errorsOn(empty)).toEqual([`name: ${FormErrors.badLength(1, 100).message}`]);
    const created = await alice.post(path('/skus'), { csrf: aliceCsrf, name: 'Ember Pack', type: 'durable' });
    expect(created.status).toBe(303);
    const page = await alice.get(path(''));
    expect(page.html).toMatch(/<tr data-sku-id="\d+"><td>Ember Pack<\/td>/);
  });

  it('grants a test entitlement to a user and deletes it; unknown owners and SKUs are refused', async () => {
    const skuId = /data-sku-id="(\d+)"/.exec((await alice.get(path(''))).html)?.[1] ?? '';
    const unknownUser = await alice.post(path('/entitlements'), {
      csrf: aliceCsrf,
      sku_id: skuId,
      owner_id: '12345',
      owner_type: '2',
    });
    expect(unknownUser.status).toBe(404);
    expect(errorsOn(unknownUser)).toEqual([JSONErrors.UnknownUser.message]);
    const badSku = await alice.post(path('/entitlements'), {
      csrf: aliceCsrf,
      sku_id: 'x',
      owner_id: aliceId,
      owner_type: '2',
    });
    expect(badSku.status).toBe(400);
    expect(errorsOn(badSku)[0]).toMatch(/^sku_id: /);
    const granted = await alice.post(path('/entitlements'), {
      csrf: aliceCsrf,
      sku_id: skuId,
      owner_id: aliceId,
      owner_type: '2',
    });
    expect(granted.status).toBe(303);
    const caller = { kind: 'bot' as const, applicationId: appId };
    const [entitlement] = await hearth.services.entitlements.listEntitlements(caller, appId, {});
    expect(entitlement).toMatchObject({ sku_id: skuId, user_id: aliceId, type: 4 });
    expect((await alice.get(path(''))).html).toContain(`data-entitlement-id="${entitlement?.id}"`);
    const deleted = await alice.post(path('/entitlements/delete'), {
      csrf: aliceCsrf,
      entitlement_id: entitlement?.id ?? '',
    });
    expect(deleted.status).toBe(303);
    expect(await hearth.services.entitlements.listEntitlements(caller, appId, {})).toEqual([]);
    const unknown = await alice.post(path('/entitlements/delete'), {
      csrf: aliceCsrf,
      entitlement_id: '12345',
    });
    expect(unknown.status).toBe(404);
    expect(errorsOn(unknown)).toEqual([JSONErrors.UnknownEntitlement.message]);
  });
});

describe('privileged intents review (seed, Limits: 10,000 users)', () => {
  /** Members the bot can reach, written straight to storage: 10,000 sign-ups would take minutes. */
  async function reach(botUserId: string, members: number): Promise<void> {
    const guild = await hearth.services.guilds.createGuild(aliceId, { name: 'Big Guild' });
    await hearth.services.guilds.addMember(guild.id, botUserId);
    const ids = Array.from({ length: members - 1 }, (_, i) => `8${String(i).padStart(17, '0')}`);
    for (let start = 0; start < ids.length; start += 500) {
      const slice = ids.slice(start, start + 500);
      await hearth.storage.db
        .insertInto('users')
        .values(
          slice.map((id) => ({
            id,
            username: `reach${id}`,
            discriminator: '0',
            bot: 0,
            flags: 0,
            created_at: 0,
          })),
        )
        .execute();
      await hearth.storage.db
        .insertInto('guild_members')
        .values(slice.map((id) => ({ guild_id: guild.id, user_id: id, permissions: '0', joined_at: 0 })))
        .execute();
    }
  }

  it('refuses to turn a switch on without an approved review, keeps those already on, and admits after approval', async () => {
    const id = await createApp(alice, aliceCsrf, 'Big Game');
    await alice.post(`/developers/applications/${id}/bot/intents`, { csrf: aliceCsrf, presence: 'true' });
    const application = await hearth.services.applications.requireApplication(id);
    await reach(application.botUserId, 10_000);
    const page = await alice.get(`/developers/applications/${id}/bot`);
    expect(page.html).toContain(
      'id="review-state" role="alert">Your application can reach 10,000 users or more',
    );
    const refused = await alice.post(`/developers/applications/${id}/bot/intents`, {
      csrf: aliceCsrf,
      presence: 'true',
      guild_members: 'true',
    });
    expect(refused.status).toBe(403);
    expect(errorsOn(refused)).toEqual([
      'guild_members: Server members intent cannot be turned on: your application reaches 10,000 users or more and its privileged intents review is not approved.',
    ]);
    const flags = (await hearth.services.applications.requireApplication(id)).flags;
    expect(flags & ApplicationFlags.GatewayGuildMembersLimited).toBe(0n);
    expect(flags & ApplicationFlags.GatewayPresenceLimited).toBe(ApplicationFlags.GatewayPresenceLimited);
    await hearth.services.applications.approveIntentsReview(id);
    const admitted = await alice.post(`/developers/applications/${id}/bot/intents`, {
      csrf: aliceCsrf,
      presence: 'true',
      guild_members: 'true',
    });
    expect(admitted.status).toBe(303);
    expect(
      (await hearth.services.applications.requireApplication(id)).flags &
        ApplicationFlags.GatewayGuildMembersLimited,
    ).toBe(ApplicationFlags.GatewayGuildMembersLimited);
  });
});

describe('hostile form values, signed in with a valid form token', () => {
  const FIELDS = [
    'name',
    'description',
    'tags',
    'redirect_uri',
    'remove',
    'public_client',
    'url',
    'enabled',
    'event_types',
    'event_id',
    'type',
    'issuer',
    'client_id',
    'verification_url',
    'provider_id',
    'sku_id',
    'owner_id',
    'owner_type',
    'entitlement_id',
    'presence',
    'guild_members',
    'message_content',
  ];
  const VALUES: Array<string | string[]> = [
    'a'.repeat(5000),
    '-1',
    '99999999999999999999999',
    ['x', 'y'],
    '%FF',
    '<script>alert(1)</script>',
    ' ',
    'https://[::1',
  ];

  it('answers every portal form below 500, whatever its fields hold', async () => {
    const routes = hearth.routes.filter(
      (r) => r.method === 'POST' && r.url.startsWith('/developers/') && !/\/(login|logout)$/.test(r.url),
    );
    expect(routes.length).toBeGreaterThan(10);
    const failures: string[] = [];
    for (const route of routes) {
      const path = route.url.replace(':application_id', appId);
      for (const value of VALUES) {
        const form = Object.fromEntries(FIELDS.map((name) => [name, value]));
        const answer = await alice.post(path, { ...form, csrf: aliceCsrf });
        if (answer.status >= 500)
          failures.push(`${path} ${JSON.stringify(value).slice(0, 40)} → ${answer.status}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
