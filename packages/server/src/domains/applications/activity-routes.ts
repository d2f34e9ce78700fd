import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import type { ActivitiesService } from './activities.js';

type ProxyRoute = FastifyRequest<{ Params: { application_id: string; '*'?: string } }>;

/**
 * The Activity proxy, at the server's root as the platform's `{app}.discordsays.com` is its own host:
 * `/activities/{application_id}/…`, with or without `/.proxy/` (DOCS activities: Networking; seed).
 */
export function activityProxyRoutes(activities: ActivitiesService): FastifyPluginAsync {
  return async (app) => {
    // Bodies go through as bytes, whatever their type.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const forward = async (request: ProxyRoute, reply: FastifyReply) => {
      const id = request.params.application_id;
      if (!/^\d{1,20}$/.test(id)) throw new HearthError('GeneralNotFound');
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await activities.proxy(id, {
        method: request.method,
        path: `/${request.params['*'] ?? ''}${query}`,
        headers,
        body: Buffer.isBuffer(request.body) ? request.body : undefined,
      });
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    };
    // The methods a browser page sends (HEAD comes with GET).
    const method = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
    app.route({ method, url: '/activities/:application_id', handler: forward });
    app.route({ method, url: '/activities/:application_id/*', handler: forward });
  };
}

const ShareLinkBody = Type.Object({
  message: Type.String({ maxLength: 1000 }),
  custom_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  link_id: Type.Optional(Type.String({ maxLength: 64 })),
  /** Removed from the call: accepted and ignored without an error (seed: Errors). */
  referrer_id: Type.Optional(Type.Unknown()),
});
const ShareLinkAnswer = Type.Object({ success: Type.Boolean(), link: Type.String() });

/** The share-link call (Hearth's route: the platform's SDK command has no public HTTP route). */
export function shareLinkRoutes(activities: ActivitiesService): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Params: { application_id: string }; Body: { message: string; custom_id?: string } }>(
      '/applications/:application_id/share-link',
      {
        config: { auth: { user: true, bearer: [] } },
        schema: {
          params: Type.Object({ application_id: Type.String({ format: 'snowflake' }) }),
          body: ShareLinkBody,
          response: { 200: ShareLinkAnswer },
        },
      },
      async (request) => {
        // An Activity's token speaks for its own application only.
        const principal = request.principal;
        if (principal?.kind === 'bearer' && principal.applicationId !== request.params.application_id)
          throw new HearthError('MissingAccess');
        return activities.shareLink(request.params.application_id, {
          message: request.body.message,
          custom_id: request.body.custom_id,
        });
      },
    );
  };
}
