import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { ListMyGuildsQuery, MyGuildObject } from './schemas.js';
import type { GuildsService } from './service.js';

export function guildsRoutes(guilds: GuildsService): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/users/@me/guilds',
      {
        config: { auth: { bot: true, user: true, bearer: [Scopes.Guilds] } },
        schema: { querystring: ListMyGuildsQuery, response: { 200: Type.Array(MyGuildObject) } },
      },
      async (request) => guilds.listUserGuilds(request.principal!.userId, request.query),
    );
  };
}
