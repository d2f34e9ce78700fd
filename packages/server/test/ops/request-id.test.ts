import { GatewayIntents, GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { addTestBot, createTestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * Issue 22, structured logs: one JSON line per request with its id; a well-formed incoming X-Request-Id is
 * kept, any other replaced; the id is answered in a header and names the request in the gateway and
 * webhook-delivery lines of what it caused.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const clock = new ManualClock('2026-05-01T12:00:00.000Z');
let hearth: TestHearth;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  hearth = await startHearth({ logLevel: 'debug', webhookPollMs: 10 }, clock);
});
afterAll(async () => {
  await hearth?.close();
  await receiver?.close();
});

type Line = Record<string, unknown>;
const lines = (): Line[] => hearth.logs.map((line) => JSON.parse(line) as Line);
const requestLine = (reqId: string) =>
  lines().find((line) => line['msg'] === 'request' && line['reqId'] === reqId);

describe('X-Request-Id', () => {
  it.each([
    'a1b2c3d4-e5f6-4711-8899-aabbccddeeff',
    'Root=1-67891233-abcdef012345678912345678',
    'edge.proxy:42/7',
    'x'.repeat(128),
  ])('keeps the well-formed id %s, answers it and logs the request line with it', async (id) => {
    const response = await hearth.api('/gateway', { headers: { 'x-request-id': id } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(id);
    await vi.waitFor(() =>
      expect(requestLine(id)).toEqual({
        level: 30,
        time: expect.any(Number),
        component: 'hearth',
        reqId: id,
        method: 'GET',
        url: '/api/v10/gateway',
        status: 200,
        msg: 'request',
      }),
    );
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['with spaces', 'my request'],
    ['with a quote', 'id"},"level":60,"x":"'],
    ['with a leading dash', '-leading-dash-q9'],
    ['empty', ''],
    ['non-ASCII', 'r%C3%A9q'.replace('%C3%A9', 'é')],
  ])('replaces an id %s with a new UUID', async (_name, id) => {
    const response = await fetch(`${hearth.url}/healthz`, {
      headers: { 'x-request-id': Buffer.from(id, 'utf8').toString('latin1') },
    });
    expect(response.status).toBe(200);
    const answered = response.headers.get('x-request-id') ?? '';
    expect(answered).toMatch(UUID);
    await vi.waitFor(() => expect(requestLine(answered)).toBeDefined());
    expect(hearth.logs.filter((line) => id !== '' && line.includes(id))).toEqual([]);
  });

  it('gives each request without one its own UUID, on every kind of answer', async () => {
    const responses = await Promise.all([
      hearth.api('/gateway'),
      // Refused by the router itself (bad percent-encoding: 404), before any hook.
      hearth.api('/users/%E0%A4%A'),
      hearth.api('/users/@me'),
      hearth.api('/no-such-route'),
      hearth.api('/auth/login', {
        method: 'POST',
        body: '{"login":',
        headers: { 'content-type': 'application/json' },
      }),
    ]);
    expect(responses.map((response) => response.status)).toEqual([200, 404, 401, 404, 400]);
    const ids = responses.map((response) => response.headers.get('x-request-id') ?? '');
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    // The router's refusal is answered before a request exists to log; every other one has its line.
    await vi.waitFor(() => {
      for (const id of [ids[0], ...ids.slice(2)]) expect(requestLine(id ?? '')).toBeDefined();
    });
  });
});

describe('what a request causes names it', () => {
  it('the gateway line of the dispatch it caused', async () => {
    const guild = await createTestGuild(hearth);
    const bot = await addTestBot(hearth, guild);
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
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
    const id = 'create-channel-7f3a';
    const created = await hearth.api(`/guilds/${guild.id}/channels`, {
      method: 'POST',
      auth: guild.owner.token,
      body: { name: 'traced' },
      headers: { 'x-request-id': id },
    });
    expect(created.status).toBe(201);
    await client.nextDispatch('CHANNEL_CREATE');
    await client.close();
    const dispatch = lines().find(
      (line) => line['msg'] === 'gateway dispatch' && line['type'] === 'CHANNEL_CREATE',
    );
    expect(dispatch).toMatchObject({ level: 20, reqId: id, sessions: 1, eventId: expect.any(String) });
    // A dispatch no request caused (the bot's own READY is not a bus event) names none.
    const others = lines().filter(
      (line) => line['msg'] === 'gateway dispatch' && line['reqId'] !== undefined,
    );
    expect(others.every((line) => line['reqId'] === id)).toBe(true);
  });

  it('the webhook delivery line of the event it recorded', async () => {
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
    const { token } = await createPlayer(hearth);
    await grantTokens(hearth, game, token);
    const [delivery] = await receiver.untilEvents('APPLICATION_AUTHORIZED');
    expect(delivery).toBeDefined();
    const delivered = await vi.waitFor(() => {
      const line = lines().find(
        (entry) => entry['msg'] === 'webhook event delivered' && entry['applicationId'] === game.id,
      );
      if (!line) throw new Error('no delivery line yet');
      return line;
    });
    // The request that recorded the event: one of the authorization requests, on this node.
    const cause = requestLine(String(delivered['reqId']));
    expect(cause).toMatchObject({ method: 'POST', status: expect.any(Number) });
    expect(String(cause?.['url'])).toMatch(/^\/api\/v10\/oauth2\/(authorize|token)$/);
  });
});
