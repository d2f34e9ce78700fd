import type { Scope } from '@hearth/protocol';
import type { FastifyRequest } from 'fastify';
import { HearthError } from '../kernel/errors.js';
import type { MaybePromise } from '../kernel/maybe.js';
import { hashToken, type TokenLookup } from '../kernel/secrets.js';
import type { ReadOptions } from '../storage/read-cache.js';

/** Who is calling, resolved once per request from the Authorization header. */
export type Principal =
  | { kind: 'bot'; userId: string; applicationId: string }
  | { kind: 'user'; userId: string /** When the session signed in. */; authTime: number }
  | {
      kind: 'bearer';
      userId: string;
      applicationId: string;
      /** Granted scopes with the umbrella scopes expanded, for `has` checks. */
      scopes: ReadonlySet<Scope>;
      /** The scopes as granted. */
      grantedScopes: readonly Scope[];
      tokenId: string;
      familyId: string;
      expiresAt: number;
      /** The application's flags, read with the token in this request (`AccessGrant.applicationFlags`). */
      applicationFlags?: bigint;
    };

/**
 * One resolver per credential form; each answers undefined for a token it does not know, at once when its
 * answer was kept (`ReadCache`).
 */
export interface Authenticators {
  bot(token: string, options?: AuthenticateOptions): MaybePromise<Principal | undefined>;
  user(token: string, options?: AuthenticateOptions): MaybePromise<Principal | undefined>;
  bearer(token: string, options?: AuthenticateOptions): MaybePromise<Principal | undefined>;
}

export type AuthenticateOptions = ReadOptions & TokenLookup;

/** Which callers a route admits; a bearer token must hold every listed scope (umbrella scopes expanded). */
export interface RouteAuth {
  bot?: boolean;
  user?: boolean;
  bearer?: readonly Scope[];
}

/**
 * `Bot <token>`, `Bearer <token>`, or a bare user session token (PROTOCOL.md §E.1), presented on
 * `connection` (its socket).
 */
export function resolvePrincipal(
  header: string,
  authenticators: Authenticators,
  connection: object | null,
): MaybePromise<Principal | undefined> {
  const space = header.indexOf(' ');
  const scheme = space === -1 ? '' : header.slice(0, space).toLowerCase();
  const token = header.slice(space + 1).trim();
  if (token.length === 0 || token.length > 512) return undefined;
  if (space !== -1 && scheme !== 'bot' && scheme !== 'bearer') return undefined;
  const options = { tokenHash: presentedHash(connection, token) };
  if (scheme === 'bot') return authenticators.bot(token, options);
  if (scheme === 'bearer') return authenticators.bearer(token, options);
  return authenticators.user(token, options);
}

/**
 * The last token each connection presented, and its hash. A keep-alive client presents the same token on
 * every request, and hashing it was the costliest step of authenticating one (about 3 µs of a read's 80
 * here). The token is kept only while the connection that presents it is open, not after.
 */
const presented = new WeakMap<object, { token: string; hash: string }>();

function presentedHash(connection: object | null, token: string): string {
  if (connection === null) return hashToken(token);
  const last = presented.get(connection);
  if (last !== undefined && last.token === token) return last.hash;
  const hash = hashToken(token);
  presented.set(connection, { token, hash });
  return hash;
}

/** Refuses the request unless its principal is admitted by the route's `auth` config. */
export function assertAdmitted(request: FastifyRequest, auth: RouteAuth): void {
  const principal = request.principal;
  if (!principal) throw new HearthError('GeneralUnauthorized');
  switch (principal.kind) {
    case 'bot':
      if (!auth.bot) throw new HearthError('BotsCannotUseEndpoint');
      return;
    case 'user':
      if (!auth.user) throw new HearthError(auth.bot ? 'OnlyBotsCanUseEndpoint' : 'GeneralUnauthorized');
      return;
    case 'bearer':
      if (!auth.bearer) throw new HearthError('GeneralUnauthorized');
      if (!auth.bearer.every((scope) => principal.scopes.has(scope)))
        throw new HearthError('MissingOAuth2Scope');
      return;
  }
}
