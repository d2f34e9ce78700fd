import { IDENTIFY_WINDOW_MS } from '@hearth/protocol';
import type { Clock } from '@hearth/server';
import { GatewayClient } from '../../../../test-support/gateway.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';

export const SOCIAL_SCOPES = 'openid sdk.social_layer';

let counter = 0;

/** A player of `game`: a full account with a bearer token for the social scopes. */
export interface TestPlayer {
  id: string;
  username: string;
  sessionToken: string;
  bearer: string;
}

/**
 * A full account's player with a token for the game; provisional players come from
 * test-support/provisional.ts.
 */
export async function socialPlayer(
  hearth: TestHearth,
  game: TestGame,
  scopes = SOCIAL_SCOPES,
): Promise<TestPlayer> {
  const username = `soc${++counter}${Math.random().toString(36).slice(2, 8)}`;
  const created = await createPlayer(hearth, username);
  const tokens = await grantTokens(hearth, game, created.token, scopes);
  return {
    id: created.user.id,
    username,
    sessionToken: created.token,
    bearer: `Bearer ${tokens.access_token}`,
  };
}

/**
 * The server's clock for social tests: real time plus a skew the tests move forward, past the identify
 * window (one Identify per user per 5 s) and past rate-limit windows, without sleeping.
 */
export class SkewClock implements Clock {
  #skew = 0;
  now(): number {
    return Date.now() + this.#skew;
  }
  advance(ms: number): void {
    this.#skew += ms;
  }
}

/** A gateway session of the player, READY received; a SkewClock moves past the identify window first. */
export async function connect(
  hearth: TestHearth,
  player: TestPlayer,
  extra: object = {},
): Promise<GatewayClient> {
  if (hearth.clock instanceof SkewClock) hearth.clock.advance(IDENTIFY_WINDOW_MS);
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(10);
  client.send({
    op: 2,
    d: {
      token: player.bearer,
      properties: { os: 'linux', browser: 'test', device: 'test' },
      intents: 0,
      ...extra,
    },
  });
  await client.nextDispatch('READY');
  return client;
}

/** The JSON body and status of a response. */
export async function answer(response: Response): Promise<{ status: number; body: unknown }> {
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

/** A storage engine the social suites run on: in-memory SQLite always, PostgreSQL when it is up. */
export interface SocialEngine {
  name: string;
  overrides: { databaseUrl?: string };
  drop(): Promise<void>;
}

export async function socialEngines(): Promise<SocialEngine[]> {
  const engines: SocialEngine[] = [{ name: 'SQLite', overrides: {}, drop: async () => {} }];
  if (await postgresAvailable()) {
    const schema = postgresSchema();
    engines.push({ name: 'PostgreSQL', overrides: { databaseUrl: schema.url }, drop: schema.drop });
  }
  return engines;
}
