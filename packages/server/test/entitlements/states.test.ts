import { EntitlementTypes, GatewayOpcodes, SubscriptionStatus } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-tests', device: 'hearth-tests' };
const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock('2026-04-01T00:00:00.000Z');
let hearth: TestHearth;
let game: TestGame;
let receiver: WebhookReceiver;
let bot: GatewayClient;

beforeAll(async () => {
  hearth = await startHearth({ webhookPollMs: 10 }, clock);
  game = await createGame(hearth);
  const app = (await (await hearth.api('/applications/@me', { auth: `Bot ${game.botToken}` })).json()) as {
    verify_key: string;
  };
  receiver = await WebhookReceiver.listen(app.verify_key);
  const configured = await hearth.api('/applications/@me', {
    method: 'PATCH',
    auth: `Bot ${game.botToken}`,
    body: {
      event_webhooks_url: receiver.url,
      event_webhooks_types: ['ENTITLEMENT_CREATE', 'ENTITLEMENT_UPDATE', 'ENTITLEMENT_DELETE'],
    },
  });
  expect(configured.status).toBe(200);
  bot = await GatewayClient.connect(hearth.url);
  await bot.nextOp(GatewayOpcodes.Hello);
  bot.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
  await bot.nextDispatch('READY');
});
afterAll(async () => {
  bot.close();
  await hearth.close();
  await receiver.close();
});

const iso = (ms: number) => new Date(ms).toISOString();

/** The next dispatch on the bot's gateway session, whatever it is: the order is part of what is proven. */
async function nextDispatch(): Promise<{ t: string; d: Record<string, unknown> }> {
  const frame = await bot.next((f) => f.op === 0);
  return { t: frame.t as string, d: frame.d as Record<string, unknown> };
}

