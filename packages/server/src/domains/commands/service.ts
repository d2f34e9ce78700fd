import {
  ApplicationFlags,
  CommandLimits,
  FormErrors,
  IntegrationTypes,
  ApplicationCommandTypes as T,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildAccess } from '../guilds/access.js';
import { type CommandDefinition, FormErrorsCollector, readCommand, type Scope } from './command-body.js';
import { type CommandObject, definitionOf, toCommandObject } from './objects.js';
import * as store from './store.js';

/** What the commands domain needs to know of an application (the applications domain owns them). */
export interface CommandApplication {
  id: string;
  name: string;
  botUserId: string;
  description: string;
  /** ApplicationFlags; EMBEDDED (Activities enabled) allows an entry point command. */
  flags: bigint;
}

export interface CommandsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  application(db: Executor, id: string): Promise<CommandApplication | undefined>;
}

/** Who manages an application's commands: its bot, or a client-credentials token of it (route auth checks scopes). */
export interface CommandsCaller {
  applicationId: string;
  userId: string;
}

/** Commands are a guild install's and a user install's alike unless they say otherwise (docs default: the app's). */
const DEFAULT_INTEGRATION_TYPES: readonly number[] = [
  IntegrationTypes.GuildInstall,
  IntegrationTypes.UserInstall,
];

/**
 * Application commands (GUILDS.md §6; docs: Application Commands): global and guild commands with their
 * upsert, edit, delete and bulk overwrite, the per-type limits of each scope, and the `version` each
 * change renews. Permissions and the user-side index live beside (permissions.ts, index.ts).
 */
export class CommandsService {
  readonly #deps: CommandsDeps;

  constructor(deps: CommandsDeps) {
    this.#deps = deps;
  }

  get deps(): CommandsDeps {
    return this.#deps;
  }

  /** GET …/commands: the scope's commands, oldest first. */
  async listCommands(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
    withLocalizations: boolean,
  ): Promise<CommandObject[]> {
    const { db } = this.#deps.storage;
    await this.authorize(db, caller, applicationId, guildId);
    const rows = await store.commandsOf(db, applicationId, guildId);
    return rows.map((row) => toCommandObject(row, DEFAULT_INTEGRATION_TYPES, withLocalizations));
  }

  /**
   * POST …/commands: creates the command, or replaces the one of the same type and name (docs: 201 when new,
   * 200 when an existing command was overwritten, keeping its id). A new one past its type's limit is 30032.
   */
  async createCommand(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
    input: unknown,
  ): Promise<{ command: CommandObject; created: boolean }> {
    return this.#deps.storage.transaction(async (tx) => {
      const application = await this.authorize(tx, caller, applicationId, guildId);
      const errors = new FormErrorsCollector();
      const definition = readCommand(input, scopeOf(application, guildId), errors);
      if (!definition) throw errors.error();
      const existing = await store.findByName(tx, applicationId, guildId, definition.type, definition.name);
      if (existing) {
        await this.#write(tx, existing.id, definition);
        return { command: await this.#object(tx, existing.id), created: false };
      }
      await this.#requireRoom(tx, applicationId, guildId, definition.type, 1);
      const id = await this.#insert(tx, applicationId, guildId, definition);
      return { command: await this.#object(tx, id), created: true };
    });
  }

  /** GET …/commands/{id}: 10063 for a command of another application or another scope. */
  async getCommandOf(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
    commandId: string,
  ): Promise<CommandObject> {
    const { db } = this.#deps.storage;
    await this.authorize(db, caller, applicationId, guildId);
    const row = await this.#command(db, applicationId, guildId, commandId);
    return toCommandObject(row, DEFAULT_INTEGRATION_TYPES);
  }

