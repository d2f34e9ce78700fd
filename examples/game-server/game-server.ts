/**
 * A game's backend on the Social SDK's server routes: it signs players in with provisional accounts (no
 * platform account needed; the game vouches for its own player ids) and opens a lobby with text chat for
 * each match. Players' clients then talk to the platform with the access token it handed them.
 *
 *   HEARTH_URL=http://127.0.0.1:8080 APP_ID=… BOT_TOKEN=… npx tsx examples/game-server/game-server.ts
 */

export interface Player {
  /** The player's id in the game's own accounts. */
  externalId: string;
  /** The platform's user id of the provisional account. */
  userId: string;
  /** What the player's client calls the platform with (`Authorization: Bearer …`). */
  accessToken: string;
}

export class GameServer {
  readonly #api: string;
  readonly #botToken: string;

  constructor(baseUrl: string, botToken: string) {
    this.#api = `${baseUrl.replace(/\/+$/, '')}/api/v10`;
    this.#botToken = botToken;
  }

  /** POST /partner-sdk/token/bot: the player's provisional account, made on first sign-in, found after. */
  async signIn(externalId: string, displayName: string): Promise<Player> {
    const token = await this.#call<{ access_token: string }>('POST', '/partner-sdk/token/bot', {
      external_user_id: externalId,
      preferred_global_name: displayName,
    });
    const me = await request<{ id: string }>(`${this.#api}/users/@me`, 'GET', `Bearer ${token.access_token}`);
    return { externalId, userId: me.id, accessToken: token.access_token };
  }

  /** POST /lobbies: a match's lobby with its players; it goes once nobody used it for `idleSeconds`. */
  async openMatch(players: Player[], mode: string, idleSeconds = 300): Promise<string> {
    const lobby = await this.#call<{ id: string }>('POST', '/lobbies', {
      members: players.map((player) => ({ id: player.userId })),
      metadata: { mode },
      idle_timeout_seconds: idleSeconds,
    });
    return lobby.id;
  }

  /** GET /lobbies/{id}: the lobby, or undefined once it is gone. */
  async match(lobbyId: string): Promise<{ id: string; members: { id: string }[] } | undefined> {
    try {
      return await this.#call('GET', `/lobbies/${lobbyId}`);
    } catch (error) {
      if (error instanceof PlatformError && error.status === 404) return undefined;
      throw error;
    }
  }

  async closeMatch(lobbyId: string): Promise<void> {
    await this.#call('DELETE', `/lobbies/${lobbyId}`);
  }

  #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return request<T>(`${this.#api}${path}`, method, `Bot ${this.#botToken}`, body);
  }
}

/** What a player's client does in a match: POST /lobbies/{id}/messages with the player's token. */
export function say(baseUrl: string, player: Player, lobbyId: string, content: string) {
  return request<{ id: string; content: string }>(
    `${baseUrl.replace(/\/+$/, '')}/api/v10/lobbies/${lobbyId}/messages`,
    'POST',
    `Bearer ${player.accessToken}`,
    { content },
  );
}

/** A refusal of the platform: its status and error body. */
export class PlatformError extends Error {
  readonly status: number;

  constructor(status: number, body: string) {
    super(`${status} ${body}`);
    this.status = status;
  }
}

async function request<T>(url: string, method: string, authorization: string, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new PlatformError(response.status, text);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
