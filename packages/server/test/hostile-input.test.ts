import type { RegisteredRoute } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestGuild, seedTestChannel } from '../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import {
  HOSTILE_SEGMENTS,
  hostileBodies,
  hostileValuesFor,
  type RawRequest,
  type RawResponse,
  rawRequest,
  type SchemaOutline,
  sampleOf,
  typeOf,
} from '../../../test-support/hostile.js';
import { lobbyGame, lobbyPlayer } from '../../../test-support/lobbies.js';
import { grantTokens } from '../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../test-support/services.js';

/**
 * Issue 21, "No request can reach a 500": every route the server registered (asked of the server itself,
 * not listed here) gets the hostile set with the right kind of credential, on SQLite and on PostgreSQL.
 * Every answer is below 500, and every 4xx carries the platform's error body (RFC 6749's on the token
 * endpoints). Each route gets the whole-body set once and its own fields' hostile values one at a time.
 */

const withPostgres = await postgresAvailable();
const ADMIN_TOKEN = 'hostile-admin-token';
const UNKNOWN_ID = '1234567890123456789';
/** Endpoints of RFC 6749 / RFC 7009 answer `{error, error_description}` (PROTOCOL.md §E.3). */
const OAUTH_BODY_ROUTES = /^\/api\/v10\/(oauth2\/token|partner-sdk\/token|partner-sdk\/child-token)/;

interface World {
  ids: Record<string, string>;
  user: string;
  bot: string;
  bearer: string;
  basic: string;
}

/** A guild with a channel and a role, a game with a lobby and a message, two players who are friends. */
async function buildWorld(hearth: TestHearth): Promise<World> {
  const game = await lobbyGame(hearth);
  const guild = await createTestGuild(hearth);
  const channel = await seedTestChannel(hearth, guild.id);
  const member = await addTestMember(hearth, guild);
  await hearth.services.guilds.addMember(guild.id, game.botUserId);
  const player = await lobbyPlayer(hearth, game);
  const friend = await lobbyPlayer(hearth, game);
  await hearth.services.guilds.addMember(guild.id, friend.id);
  const scoped = await grantTokens(
    hearth,
    game,
    player.account.token,
    'openid sdk.social_layer identify connections guilds guilds.members.read applications.entitlements',
  );
  const call = async (path: string, method: string, auth: string, body: unknown) => {
    const response = await hearth.api(path, { method, auth, body });
    expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
    return response.status === 204 ? {} : ((await response.json()) as { id?: string });
  };
  const role = await call(`/guilds/${guild.id}/roles`, 'POST', guild.owner.token, { name: 'hostile' });
  const lobby = await call('/lobbies', 'POST', game.bot, {});
  await call(`/lobbies/${lobby.id}/members/${player.id}`, 'PUT', game.bot, {});
  const message = await call(`/lobbies/${lobby.id}/messages`, 'POST', player.bearer, { content: 'hi' });
  return {
    ids: {
      guild_id: guild.id,
      channel_id: channel,
      role_id: role.id ?? UNKNOWN_ID,
      overwrite_id: role.id ?? UNKNOWN_ID,
      user_id: member.id,
      user_id_1: player.id,
      user_id_2: friend.id,
      lobby_id: lobby.id ?? UNKNOWN_ID,
      message_id: message.id ?? UNKNOWN_ID,
      application_id: game.id,
      file: 'hostile.png',
    },
    user: guild.owner.token,
    bot: game.bot,
    bearer: `Bearer ${scoped.access_token}`,
    basic: `Basic ${Buffer.from(`${game.id}:${game.clientSecret}`).toString('base64')}`,
  };
}

/** The credential of the right kind for a route: the guild owner's session, the game's bot, a player. */
function credentialFor(route: RegisteredRoute, world: World): string | undefined {
  if (route.url.includes('/admin/')) return `Admin ${ADMIN_TOKEN}`;
  if (OAUTH_BODY_ROUTES.test(route.url)) return world.basic;
  if (!route.auth) return undefined;
  if (route.auth.user) return world.user;
  if (route.auth.bot) return world.bot;
  return world.bearer;
}

interface Outcome {
  requests: number;
  routes: number;
  clientErrors: number;
  serverErrors: string[];
  offShape: string[];
  /** `METHOD template #n` → status: the same request list on both engines must get the same answers. */
  statuses: Map<string, number>;
}

