import { randomBytes } from 'node:crypto';
import {
  ApplicationFlags,
  ExternalAuthTypes,
  type JSONErrorName,
  Limits,
  RATE_LIMITED_MESSAGE,
  Scopes,
} from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { IdentityProvidersService } from '../../domains/accounts/providers.js';
import type { AccountsService, User } from '../../domains/accounts/service.js';
import {
  type Application,
  type ApplicationsService,
  eligibleScopes,
} from '../../domains/applications/service.js';
import type { EntitlementsService } from '../../domains/entitlements/service.js';
import type { WebhooksService } from '../../domains/webhooks/service.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { RateLimitStore } from '../../ratelimit/store.js';
import { type FieldError, fieldErrors, PORTAL_SCRIPT } from './html.js';
import {
  type IntentSwitch,
  type PageUser,
  renderApplicationsPage,
  renderBotPage,
  renderForbiddenPage,
  renderGeneralPage,
  renderLoginPage,
  renderMonetizationPage,
  renderNotFoundPage,
  renderOAuth2Page,
  renderSocialSdkPage,
  renderWebhooksPage,
  type UrlGenerator,
} from './pages.js';
import {
  clearCookie,
  csrfTokenFor,
  LOGIN_COOKIE,
  newLoginToken,
  readCookies,
  SESSION_COOKIE,
  sameToken,
  setCookie,
} from './session.js';

export interface PortalDeps {
  accounts: AccountsService;
  applications: ApplicationsService;
  webhooks: WebhooksService;
  identityProviders: IdentityProvidersService;
  entitlements: EntitlementsService;
  counters: RateLimitStore;
  clock: Clock;
  /** The server's public URL: authorize URLs are built on it, and cookies are Secure when it is https. */
  publicUrl: () => string;
}

/** Sign-in attempts per address, as POST /auth/login allows (accounts/routes.ts). */
const LOGIN_LIMIT = { limit: 10, windowMs: 60_000 };
const SNOWFLAKE = /^\d{1,20}$/;
const REVIEW_USERS = Limits.privilegedIntentReviewUsers.toLocaleString('en-US');

/** The privileged intents a developer may switch on (the limited flags; the full ones an operator grants). */
const INTENTS: ReadonlyArray<{ name: string; field: string; limited: bigint; approved: bigint }> = [
  {
    name: 'Presence intent',
    field: 'presence',
    limited: ApplicationFlags.GatewayPresenceLimited,
    approved: ApplicationFlags.GatewayPresence,
  },
  {
    name: 'Server members intent',
    field: 'guild_members',
    limited: ApplicationFlags.GatewayGuildMembersLimited,
    approved: ApplicationFlags.GatewayGuildMembers,
  },
  {
    name: 'Message content intent',
    field: 'message_content',
    limited: ApplicationFlags.GatewayMessageContentLimited,
    approved: ApplicationFlags.GatewayMessageContent,
  },
];

/**
 * The issuer checks of the seed (Authentication 6) in words: the API's message names the failure, these
 * say what to fix.
 */
const ISSUER_HELP: Partial<Record<JSONErrorName, string>> = {
  ProvisionalOIDCConfigurationNotFound:
    'Hearth could not read a valid discovery document at ISSUER/.well-known/openid-configuration. The issuer must be an https URL with a public host name (no IP address, no credentials, no query or fragment); redirects are not followed; the document must name a jwks_uri and a supported ID-token signing algorithm.',
  ProvisionalIssuerMismatch:
    'The discovery document names another issuer: the issuer URL must be exactly its "issuer" field.',
  ProvisionalOIDCJWKSNotFound:
    "The key set at the discovery document's jwks_uri could not be fetched or holds no keys; it must be https on a public host, and redirects are not followed.",
};

/** Provider types a developer may configure (the bot-issued token type is the platform's own). */
const PROVIDER_TYPES = Object.values(ExternalAuthTypes).filter(
  (t) => t !== ExternalAuthTypes.DiscordBotIssuedAccessToken,
);

type Body = Record<string, unknown>;

