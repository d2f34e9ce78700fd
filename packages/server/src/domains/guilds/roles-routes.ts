import type { FastifyPluginAsync } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody } from '../../kernel/validation.js';
import { auditLogReason } from './audit-log.js';
import type { RolesService } from './roles.js';
import { GuildParams, RoleFields, RoleParams, RolePositions } from './schemas.js';

const MEMBER = { auth: { bot: true, user: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };
type Role = { Params: Static<typeof RoleParams> };

/** Guild roles (GUILDS.md §3.2 "Role endpoints"). */
export function rolesRoutes(roles: RolesService): FastifyPluginAsync {
  return async (app) => {
    app.get<Guild>(
      '/guilds/:guild_id/roles',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => roles.listRoles(request.principal!.userId, request.params.guild_id),
    );

    app.get<Guild>(
      '/guilds/:guild_id/roles/member-counts',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request) => roles.memberCounts(request.principal!.userId, request.params.guild_id),
    );

    app.post<Guild>(
      '/guilds/:guild_id/roles',
      { config: MEMBER, schema: { params: GuildParams, body: optionalBody(RoleFields) } },
      async (request) =>
        roles.createRole(
          request.principal!.userId,
          request.params.guild_id,
          request.body,
          auditLogReason(request.headers['x-audit-log-reason']),
        ),
    );

    app.patch<Guild>(
      '/guilds/:guild_id/roles',
      { config: MEMBER, schema: { params: GuildParams, body: RolePositions } },
      async (request) => roles.reorderRoles(request.principal!.userId, request.params.guild_id, request.body),
    );

    app.get<Role>(
      '/guilds/:guild_id/roles/:role_id',
      { config: MEMBER, schema: { params: RoleParams } },
      async (request) =>
        roles.getRole(request.principal!.userId, request.params.guild_id, request.params.role_id),
    );

    app.patch<Role>(
      '/guilds/:guild_id/roles/:role_id',
      { config: MEMBER, schema: { params: RoleParams, body: optionalBody(RoleFields) } },
      async (request) =>
        roles.modifyRole(
          request.principal!.userId,
          request.params.guild_id,
          request.params.role_id,
          request.body,
          auditLogReason(request.headers['x-audit-log-reason']),
        ),
    );

    app.delete<Role>(
      '/guilds/:guild_id/roles/:role_id',
      { config: MEMBER, schema: { params: RoleParams } },
      async (request, reply) => {
        await roles.deleteRole(
          request.principal!.userId,
          request.params.guild_id,
          request.params.role_id,
          auditLogReason(request.headers['x-audit-log-reason']),
        );
        return reply.code(204).send();
      },
    );
  };
}
