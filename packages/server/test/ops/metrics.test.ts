import { GatewayIntents, GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { addTestBot, createTestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens } from '../../../../test-support/oauth.js';
import { type MetricFamily, parseExposition, sampleValue } from '../../../../test-support/prometheus.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * Issue 22, metrics: `/metrics` in Prometheus' text format, read by a strict parser; behind a token (or
 * the `--metrics` switch); counters move with the requests, sessions, dispatches and deliveries they count.
 */

const TOKEN = 'metrics-token-0123456789abcdef-0123456789';
const clock = new ManualClock('2026-05-01T12:00:00.000Z');
let hearth: TestHearth;
let open: TestHearth;
let off: TestHearth;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  [hearth, open, off] = await Promise.all([
    startHearth({ metricsToken: TOKEN, webhookPollMs: 10 }, clock),
    startHearth({ metrics: true }),
    startHearth(),
  ]);
});
afterAll(async () => {
  await Promise.all([hearth?.close(), open?.close(), off?.close()]);
  await receiver?.close();
});

async function scrape(on: TestHearth = hearth, auth = `Bearer ${TOKEN}`) {
  const response = await fetch(`${on.url}/metrics`, { headers: { authorization: auth } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await response.text());
}

const value = (families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}) =>
  sampleValue(families, name, labels) ?? 0;

describe('access', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', `Bearer ${TOKEN}x`],
    ['the token without its scheme', TOKEN],
    ['another scheme', `Bot ${TOKEN}`],
    ['an empty bearer', 'Bearer '],
  ])('refuses %s with 401', async (_name, authorization) => {
    const response = await fetch(`${hearth.url}/metrics`, {
      headers: authorization === undefined ? {} : { authorization },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await response.json()).toEqual({ message: '401: Unauthorized', code: 0 });
  });

  it('serves the holder of the token', async () => {
    const families = await scrape();
    expect(families.get('hearth_http_requests_total')?.type).toBe('counter');
  });

  it('with --metrics and no token, serves anyone; without either, /metrics does not exist', async () => {
    expect((await scrape(open, '')).get('hearth_http_requests_total')?.type).toBe('counter');
    const response = await fetch(`${off.url}/metrics`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: '404: Not Found', code: 0 });
  });
});

describe('the exposition', () => {
  it('holds every family, with its type and help, that a strict parser accepts', async () => {
    const families = await scrape();
    const expected: Record<string, string> = {
      hearth_http_requests_total: 'counter',
      hearth_http_request_duration_seconds: 'histogram',
      hearth_rate_limit_refusals_total: 'counter',
      hearth_gateway_sessions: 'gauge',
      hearth_gateway_dispatches_total: 'counter',
      hearth_bus_lag_seconds: 'histogram',
      hearth_webhook_queue_depth: 'gauge',
      hearth_webhook_deliveries_total: 'counter',
      hearth_database_pool_connections: 'gauge',
      hearth_process_cpu_seconds_total: 'counter',
    };
    for (const [name, type] of Object.entries(expected)) {
      expect(families.get(name)?.type, name).toBe(type);
      expect(families.get(name)?.help, name).toEqual(expect.any(String));
    }
    // SQLite has no pool: the family is declared with no sample.
    expect(families.get('hearth_database_pool_connections')?.samples).toEqual([]);
    expect(sampleValue(families, 'hearth_webhook_queue_depth')).toBe(0);
  });

  it('the parser refuses what Prometheus refuses', () => {
    expect(() => parseExposition('a{b="c} 1\n')).toThrow();
    expect(() => parseExposition('a 1\n# TYPE a counter\n')).toThrow();
    expect(() => parseExposition('a 1\nb 1\na 2\n')).toThrow();
    expect(() => parseExposition('a{b="x\\q"} 1\n')).toThrow();
    expect(() => parseExposition('1a 1\n')).toThrow();
    expect(() => parseExposition('a one\n')).toThrow();
    expect(() => parseExposition('a 1')).toThrow();
    expect(() =>
      parseExposition('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'),
    ).toThrow();
    expect(() => parseExposition('# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n')).toThrow();
  });
});

