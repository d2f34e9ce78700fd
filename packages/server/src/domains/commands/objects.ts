import { ApplicationCommandTypes, InteractionContextTypes } from '@hearth/protocol';
import type { CommandDefinition } from './command-body.js';
import type { CommandRow } from './store.js';

/** The application command object (docs: Application Command Structure; OAS ApplicationCommandResponse). */
export interface CommandObject {
  id: string;
  type: number;
  application_id: string;
  guild_id?: string;
  name: string;
  name_localizations?: Record<string, string> | null;
  description: string;
  description_localizations?: Record<string, string> | null;
  options?: Array<Record<string, unknown>>;
  default_member_permissions: string | null;
  dm_permission?: boolean;
  contexts: number[] | null;
  integration_types: number[];
  nsfw: boolean;
  handler?: number;
  version: string;
}

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The stored definition of a row, as a body reads it. */
export function definitionOf(row: CommandRow): CommandDefinition {
  return {
    type: Number(row.type),
    name: row.name,
    name_localizations: parse(row.name_localizations),
    description: row.description,
    description_localizations: parse(row.description_localizations),
    options: parse(row.options),
    default_member_permissions: row.default_member_permissions,
    contexts: parse(row.contexts),
    integration_types: parse(row.integration_types),
    nsfw: Number(row.nsfw) === 1,
    handler: row.handler === null ? null : Number(row.handler),
  };
}

/**
 * The wire object. List routes leave the localization dictionaries out unless `with_localizations` is set
 * (docs: Retrieving localized commands); single-command routes always carry them.
 */
export function toCommandObject(
  row: CommandRow,
  defaultIntegrationTypes: readonly number[],
  withLocalizations = true,
): CommandObject {
  const command = definitionOf(row);
  const global = row.guild_id === null;
  return {
    id: row.id,
    type: command.type,
    application_id: row.application_id,
    ...(global ? {} : { guild_id: row.guild_id as string }),
    name: command.name,
    ...(withLocalizations ? { name_localizations: command.name_localizations } : {}),
    description: command.description,
    ...(withLocalizations ? { description_localizations: command.description_localizations } : {}),
    ...(command.type === ApplicationCommandTypes.ChatInput ? { options: command.options ?? [] } : {}),
    default_member_permissions: command.default_member_permissions,
    // The deprecated flag still answers for global commands: whether BOT_DM is among the contexts.
    ...(global
      ? {
          dm_permission:
            command.contexts === null || command.contexts.includes(InteractionContextTypes.BotDm),
        }
      : {}),
    contexts: command.contexts,
    integration_types: command.integration_types ?? [...defaultIntegrationTypes],
    nsfw: command.nsfw,
    ...(command.handler === null ? {} : { handler: command.handler }),
    version: row.version,
  };
}

/** Guild Application Command Permissions (docs): `id` is a command's id or the application's. */
export interface CommandPermissionsObject {
  id: string;
  application_id: string;
  guild_id: string;
  permissions: Array<{ id: string; type: number; permission: boolean }>;
}
