import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addressProblem, outboundRequest, outboundUrlProblem } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayer } from '../../../../test-support/lobbies.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * The outbound URL policy (issue 21): every URL Hearth calls (the application's event webhooks URL, a
 * lobby's override, identity providers) is https (http only on a development machine), carries no
 * credentials, and is refused when it resolves to loopback, private, link-local, multicast, unspecified or
 * metadata addresses; a stored URL is PINGed before it is saved; redirects are never followed.
 */

const DEV = { allowLoopback: true, extraCa: undefined };
const PROD = { allowLoopback: false, extraCa: undefined };
const URL_INVALID = { _errors: [{ code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' }] };
const NOT_VERIFIED = {
  _errors: [
    {
      code: 'APPLICATION_EVENT_WEBHOOKS_URL_INVALID',
      message: 'The specified event webhooks url could not be verified.',
    },
  ],
};
const invalid = (field: string, leaf: object) => ({
  code: 50035,
  message: 'Invalid Form Body',
  errors: { [field]: leaf },
});

const receivers: WebhookReceiver[] = [];
const servers: Server[] = [];
afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A loopback server that counts every TCP connection and answers each request with `answer`. */
async function countingServer(
  answer: (respond: (status: number, headers?: Record<string, string>) => void) => void,
): Promise<{ port: number; connections: () => number; requests: () => number }> {
  let connections = 0;
  let requests = 0;
  const server = createServer((_request, response) => {
    requests++;
    answer((status, headers = {}) => {
      response.writeHead(status, headers);
      response.end();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    requests: () => requests,
  };
}

describe('the policy: which destinations an outbound request may reach', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'non-public'],
    ['::', 'non-public'],
    ['10.1.2.3', 'non-public'],
    ['172.16.0.1', 'non-public'],
    ['192.168.1.1', 'non-public'],
    ['169.254.169.254', 'non-public'],
    ['::ffff:169.254.169.254', 'non-public'],
    ['64:ff9b::a9fe:a9fe', 'non-public'],
    ['100.64.0.1', 'non-public'],
    ['224.0.0.251', 'non-public'],
    ['255.255.255.255', 'non-public'],
    ['fe80::1', 'non-public'],
    ['fd00:ec2::254', 'non-public'],
    ['ff02::1', 'non-public'],
  ])('%s is refused (%s) in production', (address, kind) => {
    expect(addressProblem(address, PROD)).toContain(kind);
  });

  it('loopback alone is let through by the development switch; the other ranges never are', () => {
    expect(addressProblem('127.0.0.1', DEV)).toBeUndefined();
    expect(addressProblem('::1', DEV)).toBeUndefined();
    for (const address of ['0.0.0.0', '169.254.169.254', '10.0.0.1', '::', 'fe80::1']) {
      expect(addressProblem(address, DEV)).toBeDefined();
    }
  });

  it('public addresses pass', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(addressProblem(address, PROD)).toBeUndefined();
    }
  });

  it.each([
    'file:///etc/passwd',
    'gopher://example.com/',
    'javascript:alert(1)',
    'ftp://example.com/',
    'data:text/plain,x',
    'https://user:secret@example.com/hooks',
    'https://169.254.169.254/latest/meta-data',
    'https://0x7f.1/hooks',
    'https://[::]/hooks',
    'http://example.com/hooks',
  ])('%s is refused before any request in production', (url) => {
    expect(outboundUrlProblem(url, PROD, { http: true })).toBeDefined();
  });

  it('http: is allowed only on a development machine and only where the caller allows it', () => {
    expect(outboundUrlProblem('http://127.0.0.1:9/hooks', DEV, { http: true })).toBeUndefined();
    expect(outboundUrlProblem('http://127.0.0.1:9/hooks', DEV)).toBeDefined();
    expect(outboundUrlProblem('https://example.com/hooks', PROD)).toBeUndefined();
  });
});

