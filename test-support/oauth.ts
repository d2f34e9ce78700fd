import { createHash, randomBytes } from 'node:crypto';
import type { TestHearth } from './hearth.js';

let counter = 0;

/** A player with a session token. */
export async function createPlayer(hearth: TestHearth, name = `player${++counter}`) {
  return hearth.services.accounts.createUser({
    username: name,
    email: `${name}@example.com`,
    password: 'a long password',
  });
}

export interface TestGame {
  id: string;
  clientSecret: string;
  botToken: string;
  botUserId: string;
  /** The developer account that owns the application (created with it). */
  ownerId: string;
}

/** An application with the given redirect URIs (default: the loopback callback). */
export async function createGame(
  hearth: TestHearth,
  options: { redirectUris?: string[]; publicClient?: boolean; name?: string } = {},
): Promise<TestGame> {
  const created = await hearth.services.applications.createApplication({
    name: options.name ?? `Game ${++counter}`,
    redirect_uris: options.redirectUris ?? ['http://127.0.0.1/callback'],
    public_client: options.publicClient ?? false,
  });
  return {
    id: created.application.id,
    clientSecret: created.clientSecret,
    botToken: created.botToken,
    botUserId: created.botUser.id,
    ownerId: created.application.ownerId ?? '',
  };
}

/** A fresh RFC 7636 verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * The consent call of the authorize page: POST /api/v10/oauth2/authorize with the player's session token.
 * Answers the raw response; `location()` reads the redirect it gives.
 */
export function consent(
  hearth: TestHearth,
  playerToken: string,
  params: Record<string, string>,
  authorize = true,
): Promise<Response> {
  return hearth.api(`/oauth2/authorize?${new URLSearchParams(params)}`, {
    method: 'POST',
    auth: playerToken,
    body: { authorize },
  });
}

/** Consents and answers the redirect URL (throws if the answer is not a redirect location). */
export async function consentLocation(
  hearth: TestHearth,
  playerToken: string,
  params: Record<string, string>,
  authorize = true,
): Promise<URL> {
  const response = await consent(hearth, playerToken, params, authorize);
  const body = (await response.json()) as { location?: string };
  if (response.status !== 200 || !body.location) {
    throw new Error(`expected a location, got ${response.status} ${JSON.stringify(body)}`);
  }
  return new URL(body.location);
}

/** A code for `game` granted by `playerToken`, with optional PKCE. */
export async function authorizationCode(
  hearth: TestHearth,
  game: TestGame,
  playerToken: string,
  extra: Record<string, string> = {},
): Promise<string> {
  const location = await consentLocation(hearth, playerToken, {
    client_id: game.id,
    response_type: 'code',
    scope: 'identify',
    redirect_uri: 'http://127.0.0.1/callback',
    ...extra,
  });
  const code = location.searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}

/** POST /api/v10/oauth2/token (or /revoke) with a form body and optional Basic client authentication. */
export function tokenRequest(
  hearth: TestHearth,
  form: Record<string, string>,
  options: { basic?: [string, string]; path?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (options.basic) {
    headers['authorization'] =
      `Basic ${Buffer.from(`${options.basic[0]}:${options.basic[1]}`).toString('base64')}`;
  }
  return hearth.api(options.path ?? '/oauth2/token', {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  });
}

export interface Tokens {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token?: string;
  scope: string;
  id_token?: string;
}

/** The whole code flow for a confidential client: answers the token response. */
export async function grantTokens(
  hearth: TestHearth,
  game: TestGame,
  playerToken: string,
  scope = 'identify',
  extra: Record<string, string> = {},
): Promise<Tokens> {
  const code = await authorizationCode(hearth, game, playerToken, { scope, ...extra });
  const response = await tokenRequest(hearth, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: 'http://127.0.0.1/callback',
    client_id: game.id,
    client_secret: game.clientSecret,
  });
  if (response.status !== 200)
    throw new Error(`token exchange failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as Tokens;
}
