import { DEFAULT_COMMAND_CONTEXTS, PermissionFlags } from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import { has } from '../guilds/permissions.js';

/** A command as the commands domain answers it (its wire object's fields interactions read). */
export interface CommandView {
  id: string;
  type: number;
  name: string;
  guild_id?: string;
  default_member_permissions: string | null;
  contexts: number[] | null;
  integration_types: number[];
  version: string;
}

/** The commands domain as interactions need it: a seam, wired in app.ts (STYLE rule 16). */
export interface CommandsPort {
  getCommand(applicationId: string, commandId: string): Promise<CommandView | undefined>;
  /** Whether the application was installed to the guild with `applications.commands` alone (no bot). */
  commandsInstalled(db: Executor, applicationId: string, guildId: string): Promise<boolean>;
}

/**
 * Whether the user may run the command where they are (DOCS application-commands, "Contexts" and
 * "Permissions"): a guild command only in its guild; its `contexts` admit the interaction's context; one of
 * its `integration_types` is an installation present here; in guilds `default_member_permissions` are held
 * (ADMINISTRATOR holds all). Unknown, or not runnable here: 10063.
 */
export function requireUsable(
  command: CommandView | undefined,
  scene: { guildId: string | null; context: number; installedAs: readonly number[]; userPermissions: bigint },
): CommandView {
  if (!command) throw new HearthError('UnknownApplicationCommand');
  if (command.guild_id !== undefined && command.guild_id !== scene.guildId)
    throw new HearthError('UnknownApplicationCommand');
  const contexts: readonly number[] = command.contexts ?? DEFAULT_COMMAND_CONTEXTS;
  if (!contexts.includes(scene.context)) throw new HearthError('UnknownApplicationCommand');
  if (!command.integration_types.some((type) => scene.installedAs.includes(type)))
    throw new HearthError('UnknownApplicationCommand');
  if (scene.guildId !== null && command.default_member_permissions !== null) {
    const needed = BigInt(command.default_member_permissions);
    const admin = has(scene.userPermissions, PermissionFlags.Administrator);
    if (!admin && !has(scene.userPermissions, needed)) throw new HearthError('MissingPermissions');
  }
  return command;
}