describe('a kept-alive connection the receiver closed', () => {
  it('is not an outage: the request goes again once, on a connection of its own', async () => {
    // Answers the first request of each connection (kept alive) and drops the connection at the second:
    // the race of a server's idle timeout with the client handing that connection to a new request.
    let connections = 0;
    let served = 0;
    const server = createNetServer((socket) => {
      connections++;
      let requests = 0;
      socket.on('data', (chunk) => {
        if (!chunk.includes('\r\n\r\n')) return;
        if (++requests > 1) {
          socket.resetAndDestroy();
          return;
        }
        served++;
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/keys`;
    const request = () =>
      outboundRequest(url, DEV, { method: 'GET', timeoutMs: 5000, maxBytes: 100, rules: { http: true } });
    try {
      expect((await request()).status).toBe(200);
      const again = await request();
      expect(again.error).toBeNull();
      expect(again.status).toBe(200);
      expect(again.body?.toString()).toBe('ok');
      expect({ connections, served }).toEqual({ connections: 2, served: 2 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the application's event_webhooks_url (PATCH /applications/@me)", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it.each([
    'file:///etc/passwd',
    'gopher://127.0.0.1:70/_x',
    'javascript:alert(1)',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0:1/events',
    'http://[::]:1/events',
    'http://10.0.0.1/events',
    'http://user:pass@127.0.0.1:1/events',
  ])('refuses %s with 50035 and saves nothing', async (url) => {
    const game = await lobbyGame(hearth);
    const answer = await call(hearth, 'PATCH', '/applications/@me', game.bot, {
      event_webhooks_url: url,
      event_webhooks_types: ['LOBBY_MESSAGE_CREATE'],
    });
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 400,
      body: invalid('event_webhooks_url', URL_INVALID),
    });
    const app = await call<{ event_webhooks_url: string | null }>(
      hearth,
      'GET',
      '/applications/@me',
      game.bot,
    );
    expect(app.body.event_webhooks_url).toBeNull();
  });

  it('never follows a redirect: a PING answered 307 fails, and the target is never asked', async () => {
    const target = await countingServer((respond) => respond(204));
    const redirecting = await countingServer((respond) =>
      respond(307, { location: `http://127.0.0.1:${target.port}/events` }),
    );
    const game = await lobbyGame(hearth);
    const answer = await call(hearth, 'PATCH', '/applications/@me', game.bot, {
      event_webhooks_url: `http://127.0.0.1:${redirecting.port}/events`,
    });
    expect(answer.body).toEqual(invalid('event_webhooks_url', NOT_VERIFIED));
    expect(redirecting.requests()).toBe(1);
    expect(target.connections()).toBe(0);
  });
});

describe('production rules: loopback receivers are refused at save time and at delivery time', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-outbound-'));
  const databaseUrl = `sqlite:${join(directory, 'h.sqlite')}`;
  let hearth: TestHearth | undefined;
  afterEach(async () => {
    await hearth?.close();
    hearth = undefined;
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('refuses http: and names that resolve to loopback (localhost) without connecting', async () => {
    hearth = await startHearth({ databaseUrl: 'sqlite::memory:', allowLoopbackUrls: false });
    const listening = await countingServer((respond) => respond(204));
    const game = await lobbyGame(hearth);
    const plain = await call(hearth, 'PATCH', '/applications/@me', game.bot, {
      event_webhooks_url: `http://127.0.0.1:${listening.port}/events`,
    });
    expect(plain.body).toEqual(invalid('event_webhooks_url', URL_INVALID));
    const named = await call(hearth, 'PATCH', '/applications/@me', game.bot, {
      event_webhooks_url: `https://localhost:${listening.port}/events`,
    });
    expect(named.body).toEqual(invalid('event_webhooks_url', NOT_VERIFIED));
    expect(listening.connections()).toBe(0);
  });

  it('a lobby override saved on a development machine is checked again at delivery and not called once the switch is off', async () => {
    hearth = await startHearth({ databaseUrl, webhookPollMs: 10 });
    const game = await lobbyGame(hearth);
    const app = await call<{ verify_key: string }>(hearth, 'GET', '/applications/@me', game.bot);
    const receiver = await WebhookReceiver.listen(app.body.verify_key);
    receivers.push(receiver);
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    await call(hearth, 'PATCH', '/applications/@me', game.bot, {
      event_webhooks_url: receiver.url,
      event_webhooks_types: ['LOBBY_MESSAGE_CREATE'],
    });
    const player = await lobbyPlayer(hearth, game);
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: player.id }],
      override_event_webhooks_url: url,
    });
    expect(lobby.status).toBe(201);
    await hearth.close();
    const seen = receiver.deliveries.length;

    hearth = await startHearth({ databaseUrl, webhookPollMs: 10, allowLoopbackUrls: false });
    const sent = await call(hearth, 'POST', `/lobbies/${lobby.body.id}/messages`, player.bearer, {
      content: 'hello',
    });
    expect(sent.status).toBe(201);
    const services = hearth.services;
    await expect
      .poll(async () => (await services.webhooks.log(game.id))[0]?.tries[0]?.error ?? null)
      .toBe('scheme http: refused');
    expect(receiver.deliveries.length).toBe(seen);
  });
});

