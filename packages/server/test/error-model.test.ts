import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformance } from '../../../test-support/conformance.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';

let hearth: TestHearth;
let userToken: string;

beforeAll(async () => {
  hearth = await startHearth();
  ({ token: userToken } = await hearth.services.accounts.createUser({
    username: 'errors.user',
    email: 'errors@example.com',
    password: 'a long password',
  }));
});
afterAll(() => hearth.close());

async function expectError(response: Response, status: number, body: unknown): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await response.json()).toEqual(body);
}

const patchMe = (body: unknown, headers: Record<string, string> = {}) =>
  hearth.api('/users/@me', { method: 'PATCH', auth: userToken, body, headers });

describe('error bodies (PROTOCOL.md §E.2)', () => {
  it('answers an unknown API route with 404 {"message":"404: Not Found","code":0}', async () => {
    await expectError(await hearth.api('/no/such/route'), 404, { message: '404: Not Found', code: 0 });
  });

  it('answers a path outside the API with the same 404 body', async () => {
    await expectError(await fetch(`${hearth.url}/nothing-here`), 404, { message: '404: Not Found', code: 0 });
  });

  it('answers a known path with an unrouted method with 404', async () => {
    await expectError(await hearth.api('/users/@me', { method: 'DELETE', auth: userToken }), 404, {
      message: '404: Not Found',
      code: 0,
    });
  });

  it.each(['v3', 'v6', 'v8', 'v11', 'v99'])('refuses API version %s with 50041', async (version) => {
    await expectError(await hearth.api('/users/@me', { version, auth: userToken }), 400, {
      code: 50041,
      message: 'Invalid API version provided',
    });
  });

  it.each(['v9', 'v10', ''])('serves the same route under /api/%s', async (version) => {
    const response = await hearth.api('/users/@me', { version, auth: userToken });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { username: string }).username).toBe('errors.user');
  });
});

describe('authentication (PROTOCOL.md §E.1)', () => {
  it('answers a missing Authorization header with 401 {"message":"401: Unauthorized","code":0}', async () => {
    await expectError(await hearth.api('/users/@me'), 401, { message: '401: Unauthorized', code: 0 });
  });

  it.each([
    ['an unknown bot token', 'Bot MTIz.MTIz.nope'],
    ['an unknown bearer token', 'Bearer abcdef'],
    ['an unknown bare token', 'MTIz.MTIz.nope'],
    ['an empty bot token', 'Bot '],
    ['an unknown scheme', 'Basic dXNlcjpwYXNz'],
    ['an over-long token', `Bot ${'a'.repeat(600)}`],
    ['a user token presented as a bot token', () => `Bot ${userToken}`],
  ])('answers %s with 401', async (_, auth) => {
    const header = typeof auth === 'function' ? auth() : auth;
    await expectError(await hearth.api('/users/@me', { auth: header }), 401, {
      message: '401: Unauthorized',
      code: 0,
    });
  });

  it('accepts a bot token as `Bot <token>` and answers the bot user', async () => {
    const { botToken, botUser } = await hearth.services.applications.createApplication({
      name: 'Error Game',
    });
    const response = await hearth.api('/users/@me', { auth: `Bot ${botToken}` });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: botUser.id,
      bot: true,
      discriminator: botUser.discriminator,
    });
  });

  it('answers a user on a bot-only route with 403 and code 20002', async () => {
    await expectError(await hearth.api('/gateway/bot', { auth: userToken }), 403, {
      code: 20002,
      message: 'Only bots can use this endpoint',
    });
  });

  it('refuses a session token at once after its row is deleted', async () => {
    const { token } = await hearth.services.accounts.createUser({
      username: 'short.lived',
      email: 'short@example.com',
      password: 'a long password',
    });
    expect((await hearth.api('/users/@me', { auth: token })).status).toBe(200);
    await hearth.storage.db.deleteFrom('sessions').execute();
    await expectError(await hearth.api('/users/@me', { auth: token }), 401, {
      message: '401: Unauthorized',
      code: 0,
    });
    ({ token: userToken } = await hearth.services.accounts.login({
      login: 'errors@example.com',
      password: 'a long password',
    }));
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 and code 50109', async () => {
    await expectError(await patchMe('{"global_name": "x"', { 'content-type': 'application/json' }), 400, {
      code: 50109,
      message: 'The request body contains invalid JSON.',
    });
  });

  it('answers JSON with a __proto__ key with 50109 instead of polluting prototypes', async () => {
    await expectError(
      await patchMe('{"__proto__": {"admin": true}}', { 'content-type': 'application/json' }),
      400,
      {
        code: 50109,
        message: 'The request body contains invalid JSON.',
      },
    );
  });

  it('answers an unsupported content type with 50035 CONTENT_TYPE_INVALID', async () => {
    await expectError(await patchMe('global_name=x', { 'content-type': 'text/plain' }), 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        _errors: [
          {
            code: 'CONTENT_TYPE_INVALID',
            message: `Expected "Content-Type" header to be one of {'application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'}.`,
          },
        ],
      },
    });
  });

  it('answers a body over the route limit with 413 and code 40005', async () => {
    // PATCH /users/@me takes two images of up to 10 MiB as base64, so its limit is above 1 MiB.
    await expectError(await patchMe({ global_name: 'x'.repeat(32 * 1024 * 1024) }), 413, {
      code: 40005,
      message: 'Request entity too large',
    });
  });

  it('answers a field of the wrong type with the nested errors tree', async () => {
    await expectError(await patchMe({ global_name: 42 }), 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        global_name: {
          _errors: [{ code: 'BASE_TYPE_STRING', message: 'Could not interpret "42" as string.' }],
        },
      },
    });
  });

  it('answers a display name of 33 characters with BASE_TYPE_BAD_LENGTH and accepts 32', async () => {
    await expectError(await patchMe({ global_name: 'n'.repeat(33) }), 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        global_name: {
          _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 32 in length.' }],
        },
      },
    });
    const ok = await patchMe({ global_name: 'n'.repeat(32) });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { global_name: string }).global_name).toBe('n'.repeat(32));
  });

  it('clears the display name with null', async () => {
    const response = await patchMe({ global_name: null });
    expect(((await response.json()) as { global_name: null }).global_name).toBeNull();
  });

  it('answers an array body where an object is expected with DICT_TYPE_CONVERT at the top', async () => {
    await expectError(await patchMe([1, 2]), 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        _errors: [{ code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }],
      },
    });
  });

  it('reports every missing and malformed field of a registration at once', async () => {
    const response = await hearth.api('/auth/register', {
      method: 'POST',
      body: { username: 'A', email: 'not-an-email' },
    });
    await expectError(response, 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        username: {
          _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 2 and 32 in length.' }],
        },
        email: {
          _errors: [{ code: 'EMAIL_TYPE_INVALID_EMAIL', message: 'Not a well formed email address.' }],
        },
        password: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      },
    });
  });

  it('answers an empty JSON body on a route that needs one with BASE_TYPE_REQUIRED fields', async () => {
    const response = await hearth.api('/auth/login', {
      method: 'POST',
      body: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: number }).code).toBe(50035);
  });

  it('reads application/x-www-form-urlencoded bodies, and refuses a repeated key', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await patchMe('global_name=Formed', form)).status).toBe(200);
    await expectError(await patchMe('global_name=a&global_name=b', form), 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        global_name: {
          _errors: [{ code: 'BASE_TYPE_STRING', message: 'Could not interpret "["a","b"]" as string.' }],
        },
      },
    });
  });
});

