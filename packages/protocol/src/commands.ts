/** Application commands (GUILDS.md §6; seed: Records "Command", Limits, Versioning). */

export const ApplicationCommandTypes = {
  ChatInput: 1,
  User: 2,
  Message: 3,
  /** The seed's command type for an app's Activity launcher. */
  PrimaryEntryPoint: 4,
} as const;
export type ApplicationCommandType = (typeof ApplicationCommandTypes)[keyof typeof ApplicationCommandTypes];

export const ApplicationCommandOptionTypes = {
  Subcommand: 1,
  SubcommandGroup: 2,
  String: 3,
  Integer: 4,
  Boolean: 5,
  User: 6,
  Channel: 7,
  Role: 8,
  Mentionable: 9,
  Number: 10,
  Attachment: 11,
} as const;
export type ApplicationCommandOptionType =
  (typeof ApplicationCommandOptionTypes)[keyof typeof ApplicationCommandOptionTypes];

/** `handler` of a PRIMARY_ENTRY_POINT command (seed names 2 SERVICE_LAUNCH_ACTIVITY; the docs DISCORD_…). */
export const EntryPointCommandHandlerTypes = {
  AppHandler: 1,
  ServiceLaunchActivity: 2,
} as const;
export type EntryPointCommandHandlerType =
  (typeof EntryPointCommandHandlerTypes)[keyof typeof EntryPointCommandHandlerTypes];

/** Where a command may be run (`contexts`; the interaction's `context`). */
export const InteractionContextTypes = {
  Guild: 0,
  BotDm: 1,
  PrivateChannel: 2,
} as const;
export type InteractionContextType = (typeof InteractionContextTypes)[keyof typeof InteractionContextTypes];

/** `type` of one command permission overwrite. */
export const ApplicationCommandPermissionTypes = {
  Role: 1,
  User: 2,
  Channel: 3,
} as const;
export type ApplicationCommandPermissionType =
  (typeof ApplicationCommandPermissionTypes)[keyof typeof ApplicationCommandPermissionTypes];

/** Limits of commands; per scope means globally per app, and per guild per app. */
export const CommandLimits = {
  /** CHAT_INPUT commands per scope (docs: 100 global, the same per guild). */
  chatInputPerScope: 100,
  /** USER and MESSAGE context menu commands, each per type and scope (seed: 15 per type). */
  contextMenuPerType: 15,
  /** PRIMARY_ENTRY_POINT commands: one global per app (seed), none in a guild. */
  entryPointGlobal: 1,
  /** Entries of one bulk overwrite: every type's limit together (the platform answers 130 at 100 + 15 + 15). */
  bulkOverwriteMax: 130,
  nameMinLength: 1,
  nameMaxLength: 32,
  descriptionMinLength: 1,
  descriptionMaxLength: 100,
  /** Options of a command, subcommands of a group, parameters of a subcommand. */
  optionsMax: 25,
  choicesMax: 25,
  choiceNameMaxLength: 100,
  choiceStringValueMaxLength: 100,
  /** `min_length` 0–6000, `max_length` 1–6000 on STRING options. */
  stringLengthMax: 6000,
  /** Names, descriptions, choice names and values of a command together, localizations included. */
  commandMaxSize: 8000,
  /** Permission overwrites of one command in one guild. */
  permissionsMax: 100,
  /** INTEGER options: -2^53+1 … 2^53-1; NUMBER options: -2^53 … 2^53. */
  integerMax: Number.MAX_SAFE_INTEGER,
  numberMax: 2 ** 53,
} as const;

/**
 * Names of CHAT_INPUT commands and of options (docs, Application Command Naming; unicode flag): letters,
 * digits, `-`, `_`, `'`, Devanagari and Thai; lowercase where a letter has a lowercase form.
 */
export const CHAT_INPUT_NAME_PATTERN = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

/** The `id` of a permission overwrite meaning every channel of the guild is `guild_id - 1` (docs). */
export function allChannelsPermissionId(guildId: string): string {
  return (BigInt(guildId) - 1n).toString();
}

/**
 * The contexts a command answers with when none were set: every context for a global command (the deprecated
 * `dm_permission: false` drops BOT_DM); guild commands run in their guild only.
 */
export const DEFAULT_COMMAND_CONTEXTS: readonly InteractionContextType[] = [
  InteractionContextTypes.Guild,
  InteractionContextTypes.BotDm,
  InteractionContextTypes.PrivateChannel,
];
