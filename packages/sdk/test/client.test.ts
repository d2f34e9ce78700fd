import { sdkpp } from '@hearth/sdk';
import { describe, expect, it } from 'vitest';
import { type Answer, fakeFetch, form, json, type RecordedRequest, untilAborted } from './fake-fetch.js';

/**
 * Client's token operations and HTTP plumbing (seed, Library operations; Authentication 3–4, 7; Limits),
 * over an injected `fetch`: the exact requests that leave the library, and what each answer becomes.
 */

const API = 'http://hearth.test/api';
const WEB = 'http://hearth.test';
const TOKEN_URL = 'http://hearth.test/api/v10/oauth2/token';
const REVOKE_URL = 'http://hearth.test/api/v10/oauth2/token/revoke';
const CHILD_TOKEN_URL = 'http://hearth.test/api/v10/partner-sdk/child-token';
const APPLICATION_ID = 1234567890123456789n;
const CHILD_APPLICATION_ID = 2345678901234567890n;
const REDIRECT_URI = 'http://127.0.0.1:53117/callback';

const TOKENS = {
  access_token: 'access-6qrZcUqja7812RVdnEKjpzOL4CvHBFG',
  token_type: 'Bearer',
  expires_in: 604800,
  refresh_token: 'refresh-D43f5y0ahjqew82jZ4NViEr2YafMKhue',
  scope: 'openid sdk.social_layer',
};
const CHILD_TOKEN = {
  access_token: 'child-access-Zx9ULvFqG2d7N5aRw1Kb',
  token_type: 'Bearer',
  expires_in: 3600,
  scope: 'openid sdk.social_layer',
};

/** Answers each endpoint as the platform does on success. */
const succeed: Answer = (request) =>
  request.url === TOKEN_URL
    ? json(200, TOKENS)
    : request.url === CHILD_TOKEN_URL
      ? json(200, CHILD_TOKEN)
      : new Response(null, { status: 200 });

function clientWith(answer: Answer) {
  const fake = fakeFetch(answer);
  const client = new sdkpp.Client(API, WEB, { fetch: fake.fetch, opener: () => undefined });
  return { client, requests: fake.requests };
}

function resultOf(result: sdkpp.ClientResult) {
  return {
    type: result.Type(),
    error: result.Error(),
    status: result.Status(),
    retryable: result.Retryable(),
  };
}

/** Every operation that makes an HTTP request, each answering the ClientResult it reports. */
const OPERATIONS: [string, (client: sdkpp.Client) => Promise<sdkpp.ClientResult>][] = [
  [
    'GetToken',
    async (client) =>
      (await client.GetToken(APPLICATION_ID, 'the-code', 'the-verifier', REDIRECT_URI)).result,
  ],
  [
    'RefreshToken',
    async (client) => (await client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token)).result,
  ],
  ['RevokeToken', (client) => client.RevokeToken(APPLICATION_ID, TOKENS.access_token)],
  [
    'ExchangeChildToken',
    async (client) => (await client.ExchangeChildToken(TOKENS.access_token, CHILD_APPLICATION_ID)).result,
  ],
];

describe('SetHttpRequestTimeout (seed, Limits: SDK HTTP request timeout, 30000 ms default)', () => {
  it('GetHttpRequestTimeout() is 30000 by default', () => {
    expect(new sdkpp.Client(API, WEB).GetHttpRequestTimeout()).toBe(30000);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s with RangeError', (value) => {
    const client = new sdkpp.Client(API, WEB);
    expect(() => client.SetHttpRequestTimeout(value)).toThrow(RangeError);
    expect(client.GetHttpRequestTimeout()).toBe(30000);
  });

  it.each(OPERATIONS)(
    '%s: a request unanswered within the timeout is a retryable NetworkError naming the timeout',
    async (_name, operation) => {
      const { client, requests } = clientWith(untilAborted);
      client.SetHttpRequestTimeout(40);
      expect(client.GetHttpRequestTimeout()).toBe(40);
      const result = await operation(client);
      expect(resultOf(result)).toEqual({
        type: sdkpp.ErrorType.NetworkError,
        error: 'timed out after 40 ms',
        status: 0,
        retryable: true,
      });
      expect(requests).toHaveLength(1);
      expect(requests[0]?.signal?.aborted).toBe(true);
    },
  );

  it('a new timeout applies to the next request', async () => {
    const { client } = clientWith(untilAborted);
    client.SetHttpRequestTimeout(30);
    expect((await client.RevokeToken(APPLICATION_ID, 'token-a')).Error()).toBe('timed out after 30 ms');
    client.SetHttpRequestTimeout(45);
    expect((await client.RevokeToken(APPLICATION_ID, 'token-b')).Error()).toBe('timed out after 45 ms');
  });

  it('a request answered in time is not aborted', async () => {
    const { client, requests } = clientWith(succeed);
    client.SetHttpRequestTimeout(5000);
    expect((await client.RevokeToken(APPLICATION_ID, 'token-a')).Successful()).toBe(true);
    expect(requests[0]?.signal?.aborted).toBe(false);
  });
});

