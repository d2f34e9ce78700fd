import {
  ALL_PERMISSIONS,
  allChannelsPermissionId,
  CommandLimits,
  ApplicationCommandPermissionTypes as P,
  PermissionFlags,
} from '@hearth/protocol';
import { type Static, Type } from 'typebox';
import type { BusEvent } from '../../bus/bus.js';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor } from '../../storage/database.js';
import { has } from '../guilds/permissions.js';
import type { CommandPermissionsObject } from './objects.js';
import type { CommandsCaller, CommandsService } from './service.js';
import * as store from './store.js';

/** Edit Application Command Permissions body (docs): up to 100 overwrites of roles, users and channels. */
export const EditPermissions = Type.Object({
  permissions: Type.Array(
    Type.Object({
      id: Type.String({ format: 'snowflake' }),
      type: Type.Union([Type.Literal(P.Role), Type.Literal(P.User), Type.Literal(P.Channel)]),
      permission: Type.Boolean(),
    }),
    { maxItems: CommandLimits.permissionsMax },
  ),
});
type Overwrites = Static<typeof EditPermissions>['permissions'];

/** Who edits: a person's bearer token (bots are refused by the route) holding the scope the route names. */
export interface PermissionsEditor extends CommandsCaller {}

/**
 * Command permissions in a guild (docs: Permissions; GUILDS.md §6): overwrites per command, or per
 * application when the id is the application's own (they apply to every command without its own).
 */
export class CommandPermissions {
  readonly #commands: CommandsService;

  constructor(commands: CommandsService) {
    this.#commands = commands;
  }

  /** GET …/guilds/{guild}/commands/permissions: every overwrite list of the application in the guild. */
  async guildPermissions(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string,
  ): Promise<CommandPermissionsObject[]> {
    const { db } = this.#commands.deps.storage;
    await this.#commands.authorize(db, caller, applicationId, guildId);
    const rows = await store.permissionsOfApplication(db, applicationId, guildId);
    return rows.map((row) => toPermissionsObject(row.command_id, applicationId, guildId, row.permissions));
  }

  /**
   * GET …/commands/{command}/permissions: the command's overwrites in the guild, 10066 while it has none
   * (the platform's answer); the command is a global one, one of this guild, or the application itself.
   */
  async commandPermissions(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string,
    commandId: string,
  ): Promise<CommandPermissionsObject> {
    const { db } = this.#commands.deps.storage;
    await this.#commands.authorize(db, caller, applicationId, guildId);
    await this.#target(db, applicationId, guildId, commandId);
    const row = await store.permissionsOf(db, guildId, commandId);
    if (!row) throw new HearthError('UnknownApplicationCommandPermissions');
    return toPermissionsObject(commandId, applicationId, guildId, row.permissions);
  }

  /**
   * PUT …/commands/{command}/permissions: replaces the overwrites. The token's user manages the guild
   * (MANAGE_GUILD and MANAGE_ROLES, docs); APPLICATION_COMMAND_PERMISSIONS_UPDATE reaches the guild.
   */
  async editPermissions(
    editor: PermissionsEditor,
    applicationId: string,
    guildId: string,
    commandId: string,
    input: unknown,
  ): Promise<CommandPermissionsObject> {
    const body = parse(EditPermissions, input ?? {});
    const { storage, access } = this.#commands.deps;
    const result = await storage.transaction(async (tx) => {
      await this.#commands.authorize(tx, editor, applicationId, guildId);
      await access.requireGuild(
        tx,
        guildId,
        editor.userId,
        PermissionFlags.ManageGuild | PermissionFlags.ManageRoles,
      );
      await this.#target(tx, applicationId, guildId, commandId);
      const permissions = JSON.stringify(dedupe(body.permissions));
      await store.savePermissions(
        tx,
        { guild_id: guildId, command_id: commandId, application_id: applicationId, permissions },
        body.permissions.length === 0,
      );
      return toPermissionsObject(commandId, applicationId, guildId, permissions);
    });
    const event: BusEvent = {
      type: 'APPLICATION_COMMAND_PERMISSIONS_UPDATE',
      data: { ...result },
      audience: { guildId },
    };
    await this.#commands.publish([event]);
    return result;
  }

  /** 10063 unless the id is the application's, one of its global commands, or one of its commands here. */
  async #target(db: Executor, applicationId: string, guildId: string, commandId: string): Promise<void> {
    if (commandId === applicationId) return;
    const row = await store.findCommand(db, commandId);
    if (!row || row.application_id !== applicationId || (row.guild_id !== null && row.guild_id !== guildId))
      throw new HearthError('UnknownApplicationCommand');
  }
}

/** One overwrite per target: a later entry for the same id and type replaces an earlier one. */
function dedupe(overwrites: Overwrites): Overwrites {
  const byKey = new Map(overwrites.map((entry) => [`${entry.type}:${entry.id}`, entry]));
  return [...byKey.values()].map(({ id, type, permission }) => ({ id, type, permission }));
}

function toPermissionsObject(
  id: string,
  applicationId: string,
  guildId: string,
  permissions: string,
): CommandPermissionsObject {
  return {
    id,
    application_id: applicationId,
    guild_id: guildId,
    permissions: JSON.parse(permissions) as CommandPermissionsObject['permissions'],
  };
}

/** What decides whether a member may use a command here (docs: Permissions; GUILDS.md §6). */
export interface MemberContext {
  guildId: string;
  userId: string;
  /** The member's roles other than @everyone. */
  roleIds: readonly string[];
  /** Guild-level permissions (all of them for owners and administrators). */
  permissions: bigint;
  channelId?: string;
}

type Entry = { id: string; type: number; permission: boolean };

/**
 * Whether a member may use a command: a channel overwrite (this channel, else all channels) that denies
 * shuts it; administrators may use every command; then the member's own overwrite, their roles' (an allow
 * on any role wins), the @everyone one; the command's overwrites before the application's; with none,
 * `default_member_permissions` (null: everyone; "0": administrators only).
 */
export function memberMayUse(
  member: MemberContext,
  defaultMemberPermissions: string | null,
  commandOverwrites: readonly Entry[] | undefined,
  applicationOverwrites: readonly Entry[] | undefined,
): boolean {
  const lists = [commandOverwrites ?? [], applicationOverwrites ?? []];
  const allChannels = allChannelsPermissionId(member.guildId);
  for (const list of lists) {
    const channels = list.filter((entry) => entry.type === P.Channel);
    const decided =
      (member.channelId === undefined
        ? undefined
        : channels.find((entry) => entry.id === member.channelId)) ??
      channels.find((entry) => entry.id === allChannels);
    if (decided) {
      if (!decided.permission) return false;
      break;
    }
  }
  if (has(member.permissions, PermissionFlags.Administrator) || member.permissions === ALL_PERMISSIONS)
    return true;
  for (const list of lists) {
    const user = list.find((entry) => entry.type === P.User && entry.id === member.userId);
    if (user) return user.permission;
    const roles = list.filter((entry) => entry.type === P.Role && member.roleIds.includes(entry.id));
    if (roles.length > 0) return roles.some((entry) => entry.permission);
    const everyone = list.find((entry) => entry.type === P.Role && entry.id === member.guildId);
    if (everyone) return everyone.permission;
  }
  if (defaultMemberPermissions === null) return true;
  return has(member.permissions, BigInt(defaultMemberPermissions)) && defaultMemberPermissions !== '0';
}
