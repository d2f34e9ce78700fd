import {
  InteractionContextTypes as C,
  IntegrationTypes,
  type InteractionContextType,
  PermissionFlags,
  Scopes,
} from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import { basePermissions, has } from '../guilds/permissions.js';
import { type CommandObject, toCommandObject } from './objects.js';
import { type MemberContext, memberMayUse } from './permissions.js';
import type { CommandsService } from './service.js';
import * as store from './store.js';

/** Where a user is about to run a command (the interaction's `context`). */
export type CommandPlace =
  | { context: typeof C.Guild; guildId: string; channelId?: string }
  /** A DM with an application's bot: that application's commands. */
  | { context: typeof C.BotDm; applicationId: string }
  | { context: typeof C.PrivateChannel };

/** A command a user may run, with how its application got there (`authorizing_integration_owners`). */
export interface UsableCommand {
  command: CommandObject;
  /** Integration type → the guild id (guild install) or the user id (user install), values as strings. */
  authorizingIntegrationOwners: Partial<Record<'0' | '1', string>>;
}

/** The applications and commands an index lists (the platform client's application-command-index). */
export interface CommandIndexObject {
  applications: Array<{ id: string; name: string; description: string; icon: null; bot_id: string }>;
  application_commands: CommandObject[];
}

const DEFAULT_INTEGRATION_TYPES = [IntegrationTypes.GuildInstall, IntegrationTypes.UserInstall];

/**
 * Which commands a user may use in a place (docs: Interaction Contexts, Installation Context, Permissions):
 * in a guild, those of applications whose bot is a member (guild install) and those the user installed
 * (user install); in a bot DM, that application's; in a private channel, the user-installed ones. A bot
 * that left a guild takes its commands with it from the guild, without deleting them.
 */
export class CommandIndex {
  readonly #commands: CommandsService;

  constructor(commands: CommandsService) {
    this.#commands = commands;
  }

  async usableCommands(userId: string, place: CommandPlace): Promise<UsableCommand[]> {
    const { db } = this.#commands.deps.storage;
    const userInstalled = await this.#userInstalled(db, userId);
    if (place.context === C.Guild) return this.#inGuild(db, userId, place, userInstalled);
    const installs = new Map<string, Partial<Record<'0' | '1', string>>>();
    for (const id of userInstalled) installs.set(id, { '1': userId });
    if (place.context === C.BotDm) {
      // In a DM with the bot, a guild install counts when the bot shares a guild with the user; its owner is
      // then "0" (docs: authorizing_integration_owners).
      const application = await this.#commands.deps.application(db, place.applicationId);
      if (application && (await store.sharesGuild(db, userId, application.botUserId)))
        installs.set(place.applicationId, { '0': '0', ...installs.get(place.applicationId) });
    }
    const out: UsableCommand[] = [];
    for (const row of await store.commandsForGuilds(db, [...installs.keys()], null)) {
      if (place.context === C.BotDm && row.application_id !== place.applicationId) continue;
      const command = toCommandObject(row, DEFAULT_INTEGRATION_TYPES);
      const owners = installs.get(row.application_id) ?? {};
      if (!runsIn(command, place.context, owners)) continue;
      out.push({ command, authorizingIntegrationOwners: owners });
    }
    return out;
  }

  /** GET /guilds/{guild}/application-command-index: what a member may run in the guild. */
  async guildIndex(userId: string, guildId: string): Promise<CommandIndexObject> {
    return this.#index(await this.usableCommands(userId, { context: C.Guild, guildId }));
  }

  /** GET /users/@me/application-command-index: the user's installed applications' commands outside guilds. */
  async userIndex(userId: string): Promise<CommandIndexObject> {
    return this.#index(await this.usableCommands(userId, { context: C.PrivateChannel }));
  }

  async #inGuild(
    db: Executor,
    userId: string,
    place: { guildId: string; channelId?: string },
    userInstalled: readonly string[],
  ): Promise<UsableCommand[]> {
    const { access } = this.#commands.deps;
    const member = await access.member(db, place.guildId, userId);
    if (place.channelId !== undefined) {
      const inChannel = await access.permissionsIn(db, member, place.channelId);
      if (!has(inChannel, PermissionFlags.UseApplicationCommands)) return [];
    }
    const context: MemberContext = {
      guildId: place.guildId,
      userId,
      roleIds: member.input.roles.map((role) => role.id),
      permissions: basePermissions(member.input, access.now()),
      ...(place.channelId === undefined ? {} : { channelId: place.channelId }),
    };
    const installs = new Map<string, Partial<Record<'0' | '1', string>>>();
    for (const id of await store.applicationsInGuild(db, place.guildId))
      installs.set(id, { '0': place.guildId });
    for (const id of userInstalled) installs.set(id, { ...installs.get(id), '1': userId });
    const overwrites = new Map<string, Array<{ id: string; type: number; permission: boolean }>>();
    for (const id of installs.keys()) {
      for (const row of await store.permissionsOfApplication(db, id, place.guildId))
        overwrites.set(row.command_id, JSON.parse(row.permissions));
    }
    const out: UsableCommand[] = [];
    for (const row of await store.commandsForGuilds(db, [...installs.keys()], place.guildId)) {
      const owners = installs.get(row.application_id) ?? {};
      // Guild commands belong to the guild install: a user install alone does not bring them.
      if (row.guild_id !== null && owners['0'] === undefined) continue;
      const command = toCommandObject(row, DEFAULT_INTEGRATION_TYPES);
      if (!runsIn(command, C.Guild, owners)) continue;
      const guildInstalled = owners['0'] !== undefined;
      if (
        guildInstalled &&
        !memberMayUse(
          context,
          command.default_member_permissions,
          overwrites.get(row.id),
          overwrites.get(row.application_id),
        )
      )
        continue;
      out.push({ command, authorizingIntegrationOwners: owners });
    }
    return out;
  }

  /** Applications the user installed for themself with the commands scope. */
  async #userInstalled(db: Executor, userId: string): Promise<string[]> {
    const grants = await store.userInstallGrants(db, userId);
    return grants
      .filter((grant) => grant.scopes.split(' ').includes(Scopes.ApplicationsCommands))
      .map((grant) => grant.application_id);
  }

  async #index(usable: readonly UsableCommand[]): Promise<CommandIndexObject> {
    const { storage, application } = this.#commands.deps;
    const applications: CommandIndexObject['applications'] = [];
    for (const id of new Set(usable.map((entry) => entry.command.application_id))) {
      const found = await application(storage.db, id);
      if (!found) throw new HearthError('UnknownApplication');
      applications.push({
        id,
        name: found.name,
        description: found.description,
        icon: null,
        bot_id: found.botUserId,
      });
    }
    return { applications, application_commands: usable.map((entry) => entry.command) };
  }
}

/**
 * Whether a command runs in a context for an application installed as `owners`: its `contexts` (all when
 * null) hold the context and its `integration_types` one of the installs.
 */
function runsIn(
  command: CommandObject,
  context: InteractionContextType,
  owners: Partial<Record<'0' | '1', string>>,
): boolean {
  if (command.guild_id !== undefined) return context === C.Guild;
  if (command.contexts !== null && !command.contexts.includes(context)) return false;
  const installs = command.integration_types;
  const guildInstall = owners['0'] !== undefined && installs.includes(IntegrationTypes.GuildInstall);
  const userInstall = owners['1'] !== undefined && installs.includes(IntegrationTypes.UserInstall);
  if (context === C.PrivateChannel) return userInstall;
  if (context === C.BotDm) return userInstall || guildInstall;
  return guildInstall || userInstall;
}
