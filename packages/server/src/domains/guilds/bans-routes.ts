import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody, parse } from '../../kernel/validation.js';
import type { BansService } from './bans.js';
import { callerOf, reasonOf } from './members-routes.js';
import { BulkBan, CreateBan, GuildParams, GuildUserParams, ListBansQuery } from './members-schemas.js';

const MEMBER = { auth: { bot: true, user: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };
type GuildUser = { Params: Static<typeof GuildUserParams> };

/** Guild ban routes (GUILDS.md §3.3). */
export function bansRoutes(bans: BansService): FastifyPluginAsync {
  return async (app) => {
    app.get<Guild & { Querystring: Static<typeof ListBansQuery> }>(
      '/guilds/:guild_id/bans',
      { config: MEMBER, schema: { params: GuildParams, querystring: ListBansQuery } },
      async (request) => bans.listBans(callerOf(request), request.params.guild_id, request.query),
    );
    app.get<GuildUser>(
      '/guilds/:guild_id/bans/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams } },
      async (request) => bans.getBan(callerOf(request), request.params.guild_id, request.params.user_id),
    );
    app.put<GuildUser>(
      '/guilds/:guild_id/bans/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams, body: optionalBody(CreateBan) } },
      async (request, reply) => {
        const { guild_id, user_id } = request.params;
        const input = parse(CreateBan, request.body ?? {});
        await bans.ban(callerOf(request), guild_id, user_id, input, reasonOf(request));
        return reply.code(204).send();
      },
    );
    app.delete<GuildUser>(
      '/guilds/:guild_id/bans/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams } },
      async (request, reply) => {
        const { guild_id, user_id } = request.params;
        await bans.unban(callerOf(request), guild_id, user_id, reasonOf(request));
        return reply.code(204).send();
      },
    );
    app.post<Guild>(
      '/guilds/:guild_id/bulk-ban',
      { config: MEMBER, schema: { params: GuildParams, body: BulkBan } },
      async (request) =>
        bans.bulkBan(
          callerOf(request),
          request.params.guild_id,
          parse(BulkBan, request.body),
          reasonOf(request),
        ),
    );
  };
}
