import { randomBytes } from 'node:crypto';
import {
  BOT_AUTHORIZED_PATH,
  GrantTypes,
  ID_TOKEN_SIGNING_ALG,
  OAuth2ErrorCodes,
  Prompts,
  Scopes,
} from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  AUTHORIZE_SCRIPT,
  renderAuthorizedPage,
  renderAuthorizePage,
  renderErrorPage,
} from '../../web/authorize-page.js';
import { AuthorizeError } from './errors.js';
import type { OAuth2Service } from './service.js';

/** Headers of every page: nothing framed (clickjacking), nothing cached, no inline script. */
function pageHeaders(reply: FastifyReply, nonce: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').headers({
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
}

/** Browser-facing routes outside `/api`: the authorize page and OpenID discovery. */
export function oauth2Pages(oauth2: OAuth2Service, issuer: () => string): FastifyPluginAsync {
  return async (app) => {
    app.get('/oauth2/authorize', async (request, reply) => {
      const nonce = randomBytes(16).toString('base64');
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      try {
        const authorization = await oauth2.checkAuthorizationRequest(
          request.query as Record<string, unknown>,
        );
        const loginRequired =
          authorization.prompt === Prompts.None
            ? new AuthorizeError(OAuth2ErrorCodes.LoginRequired, 'The user is not signed in', {
                redirectUri: authorization.redirectUri,
                state: authorization.state,
              }).location()
            : undefined;
        return pageHeaders(reply, nonce).send(
          renderAuthorizePage({
            applicationName: authorization.application.name,
            scopes: authorization.scopes,
            query,
            prompt: authorization.prompt,
            loginRequiredLocation: loginRequired,
            nonce,
          }),
        );
      } catch (error) {
        if (!(error instanceof AuthorizeError)) throw error;
        const location = error.location();
        if (location !== undefined) return reply.redirect(location, 302);
        return pageHeaders(reply.code(400), nonce).send(renderErrorPage(error.message, nonce));
      }
    });

    // Where a bot authorization without a redirect URI ends (OAuth2, Bot Authorization Flow).
    app.get(BOT_AUTHORIZED_PATH, async (_request, reply) => {
      const nonce = randomBytes(16).toString('base64');
      return pageHeaders(reply, nonce).send(renderAuthorizedPage(nonce));
    });

    app.get('/oauth2/authorize.js', async (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .headers({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
        .send(AUTHORIZE_SCRIPT),
    );

    // OpenID Connect Discovery 1.0 §3, with the two fields the platform omits (ISS #7377, #8534).
    app.get('/.well-known/openid-configuration', async () => {
      const base = issuer();
      return {
        issuer: base,
        authorization_endpoint: `${base}/oauth2/authorize`,
        token_endpoint: `${base}/api/v10/oauth2/token`,
        userinfo_endpoint: `${base}/api/v10/oauth2/userinfo`,
        revocation_endpoint: `${base}/api/v10/oauth2/token/revoke`,
        jwks_uri: `${base}/api/v10/oauth2/keys`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: Object.values(GrantTypes),
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [ID_TOKEN_SIGNING_ALG],
        scopes_supported: Object.values(Scopes),
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        code_challenge_methods_supported: ['S256'],
        prompt_values_supported: Object.values(Prompts),
        claims_supported: [
          'iss',
          'sub',
          'aud',
          'exp',
          'iat',
          'auth_time',
          'nonce',
          'at_hash',
          'email',
          'email_verified',
          'preferred_username',
          'nickname',
          'picture',
          'locale',
        ],
      };
    });
  };
}
