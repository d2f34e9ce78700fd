import type { Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { GuildRolesTable } from '../../storage/schema.js';

/** The queries of guild roles (GUILDS.md §1.4); the @everyone role's id is the guild's id. */

export function findRole(db: Executor, guildId: string, roleId: string) {
  return db
    .selectFrom('guild_roles')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('id', '=', roleId)
    .executeTakeFirst();
}

export async function countRoles(db: Executor, guildId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_roles')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Makes room at `position`: every role but @everyone at or above it moves up one. */
export async function shiftRolesUp(db: Executor, guildId: string, position: number): Promise<void> {
  await db
    .updateTable('guild_roles')
    .set((eb) => ({ position: eb('position', '+', 1) }))
    .where('guild_id', '=', guildId)
    .where('id', '!=', guildId)
    .where('position', '>=', position)
    .execute();
}

export async function updateRole(
  db: Executor,
  roleId: string,
  changes: Updateable<GuildRolesTable>,
): Promise<void> {
  await db.updateTable('guild_roles').set(changes).where('id', '=', roleId).execute();
}

/** Deletes a role; members lose it with it (guild_member_roles cascades). */
export async function deleteRole(db: Executor, roleId: string): Promise<void> {
  await db.deleteFrom('guild_roles').where('id', '=', roleId).execute();
}

/** How many members hold each role of the guild (roles nobody holds are absent). */
export function roleMemberCounts(db: Executor, guildId: string) {
  return db
    .selectFrom('guild_member_roles')
    .select(['role_id'])
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .groupBy('role_id')
    .execute();
}