describe('token requests: exact bodies, public client (no client_secret ever)', () => {
  it('GetToken posts the authorization_code grant with the PKCE verifier to /oauth2/token', async () => {
    const { client, requests } = clientWith(succeed);
    const outcome = await client.GetToken(APPLICATION_ID, 'the-code', 'the-verifier', REDIRECT_URI);
    expect(requests).toHaveLength(1);
    const request = requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.url).toBe(TOKEN_URL);
    expect(request.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(form(request)).toEqual({
      grant_type: 'authorization_code',
      code: 'the-code',
      code_verifier: 'the-verifier',
      redirect_uri: REDIRECT_URI,
      client_id: String(APPLICATION_ID),
    });
    expect(outcome).toEqual({
      result: expect.any(sdkpp.ClientResult),
      accessToken: TOKENS.access_token,
      refreshToken: TOKENS.refresh_token,
      tokenType: sdkpp.AuthorizationTokenType.Bearer,
      expiresIn: TOKENS.expires_in,
      scopes: TOKENS.scope,
    });
    expect(resultOf(outcome.result)).toEqual({
      type: sdkpp.ErrorType.None,
      error: '',
      status: 200,
      retryable: false,
    });
  });

  it('RefreshToken posts the refresh_token grant to /oauth2/token', async () => {
    const { client, requests } = clientWith(succeed);
    const outcome = await client.RefreshToken(String(APPLICATION_ID), TOKENS.refresh_token);
    expect(requests.map((r) => [r.method, r.url])).toEqual([['POST', TOKEN_URL]]);
    expect(requests[0]?.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(form(requests[0]!)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: TOKENS.refresh_token,
      client_id: String(APPLICATION_ID),
    });
    expect(outcome.result.Successful()).toBe(true);
    expect(outcome.accessToken).toBe(TOKENS.access_token);
    expect(outcome.refreshToken).toBe(TOKENS.refresh_token);
  });

  it('RevokeToken posts the token to /oauth2/token/revoke (RFC 7009)', async () => {
    const { client, requests } = clientWith(succeed);
    const result = await client.RevokeToken(APPLICATION_ID, TOKENS.access_token);
    expect(requests.map((r) => [r.method, r.url])).toEqual([['POST', REVOKE_URL]]);
    expect(requests[0]?.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(form(requests[0]!)).toEqual({ token: TOKENS.access_token, client_id: String(APPLICATION_ID) });
    expect(result.Successful()).toBe(true);
  });

  it('ExchangeChildToken posts JSON to /partner-sdk/child-token (Authentication 7)', async () => {
    const { client, requests } = clientWith(succeed);
    const outcome = await client.ExchangeChildToken(TOKENS.access_token, CHILD_APPLICATION_ID);
    expect(requests.map((r) => [r.method, r.url])).toEqual([['POST', CHILD_TOKEN_URL]]);
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(requests[0]!.body)).toEqual({
      parent_access_token: TOKENS.access_token,
      child_application_id: String(CHILD_APPLICATION_ID),
    });
    expect(outcome).toEqual({
      result: expect.any(sdkpp.ClientResult),
      accessToken: CHILD_TOKEN.access_token,
      tokenType: sdkpp.AuthorizationTokenType.Bearer,
      expiresIn: CHILD_TOKEN.expires_in,
      scopes: CHILD_TOKEN.scope,
    });
    expect(outcome.result.Successful()).toBe(true);
  });

  it('no request carries a client_secret or an Authorization header', async () => {
    const { client, requests } = clientWith(succeed);
    for (const [, operation] of OPERATIONS) await operation(client);
    expect(requests).toHaveLength(OPERATIONS.length);
    for (const request of requests) {
      expect(request.body).not.toContain('client_secret');
      expect(request.headers.has('authorization')).toBe(false);
    }
  });
});

