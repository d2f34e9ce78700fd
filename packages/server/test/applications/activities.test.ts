import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FormErrors } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';

let hearth: TestHearth;
let target: Server;
let targetUrl: string;
let game: TestGame;

/** A game's backend: answers what it received, as JSON, with a header of its own. */
beforeAll(async () => {
  target = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      response.writeHead(201, {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        'x-private': '1',
      });
      response.end(
        JSON.stringify({
          method: request.method,
          url: request.url,
          type: request.headers['content-type'] ?? null,
          body: Buffer.concat(chunks).toString(),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  hearth = await startHearth();
  game = await createGame(hearth);
  await hearth.services.activities.map(game.id, { prefix: '/api', target: `${targetUrl}/backend` });
  await hearth.services.activities.map(game.id, { prefix: '/api/v2', target: `${targetUrl}/second` });
});
afterAll(async () => {
  await hearth.close();
  await new Promise((resolve) => target.close(resolve));
});

const activity = (path: string, init?: RequestInit) =>
  fetch(`${hearth.url}/activities/${game.id}${path}`, init);

describe('Activity URL mappings and the proxy (DOCS activities: Networking; seed: `.proxy/` optional)', () => {
  it.each(['/.proxy/api/scores?top=3', '/api/scores?top=3'])('%s reaches the mapped target', async (path) => {
    const response = await activity(path);
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-private')).toBeNull();
    expect(await response.json()).toEqual({
      method: 'GET',
      url: '/backend/scores?top=3',
      type: null,
      body: '',
    });
  });

  it('forwards the method, the body and its type; the longest prefix wins', async () => {
    const response = await activity('/.proxy/api/v2/save', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'level=3',
    });
    expect(await response.json()).toEqual({
      method: 'POST',
      url: '/second/save',
      type: 'text/plain',
      body: 'level=3',
    });
    const json = await activity('/api/save', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await json.json()).toEqual({
      method: 'PUT',
      url: '/backend/save',
      type: 'application/json',
      body: '{"a":1}',
    });
  });

  it('a path no prefix maps is 404, as is an unknown application; a prefix matches whole segments', async () => {
    expect((await activity('/apiary')).status).toBe(404);
    expect((await activity('/.proxy/other')).status).toBe(404);
    expect((await fetch(`${hearth.url}/activities/123/api/x`)).status).toBe(404);
  });

  it('refuses prefixes that are not paths or that take the /.proxy name, and targets that are no URL', async () => {
    const refuse = (prefix: string, to: string) =>
      hearth.services.activities.map(game.id, { prefix, target: to });
    await expect(refuse('api', targetUrl)).rejects.toMatchObject({
      errors: { prefix: { _errors: [FormErrors.invalid()] } },
    });
    await expect(refuse('/.proxy/x', targetUrl)).rejects.toMatchObject({
      errors: { prefix: { _errors: [FormErrors.invalid()] } },
    });
    await expect(refuse('/x', 'ftp://example.com')).rejects.toMatchObject({
      errors: { target: { _errors: [FormErrors.url()] } },
    });
    // A bare host means https.
    expect(
      await hearth.services.activities.map(game.id, { prefix: '/cdn/', target: 'cdn.example.com/assets' }),
    ).toEqual({
      prefix: '/cdn',
      target: 'https://cdn.example.com/assets',
    });
  });

  it('without --allow-loopback-urls, loopback targets are refused when saved and when reached', async () => {
    const strict = await startHearth({ allowLoopbackUrls: false });
    try {
      const other = await createGame(strict);
      await expect(
        strict.services.activities.map(other.id, { prefix: '/', target: targetUrl }),
      ).rejects.toMatchObject({ errors: { target: { _errors: [FormErrors.url()] } } });
      // A name is judged by what it resolves to, when the request is made.
      await strict.services.activities.map(other.id, {
        prefix: '/',
        target: `localhost:${new URL(targetUrl).port}`,
      });
      const response = await fetch(`${strict.url}/activities/${other.id}/.proxy/x`);
      expect(response.status).toBe(502);
    } finally {
      await strict.close();
    }
  });
});

describe('the share-link call (seed: Errors, custom_id; referrer_id ignored silently)', () => {
  it('answers a link carrying custom_id, and ignores referrer_id without an error', async () => {
    const { token } = await createPlayer(hearth);
    const share = (body: unknown) =>
      hearth.api(`/applications/${game.id}/share-link`, { method: 'POST', auth: token, body });
    const response = await share({ message: 'Play with me', custom_id: 'promo_1', referrer_id: '123456' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      success: true,
      link: `${hearth.url}/activities/${game.id}?custom_id=promo_1`,
    });
    expect(await (await share({ message: 'Play', referrer_id: 42 })).json()).toEqual({
      success: true,
      link: `${hearth.url}/activities/${game.id}`,
    });
    expect((await share({ custom_id: 'x' })).status).toBe(400);
    expect((await share({ message: 'x', custom_id: 'y'.repeat(65) })).status).toBe(400);
  });
});
