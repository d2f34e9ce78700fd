import { Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { HearthError } from '../../kernel/errors.js';
import { optionalBody } from '../../kernel/validation.js';
import { userOf } from '../channels/routes.js';
import type { CommandIndex } from './command-index.js';
import { type CommandPermissions, EditPermissions } from './permissions.js';
import {
  ApplicationParams,
  CommandParams,
  GuildCommandParams,
  GuildParams,
  IndexGuildParams,
  ListQuery,
} from './schemas.js';
import type { CommandsCaller, CommandsService } from './service.js';

/** Bot tokens, and client-credentials tokens holding `applications.commands.update` (docs: Authorization). */
const MANAGER = { auth: { bot: true, bearer: [Scopes.ApplicationsCommandsUpdate] } } as const;

type App = { Params: Static<typeof ApplicationParams> };
type AppCommand = { Params: Static<typeof CommandParams> };
type Guild = { Params: Static<typeof GuildParams> };
type GuildCommand = { Params: Static<typeof GuildCommandParams> };
type List = { Querystring: Static<typeof ListQuery> };

/** The application a bot or bearer token acts for. */
export function callerOf(request: FastifyRequest): CommandsCaller {
  const principal = request.principal;
  if (!principal) throw new HearthError('GeneralUnauthorized');
  if (principal.kind === 'user') throw new HearthError('GeneralUnauthorized');
  return { applicationId: principal.applicationId, userId: principal.userId };
}

/** Global and guild command routes (docs: Application Commands, Endpoints). */
export function commandsRoutes(commands: CommandsService): FastifyPluginAsync {
  return async (app) => {
    // ---- Global ----
    app.get<App & List>(
      '/applications/:application_id/commands',
      { config: MANAGER, schema: { params: ApplicationParams, querystring: ListQuery } },
      async (request) =>
        commands.listCommands(
          callerOf(request),
          request.params.application_id,
          null,
          request.query.with_localizations === true,
        ),
    );
    app.post<App>(
      '/applications/:application_id/commands',
      { config: MANAGER, schema: { params: ApplicationParams } },
      async (request, reply) => {
        const result = await commands.createCommand(
          callerOf(request),
          request.params.application_id,
          null,
          request.body,
        );
        return reply.code(result.created ? 201 : 200).send(result.command);
      },
    );
    app.put<App>(
      '/applications/:application_id/commands',
      { config: MANAGER, schema: { params: ApplicationParams } },
      async (request) =>
        commands.bulkOverwrite(callerOf(request), request.params.application_id, null, request.body),
    );
    app.get<AppCommand>(
      '/applications/:application_id/commands/:command_id',
      { config: MANAGER, schema: { params: CommandParams } },
      async (request) =>
        commands.getCommandOf(
          callerOf(request),
          request.params.application_id,
          null,
          request.params.command_id,
        ),
    );
    app.patch<AppCommand>(
      '/applications/:application_id/commands/:command_id',
      { config: MANAGER, schema: { params: CommandParams } },
      async (request) =>
        commands.editCommand(
          callerOf(request),
          request.params.application_id,
          null,
          request.params.command_id,
          request.body,
        ),
    );
    app.delete<AppCommand>(
      '/applications/:application_id/commands/:command_id',
      { config: MANAGER, schema: { params: CommandParams } },
      async (request, reply) => {
        await commands.deleteCommand(
          callerOf(request),
          request.params.application_id,
          null,
          request.params.command_id,
        );
        return reply.code(204).send();
      },
    );

    // ---- Guild ----
    app.get<Guild & List>(
      '/applications/:application_id/guilds/:guild_id/commands',
      { config: MANAGER, schema: { params: GuildParams, querystring: ListQuery } },
      async (request) =>
        commands.listCommands(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.query.with_localizations === true,
        ),
    );
    app.post<Guild>(
      '/applications/:application_id/guilds/:guild_id/commands',
      { config: MANAGER, schema: { params: GuildParams } },
      async (request, reply) => {
        const result = await commands.createCommand(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.body,
        );
        return reply.code(result.created ? 201 : 200).send(result.command);
      },
    );
    app.put<Guild>(
      '/applications/:application_id/guilds/:guild_id/commands',
      { config: MANAGER, schema: { params: GuildParams } },
      async (request) =>
        commands.bulkOverwrite(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.body,
        ),
    );
    app.get<GuildCommand>(
      '/applications/:application_id/guilds/:guild_id/commands/:command_id',
      { config: MANAGER, schema: { params: GuildCommandParams } },
      async (request) =>
        commands.getCommandOf(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.params.command_id,
        ),
    );
    app.patch<GuildCommand>(
      '/applications/:application_id/guilds/:guild_id/commands/:command_id',
      { config: MANAGER, schema: { params: GuildCommandParams } },
      async (request) =>
        commands.editCommand(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.params.command_id,
          request.body,
        ),
    );
    app.delete<GuildCommand>(
      '/applications/:application_id/guilds/:guild_id/commands/:command_id',
      { config: MANAGER, schema: { params: GuildCommandParams } },
      async (request, reply) => {
        await commands.deleteCommand(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.params.command_id,
        );
        return reply.code(204).send();
      },
    );
  };
}

/** Bot tokens and bearer tokens of the application read permissions (docs: Get … Command Permissions). */
const READER = { auth: { bot: true, bearer: [] } } as const;
/** A person's bearer token with `applications.commands.permissions.update`; bots get 20001 (docs). */
const EDITOR = { auth: { bearer: [Scopes.ApplicationsCommandsPermissionsUpdate] } } as const;

/** Command permissions (docs: Permissions) and the user-side command index. */
export function commandPermissionsRoutes(
  permissions: CommandPermissions,
  index: CommandIndex,
): FastifyPluginAsync {
  return async (app) => {
    app.get<Guild>(
      '/applications/:application_id/guilds/:guild_id/commands/permissions',
      { config: READER, schema: { params: GuildParams } },
      async (request) =>
        permissions.guildPermissions(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
        ),
    );
    app.get<GuildCommand>(
      '/applications/:application_id/guilds/:guild_id/commands/:command_id/permissions',
      { config: READER, schema: { params: GuildCommandParams } },
      async (request) =>
        permissions.commandPermissions(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.params.command_id,
        ),
    );
    app.put<GuildCommand>(
      '/applications/:application_id/guilds/:guild_id/commands/:command_id/permissions',
      { config: EDITOR, schema: { params: GuildCommandParams, body: optionalBody(EditPermissions) } },
      async (request) =>
        permissions.editPermissions(
          callerOf(request),
          request.params.application_id,
          request.params.guild_id,
          request.params.command_id,
          request.body,
        ),
    );
    // Hearth's equivalent of the platform client's command index: what a person may run, to discover commands.
    app.get<{ Params: Static<typeof IndexGuildParams> }>(
      '/guilds/:guild_id/application-command-index',
      { config: { auth: { user: true } }, schema: { params: IndexGuildParams } },
      async (request) => index.guildIndex(userOf(request), request.params.guild_id),
    );
    app.get('/users/@me/application-command-index', { config: { auth: { user: true } } }, async (request) =>
      index.userIndex(userOf(request)),
    );
  };
}
