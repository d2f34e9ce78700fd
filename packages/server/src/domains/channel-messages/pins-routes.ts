import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { auditLogReason } from '../guilds/audit-log.js';
import type { PinsService } from './pins.js';
import { ListPinsQuery, PinParams } from './pins-schemas.js';
import { actorOf } from './routes.js';
import { ChannelParams } from './schemas.js';

/** Pin routes take bot tokens and user sessions, as the other message routes (GUILDS.md §3.7). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Channel = { Params: Static<typeof ChannelParams>; Querystring: Static<typeof ListPinsQuery> };
type Pin = { Params: Static<typeof PinParams> };

/**
 * The paginated pin routes under /channels/{id}/messages/pins, and the deprecated ones under
 * /channels/{id}/pins that keep working with a `Deprecation` header (seed: Versioning).
 */
export function pinsRoutes(pins: PinsService): FastifyPluginAsync {
  const deprecated = {
    config: MEMBER,
    onRequest: async (_request: unknown, reply: FastifyReply) => {
      reply.headers(pins.legacyRouteHeaders());
    },
  };
  return async (app) => {
    app.get<Channel>(
      '/channels/:channel_id/messages/pins',
      { config: MEMBER, schema: { params: ChannelParams, querystring: ListPinsQuery } },
      async (request) => pins.list(actorOf(request), request.params.channel_id, request.query),
    );
    app.put<Pin>(
      '/channels/:channel_id/messages/pins/:message_id',
      { config: MEMBER, schema: { params: PinParams } },
      async (request, reply) => {
        const reason = auditLogReason(request.headers['x-audit-log-reason']);
        await pins.pin(actorOf(request), request.params.channel_id, request.params.message_id, reason);
        return reply.code(204).send();
      },
    );
    app.delete<Pin>(
      '/channels/:channel_id/messages/pins/:message_id',
      { config: MEMBER, schema: { params: PinParams } },
      async (request, reply) => {
        const reason = auditLogReason(request.headers['x-audit-log-reason']);
        await pins.unpin(actorOf(request), request.params.channel_id, request.params.message_id, reason);
        return reply.code(204).send();
      },
    );

    app.get<Channel>(
      '/channels/:channel_id/pins',
      { ...deprecated, schema: { params: ChannelParams } },
      async (request) => pins.listLegacy(actorOf(request), request.params.channel_id),
    );
    app.put<Pin>(
      '/channels/:channel_id/pins/:message_id',
      { ...deprecated, schema: { params: PinParams } },
      async (request, reply) => {
        const reason = auditLogReason(request.headers['x-audit-log-reason']);
        await pins.pin(actorOf(request), request.params.channel_id, request.params.message_id, reason);
        return reply.code(204).send();
      },
    );
    app.delete<Pin>(
      '/channels/:channel_id/pins/:message_id',
      { ...deprecated, schema: { params: PinParams } },
      async (request, reply) => {
        const reason = auditLogReason(request.headers['x-audit-log-reason']);
        await pins.unpin(actorOf(request), request.params.channel_id, request.params.message_id, reason);
        return reply.code(204).send();
      },
    );
  };
}
