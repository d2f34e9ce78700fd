import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody } from '../../kernel/validation.js';
import { auditLogReason } from '../guilds/audit-log.js';
import type { MessageActionsService } from './message-actions.js';
import { BulkDeleteMessages } from './message-actions-schemas.js';
import { actorOf } from './routes.js';
import { ChannelParams, MessageParams } from './schemas.js';

/** Crosspost, bulk delete and typing take bot tokens and user sessions (GUILDS.md §4). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Channel = { Params: Static<typeof ChannelParams> };
type Message = { Params: Static<typeof MessageParams> };

export function messageActionsRoutes(actions: MessageActionsService): FastifyPluginAsync {
  return async (app) => {
    app.post<Message>(
      '/channels/:channel_id/messages/:message_id/crosspost',
      { config: MEMBER, schema: { params: MessageParams } },
      async (request) =>
        actions.crosspost(actorOf(request), request.params.channel_id, request.params.message_id),
    );
    app.post<Channel>(
      '/channels/:channel_id/messages/bulk-delete',
      { config: MEMBER, schema: { params: ChannelParams, body: optionalBody(BulkDeleteMessages) } },
      async (request, reply) => {
        const reason = auditLogReason(request.headers['x-audit-log-reason']);
        await actions.bulkDelete(actorOf(request), request.params.channel_id, request.body, reason);
        return reply.code(204).send();
      },
    );
    app.post<Channel>(
      '/channels/:channel_id/typing',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request, reply) => {
        await actions.triggerTyping(actorOf(request), request.params.channel_id);
        return reply.code(204).send();
      },
    );
  };
}