/** One value of a form field; anything but a single string (a repeated key, JSON) is absent. */
function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const value = (body as Body)[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of a repeatable form field (checkboxes). */
function fieldList(body: unknown, name: string): string[] {
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

interface Signed {
  user: User;
  token: string;
  page: PageUser;
}

/**
 * The developer portal at /developers: server-rendered forms that post to these routes, each calling the
 * same service the API calls, so the rules and their error messages are the API's own.
 */
export function portalPages(deps: PortalDeps): FastifyPluginAsync {
  const { accounts, applications, webhooks } = deps;
  return async (app) => {
    const secure = (request: FastifyRequest) =>
      request.protocol === 'https' || deps.publicUrl().startsWith('https:');
    const nonce = () => randomBytes(16).toString('base64');
    const send = (reply: FastifyReply, status: number, page: (nonce: string) => string) => {
      const n = nonce();
      return pageHeaders(reply.code(status), n).send(page(n));
    };

    /** The signed-in user of the session cookie, or undefined. */
    const session = async (request: FastifyRequest): Promise<Signed | undefined> => {
      const token = readCookies(request).get(SESSION_COOKIE);
      if (!token) return undefined;
      const found = await accounts.authenticateSession(token);
      if (!found) return undefined;
      const name = found.user.globalName ?? found.user.username;
      return { user: found.user, token, page: { name, csrf: csrfTokenFor(token) } };
    };

    const loginPage = (
      reply: FastifyReply,
      request: FastifyRequest,
      status: number,
      errors?: FieldError[],
    ) => {
      const loginToken = newLoginToken();
      setCookie(reply, LOGIN_COOKIE, loginToken, secure(request));
      const login = field(request.body, 'login');
      return send(reply, status, (n) =>
        renderLoginPage({
          nonce: n,
          loginToken,
          ...(login === undefined ? {} : { login }),
          ...(errors ? { errors } : {}),
        }),
      );
    };

    /**
     * Every POST of a signed-in user: the session, then its form token, then (with an id) the application,
     * which must be the user's own. Answers undefined after replying itself.
     */
    const guard = async (
      request: FastifyRequest,
      reply: FastifyReply,
    ): Promise<{ signed: Signed; application: Application | undefined } | undefined> => {
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
      const application = SNOWFLAKE.test(id) ? await applications.getApplication(id) : undefined;
      if (!application || application.ownerId !== signed.user.id) {
        await send(reply, 404, (n) => renderNotFoundPage(n, signed.page));
        return undefined;
      }
      return { signed, application };
    };

    /** Runs a form's action; a refusal of the service shows the API's error messages on the form again. */
    const attempt = async (
      run: () => Promise<void>,
    ): Promise<{ status: number; errors: FieldError[] } | undefined> => {
      try {
        await run();
        return undefined;
      } catch (error) {
        if (!(error instanceof HearthError) || error.status >= 500) throw error;
        const errors = fieldErrors(error.message, error.errors);
        const help = ISSUER_HELP[error.error];
        return {
          status: error.status,
          errors: help ? [...errors, { field: 'issuer', message: help }] : errors,
        };
      }
    };

    const generatorOf = (application: Application, query: unknown): UrlGenerator => {
      const eligible = eligibleScopes(application);
      const scopes = fieldList(query, 'scope').filter((s) => eligible.includes(s));
      const redirect = field(query, 'redirect_uri') ?? '';
      const redirectUri = application.redirectUris.includes(redirect) ? redirect : '';
      const type = field(query, 'integration_type');
      const integrationType = type === '0' || type === '1' ? type : '';
      let url: string | undefined;
      if (scopes.length > 0) {
        const params = new URLSearchParams({ client_id: application.id });
        // A bot-only install needs no code and no redirect (OAuth2, Bot Authorization Flow).
        const botOnly = scopes.every((s) => s === Scopes.Bot || s === Scopes.ApplicationsCommands);
        if (!botOnly || redirectUri) params.set('response_type', 'code');
        if (redirectUri) params.set('redirect_uri', redirectUri);
        if (integrationType) params.set('integration_type', integrationType);
        params.set('scope', scopes.join(' '));
        url = `${deps.publicUrl()}/oauth2/authorize?${params.toString().replace(/\+/g, '%20')}`;
      }
      return { scopes, redirectUri, integrationType, url };
    };

    const intentsOf = (application: Application): IntentSwitch[] =>
      INTENTS.map((intent) => ({
        name: intent.name,
        field: intent.field,
        enabled: (application.flags & intent.limited) !== 0n,
        approved: (application.flags & intent.approved) !== 0n,
      }));

    // ---- Pages ----

    app.get('/developers/portal.js', async (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .headers({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
        .send(PORTAL_SCRIPT),
    );

    app.get('/developers', async (request, reply) => {
      const signed = await session(request);
      if (!signed) return loginPage(reply, request, 200);
      const owned = await applications.listOwnedBy(signed.user.id);
      return send(reply, 200, (n) =>
        renderApplicationsPage({ nonce: n, user: signed.page, applications: owned }),
      );
    });

    app.post('/developers/login', async (request, reply) => {
      const submitted = field(request.body, 'csrf');
      if (!sameToken(submitted, readCookies(request).get(LOGIN_COOKIE))) {
        return send(reply, 403, (n) =>
          renderForbiddenPage(
            n,
            'The sign-in form has expired or did not come from this portal. Reload the page and try again.',
          ),
        );
      }
      const spent = await deps.counters.hit(
        `portal-login:${request.ip}`,
        LOGIN_LIMIT.windowMs,
        deps.clock.now(),
      );
      if (spent.count > LOGIN_LIMIT.limit) {
        return loginPage(reply, request, 429, [{ field: '', message: RATE_LIMITED_MESSAGE }]);
      }
      let token: string | undefined;
      const refused = await attempt(async () => {
        ({ token } = await accounts.login({
          login: field(request.body, 'login'),
          password: field(request.body, 'password'),
        }));
      });
      if (refused || token === undefined)
        return loginPage(reply, request, refused?.status ?? 400, refused?.errors);
      clearCookie(reply, LOGIN_COOKIE, secure(request));
      setCookie(reply, SESSION_COOKIE, token, secure(request));
      return reply.redirect('/developers', 303);
    });

    app.post('/developers/logout', async (request, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded) return reply;
      await accounts.endSession(guarded.signed.token);
      clearCookie(reply, SESSION_COOKIE, secure(request));
      return reply.redirect('/developers', 303);
    });

    app.post('/developers/applications', async (request, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded) return reply;
      const { signed } = guarded;
      const name = field(request.body, 'name');
      let id = '';
      const refused = await attempt(async () => {
        const created = await applications.createApplication({ name, owner_id: signed.user.id });
        id = created.application.id;
      });
      if (!refused) return reply.redirect(`/developers/applications/${id}`, 303);
      const owned = await applications.listOwnedBy(signed.user.id);
      return send(reply, refused.status, (n) =>
        renderApplicationsPage({
          nonce: n,
          user: signed.page,
          applications: owned,
          errors: refused.errors,
          ...(name === undefined ? {} : { name }),
        }),
      );
    });

    type AppRequest = FastifyRequest<{ Params: { application_id: string } }>;

    const general =
      (
        application: Application,
        signed: Signed,
        extra: { errors?: FieldError[]; notice?: string; description?: string; tags?: string } = {},
      ) =>
      (n: string) =>
        renderGeneralPage({ nonce: n, user: signed.page, application, ...extra });

    app.get('/developers/applications/:application_id', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const saved = field(request.query, 'saved') !== undefined;
      return send(
        reply,
        200,
        general(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
      );
    });

    app.post('/developers/applications/:application_id/general', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const { application, signed } = guarded;
      const description = field(request.body, 'description') ?? '';
      const tagsText = field(request.body, 'tags') ?? '';
      const tags = tagsText
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t.length > 0);
      const refused = await attempt(async () => {
        await applications.modifyApplication(application.id, { description, tags });
      });
      if (!refused) return reply.redirect(`/developers/applications/${application.id}?saved=1`, 303);
      return send(
        reply,
        refused.status,
        general(application, signed, { errors: refused.errors, description, tags: tagsText }),
      );
    });

    // ---- OAuth2 ----

    const oauth2 =
      (
        request: FastifyRequest,
        application: Application,
        signed: Signed,
        extra: { errors?: FieldError[]; notice?: string; newSecret?: string; redirectUri?: string } = {},
      ) =>
      (n: string) =>
        renderOAuth2Page({
          nonce: n,
          user: signed.page,
          application,
          eligibleScopes: eligibleScopes(application),
          generator: generatorOf(application, request.method === 'GET' ? request.query : undefined),
          ...extra,
        });

    app.get('/developers/applications/:application_id/oauth2', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const saved = field(request.query, 'saved') !== undefined;
      return send(
        reply,
        200,
        oauth2(request, guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
      );
    });

    app.post(
      '/developers/applications/:application_id/oauth2/reset-secret',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application, signed } = guarded;
        const newSecret = await applications.resetClientSecret(application.id);
        // Shown in this response only: it is not stored, and no later page can render it.
        return send(
          reply,
          200,
          oauth2(request, application, signed, { newSecret, notice: 'The client secret was reset.' }),
        );
      },
    );

    app.post(
      '/developers/applications/:application_id/oauth2/redirect-uris',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application, signed } = guarded;
        const added = field(request.body, 'redirect_uri');
        const removed = field(request.body, 'remove');
        const uris = [...application.redirectUris];
        if (added !== undefined) uris.push(added.trim());
        else if (removed !== undefined && /^\d+$/.test(removed)) uris.splice(Number(removed), 1);
        const refused = await attempt(async () => {
          await applications.adminUpdate(application.id, { redirect_uris: uris });
        });
        if (!refused) return reply.redirect(`/developers/applications/${application.id}/oauth2?saved=1`, 303);
        return send(
          reply,
          refused.status,
          oauth2(request, application, signed, {
            errors: refused.errors,
            ...(added === undefined ? {} : { redirectUri: added }),
          }),
        );
      },
    );

    app.post(
      '/developers/applications/:application_id/oauth2/public-client',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application } = guarded;
        await applications.adminUpdate(application.id, {
          public_client: field(request.body, 'public_client') === 'true',
        });
        return reply.redirect(`/developers/applications/${application.id}/oauth2?saved=1`, 303);
      },
    );

    // ---- Bot ----

    const bot = async (
      application: Application,
      signed: Signed,
      extra: { errors?: FieldError[]; notice?: string; newToken?: string } = {},
    ) => {
      const botUser = await accounts.getUser(application.botUserId);
      const reviewed = await applications.privilegedIntentsReviewed(application);
      return (n: string) =>
        renderBotPage({
          nonce: n,
          user: signed.page,
          application,
          botName: botUser?.username ?? application.name,
          intents: intentsOf(application),
          reviewed,
          ...extra,
        });
    };

    app.get('/developers/applications/:application_id/bot', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const saved = field(request.query, 'saved') !== undefined;
      return send(
        reply,
        200,
        await bot(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
      );
    });

    app.post(
      '/developers/applications/:application_id/bot/reset-token',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const newToken = await applications.resetBotToken(guarded.application.id);
        return send(
          reply,
          200,
          await bot(guarded.application, guarded.signed, { newToken, notice: 'The bot token was reset.' }),
        );
      },
    );

    app.post('/developers/applications/:application_id/bot/intents', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const { application, signed } = guarded;
      const wanted = INTENTS.filter((intent) => field(request.body, intent.field) === 'true');
      // Seed, Limits: past 10,000 users a privileged intent needs an approved review; none is turned on without.
      const turnedOn = wanted.filter((intent) => (application.flags & intent.limited) === 0n);
      if (turnedOn.length > 0 && !(await applications.privilegedIntentsReviewed(application))) {
        const errors = turnedOn.map((intent) => ({
          field: intent.field,
          message: `${intent.name} cannot be turned on: your application reaches ${REVIEW_USERS} users or more and its privileged intents review is not approved.`,
        }));
        return send(reply, 403, await bot(application, signed, { errors }));
      }
      const flags = wanted.reduce((all, intent) => all | intent.limited, 0n);
      const refused = await attempt(async () => {
        await applications.modifyApplication(application.id, { flags: Number(flags) });
      });
      if (!refused) return reply.redirect(`/developers/applications/${application.id}/bot?saved=1`, 303);
      return send(reply, refused.status, await bot(application, signed, { errors: refused.errors }));
    });

    // ---- Webhooks ----

    const webhooksPage = async (
      application: Application,
      signed: Signed,
      extra: { errors?: FieldError[]; notice?: string; url?: string } = {},
    ) => {
      const [settings, log] = await Promise.all([
        webhooks.settings(application.id),
        webhooks.log(application.id),
      ]);
      return (n: string) =>
        renderWebhooksPage({ nonce: n, user: signed.page, application, settings, log, ...extra });
    };

    app.get('/developers/applications/:application_id/webhooks', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const notice =
        field(request.query, 'saved') !== undefined
          ? 'Saved.'
          : field(request.query, 'replayed') !== undefined
            ? 'The event was queued again.'
            : undefined;
      return send(
        reply,
        200,
        await webhooksPage(guarded.application, guarded.signed, notice ? { notice } : {}),
      );
    });

    app.post('/developers/applications/:application_id/webhooks', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const { application, signed } = guarded;
      const url = (field(request.body, 'url') ?? '').trim();
      const enabled = field(request.body, 'enabled') === 'true';
      const refused = await attempt(async () => {
        await applications.modifyApplication(application.id, {
          event_webhooks_url: url === '' ? null : url,
          event_webhooks_status: enabled ? 2 : 1,
          event_webhooks_types: [...new Set(fieldList(request.body, 'event_types'))],
        });
      });
      if (!refused) return reply.redirect(`/developers/applications/${application.id}/webhooks?saved=1`, 303);
      return send(
        reply,
        refused.status,
        await webhooksPage(application, signed, { errors: refused.errors, url }),
      );
    });

    app.post(
      '/developers/applications/:application_id/webhooks/replay',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application, signed } = guarded;
        const eventId = field(request.body, 'event_id') ?? '';
        const queued = SNOWFLAKE.test(eventId) ? await webhooks.replay(application.id, eventId) : 0;
        if (queued > 0)
          return reply.redirect(`/developers/applications/${application.id}/webhooks?replayed=1`, 303);
        const errors = [
          {
            field: 'event_id',
            message:
              'This event cannot be replayed: it is not in the delivery log, or it is still waiting for delivery.',
          },
        ];
        return send(reply, 404, await webhooksPage(application, signed, { errors }));
      },
    );

    // ---- Social SDK ----

    const socialSdk = async (
      application: Application,
      signed: Signed,
      extra: { errors?: FieldError[]; notice?: string; values?: Record<string, string> } = {},
    ) => {
      const providers = await deps.identityProviders.list(application.id);
      return (n: string) =>
        renderSocialSdkPage({
          nonce: n,
          user: signed.page,
          application,
          provisionalAccounts: (application.flags & ApplicationFlags.ProvisionalAccountsEnabled) !== 0n,
          communicationApproved: (application.flags & ApplicationFlags.CommunicationFeaturesApproved) !== 0n,
          providers,
          providerTypes: PROVIDER_TYPES,
          ...extra,
        });
    };

    app.get('/developers/applications/:application_id/social-sdk', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const saved = field(request.query, 'saved') !== undefined;
      return send(
        reply,
        200,
        await socialSdk(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
      );
    });

    app.post(
      '/developers/applications/:application_id/social-sdk/identity-providers',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application, signed } = guarded;
        // Empty inputs are absent fields, as a JSON body would leave them out.
        const values: Record<string, string> = {};
        for (const name of ['type', 'issuer', 'client_id', 'verification_url']) {
          const value = field(request.body, name)?.trim();
          if (value) values[name] = value;
        }
        const refused = await attempt(async () => {
          await deps.identityProviders.create(application.id, values);
        });
        if (!refused)
          return reply.redirect(`/developers/applications/${application.id}/social-sdk?saved=1`, 303);
        const errors = refused.errors.map((e) =>
          e.message.includes('ISSUER')
            ? { ...e, message: e.message.replace('ISSUER', values['issuer'] ?? 'the issuer') }
            : e,
        );
        return send(reply, refused.status, await socialSdk(application, signed, { errors, values }));
      },
    );

    app.post(
      '/developers/applications/:application_id/social-sdk/identity-providers/remove',
      async (request: AppRequest, reply) => {
        const guarded = await guard(request, reply);
        if (!guarded?.application) return reply;
        const { application, signed } = guarded;
        const providerId = field(request.body, 'provider_id') ?? '';
        const refused = await attempt(async () => {
          if (!SNOWFLAKE.test(providerId)) throw new HearthError('GeneralNotFound');
          await deps.identityProviders.remove(application.id, providerId);
        });
        if (!refused)
          return reply.redirect(`/developers/applications/${application.id}/social-sdk?saved=1`, 303);
        return send(reply, refused.status, await socialSdk(application, signed, { errors: refused.errors }));
      },
    );

    // ---- SKUs and test entitlements (PROTOCOL.md §I), as the application's bot would manage them ----

    const monetization = async (
      application: Application,
      signed: Signed,
      extra: { errors?: FieldError[]; notice?: string; values?: Record<string, string> } = {},
    ) => {
      const caller = { kind: 'bot' as const, applicationId: application.id };
      const [skus, entitlements] = await Promise.all([
        deps.entitlements.listSkus(caller, application.id),
        deps.entitlements.listEntitlements(caller, application.id, {}),
      ]);
      return (n: string) =>
        renderMonetizationPage({ nonce: n, user: signed.page, application, skus, entitlements, ...extra });
    };

    app.get('/developers/applications/:application_id/monetization', async (request: AppRequest, reply) => {
      const guarded = await guard(request, reply);
      if (!guarded?.application) return reply;
      const saved = field(request.query, 'saved') !== undefined;
      return send(
        reply,
        200,
        await monetization(guarded.application, guarded.signed, saved ? { notice: 'Saved.' } : {}),
      );
    });

    const monetizationForm = (
      path: string,
      fields: readonly string[],
      run: (application: Application, values: Record<string, string>) => Promise<unknown>,
    ) =>
      app.post(
        `/developers/applications/:application_id/monetization/${path}`,
        async (request: AppRequest, reply) => {
          const guarded = await guard(request, reply);
          if (!guarded?.application) return reply;
          const { application, signed } = guarded;
          const values: Record<string, string> = {};
          for (const name of fields) {
            const value = field(request.body, name)?.trim();
            if (value !== undefined) values[name] = value;
          }
          const refused = await attempt(async () => {
            await run(application, values);
          });
          if (!refused)
            return reply.redirect(`/developers/applications/${application.id}/monetization?saved=1`, 303);
          return send(
            reply,
            refused.status,
            await monetization(application, signed, { errors: refused.errors, values }),
          );
        },
      );

    monetizationForm('skus', ['name', 'type'], (application, values) =>
      deps.entitlements.createSku(application.id, values),
    );
    monetizationForm('entitlements', ['sku_id', 'owner_id', 'owner_type'], (application, values) =>
      deps.entitlements.createTestEntitlement(
        { kind: 'bot', applicationId: application.id },
        application.id,
        {
          ...values,
          // The form sends text; the API's body has the number (1 guild, 2 user).
          ...(values['owner_type'] !== undefined && /^\d$/.test(values['owner_type'])
            ? { owner_type: Number(values['owner_type']) }
            : {}),
        },
      ),
    );
    monetizationForm('entitlements/delete', ['entitlement_id'], async (application, values) => {
      const id = values['entitlement_id'] ?? '';
      if (!SNOWFLAKE.test(id)) throw new HearthError('UnknownEntitlement');
      await deps.entitlements.deleteTestEntitlement(
        { kind: 'bot', applicationId: application.id },
        application.id,
        id,
      );
    });
  };
}
