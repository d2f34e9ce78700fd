import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import type { FileUploads } from '../../http/multipart.js';
import { optionalBody } from '../../kernel/validation.js';
import { actorOf } from '../channel-messages/routes.js';
import { reasonOf, userOf } from '../channels/routes.js';
import type { ThreadListing } from './listing.js';
import type { ThreadMembersService } from './members.js';
import {
  ArchivedThreadsQuery,
  ChannelParams,
  GetThreadMemberQuery,
  GuildParams,
  JoinedArchivedThreadsQuery,
  ListThreadMembersQuery,
  MessageParams,
  StartThreadFromMessage,
  ThreadMemberParams,
} from './schemas.js';
import type { ThreadsService } from './service.js';

/** Thread routes take bot tokens and user sessions (GUILDS.md §2.5). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Channel = { Params: Static<typeof ChannelParams> };
type Message = { Params: Static<typeof MessageParams> };
type Member = { Params: Static<typeof ThreadMemberParams> };
type Guild = { Params: Static<typeof GuildParams> };

export function threadsRoutes(
  threads: ThreadsService,
  members: ThreadMembersService,
  listing: ThreadListing,
  uploads: FileUploads | undefined,
): FastifyPluginAsync {
  // A forum post's first message takes `files[n]` as any message does.
  const WITH_FILES = { ...MEMBER, ...(uploads ? { files: uploads } : {}) };
  return async (app) => {
    app.post<Message>(
      '/channels/:channel_id/messages/:message_id/threads',
      { config: MEMBER, schema: { params: MessageParams, body: optionalBody(StartThreadFromMessage) } },
      async (request, reply) => {
        const { channel_id, message_id } = request.params;
        const thread = await threads.startFromMessage(
          actorOf(request),
          channel_id,
          message_id,
          request.body,
          reasonOf(request),
        );
        return reply.code(201).send(thread);
      },
    );
    app.post<Channel>(
      '/channels/:channel_id/threads',
      { config: WITH_FILES, schema: { params: ChannelParams } },
      async (request, reply) => {
        const thread = await threads.start(
          actorOf(request),
          request.params.channel_id,
          request.body,
          request.uploads ?? [],
          reasonOf(request),
        );
        return reply.code(201).send(thread);
      },
    );

    app.put<Channel>(
      '/channels/:channel_id/thread-members/@me',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request, reply) => {
        await members.join(userOf(request), request.params.channel_id);
        return reply.code(204).send();
      },
    );
    app.delete<Channel>(
      '/channels/:channel_id/thread-members/@me',
      { config: MEMBER, schema: { params: ChannelParams } },
      async (request, reply) => {
        await members.leave(userOf(request), request.params.channel_id);
        return reply.code(204).send();
      },
    );
    app.put<Member>(
      '/channels/:channel_id/thread-members/:user_id',
      { config: MEMBER, schema: { params: ThreadMemberParams } },
      async (request, reply) => {
        await members.add(userOf(request), request.params.channel_id, request.params.user_id);
        return reply.code(204).send();
      },
    );
    app.delete<Member>(
      '/channels/:channel_id/thread-members/:user_id',
      { config: MEMBER, schema: { params: ThreadMemberParams } },
      async (request, reply) => {
        await members.remove(userOf(request), request.params.channel_id, request.params.user_id);
        return reply.code(204).send();
      },
    );
    app.get<Member>(
      '/channels/:channel_id/thread-members/:user_id',
      { config: MEMBER, schema: { params: ThreadMemberParams, querystring: GetThreadMemberQuery } },
      async (request) =>
        members.get(userOf(request), request.params.channel_id, request.params.user_id, request.query),
    );
    app.get<Channel>(
      '/channels/:channel_id/thread-members',
      { config: MEMBER, schema: { params: ChannelParams, querystring: ListThreadMembersQuery } },
      async (request) => members.list(actorOf(request), request.params.channel_id, request.query),
    );

    app.get<Guild>(
      '/guilds/:guild_id/threads/active',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => listing.active(userOf(request), request.params.guild_id),
    );
    app.get<Channel>(
      '/channels/:channel_id/threads/archived/public',
      { config: MEMBER, schema: { params: ChannelParams, querystring: ArchivedThreadsQuery } },
      async (request) => listing.archivedPublic(userOf(request), request.params.channel_id, request.query),
    );
    app.get<Channel>(
      '/channels/:channel_id/threads/archived/private',
      { config: MEMBER, schema: { params: ChannelParams, querystring: ArchivedThreadsQuery } },
      async (request) => listing.archivedPrivate(userOf(request), request.params.channel_id, request.query),
    );
    app.get<Channel>(
      '/channels/:channel_id/users/@me/threads/archived/private',
      { config: MEMBER, schema: { params: ChannelParams, querystring: JoinedArchivedThreadsQuery } },
      async (request) =>
        listing.joinedArchivedPrivate(userOf(request), request.params.channel_id, request.query),
    );
  };
}
