import { Writable } from 'node:stream';
import {
  type Clock,
  type Config,
  createHearth,
  type Hearth,
  type HearthOptions,
  testConfig,
} from '@hearth/server';
import { recordResponse } from './conformance.js';

export interface TestHearth extends Hearth {
  /** Every log line written so far. */
  readonly logs: string[];
  /** fetch() against this server's API: `api('/users/@me', { token })`. */
  api(path: string, init?: ApiInit): Promise<Response>;
}

export interface ApiInit extends Omit<RequestInit, 'body'> {
  /** Sent as the Authorization header, as is (`Bot …`, `Bearer …` or a bare token). */
  auth?: string;
  /** Sent as JSON unless it is a string or a FormData. */
  body?: unknown;
  version?: string;
}

/** What createHearth takes besides config and clock: gateway timing (short heartbeats for 4009 tests). */
export type StartOptions = Pick<
  HearthOptions,
  'gateway' | 'voice' | 'shared' | 'accountLinkParticipants' | 'deliverWebhooks'
>;

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
    // Test receivers and identity providers listen on loopback: the development switch is on unless a test
    // turns it off to see the production rules.
    config: testConfig({ logLevel: 'info', allowLoopbackUrls: true, ...overrides }),
    logDestination,
    ...(clock ? { clock } : {}),
    ...options,
    observeResponse: recordResponse,
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
  return Object.assign(hearth, { logs, api });
}
