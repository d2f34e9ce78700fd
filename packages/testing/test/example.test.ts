import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GatewayListener,
  startHearth,
  type TestingHearth,
  WebhookReceiver,
  waitForGatewayEvent,
  waitForWebhook,
} from '../src/index.js';

/** The README's example: a game's bot and webhook, driven through @hearth/testing. */

let hearth: TestingHearth;
let bot: GatewayListener;
let webhooks: WebhookReceiver;

beforeAll(async () => {
  hearth = await startHearth({
    fixture: {
      applications: { game: { name: 'Testing Example' } },
      users: { alice: { username: 'alice' } },
      guilds: {
        home: {
          name: 'Home',
          owner: 'alice',
          channels: { general: { name: 'general' } },
          bots: [{ application: 'game' }],
        },
      },
      skus: { premium: { application: 'game', name: 'Premium', type: 'subscription' } },
    },
  });
  const game = hearth.seeded.applications['game'];
  // GUILDS | GUILD_MESSAGES
  bot = await hearth.gateway(`Bot ${game?.bot_token}`, 1 | (1 << 9));
  webhooks = await WebhookReceiver.listen();
  const configured = await fetch(`${hearth.url}/api/v10/applications/@me`, {
    method: 'PATCH',
    headers: { authorization: `Bot ${game?.bot_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event_webhooks_url: webhooks.url, event_webhooks_types: ['ENTITLEMENT_CREATE'] }),
  });
  expect(configured.status).toBe(200);
  // Starting a server and logging a client in takes longer on a loaded CI machine than the default hook time.
}, 120_000);
afterAll(async () => {
  await hearth.close();
  await webhooks.close();
});

describe('@hearth/testing', () => {
  it('waits for the gateway event a scripted user caused', async () => {
    const message = await hearth.act<{ id: string }>('send_message', {
      user_id: hearth.seeded.users['alice']?.id,
      channel_id: hearth.seeded.guilds['home']?.channels['general'],
      content: 'hello bot',
    });
    const created = await waitForGatewayEvent<{ id: string }>(bot, 'MESSAGE_CREATE');
    expect(created.id).toBe(message.id);
  });

  it('waits for a webhook delivery, and sees a renewal after advancing the clock', async () => {
    const seeded = await hearth.seed({
      entitlements: { alice_premium: { sku: 'premium', user: 'alice' } },
      users: { alice: { username: 'alice' } },
      skus: { premium: { application: 'game', name: 'Premium', type: 'subscription' } },
      applications: { game: { name: 'Testing Example' } },
    });
    const entitlementId = seeded.entitlements['alice_premium']?.id;
    const delivered = await waitForWebhook<{ id: string }>(webhooks, 'ENTITLEMENT_CREATE');
    expect(delivered.id).toBe(entitlementId);
    await hearth.advanceClock('30d');
    const renewed = await waitForGatewayEvent<{ id: string }>(bot, 'SUBSCRIPTION_UPDATE');
    expect(renewed.id).toBe(seeded.entitlements['alice_premium']?.subscription_id);
  });

  it('injects a fault, and resets to a snapshot', async () => {
    await hearth.snapshot('clean');
    await hearth.injectFault({ target: 'http', path: '/gateway', action: 'error', status: 503 });
    expect((await fetch(`${hearth.url}/api/v10/gateway`)).status).toBe(503);
    expect((await fetch(`${hearth.url}/api/v10/gateway`)).status).toBe(200);
    await hearth.restore('clean');
  });
});
