import { sdkpp } from '@hearth/sdk';
import { describe, expect, it } from 'vitest';
import { type Answer, fakeFetch, json, untilAborted } from './fake-fetch.js';

/**
 * Seed, Authentication 8: "The library filters the bearer token from all log levels. Release builds log
 * only Error and Warning severities; debug builds also log Info and Verbose."
 */

const API = 'http://hearth.test/api';
const WEB = 'http://hearth.test';
const APPLICATION_ID = 1234567890123456789n;
const CHILD_APPLICATION_ID = 2345678901234567890n;

/** Every credential the run below handles; none may reach a log line. */
const SECRETS = {
  verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  accessToken: 'access-6qrZcUqja7812RVdnEKjpzOL4CvHBFG',
  refreshToken: 'refresh-D43f5y0ahjqew82jZ4NViEr2YafMKhue',
  idToken: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLW9mLXRoZS1pZC10b2tlbg',
  refreshedAccessToken: 'access-2-Qm9kqYbWmR8v1TzXh3L5pN',
  refreshedRefreshToken: 'refresh-2-Jd8sLw3KfV0pZqT6yX1cRb',
  updatedToken: 'updated-9fGh2JkL4mNp6QrS8tVw0xYz',
  childAccessToken: 'child-access-Zx9ULvFqG2d7N5aRw1Kb',
  deletedRefreshToken: 'refresh-deleted-Hq2Wn8Ls5Vb1Xc7Z',
  shortToken: 'k3Y9',
};

const TOKEN_URL = 'http://hearth.test/api/v10/oauth2/token';
const CHILD_TOKEN_URL = 'http://hearth.test/api/v10/partner-sdk/child-token';

/** The platform's answers, which carry the tokens back (and, for a deleted token, echo it). */
const platform: Answer = (request) => {
  if (request.url === CHILD_TOKEN_URL) {
    return json(200, {
      access_token: SECRETS.childAccessToken,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid sdk.social_layer',
    });
  }
  if (request.url !== TOKEN_URL) return new Response(null, { status: 200 });
  const grant = new URLSearchParams(request.body);
  if (grant.get('refresh_token') === SECRETS.deletedRefreshToken) {
    return json(400, {
      error: 'invalid_grant',
      error_description: `refresh token ${SECRETS.deletedRefreshToken} was deleted`,
    });
  }
  if (grant.get('grant_type') === 'refresh_token') {
    return json(200, {
      access_token: SECRETS.refreshedAccessToken,
      token_type: 'Bearer',
      expires_in: 604800,
      refresh_token: SECRETS.refreshedRefreshToken,
      scope: 'openid sdk.social_layer',
    });
  }
  return json(200, {
    access_token: SECRETS.accessToken,
    token_type: 'Bearer',
    expires_in: 604800,
    refresh_token: SECRETS.refreshToken,
    scope: 'openid sdk.social_layer',
    id_token: SECRETS.idToken,
  });
};

interface LogLine {
  message: string;
  severity: sdkpp.LoggingSeverity;
}

function loggingClient(answer: Answer, options: { build?: sdkpp.Build } = {}) {
  const { fetch } = fakeFetch(answer);
  const client = new sdkpp.Client(API, WEB, { ...options, fetch, opener: () => undefined });
  const lines: LogLine[] = [];
  client.AddLogCallback(
    (message, severity) => lines.push({ message, severity }),
    sdkpp.LoggingSeverity.Verbose,
  );
  return { client, lines };
}

/** Every token operation of the library, each through the platform's answers. */
async function runEveryTokenOperation(client: sdkpp.Client): Promise<void> {
  const got = await client.GetToken(
    APPLICATION_ID,
    'auth-code',
    SECRETS.verifier,
    'mygame:/authorize/callback',
  );
  expect(got.accessToken).toBe(SECRETS.accessToken);
  const refreshed = await client.RefreshToken(APPLICATION_ID, got.refreshToken);
  expect(refreshed.accessToken).toBe(SECRETS.refreshedAccessToken);
  expect(
    (await client.UpdateToken(sdkpp.AuthorizationTokenType.Bearer, SECRETS.updatedToken)).Successful(),
  ).toBe(true);
  const deleted = await client.RefreshToken(APPLICATION_ID, SECRETS.deletedRefreshToken);
  expect(deleted.result.Error()).toBe('invalid_grant');
  expect((await client.RevokeToken(APPLICATION_ID, refreshed.accessToken)).Successful()).toBe(true);
  expect((await client.RevokeToken(APPLICATION_ID, SECRETS.shortToken)).Successful()).toBe(true);
  const child = await client.ExchangeChildToken(SECRETS.accessToken, CHILD_APPLICATION_ID);
  expect(child.accessToken).toBe(SECRETS.childAccessToken);
}