describe('token errors (seed, Authentication 4; Errors: invalid_grant)', () => {
  it('an OAuth2 400 invalid_grant on refresh is ErrorType.AuthorizationFailed with Error() invalid_grant', async () => {
    const body = { error: 'invalid_grant', error_description: 'the refresh token is unknown or revoked' };
    const { client } = clientWith(() => json(400, body));
    const outcome = await client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token);
    expect(resultOf(outcome.result)).toEqual({
      type: sdkpp.ErrorType.AuthorizationFailed,
      error: 'invalid_grant',
      status: 400,
      retryable: false,
    });
    expect(JSON.parse(outcome.result.ResponseBody())).toEqual(body);
    expect([outcome.accessToken, outcome.refreshToken]).toEqual(['', '']);
  });

  it('a 5xx on the token endpoint stays an HTTPError, retryable', async () => {
    const { client } = clientWith(() => json(503, { message: 'unavailable', code: 0 }));
    const outcome = await client.GetToken(APPLICATION_ID, 'c', 'v', REDIRECT_URI);
    expect(resultOf(outcome.result)).toEqual({
      type: sdkpp.ErrorType.HTTPError,
      error: 'unavailable',
      status: 503,
      retryable: true,
    });
  });

  it('UpdateToken refuses an empty token with ValidationError', async () => {
    const client = new sdkpp.Client(API, WEB);
    expect((await client.UpdateToken(sdkpp.AuthorizationTokenType.Bearer, '')).Type()).toBe(
      sdkpp.ErrorType.ValidationError,
    );
    expect((await client.UpdateToken(sdkpp.AuthorizationTokenType.Bearer, 'a-token')).Successful()).toBe(
      true,
    );
  });
});

describe('rate limits (PROTOCOL.md §E.3: 429 retry_after, X-RateLimit-Remaining and Reset-After)', () => {
  it('a 429 with retry_after 0.01 is retried after the wait the server asks for, then succeeds', async () => {
    const { client, requests } = clientWith((request, index) =>
      index === 0
        ? json(429, { message: 'You are being rate limited.', retry_after: 0.01, global: false, code: 0 })
        : succeed(request, index),
    );
    const outcome = await client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token);
    expect(outcome.result.Successful()).toBe(true);
    expect(outcome.accessToken).toBe(TOKENS.access_token);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.body).toBe(requests[0]?.body);
    expect(requests[1]?.url).toBe(TOKEN_URL);
  });

  /**
   * One refresh spends the token route's budget; a second refresh and a revoke (another route) start
   * together. Answers the order of what happened, as `sent <path>` and `<operation> done`.
   */
  async function afterSpendingTheBudget(headers: Record<string, string>): Promise<string[]> {
    const events: string[] = [];
    const { client } = clientWith((request, index) => {
      events.push(`sent ${new URL(request.url).pathname.replace('/api/v10', '')}`);
      return index === 0 ? json(200, TOKENS, headers) : succeed(request, index);
    });
    await client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token);
    const held = client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token).then((outcome) => {
      events.push(`refresh done: ${outcome.result.Successful()}`);
    });
    const revoke = await client.RevokeToken(APPLICATION_ID, TOKENS.access_token);
    events.push(`revoke done: ${revoke.Successful()}`);
    await held;
    return events;
  }

  it.each([
    ['with the X-RateLimit-Bucket the server sends', { 'x-ratelimit-bucket': 'c0ffee' }],
    ['without X-RateLimit-Bucket (bucketed by route)', {}],
  ])(
    'X-RateLimit-Remaining 0 with Reset-After makes the next request of that route wait, %s',
    async (_name, bucket) => {
      const events = await afterSpendingTheBudget({
        ...bucket,
        'x-ratelimit-limit': '1',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset-after': '0.25',
      });
      expect(events).toEqual([
        'sent /oauth2/token',
        'sent /oauth2/token/revoke',
        'revoke done: true',
        'sent /oauth2/token',
        'refresh done: true',
      ]);
    },
  );

  it('with budget left (X-RateLimit-Remaining 1) the next request of that route does not wait', async () => {
    const events = await afterSpendingTheBudget({
      'x-ratelimit-bucket': 'c0ffee',
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'x-ratelimit-reset-after': '0.25',
    });
    expect(events.filter((event) => event === 'sent /oauth2/token')).toHaveLength(2);
    expect(events.lastIndexOf('sent /oauth2/token')).toBeLessThan(events.indexOf('revoke done: true'));
  });
});