/** The platform's error body: `{code: number, message: string, errors?: object}`; RFC 6749 where due. */
function wellShaped(route: RegisteredRoute, response: RawResponse): boolean {
  // The login and consent pages tell a person in HTML (conformance-allowlist.ts, `hearth-only` pages).
  if (
    !route.url.startsWith('/api') &&
    route.url !== '(router)' &&
    response.contentType?.startsWith('text/html')
  ) {
    return true;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(response.body) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (!response.contentType?.startsWith('application/json')) return false;
  if (OAUTH_BODY_ROUTES.test(route.url) && typeof body['error'] === 'string') return true;
  return (
    typeof body['code'] === 'number' &&
    typeof body['message'] === 'string' &&
    (body['errors'] === undefined || (typeof body['errors'] === 'object' && body['errors'] !== null))
  );
}

function requestsFor(route: RegisteredRoute, world: World): RawRequest[] {
  const auth = credentialFor(route, world);
  const headers: Record<string, string> = auth ? { authorization: auth } : {};
  const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
  const fill = (hostile?: [string, string]) =>
    route.url.replace(/:(\w+)/g, (_, name: string) =>
      hostile?.[0] === name ? hostile[1] : (world.ids[name] ?? UNKNOWN_ID),
    );
  const requests: RawRequest[] = [];
  const bodySchema = route.schema?.body as SchemaOutline | undefined;
  const withBody = route.method !== 'GET' && route.method !== 'HEAD' && route.method !== 'DELETE';
  const valid = bodySchema ? sampleOf(bodySchema, world.ids['user_id'] ?? UNKNOWN_ID) : {};
  const json = (body: unknown) => ({
    ...(withBody
      ? { body: JSON.stringify(body), headers: { ...headers, 'content-type': 'application/json' } }
      : { headers }),
  });

  // Path parameters: each in turn hostile, the others real.
  for (const name of params) {
    for (const segment of HOSTILE_SEGMENTS) {
      requests.push({ method: route.method, path: fill([name, segment]), ...json(valid) });
    }
  }
  const path = fill();
  // Query parameters the route reads.
  const query = (route.schema?.querystring as SchemaOutline | undefined)?.properties ?? {};
  for (const key of Object.keys(query)) {
    for (const value of ['%00', '99999999999999999999999', '-1', '%FF', '1e400', 'a'.repeat(5000)]) {
      requests.push({ method: route.method, path: `${path}?${key}=${value}`, headers });
    }
  }
  if (!withBody) {
    requests.push({
      method: route.method,
      path,
      headers: { ...headers, 'content-type': 'application/json' },
      body: `${'['.repeat(50_000)}`,
    });
    return requests;
  }
  // Whole bodies, then each field of the body's schema hostile in an otherwise valid body.
  const properties = bodySchema?.properties ?? {};
  const stringField =
    Object.keys(properties).find((key) => typeOf(properties[key] ?? {}) === 'string') ??
    Object.keys(properties)[0] ??
    'content';
  for (const { type, body } of hostileBodies(stringField)) {
    requests.push({
      method: route.method,
      path,
      headers: type ? { ...headers, 'content-type': type } : headers,
      ...(body === undefined ? {} : { body }),
    });
  }
  const base = typeof valid === 'object' && valid !== null && !Array.isArray(valid) ? valid : {};
  for (const [key, schema] of Object.entries(properties)) {
    for (const value of hostileValuesFor(typeOf(schema))) {
      requests.push({ method: route.method, path, ...json({ ...base, [key]: value }) });
    }
  }
  return requests;
}

/** Routes that end the user session they are called with (logout, password change). */
const SESSION_ENDING = /^\/api\/v10\/auth\/(logout|password)$/;

/**
 * Every route once, under /api/v10 and outside the API; deletes, then the session-ending routes, last, so
 * the others meet real things and a live session.
 */
function sweptRoutes(hearth: TestHearth): RegisteredRoute[] {
  const routes = hearth.routes.filter(
    (route) =>
      route.method !== 'HEAD' && (route.url.startsWith('/api/v10/') || !route.url.startsWith('/api')),
  );
  const ending = (route: RegisteredRoute) => SESSION_ENDING.test(route.url);
  const rank = (route: RegisteredRoute) => (ending(route) ? 2 : route.method === 'DELETE' ? 1 : 0);
  return [0, 1, 2].flatMap((r) => routes.filter((route) => rank(route) === r));
}

async function sweep(hearth: TestHearth, world: World, engine: string): Promise<Outcome> {
  const outcome: Outcome = {
    requests: 0,
    routes: 0,
    clientErrors: 0,
    serverErrors: [],
    offShape: [],
    statuses: new Map(),
  };
  const routes = sweptRoutes(hearth);
  outcome.routes = routes.length;
  // Requests the router itself answers: unknown paths, over-long URLs, bad encoding, odd methods.
  const framework: Array<[RegisteredRoute, RawRequest]> = [
    ['GET', `/api/v10/${'a'.repeat(10_000)}`],
    ['GET', '/api/v10/%'],
    ['GET', '/api/v10/users/%E0%A4%A'],
    ['PROPFIND', '/api/v10/users/@me'],
    ['OPTIONS', '/api/v10/users/@me'],
    ['TRACE', '/api/v10/users/@me'],
    ['DELETE', '/api/v10/gateway'],
    ['GET', '/api/v10/users/@me/../../../etc/passwd'],
  ].map(([method, path]) => [
    { method: method ?? 'GET', url: '(router)', auth: undefined, schema: undefined },
    { method: method ?? 'GET', path: path ?? '/', headers: { authorization: world.user } },
  ]);
  const all: Array<[RegisteredRoute, RawRequest, string]> = [
    ...framework,
    ...routes.flatMap((route) =>
      requestsFor(route, world).map((request): [RegisteredRoute, RawRequest] => [route, request]),
    ),
  ].map(([route, request], index) => [route, request, `${route.method} ${route.url} #${index}`]);
  // One at a time, so that both engines see the same sequence and their answers can be compared.
  for (const [route, request, key] of all) {
    const response = await rawRequest(hearth.url, request);
    outcome.requests++;
    outcome.statuses.set(key, response.status);
    const label = `${request.method} ${request.path.slice(0, 120)} [${String(request.body ?? '').slice(0, 40)}] → ${response.status} ${response.body.slice(0, 200)}`;
    if (response.status >= 500 || response.status === 0) outcome.serverErrors.push(label);
    else if (response.status >= 400) {
      outcome.clientErrors++;
      if (!wellShaped(route, response)) outcome.offShape.push(label);
    }
  }
  console.log(
    `hostile-input sweep (${engine}): ${outcome.requests} requests over ${outcome.routes} routes: ` +
      `${outcome.clientErrors} × 4xx, ${outcome.serverErrors.length} × 5xx, ${outcome.offShape.length} off-shape`,
  );
  return outcome;
}

/** The SQLite sweep's answers, for the PostgreSQL sweep to compare with. */
let sqliteStatuses: Map<string, number> | undefined;

function sweepSuite(engine: string, databaseUrl: () => string | undefined) {
  let hearth: TestHearth;
  let world: World;
  beforeAll(async () => {
    const url = databaseUrl();
    hearth = await startHearth({
      rateLimitGlobal: 1_000_000,
      adminToken: ADMIN_TOKEN,
      ...(url ? { databaseUrl: url } : {}),
    });
    world = await buildWorld(hearth);
  });
  afterAll(() => hearth?.close());

  it('answers every hostile request to every registered route below 500, with the platform error body', async () => {
    const outcome = await sweep(hearth, world, engine);
    expect(outcome.routes).toBeGreaterThan(100);
    if (engine === 'SQLite') sqliteStatuses = outcome.statuses;
    else if (sqliteStatuses) {
      // PostgreSQL parity: the same request gets the same status on both engines.
      const differing = [...outcome.statuses]
        // A 429 depends on the clock, not on the engine.
        .filter(([key, status]) => status !== 429 && sqliteStatuses?.get(key) !== 429)
        .filter(([key, status]) => sqliteStatuses?.get(key) !== status)
        .map(([key, status]) => `${key}: SQLite ${sqliteStatuses?.get(key)}, PostgreSQL ${status}`);
      expect(differing).toEqual([]);
    }
    expect({ serverErrors: outcome.serverErrors, offShape: outcome.offShape }).toEqual({
      serverErrors: [],
      offShape: [],
    });
  }, 120_000);

  it('still serves after all of it', async () => {
    // The sweep ends with logout: the bot's token is the credential still alive.
    const response = await hearth.api('/users/@me', { auth: world.bot });
    expect(response.status).toBe(200);
  });
}

describe('hostile input on SQLite', () => {
  sweepSuite('SQLite', () => undefined);
});

describe.skipIf(!withPostgres)('hostile input on PostgreSQL', () => {
  const schema = postgresSchema();
  afterAll(() => schema.drop());
  sweepSuite('PostgreSQL', () => schema.url);
});
