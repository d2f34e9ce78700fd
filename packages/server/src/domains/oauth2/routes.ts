import { OAuth2ErrorCodes, Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { formErrorTree, HearthError, isWireError } from '../../kernel/errors.js';
import { AuthorizeError, OAuth2Error } from './errors.js';
import {
  AuthorizeDecision,
  AuthorizeLocation,
  AuthorizeRequestBody,
  ChildTokenRequest,
  TokenResponseObject,
  UserInfoObject,
} from './schemas.js';
import type { AccessGrant, OAuth2Service } from './service.js';

const FORM = 'application/x-www-form-urlencoded';

export function oauth2Routes(oauth2: OAuth2Service): FastifyPluginAsync {
  return async (app) => {
    // The API-prefixed authorize URL clients build (@discordjs/core generateAuthorizationURL) leads to the page.
    app.get('/oauth2/authorize', async (request, reply) => {
      const query = request.url.indexOf('?');
      return reply.redirect(oauth2.authorizePageUrl(query === -1 ? '' : request.url.slice(query)), 302);
    });

    // The consent call the authorize page makes, with the player's session token (issue: POST /oauth2/authorize).
    app.post(
      '/oauth2/authorize',
      {
        config: { auth: { user: true } },
        schema: { body: AuthorizeDecision, response: { 200: AuthorizeLocation } },
      },
      async (request) => {
        const principal = request.principal;
        if (principal?.kind !== 'user') throw new HearthError('GeneralUnauthorized');
        const { authorize, guild_id, permissions } = request.body as {
          authorize: boolean;
          guild_id?: string;
          permissions?: string;
        };
        try {
          const authorization = await oauth2.checkAuthorizationRequest(
            request.query as Record<string, unknown>,
          );
          if (
            authorization.prompt === 'none' &&
            !(await oauth2.alreadyAuthorized(principal.userId, authorization))
          ) {
            throw new AuthorizeError(
              OAuth2ErrorCodes.ConsentRequired,
              'The user has not authorized these scopes',
              {
                redirectUri: authorization.redirectUri,
                state: authorization.state,
              },
            );
          }
          const location = await oauth2.decide(
            { id: principal.userId, authTime: principal.authTime },
            authorization,
            authorize,
            { guildId: guild_id, permissions },
          );
          return { location };
        } catch (error) {
          if (!(error instanceof AuthorizeError)) throw error;
          const location = error.location();
          if (location !== undefined) return { location };
          throw new HearthError('InvalidFormBody', {
            errors: formErrorTree([
              [[error.field], { code: 'OAUTH2_INVALID_REQUEST', message: error.message }],
            ]),
          });
        }
      },
    );

    // RFC 6749 §3.2 and RFC 7009 §2.1: form bodies only; anything else is the platform's unsupported_grant_type.
    const formOnly = { errorHandler: oauthErrorHandler };

    app.post('/oauth2/token', formOnly, async (request, reply) => {
      const tokens = await oauth2.token(requireForm(request), request.headers.authorization);
      return reply.headers({ 'cache-control': 'no-store', pragma: 'no-cache' }).send(tokens);
    });

    app.post('/oauth2/token/revoke', formOnly, async (request, reply) => {
      await oauth2.revoke(requireForm(request), request.headers.authorization);
      return reply.headers({ 'cache-control': 'no-store' }).send({});
    });

    app.post(
      '/partner-sdk/child-token',
      { schema: { body: ChildTokenRequest, response: { 200: TokenResponseObject } } },
      async (request, reply) => {
        const body = request.body as {
          parent_access_token: string;
          child_application_id: string;
          parent_client_secret?: string;
        };
        return reply.header('cache-control', 'no-store').send(await oauth2.exchangeChildToken(body));
      },
    );

    // The platform client (a session token, never a game's token) asks a game to authorize the player.
    app.post(
      '/users/@me/authorize-requests',
      { config: { auth: { user: true } }, schema: { body: AuthorizeRequestBody } },
      async (request, reply) => {
        const body = request.body as { application_id: string; scopes?: string };
        await oauth2.requestAuthorization(request.principal!.userId, body);
        return reply.code(204).send();
      },
    );

    app.get('/oauth2/keys', async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(await oauth2.jwks()),
    );

    app.get(
      '/oauth2/userinfo',
      {
        config: { auth: { bearer: [Scopes.OpenId] } },
        schema: { response: { 200: UserInfoObject } },
        errorHandler: bearerChallenge,
      },
      async (request) => oauth2.userinfo(grantOf(request)),
    );

    app.get('/oauth2/@me', { config: { auth: { bearer: [] } } }, async (request) =>
      oauth2.describeAuthorization(grantOf(request)),
    );
  };
}

function requireForm(request: FastifyRequest): Record<string, unknown> {
  const type = request.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith(FORM) || typeof request.body !== 'object' || request.body === null) {
    throw new OAuth2Error(OAuth2ErrorCodes.UnsupportedGrantType);
  }
  return request.body as Record<string, unknown>;
}

/**
 * A body the form parser cannot read (JSON, bad JSON, another type) is unsupported_grant_type, as the platform
 * answers (ISS #5249); RFC errors pass; anything else goes on to the server's own handler.
 */
function oauthErrorHandler(error: Error & { code?: unknown }, _request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof OAuth2Error) return reply.code(error.status).headers(error.headers).send(error.body());
  const unreadable =
    (typeof error.code === 'string' && error.code.startsWith('FST_ERR_CTP_')) ||
    (error instanceof HearthError && (error.code === 50109 || error.code === 50035));
  if (!unreadable) throw error;
  const refused = new OAuth2Error(OAuth2ErrorCodes.UnsupportedGrantType);
  return reply.code(refused.status).headers(refused.headers).send(refused.body());
}

/**
 * RFC 6750 §3: a 401 from a bearer-protected resource names its scheme, with `invalid_token` when a token was
 * presented (§3.1: a request with no credentials gets no error code). The body stays the platform's.
 */
function bearerChallenge(error: Error, request: FastifyRequest, reply: FastifyReply) {
  if (isWireError(error) && error.status === 401) {
    reply.header(
      'www-authenticate',
      request.headers.authorization ? 'Bearer error="invalid_token"' : 'Bearer',
    );
  }
  throw error;
}

function grantOf(request: FastifyRequest): AccessGrant {
  const principal = request.principal;
  if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
  return {
    tokenId: principal.tokenId,
    familyId: principal.familyId,
    applicationId: principal.applicationId,
    userId: principal.userId,
    scopes: [...principal.grantedScopes],
    expiresAt: principal.expiresAt,
  };
}
