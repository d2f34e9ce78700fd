import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { GuildMembersTable } from '../../storage/schema.js';

export type MemberRow = Selectable<GuildMembersTable>;

/** Snowflakes are decimal strings of varying length: longer is larger, then text order (as store.ts does). */
export function idAfter(column: string, after: string) {
  const ref = sql.ref(column);
  return sql<boolean>`(length(${ref}) > ${after.length} or (length(${ref}) = ${after.length} and ${ref} > ${after}))`;
}

export function idBefore(column: string, before: string) {
  const ref = sql.ref(column);
  return sql<boolean>`(length(${ref}) < ${before.length} or (length(${ref}) = ${before.length} and ${ref} < ${before}))`;
}

/** A LIKE prefix pattern of `text`, lower-cased, its wildcards escaped with `\` (see `likePrefix`). */
function prefixPattern(text: string): string {
  return `${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `lower(column) LIKE pattern ESCAPE '\'`: SQLite has no default escape character, PostgreSQL has `\`. */
function likePrefix(column: string, text: string) {
  return sql<boolean>`lower(${sql.ref(column)}) like ${prefixPattern(text)} escape '\\'`;
}

export function findMember(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('guild_members')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Members by user id, one page after `after`, in id order. */
export function listMembers(
  db: Executor,
  guildId: string,
  page: { after?: string | undefined; limit: number },
) {
  let query = db.selectFrom('guild_members').selectAll().where('guild_id', '=', guildId);
  if (page.after !== undefined) query = query.where(idAfter('guild_members.user_id', page.after));
  return query
    .orderBy((eb) => eb.fn('length', ['guild_members.user_id']))
    .orderBy('guild_members.user_id')
    .limit(page.limit)
    .execute();
}

/** Members whose username or nick starts with `query` (case-insensitive), or whose id is listed. */
export function findMembers(
  db: Executor,
  guildId: string,
  filter: { query?: string | undefined; userIds?: readonly string[] | undefined; limit: number },
) {
  let query = db
    .selectFrom('guild_members')
    .innerJoin('users', 'users.id', 'guild_members.user_id')
    .selectAll('guild_members')
    .where('guild_members.guild_id', '=', guildId);
  if (filter.userIds) {
    query = query.where('guild_members.user_id', 'in', filter.userIds.length ? filter.userIds : ['']);
  }
  const text = filter.query;
  if (text) {
    query = query.where((eb) =>
      eb.or([likePrefix('users.username', text), likePrefix('guild_members.nick', text)]),
    );
  }
  return query
    .orderBy((eb) => eb.fn('length', ['guild_members.user_id']))
    .orderBy('guild_members.user_id')
    .limit(filter.limit)
    .execute();
}

/** The role ids of each member given (the @everyone role is implicit and never stored). */
export async function roleIdsOf(
  db: Executor,
  guildId: string,
  userIds: readonly string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(userIds.map((id) => [id, []]));
  if (userIds.length === 0) return out;
  const rows = await db
    .selectFrom('guild_member_roles')
    .innerJoin('guild_roles', 'guild_roles.id', 'guild_member_roles.role_id')
    .select(['guild_member_roles.user_id', 'guild_member_roles.role_id'])
    .where('guild_member_roles.guild_id', '=', guildId)
    .where('guild_member_roles.user_id', 'in', [...userIds])
    .orderBy('guild_roles.position')
    .orderBy('guild_roles.id')
    .execute();
  for (const row of rows) out.get(row.user_id)?.push(row.role_id);
  return out;
}

/** The guild's roles among `ids`, with what the hierarchy and managed-role checks need. */
export function rolesByIds(db: Executor, guildId: string, ids: readonly string[]) {
  return db
    .selectFrom('guild_roles')
    .select(['id', 'name', 'position', 'managed', 'permissions'])
    .where('guild_id', '=', guildId)
    .where('id', 'in', ids.length ? [...ids] : [''])
    .execute();
}

export async function insertMember(db: Executor, row: Insertable<GuildMembersTable>): Promise<void> {
  await db.insertInto('guild_members').values(row).execute();
}

export async function updateMember(
  db: Executor,
  guildId: string,
  userId: string,
  patch: Updateable<GuildMembersTable>,
): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  await db
    .updateTable('guild_members')
    .set(patch)
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
}

export async function addMemberRoles(
  db: Executor,
  guildId: string,
  userId: string,
  roleIds: readonly string[],
): Promise<void> {
  if (roleIds.length === 0) return;
  await db
    .insertInto('guild_member_roles')
    .values(roleIds.map((roleId) => ({ guild_id: guildId, user_id: userId, role_id: roleId })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function removeMemberRoles(
  db: Executor,
  guildId: string,
  userId: string,
  roleIds: readonly string[],
): Promise<void> {
  if (roleIds.length === 0) return;
  await db
    .deleteFrom('guild_member_roles')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .where('role_id', 'in', [...roleIds])
    .execute();
}

/** Removes a member with their roles and voice state (kick, ban, leave). */
export async function deleteMember(db: Executor, guildId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('guild_member_roles')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
  await db.deleteFrom('voice_states').where('guild_id', '=', guildId).where('user_id', '=', userId).execute();
  await db
    .deleteFrom('guild_members')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
}

export async function countUserGuilds(db: Executor, userId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function userExists(db: Executor, userId: string): Promise<boolean> {
  return (
    (await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined
  );
}

export function isBanned(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('guild_bans')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
    .then((row) => row !== undefined);
}