describe('counters move', () => {
  it('counts requests by method, route pattern and status, with their latency', async () => {
    const gateway = { method: 'GET', route: '/api/v10/gateway', status: '200' };
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await hearth.api('/gateway')).status).toBe(200);
    const player = await createPlayer(hearth);
    expect((await hearth.api('/users/@me', { auth: player.token })).status).toBe(200);
    expect((await hearth.api(`/users/${player.user.id}`, { auth: 'wrong' })).status).toBe(401);
    expect((await hearth.api('/no-such-route/12345?secret=1')).status).toBe(404);
    const after = await scrape();

    expect(value(after, 'hearth_http_requests_total', gateway)).toBe(
      value(before, 'hearth_http_requests_total', gateway) + 3,
    );
    expect(value(after, 'hearth_http_request_duration_seconds_count', gateway)).toBe(
      value(before, 'hearth_http_request_duration_seconds_count', gateway) + 3,
    );
    const me = { method: 'GET', route: '/api/v10/users/@me', status: '200' };
    expect(value(after, 'hearth_http_requests_total', me)).toBe(
      value(before, 'hearth_http_requests_total', me) + 1,
    );
    // The pattern, never the id asked for.
    const user = { method: 'GET', route: '/api/v10/users/:user_id', status: '401' };
    expect(value(after, 'hearth_http_requests_total', user)).toBe(
      value(before, 'hearth_http_requests_total', user) + 1,
    );
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    expect(value(after, 'hearth_http_requests_total', unmatched)).toBe(
      value(before, 'hearth_http_requests_total', unmatched) + 1,
    );
    const labels = [...after.values()].flatMap((family) =>
      family.samples.flatMap((sample) => Object.values(sample.labels)),
    );
    expect(labels.filter((label) => /12345|secret|no-such-route|\d{17,}/.test(label))).toEqual([]);
  });

  it('counts gateway sessions open and identified, dispatches sent and the bus lag', async () => {
    const guild = await createTestGuild(hearth);
    const bot = await addTestBot(hearth, guild);
    const before = await scrape();
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    const connected = await scrape();
    expect(value(connected, 'hearth_gateway_sessions', { state: 'open' })).toBe(
      value(before, 'hearth_gateway_sessions', { state: 'open' }) + 1,
    );
    expect(value(connected, 'hearth_gateway_sessions', { state: 'identified' })).toBe(
      value(before, 'hearth_gateway_sessions', { state: 'identified' }),
    );

    client.send({
      op: GatewayOpcodes.Identify,
      d: {
        token: bot.botToken,
        properties: { os: 'linux', browser: 'hearth-tests', device: 'hearth-tests' },
        intents: GatewayIntents.Guilds,
      },
    });
    await client.nextDispatch('READY');
    await client.nextDispatch('GUILD_CREATE');
    const identified = await scrape();
    expect(value(identified, 'hearth_gateway_sessions', { state: 'identified' })).toBe(
      value(before, 'hearth_gateway_sessions', { state: 'identified' }) + 1,
    );
    const dispatched = value(identified, 'hearth_gateway_dispatches_total');
    expect(dispatched).toBeGreaterThanOrEqual(value(before, 'hearth_gateway_dispatches_total') + 2);

    // A change published on the bus reaches the bot: one more dispatch, one more lag observation.
    const lagBefore = value(identified, 'hearth_bus_lag_seconds_count');
    const created = await hearth.api(`/guilds/${guild.id}/channels`, {
      method: 'POST',
      auth: guild.owner.token,
      body: { name: 'metrics' },
    });
    expect(created.status).toBe(201);
    await client.nextDispatch('CHANNEL_CREATE');
    const later = await scrape();
    expect(value(later, 'hearth_gateway_dispatches_total')).toBe(dispatched + 1);
    expect(value(later, 'hearth_bus_lag_seconds_count')).toBeGreaterThan(lagBefore);

    await client.close();
    await vi.waitFor(async () =>
      expect(value(await scrape(), 'hearth_gateway_sessions', { state: 'open' })).toBe(
        value(before, 'hearth_gateway_sessions', { state: 'open' }),
      ),
    );
  });

  it('counts webhook deliveries by outcome', async () => {
    const game = await createGame(hearth);
    const app = (await (await hearth.api('/applications/@me', { auth: `Bot ${game.botToken}` })).json()) as {
      verify_key: string;
    };
    receiver = await WebhookReceiver.listen(app.verify_key);
    const patched = await hearth.api('/applications/@me', {
      method: 'PATCH',
      auth: `Bot ${game.botToken}`,
      body: { event_webhooks_url: receiver.url, event_webhooks_types: ['APPLICATION_AUTHORIZED'] },
    });
    expect(patched.status).toBe(200);
    const before = await scrape();
    const { token } = await createPlayer(hearth);
    await grantTokens(hearth, game, token);
    await receiver.untilEvents('APPLICATION_AUTHORIZED');
    await vi.waitFor(async () =>
      expect(value(await scrape(), 'hearth_webhook_deliveries_total', { outcome: 'delivered' })).toBe(
        value(before, 'hearth_webhook_deliveries_total', { outcome: 'delivered' }) + 1,
      ),
    );
    expect(value(await scrape(), 'hearth_webhook_queue_depth')).toBe(0);
  });

  it('counts an event the application is not sent as skipped, though no delivery round settles it', async () => {
    const game = await createGame(hearth);
    const before = await scrape();
    const { token } = await createPlayer(hearth);
    await grantTokens(hearth, game, token);
    // APPLICATION_AUTHORIZED with no webhook URL: recorded already skipped, counted once it commits.
    expect(value(await scrape(), 'hearth_webhook_deliveries_total', { outcome: 'skipped' })).toBe(
      value(before, 'hearth_webhook_deliveries_total', { outcome: 'skipped' }) + 1,
    );
    const [event] = await hearth.services.webhooks.log(game.id);
    expect(event).toMatchObject({ type: 'APPLICATION_AUTHORIZED', status: 'skipped', attempts: 0 });
  });

  it('counts rate-limit refusals by scope', async () => {
    // A fresh window; then one address past the global limit (50 per second) on an anonymous route.
    clock.advance(60_000);
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 55; i++) statuses.push((await hearth.api('/gateway')).status);
    const refused = statuses.filter((status) => status === 429).length;
    expect(refused).toBeGreaterThan(0);
    const after = await scrape();
    const total = (families: Map<string, MetricFamily>) =>
      (families.get('hearth_rate_limit_refusals_total')?.samples ?? []).reduce((sum, s) => sum + s.value, 0);
    expect(total(after)).toBe(total(before) + refused);
    expect(
      value(after, 'hearth_http_requests_total', { method: 'GET', route: '/api/v10/gateway', status: '429' }),
    ).toBe(
      value(before, 'hearth_http_requests_total', {
        method: 'GET',
        route: '/api/v10/gateway',
        status: '429',
      }) + refused,
    );
  });
});
