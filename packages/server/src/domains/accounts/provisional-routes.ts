import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { HearthError } from '../../kernel/errors.js';
import type { AccountLinkService } from './link.js';
import type { IdentityProvidersService } from './providers.js';
import {
  BanRequest,
  BotTokenRequest,
  BotUnmergeRequest,
  ExternalTokenRequest,
  IdentityProviderObject,
  ModifyCurrentUserAccount,
  ModifyIdentityProvider,
  NewIdentityProvider,
  ProvisionalTokenResponse,
} from './provisional-schemas.js';
import { UserObject } from './schemas.js';
import { toUserObject } from './service.js';

export interface ProvisionalRoutesDeps {
  link: AccountLinkService;
  providers: IdentityProvidersService;
  /** The operator secret of the admin API; undefined: the admin API refuses everyone. */
  adminToken: string | undefined;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Provisional accounts (PROTOCOL.md §B.2–B.3), identity providers per application, and the admin ban API. */
export function provisionalRoutes(deps: ProvisionalRoutesDeps): FastifyPluginAsync {
  const { link, providers } = deps;
  return async (app) => {
    const bot = { auth: { bot: true } };

    app.post(
      '/partner-sdk/token/bot',
      { config: bot, schema: { body: BotTokenRequest, response: { 200: ProvisionalTokenResponse } } },
      async (request, reply) =>
        reply.headers(NO_STORE).send(await link.botToken(botApplication(request), request.body)),
    );

    app.post(
      '/partner-sdk/token',
      { schema: { body: ExternalTokenRequest, response: { 200: ProvisionalTokenResponse } } },
      async (request, reply) => reply.headers(NO_STORE).send(await link.externalToken(request.body)),
    );

    app.post(
      '/partner-sdk/provisional-accounts/unmerge/bot',
      { config: bot, schema: { body: BotUnmergeRequest } },
      async (request, reply) => {
        await link.unmergeBot(botApplication(request), request.body);
        return reply.code(204).send();
      },
    );

    app.post(
      '/partner-sdk/provisional-accounts/unmerge',
      { schema: { body: ExternalTokenRequest } },
      async (request, reply) => {
        await link.unmergeExternal(request.body);
        return reply.code(204).send();
      },
    );

    // UDOC "Modify Current User Account": a game names its provisional player.
    app.patch(
      '/users/@me/account',
      {
        config: { auth: { bearer: [] } },
        schema: { body: ModifyCurrentUserAccount, response: { 200: UserObject } },
      },
      async (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
        return toUserObject(await link.updateDisplayName(principal, request.body));
      },
    );

    // ---- Identity providers of an application (its bot token; `@me` or its own id) ----

    const providerOf = (request: FastifyRequest) => {
      const applicationId = botApplication(request);
      const { application_id: requested } = request.params as { application_id: string };
      if (requested !== '@me' && requested !== applicationId) throw new HearthError('UnknownApplication');
      return applicationId;
    };
    const providersPath = '/applications/:application_id/identity-providers';

    app.get(providersPath, { config: bot }, async (request) => providers.list(providerOf(request)));

    app.post(
      providersPath,
      { config: bot, schema: { body: NewIdentityProvider, response: { 201: IdentityProviderObject } } },
      async (request, reply) =>
        reply.code(201).send(await providers.create(providerOf(request), request.body)),
    );

    app.patch(
      `${providersPath}/:provider_id`,
      { config: bot, schema: { body: ModifyIdentityProvider, response: { 200: IdentityProviderObject } } },
      async (request) => {
        const { provider_id } = request.params as { provider_id: string };
        return providers.modify(providerOf(request), provider_id, request.body);
      },
    );

    app.delete(`${providersPath}/:provider_id`, { config: bot }, async (request, reply) => {
      const { provider_id } = request.params as { provider_id: string };
      await providers.remove(providerOf(request), provider_id);
      return reply.code(204).send();
    });

    // ---- Admin API: bans (`Authorization: Admin <token>`) ----

    const admin = (request: FastifyRequest) => {
      if (!isAdmin(request.headers.authorization, deps.adminToken))
        throw new HearthError('GeneralUnauthorized');
      const { user_id } = request.params as { user_id: string };
      if (!/^\d{1,20}$/.test(user_id)) throw new HearthError('UnknownUser');
      return user_id;
    };

    app.put('/admin/users/:user_id/ban', { schema: { body: BanRequest } }, async (request) => {
      const banned = await link.ban(admin(request), request.body ?? {});
      return {
        user_id: banned.userId,
        expires_at: banned.expiresAt === null ? null : new Date(banned.expiresAt).toISOString(),
      };
    });

    app.delete('/admin/users/:user_id/ban', async (request, reply) => {
      await link.unban(admin(request));
      return reply.code(204).send();
    });
  };
}

function botApplication(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
  return principal.applicationId;
}

/** Constant-time comparison of digests: the length of the secret is not revealed either. */
function isAdmin(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined || header === undefined) return false;
  const match = /^Admin\s+(.+)$/.exec(header);
  if (!match?.[1]) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1].trim()), digest(token));
}
