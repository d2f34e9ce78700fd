import type { ObservedResponse } from '@hearth/server';
import { describe, expect, it } from 'vitest';
import {
  ConformanceRecorder,
  checkResponse,
  describeProblem,
  globMatches,
} from '../../../test-support/conformance.js';
import { CONFORMANCE_ALLOWLIST, SPEC_CORRECTIONS } from '../../../test-support/conformance-allowlist.js';
import { createHttpServer } from '../src/http/server.js';
import { systemClock } from '../src/kernel/clock.js';
import { createLogger } from '../src/kernel/logger.js';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';

/**
 * The conformance check itself (issue 23; STYLE 17): it must be able to fail. Every other HTTP test goes
 * through it by way of `startHearth` and the vitest setup file.
 */

const USER = {
  id: '1',
  username: 'alice',
  discriminator: '0',
  global_name: null,
  avatar: null,
  public_flags: 0,
  flags: 0,
  mfa_enabled: false,
  locale: 'en-US',
};

function response(overrides: Partial<ObservedResponse>): ObservedResponse {
  return {
    method: 'GET',
    route: '/api/v10/users/@me',
    path: '/api/v10/users/@me',
    status: 200,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify(USER),
    ...overrides,
  };
}

const problemsOf = (r: ObservedResponse) => checkResponse(r).problems.map(describeProblem);

