import type { TestHearth } from './hearth.js';
import type { TestGame } from './oauth.js';

/** A provisional account of a game (PROTOCOL.md §B.2), as its player's client would hold it. */
export interface ProvisionalPlayer {
  id: string;
  /** The username the platform derived for it (friend requests by name reach it). */
  username: string;
  accessToken: string;
  /** The Authorization header: `Bearer <accessToken>`. */
  bearer: string;
}

/**
 * A real provisional account, minted the way a game's server mints one: POST /partner-sdk/token/bot with
 * the game's bot token for its own player id. The game needs the `ProvisionalAccountsEnabled` approval
 * flag. The same `externalId` answers the same account again (a fresh token for it).
 */
export async function provisionalPlayer(
  hearth: TestHearth,
  game: TestGame,
  externalId: string,
): Promise<ProvisionalPlayer> {
  const minted = await hearth.api('/partner-sdk/token/bot', {
    method: 'POST',
    auth: `Bot ${game.botToken}`,
    body: { external_user_id: externalId },
  });
  if (minted.status !== 200) {
    throw new Error(`provisional token refused: ${minted.status} ${await minted.text()}`);
  }
  const { access_token: accessToken } = (await minted.json()) as { access_token: string };
  const bearer = `Bearer ${accessToken}`;
  const me = await hearth.api('/users/@me', { auth: bearer });
  const user = (await me.json()) as { id: string; username: string; provisional?: boolean };
  // A helper that silently handed out a full account would make every "provisional" scenario vacuous.
  if (me.status !== 200 || user.provisional !== true) {
    throw new Error(`not a provisional account: ${me.status} ${JSON.stringify(user)}`);
  }
  return { id: user.id, username: user.username, accessToken, bearer };
}