  /**
   * PATCH …/commands/{id}: the given fields over the stored ones, read again by the same rules; the type
   * stays. Renaming onto another command of the type and scope is 40041.
   */
  async editCommand(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
    commandId: string,
    input: unknown,
  ): Promise<CommandObject> {
    return this.#deps.storage.transaction(async (tx) => {
      await this.authorize(tx, caller, applicationId, guildId);
      const row = await this.#command(tx, applicationId, guildId, commandId);
      if (typeof input !== 'object' || input === null || Array.isArray(input))
        throw new HearthError('InvalidFormBody', { errors: { _errors: [FormErrors.modelType()] } });
      const current = definitionOf(row);
      const errors = new FormErrorsCollector();
      // An existing entry point stays editable: Activities are asked for when one is made.
      const definition = readCommand({ ...current, ...input, type: current.type }, { guildId }, errors);
      if (!definition) throw errors.error();
      const clash = await store.findByName(tx, applicationId, guildId, definition.type, definition.name);
      if (clash && clash.id !== row.id) throw new HearthError('ApplicationCommandNameExists');
      await this.#write(tx, row.id, definition);
      return this.#object(tx, row.id);
    });
  }

  /** DELETE …/commands/{id}: the command and its permissions in every guild. */
  async deleteCommand(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
    commandId: string,
  ): Promise<void> {
    await this.#deps.storage.transaction(async (tx) => {
      await this.authorize(tx, caller, applicationId, guildId);
      await this.#command(tx, applicationId, guildId, commandId);
      await store.deleteCommands(tx, [commandId]);
    });
  }

  /**
   * PUT …/commands: the scope's commands become the list, all or nothing. A listed command matching an
   * existing one by type and name keeps its id (its version renews only when it changed); the others are
   * created, and every unlisted one is deleted. Each type's limit holds over the whole list.
   */
  async bulkOverwrite(
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
    input: unknown,
  ): Promise<CommandObject[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const application = await this.authorize(tx, caller, applicationId, guildId);
      const definitions = readCommandList(input, scopeOf(application, guildId));
      for (const type of Object.values(T)) {
        const count = definitions.filter((d) => d.type === type).length;
        const max = limitOf(type, guildId);
        if (count > max)
          throw new HearthError('MaximumApplicationCommands', { values: { max: String(max) } });
      }
      const existing = await store.commandsOf(tx, applicationId, guildId);
      const keyOf = (type: number, name: string) => `${type}\u0000${name}`;
      const byKey = new Map(existing.map((row) => [keyOf(Number(row.type), row.name), row]));
      const ids: string[] = [];
      for (const definition of definitions) {
        const match = byKey.get(keyOf(definition.type, definition.name));
        if (match) {
          byKey.delete(keyOf(definition.type, definition.name));
          await this.#write(tx, match.id, definition);
          ids.push(match.id);
        } else {
          ids.push('');
        }
      }
      // Unlisted commands go before new ones come, so that a name freed in the list can be taken again.
      await store.deleteCommands(
        tx,
        [...byKey.values()].map((row) => row.id),
      );
      for (const [index, definition] of definitions.entries()) {
        if (ids[index] === '') ids[index] = await this.#insert(tx, applicationId, guildId, definition);
      }
      const out: CommandObject[] = [];
      for (const id of ids) out.push(await this.#object(tx, id));
      return out;
    });
  }

  /** An application's global commands, for its owner's pages (the portal checked who is asking). */
  async globalCommandsOf(applicationId: string): Promise<CommandObject[]> {
    const rows = await store.commandsOf(this.#deps.storage.db, applicationId, null);
    return rows.map((row) => toCommandObject(row, DEFAULT_INTEGRATION_TYPES));
  }

  /** A command of the application, global or of any guild (for interactions); undefined when it has none. */
  async getCommand(applicationId: string, commandId: string): Promise<CommandObject | undefined> {
    const row = await store.findCommand(this.#deps.storage.db, commandId);
    if (!row || row.application_id !== applicationId) return undefined;
    return toCommandObject(row, DEFAULT_INTEGRATION_TYPES);
  }

  // ---- Steps ----

  /**
   * The caller acts for this application (20012 otherwise) and, for a guild's commands, the application is
   * in that guild: installed with `applications.commands` alone, or its bot is a member (10004 unknown
   * guild, 50001 otherwise).
   */
  async authorize(
    db: Executor,
    caller: CommandsCaller,
    applicationId: string,
    guildId: string | null,
  ): Promise<CommandApplication> {
    if (caller.applicationId !== applicationId) throw new HearthError('NotAuthorizedForApplication');
    const application = await this.#deps.application(db, applicationId);
    if (!application) throw new HearthError('UnknownApplication');
    if (guildId !== null && !(await store.isCommandsInstalled(db, applicationId, guildId)))
      await this.#deps.access.member(db, guildId, application.botUserId);
    return application;
  }

  /** Whether the application was installed to the guild with `applications.commands` alone (no bot). */
  commandsInstalled(db: Executor, applicationId: string, guildId: string): Promise<boolean> {
    return store.isCommandsInstalled(db, applicationId, guildId);
  }

  /** The application's command in this scope; 10063 otherwise. */
  async #command(db: Executor, applicationId: string, guildId: string | null, commandId: string) {
    const row = await store.findCommand(db, commandId);
    if (!row || row.application_id !== applicationId || row.scope !== store.scopeOf(guildId))
      throw new HearthError('UnknownApplicationCommand');
    return row;
  }

  /** 30032 unless `adding` more commands of `type` fit in the scope. */
  async #requireRoom(
    tx: Executor,
    applicationId: string,
    guildId: string | null,
    type: number,
    adding: number,
  ) {
    const max = limitOf(type, guildId);
    const count = await store.countOfType(tx, applicationId, guildId, type);
    if (count + adding > max)
      throw new HearthError('MaximumApplicationCommands', { values: { max: String(max) } });
  }

  async #insert(tx: Executor, applicationId: string, guildId: string | null, definition: CommandDefinition) {
    const id = this.#deps.snowflakes.next();
    await store.insertCommand(tx, {
      id,
      application_id: applicationId,
      guild_id: guildId,
      scope: store.scopeOf(guildId),
      ...columnsOf(definition),
      version: this.#deps.snowflakes.next(),
      created_at: this.#deps.clock.now(),
    });
    return id;
  }

  /** Stores a definition over a command; a new `version` only when something changed. */
  async #write(tx: Executor, id: string, definition: CommandDefinition): Promise<void> {
    const row = await store.findCommand(tx, id);
    if (!row) throw new HearthError('UnknownApplicationCommand');
    const columns = columnsOf(definition);
    const changed = (Object.keys(columns) as Array<keyof typeof columns>).some(
      (key) => String(columns[key]) !== String(row[key]),
    );
    if (!changed) return;
    await store.updateCommand(tx, id, { ...columns, version: this.#deps.snowflakes.next() });
  }

  async #object(db: Executor, id: string): Promise<CommandObject> {
    const row = await store.findCommand(db, id);
    if (!row) throw new HearthError('UnknownApplicationCommand');
    return toCommandObject(row, DEFAULT_INTEGRATION_TYPES);
  }

  async publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}

