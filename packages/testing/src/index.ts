/**
 * `@hearth/testing`: Hearth in emulator mode inside a test process (README of this package). A test starts
 * the platform with a fixture, drives its clock, faults, snapshots and scripted users through the admin
 * API, and waits for what its game or bot should have seen on the gateway or its webhook.
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Clock,
  type Config,
  createHearth,
  type Hearth,
  type SeedResult,
  testConfig,
} from '@hearth/server';
import { AdminClient } from './admin.js';
import { GatewayListener } from './gateway.js';

export { AdminClient, AdminError } from './admin.js';
export { type GatewayFrame, GatewayListener, waitForGatewayEvent } from './gateway.js';
export { type WebhookDelivery, WebhookReceiver, waitForWebhook } from './webhooks.js';
export type { SeedResult };

export interface StartOptions {
  /** A fixture document (the JSON form of `hearth seed --file`), seeded before `startHearth` answers. */
  fixture?: unknown;
  /** Settings besides the defaults of a test server (in-memory SQLite, a free port, emulator mode on). */
  config?: Partial<Config>;
  /** The clock the test clock starts from; default: real time. */
  clock?: Clock;
}

/** What a test holds: the running server, the seeded objects, and the emulator's controls. */
export interface TestingHearth {
  /** The base address (`http://127.0.0.1:PORT`): REST under `${url}/api`, the gateway at `url`. */
  readonly url: string;
  readonly adminToken: string;
  readonly admin: AdminClient;
  /** What the fixture created, by the names it gave (ids, bot tokens, user tokens). */
  readonly seeded: SeedResult;
  /** The server itself, for what the admin API does not offer. */
  readonly hearth: Hearth;
  seed(fixture: unknown): Promise<SeedResult>;
  /** Moves the test clock by a duration (`30d`, `15m`) or to an instant; due renewals and expiries happen. */
  advanceClock(by: string | { to: string | number }, options?: { freeze?: boolean }): Promise<ClockState>;
  clock(): Promise<ClockState>;
  /** Adds a fault rule (README "Fault injection"); answers it with its id. */
  injectFault(rule: Record<string, unknown>): Promise<{ id: string } & Record<string, unknown>>;
  clearFaults(): Promise<void>;
  snapshot(name: string): Promise<void>;
  restore(name: string): Promise<void>;
  /** A scripted user action: `act('send_message', { user_id, channel_id, content })`. */
  act<T = unknown>(action: string, body: Record<string, unknown>): Promise<T>;
  /** A gateway session identified with `token`, recording its events for `waitForGatewayEvent`. */
  gateway(token: string, intents: number): Promise<GatewayListener>;
  close(): Promise<void>;
}

export interface ClockState {
  now: string;
  now_ms: number;
  frozen: boolean;
}

/** Starts Hearth in emulator mode in this process on a random port, seeded with `fixture`. */
export async function startHearth(options: StartOptions = {}): Promise<TestingHearth> {
  const adminToken = randomBytes(24).toString('hex');
  const hearth = await createHearth({
    config: testConfig({
      emulator: true,
      adminToken,
      allowLoopbackUrls: true,
      dataDir: join(tmpdir(), `hearth-testing-${randomBytes(6).toString('hex')}`),
      ...options.config,
    }),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const url = await hearth.listen();
  const admin = new AdminClient(url, adminToken);
  const listeners = new Set<GatewayListener>();
  const empty: SeedResult = {
    applications: {},
    users: {},
    provisional_accounts: {},
    guilds: {},
    lobbies: {},
    skus: {},
    entitlements: {},
  };
  const seeded =
    options.fixture === undefined ? empty : await admin.call<SeedResult>('POST', '/seed', options.fixture);
  return {
    url,
    adminToken,
    admin,
    seeded,
    hearth,
    seed: (fixture) => admin.call<SeedResult>('POST', '/seed', fixture),
    advanceClock: (by, clockOptions = {}) =>
      admin.call<ClockState>('POST', '/clock', {
        ...(typeof by === 'string' ? { advance: by } : { to: by.to }),
        ...(clockOptions.freeze === undefined ? {} : { freeze: clockOptions.freeze }),
      }),
    clock: () => admin.call<ClockState>('GET', '/clock'),
    injectFault: (rule) => admin.call('POST', '/faults', rule),
    clearFaults: () => admin.call('DELETE', '/faults'),
    snapshot: async (name) => {
      await admin.call('PUT', `/snapshots/${encodeURIComponent(name)}`);
    },
    restore: (name) => admin.call('POST', `/snapshots/${encodeURIComponent(name)}/restore`),
    act: async <T>(action: string, body: Record<string, unknown>) =>
      (await admin.call<{ result: T }>('POST', `/act/${action}`, body)).result,
    gateway: async (token, intents) => {
      const listener = await GatewayListener.open(url, token, intents);
      listeners.add(listener);
      return listener;
    },
    close: async () => {
      for (const listener of listeners) listener.close();
      await hearth.close();
    },
  };
}