describe('registration and login', () => {
  it('registers with 201 and a session token that authenticates', async () => {
    const response = await hearth.api('/auth/register', {
      method: 'POST',
      body: {
        username: 'new.player',
        email: 'New@Example.com',
        password: 'a long password',
        global_name: 'New',
      },
    });
    expect(response.status).toBe(201);
    const { token, user_id } = (await response.json()) as { token: string; user_id: string };
    const me = (await (await hearth.api('/users/@me', { auth: token })).json()) as Record<string, unknown>;
    expect(me).toMatchObject({
      id: user_id,
      username: 'new.player',
      global_name: 'New',
      email: 'new@example.com',
    });
  });

  it('refuses a taken username and a taken email with their own codes', async () => {
    const response = await hearth.api('/auth/register', {
      method: 'POST',
      body: { username: 'new.player', email: 'NEW@example.com', password: 'a long password' },
    });
    await expectError(response, 400, {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        username: {
          _errors: [
            {
              code: 'USERNAME_ALREADY_TAKEN',
              message: 'Username is unavailable. Try adding numbers, letters, underscores _ , or periods.',
            },
          ],
        },
        email: { _errors: [{ code: 'EMAIL_ALREADY_REGISTERED', message: 'Email is already registered.' }] },
      },
    });
  });

  it('answers a wrong password and an unknown email with the same INVALID_LOGIN body', async () => {
    const expected = {
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        login: { _errors: [{ code: 'INVALID_LOGIN', message: 'Login or password is invalid.' }] },
        password: { _errors: [{ code: 'INVALID_LOGIN', message: 'Login or password is invalid.' }] },
      },
    };
    for (const body of [
      { login: 'new@example.com', password: 'wrong password' },
      { login: 'nobody@example.com', password: 'a long password' },
    ]) {
      await expectError(await hearth.api('/auth/login', { method: 'POST', body }), 400, expected);
    }
    const ok = await hearth.api('/auth/login', {
      method: 'POST',
      body: { login: 'new@example.com', password: 'a long password' },
    });
    expect(ok.status).toBe(200);
  });
});

describe('unexpected failures', () => {
  it('answers a bug with a generic 500 body and logs it with the request id', async () => {
    const broken = await startHearth();
    await broken.storage.close(); // every query now fails inside the service
    conformance.expectServerError('POST', '/auth/login', 'the database is closed to provoke a bug');
    const response = await broken.api('/auth/login', {
      method: 'POST',
      body: { login: 'x@example.com', password: 'a long password' },
    });
    await expectError(response, 500, { message: '500: Internal Server Error', code: 0 });
    const line = broken.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l['msg'] === 'unhandled error');
    expect(line?.['reqId']).toEqual(expect.any(String));
    await broken.http.close();
  });
});
