import { randomBytes } from 'node:crypto';
import type { JSONErrorName } from '@hearth/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IdentityProvidersService } from '../../domains/accounts/providers.js';
import type { AccountsService, User } from '../../domains/accounts/service.js';
import type { ActivitiesService } from '../../domains/applications/activities.js';
import type { Application, ApplicationsService } from '../../domains/applications/service.js';
import { roleAllows, type TeamsService } from '../../domains/applications/teams.js';
import type { CommandsService } from '../../domains/commands/service.js';
import type { EntitlementsService } from '../../domains/entitlements/service.js';
import type { WebhooksService } from '../../domains/webhooks/service.js';
import type { FileUploads } from '../../http/multipart.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { RateLimitStore } from '../../ratelimit/store.js';
import { type FieldError, fieldErrors } from './html.js';
import { type PageUser, renderForbiddenPage, renderNotFoundPage } from './pages.js';
import { csrfTokenFor, readCookies, SESSION_COOKIE, sameToken } from './session.js';

/** The services the portal calls: the same ones the API's routes call. */
export interface PortalDeps {
  accounts: AccountsService;
  applications: ApplicationsService;
  webhooks: WebhooksService;
  identityProviders: IdentityProvidersService;
  entitlements: EntitlementsService;
  /** Read-only: the Commands section lists an application's global commands. */
  commands: CommandsService;
  teams: TeamsService;
  activities: ActivitiesService;
  /** Where an uploaded icon is held while its request runs (the attachments' uploads); none: no uploads. */
  uploads: FileUploads | undefined;
  counters: RateLimitStore;
  clock: Clock;
  /** The server's public URL: authorize URLs are built on it, and cookies are Secure when it is https. */
  publicUrl: () => string;
}

export const SNOWFLAKE = /^\d{1,20}$/;

/** A signed-in user: the session token and what every page shows of them. */
export interface Signed {
  user: User;
  token: string;
  page: PageUser;
}

export type AppRequest = FastifyRequest<{ Params: { application_id: string } }>;

/** A refused form: the status and the API's messages, and which error it was. */
export interface Refusal {
  status: number;
  errors: FieldError[];
  error: JSONErrorName;
}

/** What every section of the portal is built on. */
export interface PortalContext {
  deps: PortalDeps;
  /** Cookies get `Secure` when the portal is reached over https or the public URL is https. */
  secure(request: FastifyRequest): boolean;
  /** Replies with a page, under the portal's headers and a fresh style nonce. */
  send(reply: FastifyReply, status: number, page: (nonce: string) => string): FastifyReply;
  /** The signed-in user of the session cookie, or undefined. */
  session(request: FastifyRequest): Promise<Signed | undefined>;
  /**
   * The session, then (on POST) its form token, then (with an id) the application, which must be the user's
   * own. Answers undefined after replying itself.
   */
  guard(
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<{ signed: Signed; application: Application | undefined } | undefined>;
  /** Runs a form's action; a refusal of the service answers the API's messages for the form. */
  attempt(run: () => Promise<void>): Promise<Refusal | undefined>;
}

type Body = Record<string, unknown>;

/** One value of a form field; anything but a single string (a repeated key, JSON) is absent. */
export function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const value = (body as Body)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a repeatable form field (checkboxes). */
export function fieldList(body: unknown, name: string): string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return [];
  const value = (body as Body)[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Headers of every portal page: nothing framed, nothing cached (secrets are shown once), no inline script. */
function pageHeaders(reply: FastifyReply, nonce: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').headers({
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
}

export function portalContext(deps: PortalDeps): PortalContext {
  const send = (reply: FastifyReply, status: number, page: (nonce: string) => string) => {
    const nonce = randomBytes(16).toString('base64');
    return pageHeaders(reply.code(status), nonce).send(page(nonce));
  };
  const session = async (request: FastifyRequest): Promise<Signed | undefined> => {
    const token = readCookies(request).get(SESSION_COOKIE);
    if (!token) return undefined;
    const found = await deps.accounts.authenticateSession(token);
    if (!found) return undefined;
    const name = found.user.globalName ?? found.user.username;
    return { user: found.user, token, page: { name, csrf: csrfTokenFor(token) } };
  };
  return {
    deps,
    secure: (request) => request.protocol === 'https' || deps.publicUrl().startsWith('https:'),
    send,
    session,
    async guard(request, reply) {
      const signed = await session(request);
      if (!signed) {
        await reply.redirect('/developers', 303);
        return undefined;
      }
      if (request.method === 'POST' && !sameToken(field(request.body, 'csrf'), signed.page.csrf)) {
        await send(reply, 403, (n) =>
          renderForbiddenPage(
            n,
            'The form has expired or did not come from this portal. Reload the page and try again.',
          ),
        );
        return undefined;
      }
      const id = (request.params as { application_id?: string } | undefined)?.application_id;
      if (id === undefined) return { signed, application: undefined };
      const application = SNOWFLAKE.test(id) ? await deps.applications.getApplication(id) : undefined;
      // Its owner, or a member of the team that owns it; a read-only member sees, and may change nothing.
      const role = application && (await deps.applications.roleOn(application, signed.user.id));
      if (!application || !role) {
        await send(reply, 404, (n) => renderNotFoundPage(n, signed.page));
        return undefined;
      }
      if (request.method === 'POST' && !roleAllows(role, 'configure')) {
        await send(reply, 403, (n) =>
          renderForbiddenPage(
            n,
            'Your role in the team that owns this application lets you view it, not change it.',
          ),
        );
        return undefined;
      }
      return { signed, application };
    },
    async attempt(run) {
      try {
        await run();
        return undefined;
      } catch (error) {
        if (!(error instanceof HearthError) || error.status >= 500) throw error;
        return { status: error.status, errors: fieldErrors(error.message, error.errors), error: error.error };
      }
    },
  };
}
