import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { conformance } from '../../../test-support/conformance.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createLogger } from '../src/kernel/logger.js';

type LogLine = Record<string, unknown>;

const parse = (lines: readonly string[]): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);

/** The random part of a platform token, after its second dot: the part that is the secret. */
function secretPart(token: string): string {
  const part = token.split('.')[2];
  if (!part) throw new Error(`not a platform token: ${token}`);
  return part;
}

interface Expected {
  method: string;
  url: string;
  status: number;
}

describe('credentials never reach a log line (seed, Authentication 8)', () => {
  const password = 'pw-7f3a9c correct horse battery';
  const registeredPassword = 'pw-2b81de staple of registration';
  let hearth: TestHearth;
  let broken: TestHearth;
  const secrets = new Map<string, string>();
  const expected: Expected[] = [];

  /** Makes a request and records the request line it must produce. */
  async function request(
    on: TestHearth,
    path: string,
    init: Parameters<TestHearth['api']>[1],
    status: number,
  ): Promise<Response> {
    const response = await on.api(path, init);
    expect(response.status).toBe(status);
    if (on === hearth) {
      expected.push({ method: init?.method ?? 'GET', url: `/api/v10${path.split('?')[0]}`, status });
    }
    return response;
  }

  beforeAll(async () => {
    hearth = await startHearth();
    broken = await startHearth();
    const { token } = await hearth.services.accounts.createUser({
      username: 'logging.alice',
      email: 'alice@example.com',
      password,
    });
    const app = await hearth.services.applications.createApplication({ name: 'Logging Game' });
    secrets.set('user token', token);
    secrets.set('user token secret part', secretPart(token));
    secrets.set('bot token', app.botToken);
    secrets.set('bot token secret part', secretPart(app.botToken));
    secrets.set('client secret', app.clientSecret);
    secrets.set(
      'client credentials (Basic)',
      Buffer.from(`${app.application.id}:${app.clientSecret}`).toString('base64'),
    );
    secrets.set('password', password);
    secrets.set('registration password', registeredPassword);

    const bot = `Bot ${app.botToken}`;
    // Valid credentials.
    await request(hearth, '/users/@me', { auth: token }, 200);
    await request(hearth, '/users/@me', { auth: bot }, 200);
    await request(
      hearth,
      '/users/@me',
      { method: 'PATCH', auth: token, body: { global_name: 'Alice' } },
      200,
    );
    // Wrong credentials that still carry the secret.
    await request(hearth, '/users/@me', { auth: `${token}x` }, 401);
    await request(hearth, '/users/@me', { auth: `x${token}` }, 401);
    await request(hearth, '/users/@me', { auth: `Bot ${app.botToken}x` }, 401);
    await request(hearth, '/users/@me', { auth: `Bearer ${token}` }, 401);
    await request(hearth, '/users/@me', { auth: `Basic ${secrets.get('client credentials (Basic)')}` }, 401);
    await request(hearth, '/users/@me', { auth: `Bot ${token} ${app.clientSecret}` }, 401);
    // Credentials in the query string, on known and unknown routes.
    await request(hearth, `/users/@me?token=${token}`, {}, 401);
    await request(
      hearth,
      `/users/@me?token=${token}&client_secret=${app.clientSecret}`,
      { auth: token },
      200,
    );
    await request(hearth, `/oauth2/token?client_secret=${app.clientSecret}&password=${password}`, {}, 404);
    await request(hearth, `/users/@me?access_token=${app.botToken}`, { auth: 'not-a-token' }, 401);
    // Passwords and secrets in bodies.
    const login = await request(
      hearth,
      '/auth/login',
      { method: 'POST', body: { login: 'alice@example.com', password } },
      200,
    );
    const session = (await login.json()) as { token: string };
    secrets.set('login session token', session.token);
    await request(
      hearth,
      '/auth/login',
      { method: 'POST', body: { login: 'alice@example.com', password: `${password}!` } },
      400,
    );
    const withSecret = await request(
      hearth,
      '/auth/login',
      { method: 'POST', body: { login: 'alice@example.com', password, client_secret: app.clientSecret } },
      200,
    );
    secrets.set('second login session token', ((await withSecret.json()) as { token: string }).token);
    await request(
      hearth,
      '/auth/login',
      {
        method: 'POST',
        body: `{"login":"alice@example.com","password":"${password}"`,
        headers: { 'content-type': 'application/json' },
      },
      400,
    );
    await request(
      hearth,
      '/auth/login',
      {
        method: 'POST',
        body: new URLSearchParams({ login: 'alice@example.com', password }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      200,
    );
    const registered = await request(
      hearth,
      '/auth/register',
      {
        method: 'POST',
        body: { username: 'logging.bob', email: 'bob@example.com', password: registeredPassword },
      },
      201,
    );
    secrets.set('registration session token', ((await registered.json()) as { token: string }).token);
    await request(
      hearth,
      '/auth/register',
      { method: 'POST', body: { username: 'B', email: 'bob', password: registeredPassword } },
      400,
    );

    // A 500: the storage of another instance is closed under it.
    const { token: brokenToken } = await broken.services.accounts.createUser({
      username: 'logging.carol',
      email: 'carol@example.com',
      password,
    });
    secrets.set('token on the failing server', brokenToken);
    await broken.storage.close();
    const why = 'the storage is closed to provoke 500s and their log lines';
    conformance.expectServerError('GET', '/users/@me', why);
    conformance.expectServerError('POST', '/auth/login', why);
    conformance.expectServerError('GET', '/users/@me', why);
    await request(broken, '/users/@me', { auth: brokenToken }, 500);
    await request(
      broken,
      '/auth/login',
      { method: 'POST', body: { login: 'carol@example.com', password } },
      500,
    );
    await request(broken, '/users/@me', { auth: `Bot ${app.botToken}` }, 500);
  });

  afterAll(async () => {
    await hearth?.close();
    await broken?.http.close();
  });

  const requestLines = (on: TestHearth) => parse(on.logs).filter((line) => line['msg'] === 'request');

  it('logs one request line per request, with method, url without its query, status and reqId', async () => {
    await vi.waitFor(() => expect(requestLines(hearth)).toHaveLength(expected.length));
    const lines = requestLines(hearth);
    const key = (e: Expected) => `${e.method} ${e.url} ${e.status}`;
    expect(lines.map((line) => key(line as unknown as Expected)).sort()).toEqual(expected.map(key).sort());
    for (const line of lines) {
      expect(line).toEqual({
        level: 30,
        time: expect.any(Number),
        component: 'hearth',
        reqId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        method: expect.any(String),
        url: expect.any(String),
        status: expect.any(Number),
        msg: 'request',
      });
    }
    expect(new Set(lines.map((line) => line['reqId'])).size).toBe(lines.length);
  });

  it('logs the failing requests of a 500 with the error, at level error', async () => {
    await vi.waitFor(() => expect(requestLines(broken)).toHaveLength(3));
    expect(requestLines(broken).map((line) => line['status'])).toEqual([500, 500, 500]);
    const errors = parse(broken.logs).filter((line) => line['msg'] === 'unhandled error');
    expect(errors).toHaveLength(3);
    for (const line of errors) expect(line['level']).toBe(50);
    // The error line and the request line of one request share its reqId.
    const ids = (lines: LogLine[]) => lines.map((line) => String(line['reqId'])).sort();
    expect(ids(errors)).toEqual(ids(requestLines(broken)));
  });

  it('writes no token, bot token, client secret or password in any log line', async () => {
    await vi.waitFor(() => expect(requestLines(broken)).toHaveLength(3));
    const logs = [...hearth.logs, ...broken.logs];
    expect(logs.length).toBeGreaterThan(expected.length);
    const leaks = [...secrets].flatMap(([name, secret]) =>
      logs.filter((line) => line.includes(secret)).map((line) => `${name}: ${line}`),
    );
    expect(leaks).toEqual([]);
  });
});

describe('createLogger redacts credentials a component logs', () => {
  function capture(): { lines: LogLine[]; logger: ReturnType<typeof createLogger> } {
    const lines: LogLine[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
        done();
      },
    });
    return { lines, logger: createLogger('info', stream) };
  }

  const credentials = {
    token: 's-token',
    access_token: 's-access',
    refresh_token: 's-refresh',
    id_token: 's-id',
    bot_token: 's-bot',
    client_secret: 's-client',
    password: 's-password',
  };
  const redacted = {
    token: '[redacted]',
    access_token: '[redacted]',
    refresh_token: '[redacted]',
    id_token: '[redacted]',
    bot_token: '[redacted]',
    client_secret: '[redacted]',
    password: '[redacted]',
  };

  it('masks the authorization header of a request, wherever the request object sits', () => {
    const { lines, logger } = capture();
    const headers = { authorization: 'Bot s-header', cookie: 'session=s-cookie', 'user-agent': 'curl/8' };
    logger.info({ req: { method: 'GET', headers } }, 'req');
    logger.info({ headers }, 'headers');
    logger.info({ authorization: 'Bearer s-bare' }, 'bare');
    logger.info({ err: { config: { headers } } }, 'deep');
    const masked = { authorization: '[redacted]', cookie: '[redacted]', 'user-agent': 'curl/8' };
    expect(lines.map(({ time: _time, ...line }) => line)).toEqual([
      { level: 30, component: 'hearth', req: { method: 'GET', headers: masked }, msg: 'req' },
      { level: 30, component: 'hearth', headers: masked, msg: 'headers' },
      { level: 30, component: 'hearth', authorization: '[redacted]', msg: 'bare' },
      { level: 30, component: 'hearth', err: { config: { headers: masked } }, msg: 'deep' },
    ]);
  });

  it('masks token, access_token, refresh_token, id_token, bot_token, client_secret and password fields', () => {
    const { lines, logger } = capture();
    logger.info({ ...credentials, user: 'u1' }, 'top level');
    logger.info({ body: { ...credentials, grant_type: 'refresh_token' } }, 'in a body');
    logger.info({ response: { body: { ...credentials } } }, 'two levels deep');
    logger.child({ client: { ...credentials } }).info('in bindings');
    expect(lines.map(({ time: _time, ...line }) => line)).toEqual([
      { level: 30, component: 'hearth', ...redacted, user: 'u1', msg: 'top level' },
      {
        level: 30,
        component: 'hearth',
        body: { ...redacted, grant_type: 'refresh_token' },
        msg: 'in a body',
      },
      { level: 30, component: 'hearth', response: { body: redacted }, msg: 'two levels deep' },
      { level: 30, component: 'hearth', client: redacted, msg: 'in bindings' },
    ]);
  });

  it('masks fields logged through a child logger of a component', () => {
    const { lines, logger } = capture();
    logger.child({ oauth2: 'token endpoint' }).info({ access_token: 's-access', client_id: 'c1' }, 'issued');
    expect(lines.map(({ time: _time, ...line }) => line)).toEqual([
      {
        level: 30,
        component: 'hearth',
        oauth2: 'token endpoint',
        access_token: '[redacted]',
        client_id: 'c1',
        msg: 'issued',
      },
    ]);
  });
});
