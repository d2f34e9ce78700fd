import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventWebhooksStatus, WEBHOOK_MAX_ATTEMPTS, webhookRetryDelay } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  createGame,
  createPlayer,
  grantTokens,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { recordWebhookEvent } from '../../src/storage/outbox.js';

const clock = new ManualClock('2026-03-01T12:00:00.000Z');
let hearth: TestHearth;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  hearth = await startHearth({ webhookPollMs: 10 }, clock);
});
afterAll(async () => {
  await hearth.close();
  for (const receiver of receivers) await receiver.close();
});

async function receiverFor(game: TestGame, policy?: ConstructorParameters<typeof Object>[0]) {
  const app = await current(game);
  const receiver = await WebhookReceiver.listen(app['verify_key'] as string, policy as never);
  receivers.push(receiver);
  return receiver;
}

async function current(game: TestGame): Promise<Record<string, unknown>> {
  const response = await hearth.api('/applications/@me', { auth: `Bot ${game.botToken}` });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

const patch = (game: TestGame, body: unknown) =>
  hearth.api('/applications/@me', { method: 'PATCH', auth: `Bot ${game.botToken}`, body });

const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
const notVerified = invalidForm({
  event_webhooks_url: {
    _errors: [
      {
        code: 'APPLICATION_EVENT_WEBHOOKS_URL_INVALID',
        message: 'The specified event webhooks url could not be verified.',
      },
    ],
  },
});

/** A game whose events go to a fresh receiver, subscribed to `types`. */
async function subscribedGame(types: string[], policy?: (index: number) => number) {
  const game = await createGame(hearth);
  const app = await current(game);
  let events = 0;
  const receiver = await WebhookReceiver.listen(app['verify_key'] as string, (delivery) =>
    delivery.body.type === 0 || !policy ? 204 : policy(events++),
  );
  receivers.push(receiver);
  const response = await patch(game, { event_webhooks_url: receiver.url, event_webhooks_types: types });
  expect(response.status).toBe(200);
  return { game, receiver };
}

async function authorize(game: TestGame) {
  const { user, token } = await createPlayer(hearth);
  const tokens = await grantTokens(hearth, game, token);
  return { user, tokens };
}

describe('event webhook settings on the application (PROTOCOL.md §F.1)', () => {
  it('an application starts with no URL, status 1 DISABLED and no types', async () => {
    const app = await current(await createGame(hearth));
    expect(app).toMatchObject({
      event_webhooks_url: null,
      event_webhooks_status: 1,
      event_webhooks_types: [],
    });
  });

  it('setting a URL first sends it a signed PING {version, application_id, type: 0}; a 204 enables it', async () => {
    const game = await createGame(hearth);
    const receiver = await receiverFor(game);
    const response = await patch(game, {
      event_webhooks_url: receiver.url,
      event_webhooks_types: ['APPLICATION_AUTHORIZED', 'LOBBY_MESSAGE_CREATE'],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      event_webhooks_url: receiver.url,
      event_webhooks_status: EventWebhooksStatus.Enabled,
      event_webhooks_types: ['APPLICATION_AUTHORIZED', 'LOBBY_MESSAGE_CREATE'],
    });
    expect(receiver.deliveries).toHaveLength(1);
    const [ping] = receiver.deliveries;
    expect(ping?.verified).toBe(true);
    expect(ping?.rawBody).toBe(JSON.stringify({ version: 1, application_id: game.id, type: 0 }));
    expect(ping?.timestampHeader).toBe(String(Math.floor(clock.now() / 1000)));
    expect(await current(game)).toMatchObject({ event_webhooks_url: receiver.url, event_webhooks_status: 2 });

    // Disabling and clearing need no PING.
    expect((await patch(game, { event_webhooks_status: 1 })).status).toBe(200);
    expect(await current(game)).toMatchObject({ event_webhooks_status: 1 });
    expect((await patch(game, { event_webhooks_url: null })).status).toBe(200);
    expect(await current(game)).toMatchObject({ event_webhooks_url: null, event_webhooks_status: 1 });
    expect(receiver.deliveries).toHaveLength(1);
  });

  it('a URL that answers the PING with anything but 204, or not at all, is refused and nothing changes', async () => {
    const game = await createGame(hearth);
    const answers200 = await receiverFor(game, () => 200);
    let response = await patch(game, { event_webhooks_url: answers200.url, description: 'changed' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(notVerified);
    expect(answers200.deliveries).toHaveLength(1);

    const closed = await receiverFor(game);
    const url = closed.url;
    await closed.close();
    response = await patch(game, { event_webhooks_url: url });
    expect(await response.json()).toEqual(notVerified);
    expect(await current(game)).toMatchObject({
      event_webhooks_url: null,
      event_webhooks_status: 1,
      description: '',
    });
  });

  it('refuses bad values with 50035 and the field at fault', async () => {
    const game = await createGame(hearth);
    const cases: Array<[unknown, string, string]> = [
      [{ event_webhooks_url: 'not a url' }, 'event_webhooks_url', 'URL_TYPE_INVALID_URL'],
      [{ event_webhooks_url: 'ftp://example.com/x' }, 'event_webhooks_url', 'URL_TYPE_INVALID_URL'],
      [
        { event_webhooks_url: `https://example.com/${'a'.repeat(2029)}` },
        'event_webhooks_url',
        'BASE_TYPE_MAX_LENGTH',
      ],
      [{ event_webhooks_url: 12 }, 'event_webhooks_url', 'BASE_TYPE_STRING'],
      [{ event_webhooks_status: 3 }, 'event_webhooks_status', 'BASE_TYPE_CHOICES'],
      [{ event_webhooks_status: 'on' }, 'event_webhooks_status', 'NUMBER_TYPE_COERCE'],
      [{ event_webhooks_status: 2 }, 'event_webhooks_url', 'BASE_TYPE_REQUIRED'],
      [{ event_webhooks_types: 'APPLICATION_AUTHORIZED' }, 'event_webhooks_types', 'LIST_TYPE_CONVERT'],
      [{ event_webhooks_types: ['NOT_AN_EVENT'] }, 'event_webhooks_types.0', 'BASE_TYPE_CHOICES'],
    ];
    for (const [body, path, code] of cases) {
      const response = await patch(game, body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      const error = (await response.json()) as { code: number; errors: Record<string, unknown> };
      expect(error.code).toBe(50035);
      let node: unknown = error.errors;
      for (const key of path.split('.')) node = (node as Record<string, unknown> | undefined)?.[key];
      expect({
        body,
        codes: (node as { _errors?: { code: string }[] })?._errors?.map((e) => e.code),
      }).toEqual({
        body,
        codes: [code],
      });
    }
    expect(await current(game)).toMatchObject({
      event_webhooks_url: null,
      event_webhooks_status: 1,
      event_webhooks_types: [],
    });
  });

  it('only the bot token of the application changes its settings', async () => {
    const response = await hearth.api('/applications/@me', {
      method: 'PATCH',
      auth: 'Bot not-a-token',
      body: { event_webhooks_url: 'https://example.com' },
    });
    expect(response.status).toBe(401);
  });
});

describe('delivery: envelope and signature (PROTOCOL.md §F.2, §F.3)', () => {
  it('APPLICATION_AUTHORIZED arrives signed, in the envelope, and a third-party verifier accepts it', async () => {
    const { game, receiver } = await subscribedGame(['APPLICATION_AUTHORIZED', 'APPLICATION_DEAUTHORIZED']);
    const { user } = await authorize(game);
    const [delivery] = await receiver.untilEvents('APPLICATION_AUTHORIZED');
    expect(delivery?.verified).toBe(true);
    expect(delivery?.answered).toBe(204);
    expect(delivery?.body).toEqual({
      version: 1,
      application_id: game.id,
      type: 1,
      event: {
        type: 'APPLICATION_AUTHORIZED',
        timestamp: `${new Date(clock.now()).toISOString().slice(0, -1)}000`,
        data: {
          user: expect.objectContaining({ id: user.id, username: user.username }),
          scopes: ['identify'],
        },
      },
    });
  });

  it('a tampered body, timestamp or signature is rejected by the same verifier', async () => {
    const { game, receiver } = await subscribedGame(['APPLICATION_AUTHORIZED']);
    await authorize(game);
    const [delivery] = await receiver.untilEvents('APPLICATION_AUTHORIZED');
    const { timestampHeader, rawBody, signatureHeader } = delivery!;
    const publicKey = Buffer.from((await current(game))['verify_key'] as string, 'hex');
    const verify = (t: string, b: string, s: string) =>
      nacl.sign.detached.verify(Buffer.from(t + b), Buffer.from(s, 'hex'), publicKey);
    expect(verify(timestampHeader, rawBody, signatureHeader)).toBe(true);
    const tamperedBody = rawBody.replace('"identify"', '"email"');
    expect(tamperedBody).not.toBe(rawBody);
    expect(verify(timestampHeader, tamperedBody, signatureHeader)).toBe(false);
    expect(verify(String(Number(timestampHeader) + 1), rawBody, signatureHeader)).toBe(false);
    const flipped = `${signatureHeader.slice(0, -1)}${signatureHeader.endsWith('0') ? '1' : '0'}`;
    expect(verify(timestampHeader, rawBody, flipped)).toBe(false);

    // Replayed at the receiver with the body changed: 401, as a receiver must answer.
    const replayed = await fetch(receiver.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-signature-ed25519': signatureHeader,
        'x-signature-timestamp': timestampHeader,
      },
      body: tamperedBody,
    });
    expect(replayed.status).toBe(401);
  });

  it('APPLICATION_DEAUTHORIZED carries the serialized user; unsubscribed types are not sent', async () => {
    const { game, receiver } = await subscribedGame(['APPLICATION_DEAUTHORIZED']);
    const { user, tokens } = await authorize(game);
    const revoked = await tokenRequest(
      hearth,
      { token: tokens.access_token },
      { basic: [game.id, game.clientSecret], path: '/oauth2/token/revoke' },
    );
    expect(revoked.status).toBe(200);
    const [delivery] = await receiver.untilEvents('APPLICATION_DEAUTHORIZED');
    expect(delivery?.body.event?.data).toEqual({ user: expect.objectContaining({ id: user.id }) });
    // The authorization came first and was not subscribed: it never arrives.
    expect(receiver.events.map((event) => event.type)).toEqual(['APPLICATION_DEAUTHORIZED']);
  });

  it('any recorded type is delivered generically, and an override URL replaces the application URL', async () => {
    const { game, receiver } = await subscribedGame(['LOBBY_MESSAGE_CREATE', 'GAME_DIRECT_MESSAGE_DELETE']);
    const lobbyBackend = await receiverFor(game);
    const record = (type: string, data: Record<string, unknown>, overrideUrl?: string) =>
      hearth.storage.transaction((tx) =>
        recordWebhookEvent(tx, {
          id: String(BigInt(clock.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000))),
          type,
          applicationId: game.id,
          data,
          createdAt: clock.now(),
          ...(overrideUrl ? { overrideUrl } : {}),
        }),
      );
    await record('GAME_DIRECT_MESSAGE_DELETE', { id: '1', channel_id: '2' });
    await record('LOBBY_MESSAGE_CREATE', { id: '3', lobby_id: '4', content: 'hi' }, lobbyBackend.url);
    const [direct] = await receiver.untilEvents('GAME_DIRECT_MESSAGE_DELETE');
    expect(direct?.body.event?.data).toEqual({ id: '1', channel_id: '2' });
    const [lobby] = await lobbyBackend.untilEvents('LOBBY_MESSAGE_CREATE');
    expect(lobby?.verified).toBe(true);
    expect(lobby?.body.event?.data).toEqual({ id: '3', lobby_id: '4', content: 'hi' });
    expect(receiver.events.map((event) => event.type)).toEqual(['GAME_DIRECT_MESSAGE_DELETE']);
  });
});

describe('delivery: retries and disabling (PROTOCOL.md §F.2)', () => {
  it('no answer within 3 s, or a redirect, is a failed attempt', async () => {
    const game = await createGame(hearth);
    const hung: ServerResponse[] = [];
    let events = 0;
    // Answers the PING at once; holds the first event past the timeout, redirects the second.
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { type: number };
        if (body.type === 0) response.writeHead(204).end();
        else if (events++ === 0) hung.push(response);
        else response.writeHead(302, { location: 'http://127.0.0.1:1/' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const response = await patch(game, {
        event_webhooks_url: url,
        event_webhooks_types: ['APPLICATION_AUTHORIZED'],
      });
      expect(response.status).toBe(200);
      await authorize(game);
      const tries = async () => (await hearth.services.webhooks.log(game.id))[0]?.tries ?? [];
      await expect.poll(tries, { timeout: 10_000 }).toHaveLength(1);
      expect((await tries())[0]).toMatchObject({ httpStatus: null, error: 'no answer within 3000 ms' });
      clock.advance(webhookRetryDelay(1));
      await expect.poll(tries, { timeout: 10_000 }).toHaveLength(2);
      expect((await tries())[1]).toMatchObject({ httpStatus: 302, error: 'answered 302' });
      expect((await hearth.services.webhooks.log(game.id))[0]).toMatchObject({
        status: 'pending',
        attempts: 2,
      });
    } finally {
      for (const response of hung) response.destroy();
      server.closeAllConnections();
      server.close();
    }
  }, 20_000);

  it('a failed attempt is retried with exponential backoff on the clock until one succeeds', async () => {
    const { game, receiver } = await subscribedGame(['APPLICATION_AUTHORIZED'], (index) =>
      index < 2 ? 500 : 204,
    );
    await authorize(game);
    await receiver.untilEvents('APPLICATION_AUTHORIZED', 1);
    // Not due yet: nothing more arrives until the clock passes the first delay.
    clock.advance(webhookRetryDelay(1));
    await receiver.untilEvents('APPLICATION_AUTHORIZED', 2);
    clock.advance(webhookRetryDelay(2));
    const deliveries = await receiver.untilEvents('APPLICATION_AUTHORIZED', 3);
    expect(deliveries.filter((d) => d.body.type === 1).map((d) => d.answered)).toEqual([500, 500, 204]);
    const bodies = new Set(deliveries.filter((d) => d.body.type === 1).map((d) => JSON.stringify(d.body)));
    expect(bodies.size).toBe(1);
    expect(await current(game)).toMatchObject({ event_webhooks_status: 2 });
  });

  it('after the last retry (over 10 minutes) delivery is disabled: status 3 and a log line', async () => {
    const { game, receiver } = await subscribedGame(['APPLICATION_AUTHORIZED'], () => 503);
    await authorize(game);
    let total = 0;
    for (let attempt = 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt++) {
      await receiver.untilEvents('APPLICATION_AUTHORIZED', attempt);
      if (attempt < WEBHOOK_MAX_ATTEMPTS) {
        clock.advance(webhookRetryDelay(attempt));
        total += webhookRetryDelay(attempt);
      }
    }
    expect(total).toBeGreaterThanOrEqual(10 * 60 * 1000);
    await expect.poll(async () => (await current(game))['event_webhooks_status']).toBe(3);
    expect(
      hearth.logs.some((line) => line.includes(game.id) && line.includes('event_webhooks_status 3')),
    ).toBe(true);
    // Disabled: a new event is not sent; it stays in the delivery log as skipped (replayable).
    await authorize(game);
    await expect
      .poll(async () => (await hearth.services.webhooks.log(game.id)).map((entry) => entry.status))
      .toEqual(['skipped', 'failed']);
    const [skipped, failed] = await hearth.services.webhooks.log(game.id);
    expect(skipped?.lastError).toBe('event webhooks status 3');
    expect(failed?.tries.map((attempt) => attempt.httpStatus)).toEqual(Array(WEBHOOK_MAX_ATTEMPTS).fill(503));
    clock.advance(60 * 60 * 1000);
    const before = receiver.deliveries.length;
    // Setting the URL again re-verifies it with a PING and enables delivery.
    const response = await patch(game, { event_webhooks_status: 2 });
    expect(response.status).toBe(200);
    expect(receiver.deliveries.slice(before).map((d) => d.body.type)).toEqual([0]);
    expect(await current(game)).toMatchObject({ event_webhooks_status: 2 });
  });
});
