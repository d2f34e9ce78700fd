import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { optionalBody, parse } from '../../kernel/validation.js';
import { auditLogReason } from './audit-log.js';
import type { GuildCaller, MembersService } from './members.js';
import {
  AddGuildMember,
  GuildParams,
  GuildUserParams,
  GuildUserRoleParams,
  ListMembersQuery,
  ModifyCurrentMember,
  ModifyGuildMember,
  SearchMembersQuery,
} from './members-schemas.js';

/** Bots and users' sessions: the callers of the guild routes. */
const MEMBER = { auth: { bot: true, user: true } } as const;
const BOT = { auth: { bot: true } } as const;

type Guild = { Params: Static<typeof GuildParams> };
type GuildUser = { Params: Static<typeof GuildUserParams> };
type GuildUserRole = { Params: Static<typeof GuildUserRoleParams> };

/** The caller as the guild services see it: a user, or a bot with its application. */
export function callerOf(request: FastifyRequest): GuildCaller {
  const principal = request.principal!;
  return principal.kind === 'bot'
    ? { userId: principal.userId, applicationId: principal.applicationId }
    : { userId: principal.userId };
}

export const reasonOf = (request: FastifyRequest) => auditLogReason(request.headers['x-audit-log-reason']);

/** Guild member routes (GUILDS.md §3.2). */
export function membersRoutes(members: MembersService): FastifyPluginAsync {
  return async (app) => {
    app.delete<Guild>(
      '/users/@me/guilds/:guild_id',
      { config: MEMBER, schema: { params: GuildParams } },
      async (request, reply) => {
        await members.leave(request.principal!.userId, request.params.guild_id);
        return reply.code(204).send();
      },
    );

    app.get<Guild & { Querystring: Static<typeof ListMembersQuery> }>(
      '/guilds/:guild_id/members',
      { config: MEMBER, schema: { params: GuildParams, querystring: ListMembersQuery } },
      async (request) => members.listMembers(callerOf(request), request.params.guild_id, request.query),
    );
    app.get<Guild & { Querystring: Static<typeof SearchMembersQuery> }>(
      '/guilds/:guild_id/members/search',
      { config: MEMBER, schema: { params: GuildParams, querystring: SearchMembersQuery } },
      async (request) => members.searchMembers(callerOf(request), request.params.guild_id, request.query),
    );
    app.patch<Guild>(
      '/guilds/:guild_id/members/@me',
      { config: MEMBER, schema: { params: GuildParams, body: optionalBody(ModifyCurrentMember) } },
      async (request) =>
        members.modifyCurrentMember(
          callerOf(request),
          request.params.guild_id,
          parse(ModifyCurrentMember, request.body ?? {}),
          reasonOf(request),
        ),
    );
    app.get<GuildUser>(
      '/guilds/:guild_id/members/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams } },
      async (request) =>
        members.getMember(callerOf(request), request.params.guild_id, request.params.user_id),
    );
    app.put<GuildUser>(
      '/guilds/:guild_id/members/:user_id',
      { config: BOT, schema: { params: GuildUserParams, body: optionalBody(AddGuildMember) } },
      async (request, reply) => {
        const { guild_id, user_id } = request.params;
        const input = parse(AddGuildMember, request.body ?? {});
        const member = await members.addMember(callerOf(request), guild_id, user_id, input);
        return member ? reply.code(201).send(member) : reply.code(204).send();
      },
    );
    app.patch<GuildUser>(
      '/guilds/:guild_id/members/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams, body: optionalBody(ModifyGuildMember) } },
      async (request) => {
        const { guild_id, user_id } = request.params;
        const input = parse(ModifyGuildMember, request.body ?? {});
        return members.modifyMember(callerOf(request), guild_id, user_id, input, reasonOf(request));
      },
    );
    app.delete<GuildUser>(
      '/guilds/:guild_id/members/:user_id',
      { config: MEMBER, schema: { params: GuildUserParams } },
      async (request, reply) => {
        const { guild_id, user_id } = request.params;
        await members.kick(callerOf(request), guild_id, user_id, reasonOf(request));
        return reply.code(204).send();
      },
    );
    for (const [method, add] of [
      ['PUT', true],
      ['DELETE', false],
    ] as const) {
      app.route<GuildUserRole>({
        method,
        url: '/guilds/:guild_id/members/:user_id/roles/:role_id',
        config: MEMBER,
        schema: { params: GuildUserRoleParams },
        handler: async (request, reply) => {
          const { guild_id, user_id, role_id } = request.params;
          await members.changeRole(callerOf(request), guild_id, user_id, role_id, add, reasonOf(request));
          return reply.code(204).send();
        },
      });
    }
    app.get<Guild>(
      '/users/@me/guilds/:guild_id/member',
      {
        config: { auth: { user: true, bearer: [Scopes.GuildsMembersRead] } },
        schema: { params: GuildParams },
      },
      async (request) => members.currentMember(request.principal!.userId, request.params.guild_id),
    );
  };
}
