import type { Scope } from '@hearth/protocol';
import type { FastifyRequest } from 'fastify';
import { HearthError } from '../kernel/errors.js';
import type { MaybePromise } from '../kernel/maybe.js';
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
  bot(token: string, options?: ReadOptions): MaybePromise<Principal | undefined>;
  user(token: string, options?: ReadOptions): MaybePromise<Principal | undefined>;
  bearer(token: string, options?: ReadOptions): MaybePromise<Principal | undefined>;
}

/** Which callers a route admits; a bearer token must hold every listed scope (umbrella scopes expanded). */
export interface RouteAuth {
  bot?: boolean;
  user?: boolean;
  bearer?: readonly Scope[];
}

/** `Bot <token>`, `Bearer <token>`, or a bare user session token (PROTOCOL.md §E.1). */
export function resolvePrincipal(
  header: string,
  authenticators: Authenticators,
): MaybePromise<Principal | undefined> {
  const space = header.indexOf(' ');
  const scheme = space === -1 ? '' : header.slice(0, space).toLowerCase();
  const token = header.slice(space + 1).trim();
  if (token.length === 0 || token.length > 512) return undefined;
  if (scheme === 'bot') return authenticators.bot(token);
  if (scheme === 'bearer') return authenticators.bearer(token);
  if (space === -1) return authenticators.user(header.trim());
  return undefined;
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
