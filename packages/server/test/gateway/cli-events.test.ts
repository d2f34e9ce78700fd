import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayCloseCodes, GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hearthCommand } from '../../../../test-support/cli.js';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * Issue 23, events from other processes: a `hearth` command run beside a server on the default embedded
 * SQLite (no Redis) reaches that server's gateway sessions and webhooks, each event exactly once.
 */
const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const directory = mkdtempSync(join(tmpdir(), 'hearth-cli-events-'));
const DATABASE_URL = `sqlite:${join(directory, 'hearth.sqlite')}`;
const ENV = { HEARTH_DATABASE_URL: DATABASE_URL, HEARTH_LOG_LEVEL: 'warn' };

let hearth: TestHearth;
let receiver: WebhookReceiver;
let game: TestGame;
let bot: GatewayClient;

const json = (text: string) => JSON.parse(text) as Record<string, string>;
const dispatches = (client: GatewayClient, type: string) =>
  client.frames.filter((frame) => frame.op === 0 && frame.t === type);
const ids = (frames: GatewayFrame[]) => frames.map((frame) => (frame.d as { id: string }).id);

const heartbeats: NodeJS.Timeout[] = [];

/** Heartbeats every 10 s: the commands below may take longer than the heartbeat interval. */
function keepAlive(client: GatewayClient): void {
  const timer = setInterval(() => {
    if (client.socket.readyState === client.socket.OPEN) client.send({ op: 1, d: null });
  }, 10_000);
  heartbeats.push(timer);
}

async function botSession(): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: `Bot ${game.botToken}`, intents: 0, properties: PROPERTIES } });
  await client.nextDispatch('READY');
  keepAlive(client);
  return client;
}

beforeAll(async () => {
  // A server that would find another process's events only by its poll of the event log.
  hearth = await startHearth({ databaseUrl: DATABASE_URL, rateLimitGlobal: 1_000_000, webhookPollMs: 50 });
  game = await createGame(hearth, { publicClient: true });
  const application = await hearth.services.applications.getApplication(game.id);
  receiver = await WebhookReceiver.listen(application!.verifyKey);
  const patched = await hearth.api('/applications/@me', {
    method: 'PATCH',
    auth: `Bot ${game.botToken}`,
    body: {
      event_webhooks_url: receiver.url,
      event_webhooks_types: ['ENTITLEMENT_CREATE', 'APPLICATION_DEAUTHORIZED'],
    },
  });
  expect(patched.status).toBe(200);
  bot = await botSession();
});

afterAll(async () => {
  for (const timer of heartbeats) clearInterval(timer);
  await bot?.close();
  await hearth?.close();
  await receiver?.close();
  rmSync(directory, { recursive: true, force: true });
});

// Each command is a process of its own that loads the sources (tsx): allow for a busy machine.
describe('events of `hearth` commands reach a running server without Redis (issue 23)', {
  timeout: 180_000,
}, () => {
  it('`hearth entitlements purchase` and `subscriptions renew`: the bot session receives ENTITLEMENT_CREATE, SUBSCRIPTION_CREATE and SUBSCRIPTION_UPDATE once each, and the webhook ENTITLEMENT_CREATE once', async () => {
    const player = await createPlayer(hearth);
    const sku = await hearth.services.entitlements.createSku(game.id, {
      name: 'Season Pass',
      type: 'subscription',
    });
    const bought = json(
      await hearthCommand(
        ['entitlements', 'purchase', '--app', game.id, '--user', player.user.id, '--sku', sku.id, '--json'],
        ENV,
      ),
    );
    const created = await bot.nextDispatch('ENTITLEMENT_CREATE', 30_000);
    expect(created.d).toMatchObject({
      id: bought['entitlement_id'],
      user_id: player.user.id,
      application_id: game.id,
      ends_at: null,
    });
    await bot.nextDispatch('SUBSCRIPTION_CREATE');

    await hearthCommand(['subscriptions', 'renew', '--id', bought['subscription_id']!, '--json'], ENV);
    const renewed = await bot.nextDispatch('SUBSCRIPTION_UPDATE');
    expect(renewed.d).toMatchObject({ id: bought['subscription_id'], user_id: player.user.id });

    // Delivered in log order: by the renewal's update, anything repeated before it would have arrived.
    expect(ids(dispatches(bot, 'ENTITLEMENT_CREATE'))).toEqual([bought['entitlement_id']]);
    expect(ids(dispatches(bot, 'SUBSCRIPTION_CREATE'))).toEqual([bought['subscription_id']]);
    expect(ids(dispatches(bot, 'SUBSCRIPTION_UPDATE'))).toEqual([bought['subscription_id']]);

    // The webhook worker finds the command's event in the database queue.
    const [delivery] = await receiver.untilEvents('ENTITLEMENT_CREATE', 1);
    expect(delivery?.verified).toBe(true);
    expect(delivery?.body.event?.data).toMatchObject({ id: bought['entitlement_id'] });
  });

  it("`hearth users ban`: the player's gateway session ends with 4004 and the webhook gets APPLICATION_DEAUTHORIZED once", async () => {
    const player = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, player.token, 'openid sdk.social_layer');
    const session = await GatewayClient.connect(hearth.url);
    await session.nextOp(GatewayOpcodes.Hello);
    session.send({ op: 2, d: { token: `Bearer ${tokens.access_token}`, properties: PROPERTIES } });
    await session.nextDispatch('READY');
    keepAlive(session);

    await hearthCommand(['users', 'ban', '--id', player.user.id, '--json'], ENV);
    expect(await session.closed).toEqual({
      code: GatewayCloseCodes.AuthenticationFailed,
      reason: 'Authorization revoked',
    });
    const [deauthorized] = await receiver.untilEvents('APPLICATION_DEAUTHORIZED', 1);
    expect(deauthorized?.body.event?.data).toMatchObject({ user: { id: player.user.id } });

    // A later command's webhook event arrives after it: the deauthorization was sent once.
    const buyer = await createPlayer(hearth);
    const gem = await hearth.services.entitlements.createSku(game.id, { name: 'Gem', type: 'durable' });
    await hearthCommand(
      ['entitlements', 'purchase', '--app', game.id, '--user', buyer.user.id, '--sku', gem.id],
      ENV,
    );
    await receiver.untilEvents('ENTITLEMENT_CREATE', 2);
    expect(receiver.events.filter((event) => event.type === 'APPLICATION_DEAUTHORIZED')).toHaveLength(1);
    await bot.nextDispatch('ENTITLEMENT_CREATE');
    expect(dispatches(bot, 'ENTITLEMENT_CREATE')).toHaveLength(2);
  });
});
