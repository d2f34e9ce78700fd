import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { actorOf } from '../channel-messages/routes.js';
import { GuildParams, SearchQuery } from './schemas.js';
import type { SearchService } from './service.js';

/** Search takes bot tokens and user sessions, as the message routes do (GUILDS.md §4.11). */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Search = { Params: Static<typeof GuildParams> };

export function searchRoutes(search: SearchService): FastifyPluginAsync {
  return async (app) => {
    app.get<Search>(
      '/guilds/:guild_id/messages/search',
      { config: MEMBER, schema: { params: GuildParams, querystring: SearchQuery } },
      async (request) => search.search(actorOf(request), request.params.guild_id, request.query),
    );
  };
}
