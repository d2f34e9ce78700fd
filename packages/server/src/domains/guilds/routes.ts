import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { optionalBody } from '../../kernel/validation.js';
import { auditLogReason } from './audit-log.js';
import {
  AuditLogQuery,
  GetGuildQuery,
  GuildParams,
  ListMyGuildsQuery,
  ModifyGuild,
  MyGuildObject,
  NewGuild,
  SetPrimaryGuild,
} from './schemas.js';
import type { GuildsService } from './service.js';

/** Bots and user sessions; OAuth2 bearer tokens do not manage guilds. */
const MEMBER = { auth: { bot: true, user: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };

/** Guilds (GUILDS.md §3.1), leaving one, guild tags, the audit log (§8). */
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

    app.post(
      '/guilds',
      {
        config: MEMBER,
        schema: { body: optionalBody(NewGuild) },
        // An app that may not create guilds is refused as such, whatever its body.
        preValidation: async (request) => guilds.assertMayCreateGuild(request.principal!),
      },
      async (request, reply) =>
        reply.code(201).send(await guilds.createGuildFor(request.principal!, request.body ?? {})),
    );

    app.get<Guild & { Querystring: Static<typeof GetGuildQuery> }>(
      '/guilds/:guild_id',
      { config: MEMBER, schema: { params: GuildParams, querystring: GetGuildQuery } },
      async (request) =>
        guilds.getGuild(
          request.principal!.userId,
          request.params.guild_id,
          request.query.with_counts ?? false,
        ),
    );

    app.patch<Guild>(
      '/guilds/:guild_id',
      { config: MEMBER, schema: { params: GuildParams, body: optionalBody(ModifyGuild) } },
      async (request) =>
        guilds.modifyGuild(
          request.principal!.userId,
          request.params.guild_id,
          request.body,
          auditLogReason(request.headers['x-audit-log-reason']),
        ),
    );

    app.delete<Guild>(
      '/guilds/:guild_id',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request, reply) => {
        await guilds.deleteGuild(request.principal!.userId, request.params.guild_id);
        return reply.code(204).send();
      },
    );

    app.get<Guild>(
      '/guilds/:guild_id/preview',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => guilds.getPreview(request.principal!.userId, request.params.guild_id),
    );

    // Hearth's route: the platform sets the primary guild through client settings it does not publish.
    app.put(
      '/users/@me/primary-guild',
      { config: { auth: { user: true } }, schema: { body: optionalBody(SetPrimaryGuild) } },
      async (request, reply) => {
        await guilds.setPrimaryGuild(request.principal!.userId, request.body ?? {});
        return reply.code(204).send();
      },
    );

    app.get<Guild & { Querystring: AuditLogQuery }>(
      '/guilds/:guild_id/audit-logs',
      { config: MEMBER, schema: { params: GuildParams, querystring: AuditLogQuery } },
      async (request) =>
        guilds.listAuditLog(request.principal!.userId, request.params.guild_id, request.query),
    );
  };
}