describe('callbacks get the same values as the Promise', () => {
  it('GetToken and RefreshToken', async () => {
    const { client } = clientWith(succeed);
    const seen: unknown[][] = [];
    const got = await client.GetToken(APPLICATION_ID, 'c', 'v', REDIRECT_URI, (...values) =>
      seen.push(values),
    );
    const refreshed = await client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token, (...values) =>
      seen.push(values),
    );
    const asList = (o: sdkpp.TokenOutcome) => [
      o.result,
      o.accessToken,
      o.refreshToken,
      o.tokenType,
      o.expiresIn,
      o.scopes,
    ];
    expect(seen).toHaveLength(2);
    expect(seen[0]).toEqual(asList(got));
    expect(seen[0]?.[0]).toBe(got.result);
    expect(seen[1]).toEqual(asList(refreshed));
    expect(seen[1]?.[0]).toBe(refreshed.result);
  });

  it('a failed RefreshToken', async () => {
    const { client } = clientWith(() => json(400, { error: 'invalid_grant' }));
    const seen: unknown[][] = [];
    const outcome = await client.RefreshToken(APPLICATION_ID, TOKENS.refresh_token, (...values) =>
      seen.push(values),
    );
    expect(seen).toEqual([[outcome.result, '', '', sdkpp.AuthorizationTokenType.Bearer, 0, '']]);
    expect(seen[0]?.[0]).toBe(outcome.result);
    expect(outcome.result.Error()).toBe('invalid_grant');
  });

  it('ExchangeChildToken', async () => {
    const { client } = clientWith(succeed);
    const seen: unknown[][] = [];
    const outcome = await client.ExchangeChildToken(TOKENS.access_token, CHILD_APPLICATION_ID, (...values) =>
      seen.push(values),
    );
    expect(seen).toEqual([
      [outcome.result, outcome.accessToken, outcome.tokenType, outcome.expiresIn, outcome.scopes],
    ]);
    expect(seen[0]?.[0]).toBe(outcome.result);
  });

  it('RevokeToken and UpdateToken', async () => {
    const { client } = clientWith(succeed);
    const seen: sdkpp.ClientResult[] = [];
    const revoked = await client.RevokeToken(APPLICATION_ID, TOKENS.access_token, (result) =>
      seen.push(result),
    );
    const updated = await client.UpdateToken(
      sdkpp.AuthorizationTokenType.Bearer,
      TOKENS.access_token,
      (result) => seen.push(result),
    );
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(revoked);
    expect(seen[1]).toBe(updated);
  });

  it('a timed-out request', async () => {
    const { client } = clientWith((request: RecordedRequest) => untilAborted(request));
    client.SetHttpRequestTimeout(20);
    const seen: sdkpp.ClientResult[] = [];
    const result = await client.RevokeToken(APPLICATION_ID, 'token', (r) => seen.push(r));
    expect(seen).toEqual([result]);
    expect(seen[0]).toBe(result);
    expect(result.Type()).toBe(sdkpp.ErrorType.NetworkError);
  });
});

describe('operations resolve, never reject: a malformed id is a ValidationError result', () => {
  it.each(['12ab', '-1', '18446744073709551616'])(
    'id %j: nothing is sent and each operation reports ValidationError',
    async (id) => {
      const { client, requests } = clientWith(() => json(200, {}));
      const outcomes = [
        (await client.GetToken(id, 'code', 'v'.repeat(43), 'http://127.0.0.1/callback')).result,
        (await client.RefreshToken(id, 'refresh')).result,
        await client.RevokeToken(id, 'token'),
        (await client.ExchangeChildToken('parent token', id)).result,
      ];
      for (const result of outcomes) {
        expect(result.Type()).toBe(sdkpp.ErrorType.ValidationError);
        expect(result.Error()).toMatch(/must be an unsigned 64-bit integer/);
      }
      expect(requests).toEqual([]);
    },
  );
});
