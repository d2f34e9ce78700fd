import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../../../../test-support/browser.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consentLocation, createPlayer, tokenRequest } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

const available = await chromiumAvailable();

const PASSWORD = 'a long password';
const REDIRECT = 'http://127.0.0.1/callback';

let hearth: TestHearth;
let browser: Browser;
let receiver: WebhookReceiver | undefined;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  if (!available) return;
  [hearth, browser] = await Promise.all([startHearth(), launchChromium()]);
});
afterAll(async () => {
  if (!available) return;
  await Promise.all(contexts.map((c) => c.close()));
  await Promise.all([browser.close(), receiver?.close(), hearth.close()]);
});

/** A fresh browser profile, signed in through the portal's login form. */
async function signedIn(email: string): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: hearth.url });
  const page = await context.newPage();
  await page.goto(`${hearth.url}/developers`);
  await page.fill('#login', email);
  await page.fill('#password', PASSWORD);
  await Promise.all([page.waitForURL(`${hearth.url}/developers`), page.click('#sign-in')]);
  await page.waitForSelector('#create');
  return page;
}

describe.skipIf(!available)('developer portal in Chromium', () => {
  let appId = '';
  let page: Page;

  it('signs in and creates an application', async () => {
    const { user } = await createPlayer(hearth, 'browserdev');
    page = await signedIn(user.email ?? '');
    await page.fill('#name', 'Ember <Quest>');
    await Promise.all([page.waitForURL(/\/developers\/applications\/\d+$/), page.click('#create')]);
    appId = /(\d+)$/.exec(page.url())?.[1] ?? '';
    expect(await page.textContent('#app-name')).toBe('Ember <Quest>');
    expect(await page.textContent('#application-id')).toBe(appId);
    await page.goto(`${hearth.url}/developers`);
    expect(await page.textContent('#applications')).toContain('Ember <Quest>');
  });

  it('adds a redirect URI', async () => {
    await page.goto(`${hearth.url}/developers/applications/${appId}/oauth2`);
    await page.fill('#redirect-uri', REDIRECT);
    await Promise.all([page.waitForURL(/oauth2\?saved=1$/), page.click('#add-redirect')]);
    expect(await page.locator('[data-redirect-uri]').allTextContents()).toEqual([REDIRECT]);
  });

  it('resets and copies the secret, which then authenticates the client; it is never shown again', async () => {
    await Promise.all([page.waitForSelector('#client-secret'), page.click('#reset-secret')]);
    const shown = ((await page.textContent('#client-secret')) ?? '').trim();
    await page.click('#copy-secret');
    await page.waitForSelector('#copy-secret:has-text("Copied")');
    // Runs in the page: the DOM's types are not this (Node) project's, so the clipboard is reached by name.
    const copied = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(copied).toBe(shown);
    const token = await tokenRequest(
      hearth,
      { grant_type: 'client_credentials', scope: 'identify' },
      { basic: [appId, copied] },
    );
    expect(token.status).toBe(200);
    await page.goto(`${hearth.url}/developers/applications/${appId}/oauth2`);
    expect(await page.locator('#client-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(copied);
  });

  it('sets the webhook URL: the signed PING reaches the receiver', async () => {
    await page.goto(`${hearth.url}/developers/applications/${appId}`);
    const verifyKey = ((await page.textContent('#verify-key')) ?? '').trim();
    receiver = await WebhookReceiver.listen(verifyKey);
    await page.goto(`${hearth.url}/developers/applications/${appId}/webhooks`);
    await page.fill('#webhooks-url', receiver.url);
    await page.check('#webhooks-enabled');
    await page.check('input[name=event_types][value=APPLICATION_AUTHORIZED]');
    await Promise.all([page.waitForURL(/webhooks\?saved=1$/), page.click('#save-webhooks')]);
    expect(await page.textContent('#webhooks-status')).toBe('enabled');
    expect(receiver.deliveries).toHaveLength(1);
    expect(receiver.deliveries[0]).toMatchObject({ verified: true, answered: 204, body: { type: 0 } });
  });

  it('shows a delivery in the log after an event, and replays it', async () => {
    const target = receiver!;
    const { token } = await createPlayer(hearth, 'browserplayer');
    await consentLocation(hearth, token, {
      client_id: appId,
      response_type: 'code',
      scope: 'identify',
      redirect_uri: REDIRECT,
    });
    await target.untilEvents('APPLICATION_AUTHORIZED');
    const row = page.locator('#delivery-log tr[data-event-type=APPLICATION_AUTHORIZED]');
    // The receiver has answered; the log shows the outcome once the worker has written it.
    await expect
      .poll(async () => {
        await page.goto(`${hearth.url}/developers/applications/${appId}/webhooks`);
        return (await row.count()) === 1 ? row.locator('[data-status]').textContent() : null;
      })
      .toBe('delivered');
    await Promise.all([page.waitForURL(/webhooks\?replayed=1$/), row.locator('button').click()]);
    expect(await page.textContent('#notice')).toContain('queued again');
    expect(await target.untilEvents('APPLICATION_AUTHORIZED', 2)).toHaveLength(2);
  });

  it("refuses a second user the first user's application (404 page)", async () => {
    const { user } = await createPlayer(hearth, 'browserother');
    const other = await signedIn(user.email ?? '');
    expect(await other.locator('#applications').count()).toBe(0);
    for (const path of ['', '/oauth2', '/webhooks']) {
      const response = await other.goto(`${hearth.url}/developers/applications/${appId}${path}`);
      expect(response?.status()).toBe(404);
      expect(await other.textContent('#not-found')).toContain('no such application');
      expect(await other.content()).not.toContain('Ember');
    }
  });
});
