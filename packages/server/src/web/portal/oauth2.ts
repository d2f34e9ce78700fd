import { Scopes } from '@hearth/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Application, eligibleScopes } from '../../domains/applications/service.js';
import { type AppRequest, field, fieldList, type PortalContext, type Signed } from './context.js';
import type { FieldError } from './html.js';
import { renderOAuth2Page, type UrlGenerator } from './pages.js';

/** OAuth2: client secret reset (shown once), redirect URIs, public client, the authorize-URL generator. */
export function oauth2Section(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { applications } = ctx.deps;
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
      url = `${ctx.deps.publicUrl()}/oauth2/authorize?${params.toString().replace(/\+/g, '%20')}`;
    }
    return { scopes, redirectUri, integrationType, url };
  };

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
}