describe("a lobby's override_event_webhooks_url is verified like the application's", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it.each([
    'file:///etc/passwd',
    'gopher://127.0.0.1:70/_x',
    'javascript:alert(1)',
    'http://169.254.169.254/latest/meta-data',
    'http://0.0.0.0:1/events',
  ])('create and modify refuse %s with 50035', async (url) => {
    const game = await lobbyGame(hearth);
    const created = await call(hearth, 'POST', '/lobbies', game.bot, { override_event_webhooks_url: url });
    expect(created.status).toBe(400);
    expect((created.body as { code: number }).code).toBe(50035);
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot);
    const modified = await call(hearth, 'PATCH', `/lobbies/${lobby.body.id}`, game.bot, {
      override_event_webhooks_url: url,
    });
    expect(modified.status).toBe(400);
    const got = await call(hearth, 'GET', `/lobbies/${lobby.body.id}`, game.bot);
    expect(got.body).toMatchObject({ override_event_webhooks_url: null });
  });

  it('PINGs the URL, signed with the application key, and refuses one that does not answer 204', async () => {
    const game = await lobbyGame(hearth);
    const app = await call<{ verify_key: string }>(hearth, 'GET', '/applications/@me', game.bot);
    const refusing = await WebhookReceiver.listen(app.body.verify_key, () => 500);
    const accepting = await WebhookReceiver.listen(app.body.verify_key);
    receivers.push(refusing, accepting);

    const refused = await call(hearth, 'POST', '/lobbies', game.bot, {
      override_event_webhooks_url: refusing.url,
    });
    expect({ status: refused.status, body: refused.body }).toEqual({
      status: 400,
      body: invalid('override_event_webhooks_url', NOT_VERIFIED),
    });
    expect(refusing.deliveries).toMatchObject([{ verified: true, body: { type: 0 } }]);

    const created = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      override_event_webhooks_url: accepting.url,
    });
    expect(created.status).toBe(201);
    expect(accepting.deliveries).toMatchObject([
      { verified: true, answered: 204, body: { type: 0, application_id: game.id } },
    ]);
    // PATCH to a URL that fails its PING keeps the one stored.
    const patched = await call(hearth, 'PATCH', `/lobbies/${created.body.id}`, game.bot, {
      override_event_webhooks_url: refusing.url,
    });
    expect(patched.status).toBe(400);
    const got = await call(hearth, 'GET', `/lobbies/${created.body.id}`, game.bot);
    expect(got.body).toMatchObject({ override_event_webhooks_url: accepting.url });
  });
});
