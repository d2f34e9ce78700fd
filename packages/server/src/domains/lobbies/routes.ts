import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody, parse } from '../../kernel/validation.js';
import {
  AddLobbyMember,
  BulkLobbyMembers,
  CreateLobby,
  CreateOrJoinLobby,
  EditLobbyMessage,
  LobbyMemberParams,
  LobbyMessageParams,
  LobbyMessagesQuery,
  LobbyParams,
  ModerationMetadata,
  ModifyLobby,
  SendLobbyMessage,
} from './schemas.js';
import type { Caller, LobbiesService } from './service.js';

/** The game's backend (`Bot`) and its players (`Bearer` with `lobbies.write`, inside `sdk.social_layer`). */
const BOT = { auth: { bot: true } } as const;
const PLAYER = { auth: { bearer: [Scopes.LobbiesWrite] } } as const;

type Lobby = { Params: Static<typeof LobbyParams> };
type Member = { Params: Static<typeof LobbyMemberParams> };
type Message = { Params: Static<typeof LobbyMessageParams> };

/** PROTOCOL.md §A.3, without channel linking and its invites (they need guild channels). */
export function lobbiesRoutes(lobbies: LobbiesService): FastifyPluginAsync {
  return async (app) => {
    app.post(
      '/lobbies',
      { config: BOT, schema: { body: optionalBody(CreateLobby) } },
      async (request, reply) => {
        const lobby = await lobbies.createLobby(appOf(request), parse(CreateLobby, request.body ?? {}));
        return reply.code(201).send(lobby);
      },
    );
    app.put(
      '/lobbies',
      { config: PLAYER, schema: { body: optionalBody(CreateOrJoinLobby) } },
      async (request) =>
        lobbies.createOrJoin(callerOf(request), parse(CreateOrJoinLobby, request.body ?? {})),
    );
    app.get<Lobby>('/lobbies/:lobby_id', { config: BOT, schema: { params: LobbyParams } }, async (request) =>
      lobbies.getLobby(appOf(request), request.params.lobby_id),
    );
    app.patch<Lobby>(
      '/lobbies/:lobby_id',
      { config: BOT, schema: { params: LobbyParams, body: optionalBody(ModifyLobby) } },
      async (request) =>
        lobbies.modifyLobby(appOf(request), request.params.lobby_id, parse(ModifyLobby, request.body ?? {})),
    );
    app.delete<Lobby>(
      '/lobbies/:lobby_id',
      { config: BOT, schema: { params: LobbyParams } },
      async (request, reply) => {
        await lobbies.deleteLobby(appOf(request), request.params.lobby_id);
        return reply.code(204).send();
      },
    );

    app.delete<Lobby>(
      '/lobbies/:lobby_id/members/@me',
      { config: PLAYER, schema: { params: LobbyParams } },
      async (request, reply) => {
        await lobbies.leave(callerOf(request), request.params.lobby_id);
        return reply.code(204).send();
      },
    );
    app.post<Lobby>(
      '/lobbies/:lobby_id/members/bulk',
      { config: BOT, schema: { params: LobbyParams, body: BulkLobbyMembers } },
      async (request) =>
        lobbies.bulkMembers(appOf(request), request.params.lobby_id, parse(BulkLobbyMembers, request.body)),
    );
    app.put<Member>(
      '/lobbies/:lobby_id/members/:user_id',
      { config: BOT, schema: { params: LobbyMemberParams, body: optionalBody(AddLobbyMember) } },
      async (request) => {
        const { lobby_id, user_id } = request.params;
        return lobbies.putMember(
          appOf(request),
          lobby_id,
          user_id,
          parse(AddLobbyMember, request.body ?? {}),
        );
      },
    );
    app.delete<Member>(
      '/lobbies/:lobby_id/members/:user_id',
      { config: BOT, schema: { params: LobbyMemberParams } },
      async (request, reply) => {
        await lobbies.removeMember(appOf(request), request.params.lobby_id, request.params.user_id);
        return reply.code(204).send();
      },
    );

    app.post<Lobby>(
      '/lobbies/:lobby_id/messages',
      { config: PLAYER, schema: { params: LobbyParams, body: optionalBody(SendLobbyMessage) } },
      async (request, reply) => {
        const input = parse(SendLobbyMessage, request.body ?? {});
        const message = await lobbies.sendMessage(callerOf(request), request.params.lobby_id, input);
        return reply.code(201).send(message);
      },
    );
    app.get<Lobby & { Querystring: Static<typeof LobbyMessagesQuery> }>(
      '/lobbies/:lobby_id/messages',
      { config: PLAYER, schema: { params: LobbyParams, querystring: LobbyMessagesQuery } },
      async (request) =>
        lobbies.listMessages(callerOf(request), request.params.lobby_id, request.query.limit),
    );
    app.patch<Message>(
      '/lobbies/:lobby_id/messages/:message_id',
      { config: PLAYER, schema: { params: LobbyMessageParams, body: optionalBody(EditLobbyMessage) } },
      async (request) => {
        const { content } = parse(EditLobbyMessage, request.body ?? {});
        const { lobby_id, message_id } = request.params;
        return lobbies.editMessage(callerOf(request), lobby_id, message_id, content);
      },
    );
    app.delete<Message>(
      '/lobbies/:lobby_id/messages/:message_id',
      { config: PLAYER, schema: { params: LobbyMessageParams } },
      async (request, reply) => {
        await lobbies.deleteMessage(callerOf(request), request.params.lobby_id, request.params.message_id);
        return reply.code(204).send();
      },
    );
    app.put<Message>(
      '/lobbies/:lobby_id/messages/:message_id/moderation-metadata',
      { config: BOT, schema: { params: LobbyMessageParams, body: optionalBody(ModerationMetadata) } },
      async (request, reply) => {
        const metadata = parse(ModerationMetadata, request.body ?? {});
        const { lobby_id, message_id } = request.params;
        await lobbies.setModerationMetadata(appOf(request), lobby_id, message_id, metadata);
        return reply.code(204).send();
      },
    );
  };
}

function appOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'bot') throw new HearthError('GeneralUnauthorized');
  return principal.applicationId;
}

function callerOf(request: FastifyRequest): Caller {
  const principal = request.principal;
  if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
  return {
    applicationId: principal.applicationId,
    userId: principal.userId,
    applicationFlags: principal.applicationFlags,
  };
}
