import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import { ModerationMetadata } from '../lobbies/schemas.js';
import {
  EditDirectMessage,
  HistoryQuery,
  MessageParams,
  ModerationParams,
  NewDirectMessage,
  UserIdParams,
} from './schemas.js';
import type { MessagesService, Player } from './service.js';

/** Game DMs are a player's, through a game's bearer token. */
function playerOf(request: FastifyRequest): Player {
  const principal = request.principal;
  if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
  return { userId: principal.userId, applicationId: principal.applicationId, scopes: principal.scopes };
}

type UserParams = { Params: { user_id: string } };
type MessageRoute = { Params: { user_id: string; message_id: string } };

/** Direct messages for games (PROTOCOL.md §B.5), invites (§B.9) and DM moderation metadata (§B.4). */
export function messagesRoutes(messages: MessagesService): FastifyPluginAsync {
  return async (app) => {
    // The scope is checked by the service: `dm_channels.messages.write`, or `activities.invites.write` for invites.
    app.post<UserParams>(
      '/users/:user_id/messages',
      {
        config: { auth: { bearer: [] } },
        schema: { params: UserIdParams, body: optionalBody(NewDirectMessage) },
      },
      async (request) => messages.send(playerOf(request), request.params.user_id, request.body),
    );
    app.get<UserParams>(
      '/users/:user_id/messages',
      {
        config: { auth: { bearer: [Scopes.DmChannelsMessagesRead] } },
        schema: { params: UserIdParams, querystring: HistoryQuery },
      },
      async (request) => messages.history(playerOf(request), request.params.user_id, request.query),
    );
    app.get(
      '/users/@me/message-summaries',
      { config: { auth: { bearer: [Scopes.DmChannelsMessagesRead] } } },
      async (request) => messages.summaries(playerOf(request)),
    );
    app.patch<MessageRoute>(
      '/users/:user_id/messages/:message_id',
      {
        config: { auth: { bearer: [Scopes.DmChannelsMessagesWrite] } },
        schema: { params: MessageParams, body: optionalBody(EditDirectMessage) },
      },
      async (request) =>
        messages.edit(playerOf(request), request.params.user_id, request.params.message_id, request.body),
    );
    app.delete<MessageRoute>(
      '/users/:user_id/messages/:message_id',
      { config: { auth: { bearer: [Scopes.DmChannelsMessagesWrite] } }, schema: { params: MessageParams } },
      async (request, reply) => {
        await messages.remove(playerOf(request), request.params.user_id, request.params.message_id);
        return reply.code(204).send();
      },
    );
    // Hearth's route for AcceptActivityInvite: the platform documents none (PROTOCOL.md §K). The platform
    // client (a user session: the local agent) accepts an invite of any game, to launch it.
    app.post<MessageRoute>(
      '/users/:user_id/messages/:message_id/activity-invite/accept',
      {
        config: { auth: { user: true, bearer: [Scopes.ActivitiesInvitesWrite] } },
        schema: { params: MessageParams },
      },
      async (request) =>
        messages.acceptInvite(
          request.principal?.kind === 'user'
            ? { userId: request.principal.userId, applicationId: undefined }
            : playerOf(request),
          request.params.user_id,
          request.params.message_id,
        ),
    );
    app.put<{ Params: { user_id_1: string; user_id_2: string; message_id: string } }>(
      '/partner-sdk/dms/:user_id_1/:user_id_2/messages/:message_id/moderation-metadata',
      // The same flat object of strings as a lobby message's (PROTOCOL.md §B.4).
      {
        config: { auth: { bot: true } },
        schema: { params: ModerationParams, body: optionalBody(ModerationMetadata) },
      },
      async (request, reply) => {
        const principal = request.principal;
        if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
        const { user_id_1, user_id_2, message_id } = request.params;
        await messages.setModerationMetadata(
          principal.applicationId,
          user_id_1,
          user_id_2,
          message_id,
          request.body,
        );
        return reply.code(204).send();
      },
    );
  };
}
