import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';

/**
 * User session tokens (sign-up, sign-in) have a lifetime (`--session-lifetime-days`, default 30) and end
 * sooner at logout, at a password change (every session of the user) and at a ban (issue 21: one still
 * worked 91 days later, and there was no logout).
 */

const DAY = 24 * 60 * 60 * 1000;
const ADMIN_TOKEN = 'operator-secret-'.repeat(3);
const UNAUTHORIZED = { code: 0, message: '401: Unauthorized' };
const clock = new ManualClock(Date.parse('2026-01-10T00:00:00Z'));
let hearth: TestHearth;
let counter = 0;

beforeAll(async () => {
  hearth = await startHearth({ sessionLifetimeDays: 30, adminToken: ADMIN_TOKEN }, clock);
});
afterAll(() => hearth.close());

async function register(): Promise<{ token: string; userId: string; email: string }> {
  const name = `sess${++counter}`;
  const email = `${name}@example.com`;
  const response = await hearth.api('/auth/register', {
    method: 'POST',
    body: { username: name, email, password: 'first password' },
  });
  expect(response.status).toBe(201);
  const { token, user_id } = (await response.json()) as { token: string; user_id: string };
  return { token, userId: user_id, email };
}

async function login(email: string, password: string): Promise<Response> {
  return hearth.api('/auth/login', { method: 'POST', body: { login: email, password } });
}

async function me(token: string): Promise<{ status: number; body: unknown }> {
  const response = await hearth.api('/users/@me', { auth: token });
  return { status: response.status, body: await response.json() };
}

