import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import type { DmChannels } from './dm-channels.js';
import type { Actor } from './places.js';
import {
  AddRecipient,
  ChannelParams,
  CreateDM,
  CreateMessage,
  EditMessage,
  ListMessagesQuery,
  MessageParams,
  RecipientParams,
} from './schemas.js';
import type { ChannelMessagesService } from './service.js';

/** Message routes take bot tokens and user sessions (GUILDS.md §4). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Channel = { Params: Static<typeof ChannelParams> };
type Recipient = { Params: Static<typeof RecipientParams> };
type AddRecipientRoute = Recipient & { Body: Static<typeof AddRecipient> | undefined };
type Message = { Params: Static<typeof MessageParams> };

export function channelMessagesRoutes(messages: ChannelMessagesService, dms: DmChannels): FastifyPluginAsync {
  // Create and edit take `files[n]` parts (GUILDS.md §4.8) when attachments are stored.
  const uploads = messages.uploads;
  const WITH_FILES = { ...MEMBER, ...(uploads ? { files: uploads } : {}) };
  return async (app) => {
    app.get<Channel>(
      '/channels/:channel_id/messages',
      { config: MEMBER, schema: { params: ChannelParams, querystring: ListMessagesQuery } },
      async (request) => messages.list(actorOf(request), request.params.channel_id, request.query),
    );
    app.post<Channel>(
      '/channels/:channel_id/messages',
      { config: WITH_FILES, schema: { params: ChannelParams, body: optionalBody(CreateMessage) } },
      async (request) =>
        messages.create(actorOf(request), request.params.channel_id, request.body, request.uploads ?? []),
    );
    app.get<Message>(
      '/channels/:channel_id/messages/:message_id',
      { config: MEMBER, schema: { params: MessageParams } },
      async (request) => messages.get(actorOf(request), request.params.channel_id, request.params.message_id),
    );
    app.patch<Message>(
      '/channels/:channel_id/messages/:message_id',
      { config: WITH_FILES, schema: { params: MessageParams, body: optionalBody(EditMessage) } },
      async (request) =>
        messages.edit(
          actorOf(request),
          request.params.channel_id,
          request.params.message_id,
          request.body,
          request.uploads ?? [],
        ),
    );
    app.delete<Message>(
      '/channels/:channel_id/messages/:message_id',
      { config: MEMBER, schema: { params: MessageParams } },
      async (request, reply) => {
        await messages.delete(actorOf(request), request.params.channel_id, request.params.message_id);
        return reply.code(204).send();
      },
    );
    app.put<AddRecipientRoute>(
      '/channels/:channel_id/recipients/:user_id',
      { config: MEMBER, schema: { params: RecipientParams, body: optionalBody(AddRecipient) } },
      async (request, reply) => {
        const { channel_id, user_id } = request.params;
        const created = await dms.addRecipient(actorOf(request), channel_id, user_id, request.body ?? {});
        return created ? reply.code(201).send(created) : reply.code(204).send();
      },
    );
    app.delete<Recipient>(
      '/channels/:channel_id/recipients/:user_id',
      { config: MEMBER, schema: { params: RecipientParams } },
      async (request, reply) => {
        const { channel_id, user_id } = request.params;
        await dms.removeRecipient(actorOf(request), channel_id, user_id);
        return reply.code(204).send();
      },
    );
    app.post(
      '/users/@me/channels',
      { config: MEMBER, schema: { body: optionalBody(CreateDM) } },
      async (request) => dms.open(actorOf(request), request.body),
    );
  };
}

/** The caller as the message rules see it: a bot user or a person. */
export function actorOf(request: FastifyRequest): Actor {
  const principal = request.principal;
  if (!principal) throw new HearthError('GeneralUnauthorized');
  return principal.kind === 'bot'
    ? { userId: principal.userId, bot: true, applicationId: principal.applicationId }
    : { userId: principal.userId, bot: false };
}
