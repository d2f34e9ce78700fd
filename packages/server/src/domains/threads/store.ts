import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ThreadMembersTable, ThreadsTable } from '../../storage/schema.js';

export type ThreadRow = Selectable<ThreadsTable>;
export type ThreadMemberRow = Selectable<ThreadMembersTable>;

export function findThread(db: Executor, threadId: string): Promise<ThreadRow | undefined> {
  return db.selectFrom('threads').selectAll().where('id', '=', threadId).executeTakeFirst();
}

export async function insertThread(db: Executor, row: Insertable<ThreadsTable>): Promise<void> {
  await db.insertInto('threads').values(row).execute();
}

export async function updateThread(
  db: Executor,
  threadId: string,
  changes: Updateable<ThreadsTable>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('threads').set(changes).where('id', '=', threadId).execute();
}

export async function deleteThread(db: Executor, threadId: string): Promise<void> {
  await db.deleteFrom('thread_members').where('thread_id', '=', threadId).execute();
  await db.deleteFrom('threads').where('id', '=', threadId).execute();
}

/** The threads of a parent channel (all of them: its deletion removes them). */
export async function threadIdsOf(db: Executor, parentId: string): Promise<string[]> {
  const rows = await db.selectFrom('threads').select('id').where('parent_id', '=', parentId).execute();
  return rows.map((row) => row.id);
}

/** Active threads of a guild, newest first (GET /guilds/{id}/threads/active orders by id descending). */
export function activeThreads(db: Executor, guildId: string): Promise<ThreadRow[]> {
  return db
    .selectFrom('threads')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('archived', '=', 0)
    .execute()
    .then((rows) => rows.sort(byIdDescending));
}

/** Active threads of one parent channel. */
export function activeThreadsIn(db: Executor, parentId: string): Promise<ThreadRow[]> {
  return db
    .selectFrom('threads')
    .selectAll()
    .where('parent_id', '=', parentId)
    .where('archived', '=', 0)
    .execute()
    .then((rows) => rows.sort(byIdDescending));
}