describe('seed, States: entitlement for a subscription SKU', () => {
  it('follows the state table row by row, on the gateway and the webhook', async () => {
    const { entitlements } = hearth.services;
    const player = (await createPlayer(hearth)).user;
    const sku = await entitlements.createSku(game.id, { name: 'Season Pass', type: 'subscription' });
    const started = clock.now();

    // Row 1: (none) → subscription begins → active, ends_at null, type PURCHASE; ENTITLEMENT_CREATE.
    // Daily periods keep the whole story within the delivery log's retention.
    const { entitlement, subscription } = await entitlements.purchase({
      applicationId: game.id,
      userId: player.id,
      skuId: sku.id,
      periodMs: DAY,
    });
    const active = {
      id: entitlement.id,
      sku_id: sku.id,
      application_id: game.id,
      user_id: player.id,
      type: EntitlementTypes.Purchase,
      deleted: false,
      consumed: false,
      starts_at: iso(started),
      ends_at: null,
      subscription_id: subscription?.id,
      promotion_id: null,
      gift_code_flags: 0,
    };
    expect(await nextDispatch()).toEqual({ t: 'ENTITLEMENT_CREATE', d: active });
    expect(await nextDispatch()).toEqual({
      t: 'SUBSCRIPTION_CREATE',
      d: {
        id: subscription?.id,
        user_id: player.id,
        sku_ids: [sku.id],
        entitlement_ids: [entitlement.id],
        renewal_sku_ids: [sku.id],
        current_period_start: iso(started),
        current_period_end: iso(started + DAY),
        status: SubscriptionStatus.Active,
        canceled_at: null,
      },
    });
    const [created] = await receiver.untilEvents('ENTITLEMENT_CREATE', 1);
    expect(created?.verified).toBe(true);
    expect(created?.body.event?.data).toEqual(active);

    // Row 1, second trigger: an existing entitlement migrated to the new behaviour → active, ends_at null,
    // PURCHASE; ENTITLEMENT_CREATE that does not signal a new entitlement.
    const other = (await createPlayer(hearth)).user;
    const legacy = await entitlements.purchase({
      applicationId: game.id,
      userId: other.id,
      skuId: sku.id,
      periodMs: DAY,
      legacy: true,
    });
    expect(await nextDispatch()).toMatchObject({
      t: 'ENTITLEMENT_CREATE',
      d: {
        id: legacy.entitlement.id,
        type: EntitlementTypes.ApplicationSubscription,
        ends_at: iso(started + DAY),
      },
    });
    expect(await nextDispatch()).toMatchObject({
      t: 'SUBSCRIPTION_CREATE',
      d: { id: legacy.subscription?.id },
    });
    await entitlements.migrate(legacy.entitlement.id);
    const migrated = {
      ...legacy.entitlement,
      type: EntitlementTypes.Purchase,
      ends_at: null,
      migrated: true,
    };
    expect(await nextDispatch()).toEqual({ t: 'ENTITLEMENT_CREATE', d: migrated });
    const creates = await receiver.untilEvents('ENTITLEMENT_CREATE', 3);
    expect(creates.map((d) => d.body.event?.data)).toContainEqual(migrated);

    // Row 2: active → a new billing period → active; nothing for the entitlement, SUBSCRIPTION_UPDATE only.
    clock.advance(DAY);
    await entitlements.renew(subscription!.id, DAY);
    expect(await nextDispatch()).toEqual({
      t: 'SUBSCRIPTION_UPDATE',
      d: expect.objectContaining({
        id: subscription?.id,
        current_period_start: iso(started + DAY),
        current_period_end: iso(started + 2 * DAY),
        renewal_sku_ids: [sku.id],
        status: SubscriptionStatus.Active,
      }),
    });
    const afterRenewal = await hearth.api(`/applications/${game.id}/entitlements/${entitlement.id}`, {
      auth: `Bot ${game.botToken}`,
    });
    expect(await afterRenewal.json()).toEqual(active);

    // The cancellation time is read from SUBSCRIPTION_UPDATE (ENDING, canceled_at); still no entitlement event.
    clock.advance(DAY / 4);
    const canceledAt = clock.now();
    await entitlements.cancel(subscription!.id);
    expect(await nextDispatch()).toEqual({
      t: 'SUBSCRIPTION_UPDATE',
      d: expect.objectContaining({
        status: SubscriptionStatus.Ending,
        canceled_at: iso(canceledAt),
        renewal_sku_ids: null,
      }),
    });

    // Row 3: active → the subscription ends → ended, ends_at = the end; ENTITLEMENT_UPDATE.
    clock.advance((3 * DAY) / 4);
    const endedAt = clock.now();
    await entitlements.end(subscription!.id);
    const ended = { ...active, ends_at: iso(endedAt) };
    expect(await nextDispatch()).toEqual({ t: 'ENTITLEMENT_UPDATE', d: ended });
    expect(await nextDispatch()).toEqual({
      t: 'SUBSCRIPTION_UPDATE',
      d: expect.objectContaining({ status: SubscriptionStatus.Inactive, canceled_at: iso(canceledAt) }),
    });
    const [update] = await receiver.untilEvents('ENTITLEMENT_UPDATE', 1);
    expect(update?.body.event?.data).toEqual(ended);

    // Everything the webhook outbox ever held for this application, all delivered: no event for the renewal.
    await expect
      .poll(async () => (await hearth.services.webhooks.log(game.id)).map((e) => `${e.type} ${e.status}`))
      .toEqual([
        'ENTITLEMENT_UPDATE delivered',
        'ENTITLEMENT_CREATE delivered',
        'ENTITLEMENT_CREATE delivered',
        'ENTITLEMENT_CREATE delivered',
      ]);
    expect(receiver.events.map((event) => event.type).sort()).toEqual([
      'ENTITLEMENT_CREATE',
      'ENTITLEMENT_CREATE',
      'ENTITLEMENT_CREATE',
      'ENTITLEMENT_UPDATE',
    ]);
    expect(bot.pending()).toEqual([]);
  });
});

describe('entitlement events reach the bot, not the players (PROTOCOL.md §I.1)', () => {
  it("a player's entitlement list shows the purchase; another application's bot sees nothing", async () => {
    const { user, token } = await createPlayer(hearth);
    const sku = await hearth.services.entitlements.createSku(game.id, { name: 'Sword', type: 'durable' });
    const { entitlement } = await hearth.services.entitlements.purchase({
      applicationId: game.id,
      userId: user.id,
      skuId: sku.id,
    });
    expect(await nextDispatch()).toMatchObject({
      t: 'ENTITLEMENT_CREATE',
      d: { id: entitlement.id, type: 1 },
    });
    const tokens = await grantTokens(hearth, game, token, 'identify applications.entitlements');
    const mine = await hearth.api(`/users/@me/applications/${game.id}/entitlements`, {
      auth: `Bearer ${tokens.access_token}`,
    });
    expect(mine.status).toBe(200);
    expect(((await mine.json()) as { id: string }[]).map((e) => e.id)).toEqual([entitlement.id]);
    const stranger = await createGame(hearth);
    const refused = await hearth.api(`/applications/${game.id}/entitlements`, {
      auth: `Bot ${stranger.botToken}`,
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ code: 50001, message: 'Missing Access' });
  });
});
