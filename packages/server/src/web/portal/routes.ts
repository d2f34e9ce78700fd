import { RATE_LIMITED_MESSAGE } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { activitiesSection } from './activities.js';
import { botSection } from './bot.js';
import { commandsSection } from './commands.js';
import { field, type PortalDeps, portalContext } from './context.js';
import { generalSection } from './general.js';
import { type FieldError, PORTAL_SCRIPT } from './html.js';
import { installationSection } from './installation.js';
import { monetizationSection } from './monetization.js';
import { oauth2Section } from './oauth2.js';
import { renderApplicationsPage, renderForbiddenPage, renderLoginPage } from './pages.js';
import {
  clearCookie,
  LOGIN_COOKIE,
  newLoginToken,
  readCookies,
  SESSION_COOKIE,
  sameToken,
  setCookie,
} from './session.js';
import { socialSdkSection } from './social-sdk.js';
import { teamsSection } from './teams.js';
import { webhooksSection } from './webhooks.js';

export type { PortalDeps } from './context.js';

/** Sign-in attempts per address, as POST /auth/login allows (accounts/routes.ts). */
const LOGIN_LIMIT = { limit: 10, windowMs: 60_000 };

/**
 * The developer portal at /developers: server-rendered forms that post to these routes, each calling the
 * same service the API calls, so the rules and their error messages are the API's own.
 */
export function portalPages(deps: PortalDeps): FastifyPluginAsync {
  const { accounts, applications } = deps;
  return async (app) => {
    const ctx = portalContext(deps);
    const { send, session, guard, attempt, secure } = ctx;

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
      const owned = await applications.listAccessibleBy(signed.user.id);
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
      const owned = await applications.listAccessibleBy(signed.user.id);
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

    generalSection(app, ctx);
    oauth2Section(app, ctx);
    botSection(app, ctx);
    webhooksSection(app, ctx);
    socialSdkSection(app, ctx);
    monetizationSection(app, ctx);
    commandsSection(app, ctx);
    installationSection(app, ctx);
    activitiesSection(app, ctx);
    teamsSection(app, ctx);
  };
}