export async function countActiveThreads(db: Executor, guildId: string): Promise<number> {
  const row = await db
    .selectFrom('threads')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .where('archived', '=', 0)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Active threads whose auto-archive time has come (`last_activity_at + duration <= now`). */
export async function dueThreads(db: Executor, now: number, guildId?: string): Promise<ThreadRow[]> {
  let query = db.selectFrom('threads').selectAll().where('archived', '=', 0);
  if (guildId !== undefined) query = query.where('guild_id', '=', guildId);
  const rows = await query.execute();
  return rows.filter((row) => isDue(row, now));
}

/** Whether an active thread's inactivity has outlasted its `auto_archive_duration` (minutes). */
export function isDue(row: ThreadRow, now: number): boolean {
  return (
    Number(row.archived) === 0 &&
    Number(row.last_activity_at) + Number(row.auto_archive_duration) * 60_000 <= now
  );
}

/**
 * Archived threads of a parent among `types`, by archive time descending, those archived before `before`
 * (ms); `limit + 1` rows so the caller sees whether there are more.
 */
export function archivedThreads(
  db: Executor,
  parentId: string,
  types: readonly number[],
  before: number | undefined,
  limit: number,
  memberId?: string,
): Promise<ThreadRow[]> {
  let query = db
    .selectFrom('threads')
    .selectAll('threads')
    .where('threads.parent_id', '=', parentId)
    .where('threads.archived', '=', 1)
    .where('threads.type', 'in', [...types]);
  if (before !== undefined) query = query.where('threads.archive_timestamp', '<', before);
  if (memberId !== undefined)
    query = query
      .innerJoin('thread_members', 'thread_members.thread_id', 'threads.id')
      .where('thread_members.user_id', '=', memberId);
  return query
    .orderBy('threads.archive_timestamp', 'desc')
    .orderBy('threads.id', 'desc')
    .limit(limit + 1)
    .execute();
}

/** Archived private threads `userId` is a member of, by id descending, with ids below `before`. */
export async function joinedArchivedPrivateThreads(
  db: Executor,
  parentId: string,
  userId: string,
  privateType: number,
  before: string | undefined,
  limit: number,
): Promise<ThreadRow[]> {
  const rows = await db
    .selectFrom('threads')
    .innerJoin('thread_members', 'thread_members.thread_id', 'threads.id')
    .selectAll('threads')
    .where('threads.parent_id', '=', parentId)
    .where('threads.archived', '=', 1)
    .where('threads.type', '=', privateType)
    .where('thread_members.user_id', '=', userId)
    .execute();
  // Snowflakes compare as numbers, not text: sorted here rather than by the engine.
  return rows
    .filter((row) => before === undefined || BigInt(row.id) < BigInt(before))
    .sort(byIdDescending)
    .slice(0, limit + 1);
}

// ---- Members ----

export function findMember(db: Executor, threadId: string, userId: string) {
  return db
    .selectFrom('thread_members')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Adds a member; answers false when they already were one. */
export async function addMember(db: Executor, row: Insertable<ThreadMembersTable>): Promise<boolean> {
  if (await findMember(db, row.thread_id, row.user_id)) return false;
  await db.insertInto('thread_members').values(row).execute();
  return true;
}

/** Removes a member; answers false when they were not one. */
export async function removeMember(db: Executor, threadId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('thread_members')
    .where('thread_id', '=', threadId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countMembers(db: Executor, threadId: string): Promise<number> {
  const row = await db
    .selectFrom('thread_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('thread_id', '=', threadId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every member of a thread, by user id (snowflake order). */
export async function members(db: Executor, threadId: string): Promise<ThreadMemberRow[]> {
  const rows = await db.selectFrom('thread_members').selectAll().where('thread_id', '=', threadId).execute();
  return rows.sort((a, b) => compareIds(a.user_id, b.user_id));
}

/** The rows of `userId` among the members of `threadIds`. */
export function membershipsOf(
  db: Executor,
  threadIds: readonly string[],
  userId: string,
): Promise<ThreadMemberRow[]> {
  if (threadIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('thread_members')
    .selectAll()
    .where('thread_id', 'in', [...threadIds])
    .where('user_id', '=', userId)
    .execute();
}

/** Member counts of several threads. */
export async function memberCounts(db: Executor, threadIds: readonly string[]): Promise<Map<string, number>> {
  if (threadIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('thread_members')
    .select(['thread_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('thread_id', 'in', [...threadIds])
    .groupBy('thread_id')
    .execute();
  return new Map(rows.map((row) => [row.thread_id, Number(row.n)]));
}

/** Threads among `ids` (the thread a starter message started shares its id). */
export function threadsAmong(db: Executor, ids: readonly string[]): Promise<ThreadRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('threads')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute();
}

function compareIds(a: string, b: string): number {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

function byIdDescending(a: { id: string }, b: { id: string }): number {
  return compareIds(b.id, a.id);
}

/** Every member of a guild (who may moderate a private thread). */
export async function guildMemberIds(db: Executor, guildId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('guild_members')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .execute();
  return rows.map((row) => row.user_id);
}

/** Every thread of a guild with whether `userId` is a member of it (search scopes threads by their parent). */
export function guildThreadsFor(
  db: Executor,
  guildId: string,
  userId: string,
): Promise<Array<{ id: string; parent_id: string; type: number; joined: number }>> {
  return db
    .selectFrom('threads')
    .leftJoin('thread_members', (join) =>
      join.onRef('thread_members.thread_id', '=', 'threads.id').on('thread_members.user_id', '=', userId),
    )
    .select(['threads.id', 'threads.parent_id', 'threads.type'])
    .select((eb) =>
      eb.case().when('thread_members.user_id', 'is not', null).then(1).else(0).end().as('joined'),
    )
    .where('threads.guild_id', '=', guildId)
    .execute();
}
