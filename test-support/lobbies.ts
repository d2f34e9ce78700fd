import { randomBytes } from 'node:crypto';
import { DEFAULT_COMMUNICATION_SCOPES, GatewayOpcodes } from '@hearth/protocol';
import { GatewayClient } from './gateway.js';
import type { TestHearth } from './hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame, tokenRequest } from './oauth.js';

/** Lobby suites: players of a game with an SDK token, many users at once, approval, and terse HTTP calls. */

export interface LobbyPlayer {
  id: string;
  /** The account behind it (its session token), to authorize another game as the same person. */
  account: Account;
  /** `Bearer <access token>` of scope `openid sdk.social_layer` for the game. */
  bearer: string;
  accessToken: string;
  /** Revokes the access token (RFC 7009, the game's client credentials). */
  revoke(): Promise<Response>;
}

type Account = Awaited<ReturnType<typeof createPlayer>>;

/**
 * A player of `game` holding an SDK token (`openid sdk.social_layer`, which includes lobbies.write): a new
 * account, or `account` authorizing one more game.
 */
export async function lobbyPlayer(
  hearth: TestHearth,
  game: TestGame,
  account?: Account,
): Promise<LobbyPlayer> {
  const player = account ?? (await createPlayer(hearth));
  const tokens = await grantTokens(hearth, game, player.token, DEFAULT_COMMUNICATION_SCOPES);
  return {
    id: player.user.id,
    account: player,
    bearer: `Bearer ${tokens.access_token}`,
    accessToken: tokens.access_token,
    revoke: () =>
      tokenRequest(
        hearth,
        { token: tokens.access_token },
        { path: '/oauth2/token/revoke', basic: [game.id, game.clientSecret] },
      ),
  };
}

/** A tuple of `N` items of `T`, so `const [a, b] = await lobbyPlayers(…, 2)` needs no checks. */
type Tuple<N extends number, T, R extends T[] = []> = R['length'] extends N ? R : Tuple<N, T, [...R, T]>;

/** `count` new players of `game`, one after another. */
export async function lobbyPlayers<N extends number>(
  hearth: TestHearth,
  game: TestGame,
  count: N,
): Promise<Tuple<N, LobbyPlayer>> {
  const players: LobbyPlayer[] = [];
  for (let i = 0; i < count; i++) players.push(await lobbyPlayer(hearth, game));
  return players as Tuple<N, LobbyPlayer>;
}

/** A game whose backend calls with `Bot <token>`; `approved` grants CommunicationFeaturesApproved. */
export async function lobbyGame(
  hearth: TestHearth,
  options: { approved?: boolean } = {},
): Promise<TestGame & { bot: string }> {
  const game = await createGame(hearth);
  if (options.approved ?? true) await approve(hearth, game);
  return { ...game, bot: `Bot ${game.botToken}` };
}

/** Lifts the pre-approval limits of PROTOCOL.md §A.3 for the game. */
export async function approve(hearth: TestHearth, game: TestGame): Promise<void> {
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['CommunicationFeaturesApproved'] });
}

let batch = 0;

/**
 * `count` users inserted as rows in one statement per 500: fixture setup for the 1,000-member and
 * 100-lobby caps, which would otherwise spend most of a suite hashing passwords. Everything the tests
 * then observe goes through HTTP. With `game`, each has authorized it (a grant row), as lobby members must.
 */
export async function insertUsers(
  hearth: TestHearth,
  count: number,
  game?: { id: string },
): Promise<string[]> {
  // Ids from a random base far above the generator's current range, so they never meet a real one.
  const base = (1n << 62n) + (BigInt(`0x${randomBytes(5).toString('hex')}`) << 12n);
  const tag = `${process.pid}${randomBytes(3).toString('hex')}${++batch}`;
  const now = hearth.clock.now();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: String(base + BigInt(i)),
    username: `bulk${tag}_${i}`,
    discriminator: '0',
    global_name: null,
    email: null,
    password_hash: null,
    avatar: null,
    bot: 0,
    flags: 0,
    created_at: now,
  }));
  for (let i = 0; i < rows.length; i += 500) {
    await hearth.storage.db
      .insertInto('users')
      .values(rows.slice(i, i + 500))
      .execute();
    if (!game) continue;
    const grants = rows.slice(i, i + 500).map((row) => ({
      application_id: game.id,
      user_id: row.id,
      scopes: DEFAULT_COMMUNICATION_SCOPES,
      integration_type: null,
      created_at: now,
    }));
    await hearth.storage.db.insertInto('oauth_grants').values(grants).execute();
  }
  return rows.map((row) => row.id);
}

export interface Answer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** One API call answered as status, parsed JSON body (null when empty) and headers. */
export async function call<T = unknown>(
  hearth: TestHearth,
  method: string,
  path: string,
  auth?: string,
  body?: unknown,
): Promise<Answer<T>> {
  const response = await hearth.api(path, {
    method,
    ...(auth === undefined ? {} : { auth }),
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text === '' ? null : JSON.parse(text)) as T,
    headers: response.headers,
  };
}

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

export interface PlayerSession {
  client: GatewayClient;
  sessionId: string;
  /** The next dispatch (op 0) of any type: the exact order of what the player is sent. */
  dispatch(): Promise<{ t: string | null; d: unknown }>;
}

/** A raw gateway session of a player (identified with `Bearer <token>`), READY received. */
export async function playerSession(url: string, player: LobbyPlayer): Promise<PlayerSession> {
  const client = await GatewayClient.connect(url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: player.bearer, properties: PROPERTIES, intents: 0 } });
  const ready = await client.nextDispatch('READY');
  return {
    client,
    sessionId: (ready.d as { session_id: string }).session_id,
    dispatch: async () => {
      const { t, d } = await client.next((frame) => frame.op === GatewayOpcodes.Dispatch);
      return { t, d };
    },
  };
}
