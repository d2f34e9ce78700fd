import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ApplicationCommandsTable } from '../../storage/schema.js';

export type CommandRow = Selectable<ApplicationCommandsTable>;

/** The scope column of a command: its guild id, '' when global. */
export function scopeOf(guildId: string | null): string {
  return guildId ?? '';
}

/** An application's commands of one scope, oldest first. */
export function commandsOf(
  db: Executor,
  applicationId: string,
  guildId: string | null,
): Promise<CommandRow[]> {
  return db
    .selectFrom('application_commands')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('scope', '=', scopeOf(guildId))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findCommand(db: Executor, commandId: string): Promise<CommandRow | undefined> {
  return db.selectFrom('application_commands').selectAll().where('id', '=', commandId).executeTakeFirst();
}

export function findByName(
  db: Executor,
  applicationId: string,
  guildId: string | null,
  type: number,
  name: string,
): Promise<CommandRow | undefined> {
  return db
    .selectFrom('application_commands')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('scope', '=', scopeOf(guildId))
    .where('type', '=', type)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function countOfType(
  db: Executor,
  applicationId: string,
  guildId: string | null,
  type: number,
): Promise<number> {
  const row = await db
    .selectFrom('application_commands')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('application_id', '=', applicationId)
    .where('scope', '=', scopeOf(guildId))
    .where('type', '=', type)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertCommand(db: Executor, row: Insertable<ApplicationCommandsTable>): Promise<void> {
  await db.insertInto('application_commands').values(row).execute();
}

export async function updateCommand(
  db: Executor,
  id: string,
  changes: Omit<Partial<CommandRow>, 'id' | 'application_id' | 'guild_id' | 'scope' | 'created_at'>,
): Promise<void> {
  await db.updateTable('application_commands').set(changes).where('id', '=', id).execute();
}

export async function deleteCommands(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .deleteFrom('application_commands')
    .where('id', 'in', [...ids])
    .execute();
  // Deleting a command deletes its permissions in every guild (docs, Edit Application Command Permissions).
  await db
    .deleteFrom('application_command_permissions')
    .where('command_id', 'in', [...ids])
    .execute();
}

/** Every command of an application usable somewhere: its global ones and those of the listed guilds. */
export function commandsForGuilds(
  db: Executor,
  applicationIds: readonly string[],
  guildId: string | null,
): Promise<CommandRow[]> {
  if (applicationIds.length === 0) return Promise.resolve([]);
  const scopes = guildId === null ? [''] : ['', guildId];
  return db
    .selectFrom('application_commands')
    .selectAll()
    .where('application_id', 'in', [...applicationIds])
    .where('scope', 'in', scopes)
    .orderBy('application_id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

// ---- Permissions ----

export function permissionsOf(db: Executor, guildId: string, commandId: string) {
  return db
    .selectFrom('application_command_permissions')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('command_id', '=', commandId)
    .executeTakeFirst();
}

export function permissionsOfApplication(db: Executor, applicationId: string, guildId: string) {
  return db
    .selectFrom('application_command_permissions')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('guild_id', '=', guildId)
    .orderBy('command_id')
    .execute();
}

/** Writes a command's overwrites in a guild; an empty list removes the row. */
export async function savePermissions(
  db: Executor,
  row: { guild_id: string; command_id: string; application_id: string; permissions: string },
  empty: boolean,
): Promise<void> {
  if (empty) {
    await db
      .deleteFrom('application_command_permissions')
      .where('guild_id', '=', row.guild_id)
      .where('command_id', '=', row.command_id)
      .execute();
    return;
  }
  await db
    .insertInto('application_command_permissions')
    .values(row)
    .onConflict((oc) => oc.columns(['guild_id', 'command_id']).doUpdateSet({ permissions: row.permissions }))
    .execute();
}

// ---- What the command index reads of other domains ----

/** Applications whose bot user is a member of the guild. */
/** Applications installed to the guild: their bot is a member, or a commands-only install was made. */
export async function applicationsInGuild(db: Executor, guildId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('applications')
    .innerJoin('guild_members', 'guild_members.user_id', 'applications.bot_user_id')
    .select('applications.id')
    .where('guild_members.guild_id', '=', guildId)
    .execute();
  const commandsOnly = await db
    .selectFrom('application_guild_installs')
    .select('application_id')
    .where('guild_id', '=', guildId)
    .execute();
  return [...new Set([...rows.map((row) => row.id), ...commandsOnly.map((row) => row.application_id)])];
}

/** Whether the application was installed to the guild with `applications.commands` alone. */
export async function isCommandsInstalled(db: Executor, applicationId: string, guildId: string) {
  const row = await db
    .selectFrom('application_guild_installs')
    .select('guild_id')
    .where('application_id', '=', applicationId)
    .where('guild_id', '=', guildId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function isGuildMember(db: Executor, guildId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('guild_members')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether two users are members of one guild at least. */
export async function sharesGuild(db: Executor, userId: string, otherId: string): Promise<boolean> {
  const row = await db
    .selectFrom('guild_members as a')
    .innerJoin('guild_members as b', 'b.guild_id', 'a.guild_id')
    .select('a.guild_id')
    .where('a.user_id', '=', userId)
    .where('b.user_id', '=', otherId)
    .executeTakeFirst();
  return row !== undefined;
}

/** A user's grants installing an application for themself (integration type 1, USER_INSTALL), with scopes. */
export function userInstallGrants(db: Executor, userId: string) {
  return db
    .selectFrom('oauth_grants')
    .select(['application_id', 'scopes'])
    .where('user_id', '=', userId)
    .where('integration_type', '=', 1)
    .execute();
}