describe('conformance check against reference/openapi.json', () => {
  it('passes a documented response that matches its schema, under every version prefix and HEAD', () => {
    expect(checkResponse(response({}))).toMatchObject({
      outcome: 'validated',
      operation: 'GET /users/@me 200',
    });
    expect(checkResponse(response({ route: '/api/v9/users/@me' })).outcome).toBe('validated');
    expect(checkResponse(response({ route: '/api/users/@me' })).outcome).toBe('validated');
    expect(checkResponse(response({ method: 'HEAD', body: '' })).outcome).toBe('validated');
  });

  it('reports a body that misses a required field or has a wrong type', () => {
    const { flags: _, ...noFlags } = USER;
    expect(problemsOf(response({ body: JSON.stringify({ ...noFlags, id: 5 }) }))).toEqual([
      expect.stringMatching(/^body\/ must have required property 'flags'/),
      expect.stringMatching(/^body\/id must be string/),
    ]);
  });

  it('reports a status the operation does not list, and every 5xx', () => {
    expect(problemsOf(response({ status: 201 }))).toEqual(['status not in SPEC for this operation']);
    expect(
      problemsOf(response({ status: 500, body: '{"code":0,"message":"500: Internal Server Error"}' })),
    ).toContain('status not in SPEC for this operation');
    expect(problemsOf(response({ route: undefined, path: '/nowhere', status: 503, body: '' }))).toContain(
      'status not in SPEC for this operation',
    );
  });

  it('checks errors against the platform error body, and 429 against the rate-limit body', () => {
    const error = { status: 404, body: '{"code":10013,"message":"Unknown User"}' };
    expect(checkResponse(response(error)).outcome).toBe('validated');
    expect(problemsOf(response({ status: 404, body: '{"error":"not found"}' }))).toEqual([
      expect.stringMatching(/required property 'code'/),
      expect.stringMatching(/required property 'message'/),
    ]);
    expect(
      problemsOf(response({ status: 429, body: '{"code":0,"message":"You are being rate limited."}' })),
    ).toEqual([
      expect.stringMatching(/required property 'retry_after'/),
      expect.stringMatching(/required property 'global'/),
    ]);
  });

  it('reports a body on a 204, and a content type SPEC does not give', () => {
    const route = '/api/v10/lobbies/:lobby_id/members/@me';
    expect(problemsOf(response({ method: 'DELETE', route, status: 204, body: '{}' }))).toEqual([
      'a body where SPEC describes none',
    ]);
    expect(problemsOf(response({ contentType: 'text/plain' }))).toEqual([
      'content-type text/plain, SPEC: application/json',
    ]);
  });

  it('reports a route SPEC does not describe unless the allowlist names it, and still checks its errors', () => {
    const made = { route: '/api/v10/made-up/:id', path: '/api/v10/made-up/1' };
    expect(problemsOf(response(made))).toEqual(['route not in SPEC']);
    expect(
      checkResponse(response({ ...made, status: 400, body: '{"code":50035,"message":"Invalid Form Body"}' })),
    ).toMatchObject({ outcome: 'violation', problems: [{ kind: 'route' }] });
    const login = { method: 'POST', route: '/api/v10/auth/login', path: '/api/v10/auth/login' };
    expect(checkResponse(response({ ...login, body: '{"token":"t"}' })).outcome).toBe('allowlisted');
    expect(problemsOf(response({ ...login, status: 401, body: '{"error":"nope"}' }))).toHaveLength(2);
  });

  it('an allowlist entry excuses only its own problem of its own route', () => {
    const allowlist = [
      {
        method: 'GET',
        route: '/users/@me',
        problem: 'body' as const,
        instancePath: '/id',
        keyword: 'type',
        category: 'spec-defect' as const,
        reason: 'test',
      },
    ];
    const wrongId = response({ body: JSON.stringify({ ...USER, id: 5 }) });
    expect(checkResponse(wrongId, allowlist)).toMatchObject({ outcome: 'allowlisted', excusedBy: allowlist });
    const wrongName = response({ body: JSON.stringify({ ...USER, id: 5, username: 5 }) });
    expect(checkResponse(wrongName, allowlist).problems.map(describeProblem)).toEqual([
      expect.stringMatching(/^body\/username must be string/),
    ]);
    expect(globMatches('/*/type', '/0/type')).toBe(true);
    expect(globMatches('/*/type', '/0/user/type')).toBe(false);
    expect(globMatches('/**/type', '/0/user/type')).toBe(true);
  });

  it('every allowlist entry and SPEC correction gives its category and reason', () => {
    for (const entry of [...CONFORMANCE_ALLOWLIST, ...SPEC_CORRECTIONS]) {
      expect(entry.reason.length, JSON.stringify(entry)).toBeGreaterThan(20);
      expect(['hearth-only', 'not-in-spec', 'spec-defect', 'hearth-gap']).toContain(entry.category);
    }
  });

  it('sees what a real server sends: a wrong body from a route fails the test that caused it', async () => {
    const observed: ObservedResponse[] = [];
    const app = createHttpServer(
      {
        logger: createLogger('silent'),
        clock: systemClock,
        rateLimits: new MemoryRateLimitStore(),
        authenticators: {
          bot: async () => undefined,
          user: async () => undefined,
          bearer: async () => undefined,
        },
        globalPerSecond: 50,
        observeResponse: (r) => observed.push(r),
      },
      [async (scope) => void scope.get('/users/@me', async () => ({ id: 5 }))],
    );
    await app.inject({ method: 'GET', url: '/api/v10/users/@me' });
    await app.inject({ method: 'GET', url: '/api/v10/nowhere' });
    await app.close();
    expect(observed.map((r) => [r.route, r.status])).toEqual([
      ['/api/v10/users/@me', 200],
      [undefined, 404],
    ]);
    expect(checkResponse(observed[0]!).outcome).toBe('violation');
    expect(checkResponse(observed[1]!).outcome).toBe('validated');
    // What the setup file does after each test: the violation is listed and the test fails.
    const recorder = new ConformanceRecorder();
    for (const r of observed) recorder.record(r);
    expect(() => recorder.assertClean()).toThrow(/GET \/api\/v10\/users\/@me → 200 \(GET \/users\/@me 200/);
    expect(() => recorder.assertClean()).not.toThrow();
    expect(recorder.tally.operations).toEqual({
      'GET /users/@me 200': { validated: 0, allowlisted: 0, violation: 1 },
      'GET (no route) 404': { validated: 1, allowlisted: 0, violation: 0 },
    });
  });
});
