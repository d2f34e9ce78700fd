import net from 'node:net';
import { FormErrors, MAX_JSON_DEPTH } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { rawRequest } from '../../../test-support/hostile.js';
import { postgresAvailable, postgresSchema } from '../../../test-support/services.js';
import { exceedsJsonDepth } from '../src/kernel/input-limits.js';

/**
 * Issue 21: input limits before parsing (JSON nesting), one error renderer for what the router and the
 * HTTP parser refuse, and NUL characters refused alike on SQLite and PostgreSQL, with exact wire bodies.
 */

const withPostgres = await postgresAvailable();
const INVALID_JSON = { code: 50109, message: 'The request body contains invalid JSON.' };
const NOT_FOUND = { code: 0, message: '404: Not Found' };
const nested = (levels: number) => `{"global_name":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;

describe('JSON nesting is limited before parsing', () => {
  it('counts brackets outside strings only, without recursion', () => {
    expect(exceedsJsonDepth('[[1]]', 2)).toBe(false);
    expect(exceedsJsonDepth('[[[1]]]', 2)).toBe(true);
    expect(exceedsJsonDepth('["[[[[", {"a": "]]]\\"[[["}]', 2)).toBe(false);
    expect(exceedsJsonDepth('['.repeat(1_000_000), MAX_JSON_DEPTH)).toBe(true);
  });
});

function inputSuite(databaseUrl: () => string | undefined) {
  let hearth: TestHearth;
  let token: string;
  beforeAll(async () => {
    const url = databaseUrl();
    hearth = await startHearth(url ? { databaseUrl: url } : {});
    ({ token } = await hearth.services.accounts.createUser({
      username: 'limits.user',
      email: 'limits@example.com',
      password: 'a long password',
    }));
  });
  afterAll(() => hearth?.close());

  const patchMe = (body: string) =>
    hearth.api('/users/@me', {
      method: 'PATCH',
      auth: token,
      body,
      headers: { 'content-type': 'application/json' },
    });

  it(`reads ${MAX_JSON_DEPTH} levels as JSON and refuses ${MAX_JSON_DEPTH + 1} with 50109`, async () => {
    const deepest = await patchMe(nested(MAX_JSON_DEPTH));
    // Parsed and validated: the field's own error, not the nesting limit.
    expect(deepest.status).toBe(400);
    expect(await deepest.json()).toMatchObject({ code: 50035, errors: { global_name: expect.any(Object) } });
    const deeper = await patchMe(nested(MAX_JSON_DEPTH + 1));
    expect(deeper.status).toBe(400);
    expect(await deeper.json()).toEqual(INVALID_JSON);
  });

  it.each([
    ['5,000 nested objects', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`],
    ['50,000 nested arrays', `${'['.repeat(50_000)}${']'.repeat(50_000)}`],
    ['a field of 5,000 nested arrays', nested(5000)],
  ])('answers %s with 400 50109, never a stack overflow', async (_, body) => {
    const response = await patchMe(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(INVALID_JSON);
  });

  it('quotes a deep value of the wrong type in a bounded message (a service parse outside HTTP)', async () => {
    let value: unknown = 1;
    for (let i = 0; i < 100_000; i++) value = [value];
    const refused = await hearth.services.applications
      .modifyApplication('1', { description: value })
      .catch((e) => e);
    expect(refused.body()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { description: { _errors: [FormErrors.string(`${'['.repeat(61)}...`)] } },
    });
  });

  it('refuses a NUL in a body field with 50035 at its path, and stores nothing', async () => {
    const response = await hearth.api('/users/@me', {
      method: 'PATCH',
      auth: token,
      body: { global_name: 'a\u0000b' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { global_name: { _errors: [FormErrors.invalid()] } },
    });
    const me = (await (await hearth.api('/users/@me', { auth: token })).json()) as { global_name: unknown };
    expect(me.global_name).toBeNull();
  });

  it('refuses a NUL in a form field and in a query parameter with 50035', async () => {
    const form = await hearth.api('/auth/login', {
      method: 'POST',
      body: 'login=a%00b&password=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(400);
    expect(await form.json()).toMatchObject({
      code: 50035,
      errors: { login: { _errors: [FormErrors.invalid()] } },
    });
    const guild = await hearth.services.guilds.createGuild(
      (await hearth.services.accounts.authenticateSession(token))?.user.id ?? '',
      { name: 'NUL hall' },
    );
    const query = await hearth.api(`/guilds/${guild.id}/members/search?query=a%00`, { auth: token });
    expect(query.status).toBe(400);
    expect(await query.json()).toMatchObject({
      code: 50035,
      errors: { query: { _errors: [FormErrors.invalid()] } },
    });
  });

  it('answers a NUL in a path id with 404, as an unknown route', async () => {
    const bot = await hearth.services.applications.createApplication({ name: 'NUL Game' });
    const response = await rawRequest(hearth.url, {
      method: 'DELETE',
      path: `/api/v10/applications/${bot.application.id}/identity-providers/1%002`,
      headers: { authorization: `Bot ${bot.botToken}` },
    });
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toEqual(NOT_FOUND);
  });
}

describe('input limits on SQLite', () => inputSuite(() => undefined));

describe.skipIf(!withPostgres)('input limits on PostgreSQL', () => {
  const schema = postgresSchema();
  afterAll(() => schema.drop());
  inputSuite(() => schema.url);
});

describe('one error renderer for the router and the HTTP parser', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  it.each([
    ['a path parameter over the router limit', `/api/v10/users/${'1'.repeat(201)}`],
    ['a segment that is not percent-encoded UTF-8', '/api/v10/users/%E0%A4%A'],
    ['a lone percent sign', '/api/v10/users/%'],
  ])('answers %s with 404 {code: 0}', async (_, path) => {
    const response = await rawRequest(hearth.url, { method: 'GET', path });
    expect(response.status).toBe(404);
    expect(response.contentType).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual(NOT_FOUND);
  });

  /** Bytes on a socket, for requests no HTTP client would send; answers what the server wrote. */
  function rawSocket(bytes: string): Promise<string> {
    const { hostname, port } = new URL(hearth.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
      let answer = '';
      socket.on('data', (chunk) => {
        answer += String(chunk);
      });
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it('answers a request the HTTP parser refuses with 400 and the platform body', async () => {
    const answer = await rawSocket('GET /api/v10/gateway HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toEqual({ code: 0, message: '400: Bad Request' });
  });

  it('answers headers over the size limit (an over-long URL) with 431 and the platform body', async () => {
    const answer = await rawSocket(`GET /api/v10/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.split('\r\n\r\n')[1] ?? '')).toEqual({
      code: 0,
      message: '431: Request Header Fields Too Large',
    });
  });
});
