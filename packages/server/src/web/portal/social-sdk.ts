import { ApplicationFlags, ExternalAuthTypes, type JSONErrorName } from '@hearth/protocol';
import type { FastifyInstance } from 'fastify';
import type { Application } from '../../domains/applications/service.js';
import { HearthError } from '../../kernel/errors.js';
import { type AppRequest, field, type PortalContext, type Signed, SNOWFLAKE } from './context.js';
import type { FieldError } from './html.js';
import { renderSocialSdkPage } from './pages.js';

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

/** Social SDK: approval states and identity providers (PROTOCOL.md §B.2). */
export function socialSdkSection(app: FastifyInstance, ctx: PortalContext): void {
  const { send, guard, attempt } = ctx;
  const { deps } = ctx;

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
      const help = ISSUER_HELP[refused.error];
      const errors = help
        ? [
            ...refused.errors,
            { field: 'issuer', message: help.replace('ISSUER', values['issuer'] ?? 'the issuer') },
          ]
        : refused.errors;
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
}