describe('a session token lives --session-lifetime-days, then answers 401', () => {
  it('works until the last millisecond of its lifetime and not after', async () => {
    const { token, userId } = await register();
    clock.advance(30 * DAY - 1);
    expect(await me(token)).toMatchObject({ status: 200, body: { id: userId } });
    clock.advance(1);
    expect(await me(token)).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it('a session stored before lifetimes existed (no expiry) ends at created_at + lifetime', async () => {
    const { token, userId } = await register();
    await hearth.storage.db
      .updateTable('sessions')
      .set({ expires_at: null })
      .where('user_id', '=', userId)
      .execute();
    expect((await me(token)).status).toBe(200);
    clock.advance(91 * DAY);
    expect(await me(token)).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it('the lifetime is configurable', async () => {
    const short = await startHearth({ sessionLifetimeDays: 1 }, clock);
    try {
      const response = await short.api('/auth/register', {
        method: 'POST',
        body: {
          username: `short${++counter}`,
          email: `short${counter}@example.com`,
          password: 'long enough',
        },
      });
      const { token } = (await response.json()) as { token: string };
      clock.advance(DAY - 1);
      expect((await short.api('/users/@me', { auth: token })).status).toBe(200);
      clock.advance(1);
      expect((await short.api('/users/@me', { auth: token })).status).toBe(401);
    } finally {
      await short.close();
    }
  });
});

describe('POST /auth/logout', () => {
  it('ends the calling session at once (204), and only that one', async () => {
    const { token, email } = await register();
    const other = (await (await login(email, 'first password')).json()) as { token: string };
    const out = await hearth.api('/auth/logout', { method: 'POST', auth: token });
    expect(out.status).toBe(204);
    expect(await me(token)).toEqual({ status: 401, body: UNAUTHORIZED });
    expect((await me(other.token)).status).toBe(200);
    // Logging out again with the dead token is 401, like any other call.
    expect((await hearth.api('/auth/logout', { method: 'POST', auth: token })).status).toBe(401);
  });

  it('is for user sessions: no token is 401', async () => {
    const response = await hearth.api('/auth/logout', { method: 'POST' });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
  });
});

describe('POST /auth/password', () => {
  it('with the current password: every session ends, the caller gets a fresh one, the new password signs in', async () => {
    const { token, email, userId } = await register();
    const other = (await (await login(email, 'first password')).json()) as { token: string };
    const changed = await hearth.api('/auth/password', {
      method: 'POST',
      auth: token,
      body: { password: 'first password', new_password: 'second password' },
    });
    expect(changed.status).toBe(200);
    const fresh = (await changed.json()) as { token: string; user_id: string };
    expect(fresh.user_id).toBe(userId);
    expect((await me(token)).status).toBe(401);
    expect((await me(other.token)).status).toBe(401);
    expect(await me(fresh.token)).toMatchObject({ status: 200, body: { id: userId } });
    expect((await login(email, 'first password')).status).toBe(400);
    expect((await login(email, 'second password')).status).toBe(200);
  });

  it('a wrong current password is 50035 on `password` and changes nothing', async () => {
    const { token, email } = await register();
    const refused = await hearth.api('/auth/password', {
      method: 'POST',
      auth: token,
      body: { password: 'not the password', new_password: 'second password' },
    });
    expect({ status: refused.status, body: await refused.json() }).toEqual({
      status: 400,
      body: {
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          password: { _errors: [{ code: 'PASSWORD_DOES_NOT_MATCH', message: 'Password does not match.' }] },
        },
      },
    });
    expect((await me(token)).status).toBe(200);
    expect((await login(email, 'first password')).status).toBe(200);
  });

  it.each([
    [{ password: 'first password' }, 'new_password'],
    [{ password: 'first password', new_password: 'short' }, 'new_password'],
    [{ password: 'first password', new_password: 'x'.repeat(129) }, 'new_password'],
    [{ new_password: 'second password' }, 'password'],
    [{ password: 5, new_password: 'second password' }, 'password'],
  ])('refuses %j with 50035 on %s', async (body, field) => {
    const { token } = await register();
    const refused = await hearth.api('/auth/password', { method: 'POST', auth: token, body });
    expect(refused.status).toBe(400);
    const answer = (await refused.json()) as { code: number; errors: Record<string, unknown> };
    expect(answer.code).toBe(50035);
    expect(Object.keys(answer.errors)).toContain(field);
    expect((await me(token)).status).toBe(200);
  });
});

describe('a ban ends every session', () => {
  it('the banned account is signed out everywhere', async () => {
    const { token, userId } = await register();
    expect((await me(token)).status).toBe(200);
    const banned = await hearth.api(`/admin/users/${userId}/ban`, {
      method: 'PUT',
      headers: { authorization: `Admin ${ADMIN_TOKEN}` },
      body: {},
    });
    expect(banned.status).toBeLessThan(300);
    expect(await me(token)).toEqual({ status: 401, body: UNAUTHORIZED });
  });
});

/** A gateway connection identified with a user session token. */
async function connected(token: string): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(10);
  client.send({ op: 2, d: { token, intents: 0, properties: { os: 'linux', browser: 'x', device: 'x' } } });
  await client.nextDispatch('READY');
  // Identify is limited per account per 5 s: the next identify of this user comes after the window.
  clock.advance(5_000);
  return client;
}

describe('ended sessions close their gateway connections (every node hears USER_SESSIONS_ENDED)', () => {
  // Sign-ups are rate limited per address: each test starts in a fresh window.
  beforeEach(() => clock.advance(DAY));

  it('logout closes the connection of that token with 4004, and only that one', async () => {
    const { token, email } = await register();
    const other = (await (await login(email, 'first password')).json()) as { token: string };
    const [ending, staying] = [await connected(token), await connected(other.token)];
    expect((await hearth.api('/auth/logout', { method: 'POST', auth: token })).status).toBe(204);
    expect((await ending.waitClose()).code).toBe(4004);
    staying.send({ op: 1, d: null });
    await staying.nextOp(11);
    await staying.close();
  });

  it('a password change closes every connection of the old sessions', async () => {
    const { token } = await register();
    const client = await connected(token);
    const changed = await hearth.api('/auth/password', {
      method: 'POST',
      auth: token,
      body: { password: 'first password', new_password: 'second password' },
    });
    expect(changed.status).toBe(200);
    expect((await client.waitClose()).code).toBe(4004);
  });

  it("a ban closes the banned account's connections", async () => {
    const { token, userId } = await register();
    const client = await connected(token);
    const banned = await hearth.api(`/admin/users/${userId}/ban`, {
      method: 'PUT',
      headers: { authorization: `Admin ${ADMIN_TOKEN}` },
      body: {},
    });
    expect(banned.status).toBeLessThan(300);
    expect((await client.waitClose()).code).toBe(4004);
  });
});
