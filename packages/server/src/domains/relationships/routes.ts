import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import { FriendRequestByName, GameFriendRequestByName, PutRelationship, UserIdParams } from './schemas.js';
import type { RelationshipsService } from './service.js';

const READ = { user: true, bearer: [Scopes.RelationshipsRead] } as const;
const WRITE = { user: true, bearer: [Scopes.RelationshipsWrite] } as const;
const GAME_READ = { bearer: [Scopes.RelationshipsRead] } as const;
const GAME_WRITE = { bearer: [Scopes.RelationshipsWrite] } as const;

/** Game relationships belong to the application the player's token was granted to. */
function applicationOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'bearer') throw new HearthError('GeneralUnauthorized');
  return principal.applicationId;
}

/** Relationships and game relationships (PROTOCOL.md §B.6). */
export function relationshipsRoutes(relationships: RelationshipsService): FastifyPluginAsync {
  return async (app) => {
    const params = { params: UserIdParams };
    // The body of PUT may be left out (a friend request) or null; a present one is `{ type }`.
    const put = { params: UserIdParams, body: optionalBody(PutRelationship) };
    app.get('/users/@me/relationships', { config: { auth: READ } }, async (request) =>
      relationships.list(request.principal!.userId),
    );
    const byName = { schema: { body: optionalBody(FriendRequestByName) } };
    app.post('/users/@me/relationships', { config: { auth: WRITE }, ...byName }, async (request, reply) => {
      await relationships.sendFriendRequestByName(request.principal!.userId, request.body);
      return reply.code(204).send();
    });
    app.put<{ Params: { user_id: string } }>(
      '/users/@me/relationships/:user_id',
      { config: { auth: WRITE }, schema: put },
      async (request, reply) => {
        await relationships.put(request.principal!.userId, request.params.user_id, request.body);
        return reply.code(204).send();
      },
    );
    app.delete<{ Params: { user_id: string } }>(
      '/users/@me/relationships/:user_id',
      { config: { auth: WRITE }, schema: params },
      async (request, reply) => {
        await relationships.remove(request.principal!.userId, request.params.user_id);
        return reply.code(204).send();
      },
    );

    app.get('/users/@me/game-relationships', { config: { auth: GAME_READ } }, async (request) =>
      relationships.listGame(request.principal!.userId, applicationOf(request)),
    );
    const gameByName = { schema: { body: optionalBody(GameFriendRequestByName) } };
    app.post(
      '/users/@me/game-relationships',
      { config: { auth: GAME_WRITE }, ...gameByName },
      async (request, reply) => {
        await relationships.sendGameFriendRequestByName(
          request.principal!.userId,
          applicationOf(request),
          request.body,
        );
        return reply.code(204).send();
      },
    );
    app.put<{ Params: { user_id: string } }>(
      '/users/@me/game-relationships/:user_id',
      { config: { auth: GAME_WRITE }, schema: put },
      async (request, reply) => {
        await relationships.putGame(
          request.principal!.userId,
          applicationOf(request),
          request.params.user_id,
          request.body,
        );
        return reply.code(204).send();
      },
    );
    app.delete<{ Params: { user_id: string } }>(
      '/users/@me/game-relationships/:user_id',
      { config: { auth: GAME_WRITE }, schema: params },
      async (request, reply) => {
        await relationships.removeGame(
          request.principal!.userId,
          applicationOf(request),
          request.params.user_id,
        );
        return reply.code(204).send();
      },
    );
  };
}
