import { Writable } from 'node:stream';
import {
  type Clock,
  type Config,
  createHearth,
  type Hearth,
  type HearthOptions,
  type RouteAuth,
  testConfig,
} from '@hearth/server';
import { recordResponse } from './conformance.js';

export interface TestHearth extends Hearth {
  /** Every log line written so far. */
  readonly logs: string[];
  /** fetch() against this server's API: `api('/users/@me', { token })`. */
  api(path: string, init?: ApiInit): Promise<Response>;
  /** Every route the server registered, as Fastify's onRoute hook told it (the hostile-input sweep). */
  readonly routes: readonly RegisteredRoute[];
}

/** One registered route: method, URL template with its prefix (`/api/v10/users/:user_id`), who may call. */
export interface RegisteredRoute {
  method: string;
  url: string;
  auth: RouteAuth | undefined;
  /** The route's request schemas (JSON Schema), as registered. */
  schema: { body?: unknown; querystring?: unknown; params?: unknown } | undefined;
}

export interface ApiInit extends Omit<RequestInit, 'body'> {
  /** Sent as the Authorization header, as is (`Bot …`, `Bearer …` or a bare token). */
  auth?: string;
  /** Sent as JSON unless it is a string or a FormData. */
  body?: unknown;
  version?: string;
}

/** What createHearth takes besides config and clock: gateway timing (short heartbeats for 4009 tests). */
export type StartOptions = Pick<HearthOptions, 'gateway' | 'shared' | 'accountLinkParticipants'>;

/**
 * A server in this process on a random port, on in-memory SQLite unless told otherwise. Every response it
 * sends, whichever client asked, is checked against reference/openapi.json (test-support/conformance.ts).
 */
export async function startHearth(
  overrides: Partial<Config> = {},
  clock?: Clock,
  options: StartOptions = {},
): Promise<TestHearth> {
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const hearth = await createHearth({
    config: testConfig({ logLevel: 'info', ...overrides }),
    logDestination,
    ...(clock ? { clock } : {}),
    ...options,
    observeResponse: recordResponse,
  });
  // Plugins load at listen, so a root hook added now sees every route they register.
  const routes: RegisteredRoute[] = [];
  hearth.http.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      routes.push({ method, url: route.url, auth: route.config?.auth, schema: route.schema });
    }
  });
  // Requests go to the bound address; `hearth.url` is the public one clients are told about.
  const bound = await hearth.listen();
  const api = (path: string, init: ApiInit = {}) => {
    const { auth, body, version = 'v10', headers, ...rest } = init;
    const prefix = version === '' ? '/api' : `/api/${version}`;
    const sent = new Headers(headers);
    if (auth !== undefined) sent.set('authorization', auth);
    // Strings and forms go as they are (fetch sets a form's multipart boundary); anything else as JSON.
    const raw = typeof body === 'string' || body instanceof FormData;
    if (body !== undefined && !raw && !sent.has('content-type')) {
      sent.set('content-type', 'application/json');
    }
    return fetch(`${bound}${prefix}${path}`, {
      ...rest,
      headers: sent,
      ...(body === undefined ? {} : { body: raw ? body : JSON.stringify(body) }),
    });
  };
  return Object.assign(hearth, { logs, api, routes });
}
