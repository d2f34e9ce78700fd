import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

const TOKEN = 'e'.repeat(40);
let on: TestHearth;
let off: TestHearth;

beforeAll(async () => {
  on = await startHearth({ emulator: true, adminToken: TOKEN });
  // Off, even with an operator token configured: the admin API is absent, not merely refused.
  off = await startHearth({ adminToken: TOKEN });
});
afterAll(async () => {
  await on.close();
  await off.close();
});

/** Every admin route as registered, with its parameters filled in. */
function adminRoutes(hearth: TestHearth): { method: string; path: string }[] {
  const sample: Record<string, string> = { name: 'snap', fault_id: '1', action: 'send_message' };
  return hearth.routes
    .filter((route) => route.url.startsWith('/_hearth/') && route.method !== 'HEAD')
    .map((route) => ({
      method: route.method,
      path: route.url.replace(/:(\w+)/g, (_, name: string) => sample[name] ?? '1'),
    }));
}

async function call(hearth: TestHearth, method: string, path: string, auth?: string): Promise<Response> {
  const address = hearth.http.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(auth === undefined ? {} : { authorization: auth }),
    },
    ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
  });
}

describe('README, Emulator mode: the admin API', () => {
  it('serves the clock, seed, snapshot, fault and act routes in emulator mode', () => {
    const routes = adminRoutes(on).map((r) => `${r.method} ${r.path}`);
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /_hearth/clock',
        'POST /_hearth/clock',
        'POST /_hearth/seed',
        'GET /_hearth/snapshots',
        'PUT /_hearth/snapshots/snap',
        'POST /_hearth/snapshots/snap/restore',
        'DELETE /_hearth/snapshots/snap',
        'GET /_hearth/faults',
        'POST /_hearth/faults',
        'DELETE /_hearth/faults',
        'DELETE /_hearth/faults/1',
        'GET /_hearth/act',
        'POST /_hearth/act/send_message',
      ]),
    );
  });

  it('refuses every admin call without the operator token (401), before reading its body', async () => {
    const routes = adminRoutes(on);
    expect(routes.length).toBeGreaterThanOrEqual(13);
    for (const { method, path } of routes) {
      for (const auth of [undefined, `Admin ${'x'.repeat(40)}`, `Bearer ${TOKEN}`, TOKEN, 'Admin ']) {
        const response = await call(on, method, path, auth);
        expect({ method, path, auth, status: response.status }).toEqual({ method, path, auth, status: 401 });
        expect(await response.json()).toEqual({ message: '401: Unauthorized', code: 0 });
      }
    }
  });

  it('is absent when emulator mode is off: every admin path answers 404, even with the token', async () => {
    expect(adminRoutes(off)).toEqual([]);
    for (const { method, path } of adminRoutes(on)) {
      const response = await call(off, method, path, `Admin ${TOKEN}`);
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
      expect(await response.json()).toEqual({ message: '404: Not Found', code: 0 });
    }
  });

  it('answers the operator', async () => {
    const response = await call(on, 'GET', '/_hearth/clock', `Admin ${TOKEN}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      now: expect.any(String),
      now_ms: expect.any(Number),
      frozen: false,
    });
  });
});
