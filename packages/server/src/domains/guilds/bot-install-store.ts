import type { Executor } from '../../storage/database.js';

/** The queries of a bot install: the bot's managed role and its membership. */

export function managedRoleOf(db: Executor, guildId: string, botUserId: string) {
  return db
    .selectFrom('guild_roles')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('bot_id', '=', botUserId)
    .executeTakeFirst();
}

export function findRole(db: Executor, roleId: string) {
  return db.selectFrom('guild_roles').selectAll().where('id', '=', roleId).executeTakeFirstOrThrow();
}

export async function setRolePermissions(db: Executor, roleId: string, permissions: string): Promise<void> {
  await db.updateTable('guild_roles').set({ permissions }).where('id', '=', roleId).execute();
}

export async function insertMember(db: Executor, guildId: string, userId: string, now: number) {
  await db
    .insertInto('guild_members')
    .values({ guild_id: guildId, user_id: userId, joined_at: now })
    .execute();
}

export async function hasMemberRole(db: Executor, guildId: string, userId: string, roleId: string) {
  const row = await db
    .selectFrom('guild_member_roles')
    .select('role_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .where('role_id', '=', roleId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertMemberRole(db: Executor, guildId: string, userId: string, roleId: string) {
  await db
    .insertInto('guild_member_roles')
    .values({ guild_id: guildId, user_id: userId, role_id: roleId })
    .execute();
}

export async function isBanned(db: Executor, guildId: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('guild_bans')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export function memberRoleIds(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('guild_member_roles')
    .select('role_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
}

export { guildRoles, insertRole } from './store.js';

/** A commands-only guild install (`applications.commands` without `bot`); a second one changes nothing. */
export async function insertCommandsInstall(
  db: Executor,
  row: { application_id: string; guild_id: string; installer_id: string; created_at: number },
): Promise<void> {
  await db
    .insertInto('application_guild_installs')
    .values(row)
    .onConflict((oc) => oc.columns(['application_id', 'guild_id']).doNothing())
    .execute();
}