/** The limit of a type in a scope: 100 chat input, 15 per context menu type, one global entry point. */
export function limitOf(type: number, guildId: string | null): number {
  if (type === T.ChatInput) return CommandLimits.chatInputPerScope;
  if (type === T.PrimaryEntryPoint) return guildId === null ? CommandLimits.entryPointGlobal : 0;
  return CommandLimits.contextMenuPerType;
}

/** The body of a bulk overwrite: at most 130 commands, each read by the rules, names unique per type. */
/** The scope a command body is read in: its guild, and whether the application has Activities. */
function scopeOf(application: CommandApplication, guildId: string | null): Scope {
  return { guildId, activities: (application.flags & ApplicationFlags.Embedded) !== 0n };
}

function readCommandList(input: unknown, scope: Scope): CommandDefinition[] {
  const errors = new FormErrorsCollector();
  if (!Array.isArray(input)) {
    errors.add([], FormErrors.array());
    throw errors.error();
  }
  if (input.length > CommandLimits.bulkOverwriteMax) {
    errors.add([], FormErrors.maxItems(CommandLimits.bulkOverwriteMax));
    throw errors.error();
  }
  const out: CommandDefinition[] = [];
  const seen = new Set<string>();
  input.forEach((item, index) => {
    const definition = readCommand(item, scope, errors, [String(index)]);
    if (!definition) return;
    const key = `${definition.type}\u0000${definition.name}`;
    if (seen.has(key)) errors.add([String(index), 'name'], FormErrors.commandNameDuplicated(definition.name));
    seen.add(key);
    out.push(definition);
  });
  if (errors.failed) throw errors.error();
  return out;
}

function columnsOf(definition: CommandDefinition) {
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
  return {
    type: definition.type,
    name: definition.name,
    name_localizations: json(definition.name_localizations),
    description: definition.description,
    description_localizations: json(definition.description_localizations),
    options: json(definition.options),
    default_member_permissions: definition.default_member_permissions,
    contexts: json(definition.contexts),
    integration_types: json(definition.integration_types),
    nsfw: definition.nsfw ? 1 : 0,
    handler: definition.handler,
  };
}