describe('Authentication 8: the bearer token is filtered from all log levels', () => {
  it('debug build, Verbose callback: Verbose lines exist, and none carries a token, refresh token or verifier', async () => {
    const { client, lines } = loggingClient(platform, { build: 'debug' });
    await runEveryTokenOperation(client);

    const verbose = lines.filter((line) => line.severity === sdkpp.LoggingSeverity.Verbose);
    expect(verbose.length).toBeGreaterThanOrEqual(12);
    // The request and response bodies are logged, with the credentials cut out.
    expect(
      verbose.some((line) => line.message.includes('POST /oauth2/token grant_type=authorization_code')),
    ).toBe(true);
    expect(verbose.some((line) => line.message.includes('POST /partner-sdk/child-token'))).toBe(true);
    expect(lines.some((line) => line.message.includes('[redacted]'))).toBe(true);

    for (const [name, secret] of Object.entries(SECRETS)) {
      const leaking = lines.filter((line) => line.message.includes(secret)).map((line) => line.message);
      expect(leaking, `${name} leaked into a log line`).toEqual([]);
    }
  });

  it('debug build: a timed-out request and a rate-limited retry log Warning and Info, still without tokens', async () => {
    let calls = 0;
    const { client, lines } = loggingClient(
      (request, index) => {
        calls++;
        if (index === 0) return untilAborted(request);
        if (index === 1)
          return json(429, { message: 'You are being rate limited.', retry_after: 0.01, global: false });
        return platform(request, index);
      },
      { build: 'debug' },
    );
    client.SetHttpRequestTimeout(20);
    expect((await client.RefreshToken(APPLICATION_ID, SECRETS.refreshToken)).result.Type()).toBe(
      sdkpp.ErrorType.NetworkError,
    );
    client.SetHttpRequestTimeout(30000);
    expect((await client.RefreshToken(APPLICATION_ID, SECRETS.refreshToken)).result.Successful()).toBe(true);
    expect(calls).toBe(3);

    const severities = new Set(lines.map((line) => line.severity));
    expect(severities).toContain(sdkpp.LoggingSeverity.Warning);
    expect(severities).toContain(sdkpp.LoggingSeverity.Info);
    for (const secret of Object.values(SECRETS)) {
      expect(lines.filter((line) => line.message.includes(secret))).toEqual([]);
    }
  });

  it('release build (the default), Verbose callback: only Warning and Error lines arrive', async () => {
    const { client, lines } = loggingClient((request, index) =>
      index === 0 ? untilAborted(request) : platform(request, index),
    );
    client.SetHttpRequestTimeout(20);
    expect((await client.RevokeToken(APPLICATION_ID, SECRETS.accessToken)).Type()).toBe(
      sdkpp.ErrorType.NetworkError,
    );
    client.SetHttpRequestTimeout(30000);
    await runEveryTokenOperation(client);

    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect([sdkpp.LoggingSeverity.Warning, sdkpp.LoggingSeverity.Error]).toContain(line.severity);
    }
    for (const secret of Object.values(SECRETS)) {
      expect(lines.filter((line) => line.message.includes(secret))).toEqual([]);
    }
  });

  it('a callback receives nothing below its minimum severity, and nothing once removed', async () => {
    const { fetch } = fakeFetch(platform);
    const client = new sdkpp.Client(API, WEB, { build: 'debug', fetch, opener: () => undefined });
    const warnings: sdkpp.LoggingSeverity[] = [];
    const everything: sdkpp.LoggingSeverity[] = [];
    const all = (_message: string, severity: sdkpp.LoggingSeverity) => everything.push(severity);
    client.AddLogCallback((_message, severity) => warnings.push(severity), sdkpp.LoggingSeverity.Warning);
    client.AddLogCallback(all, sdkpp.LoggingSeverity.Verbose);
    await client.RevokeToken(APPLICATION_ID, SECRETS.accessToken);
    expect(warnings).toEqual([]);
    const seen = everything.length;
    expect(seen).toBeGreaterThan(0);
    client.RemoveLogCallback(all);
    await client.RevokeToken(APPLICATION_ID, SECRETS.accessToken);
    expect(everything).toHaveLength(seen);
  });
});
