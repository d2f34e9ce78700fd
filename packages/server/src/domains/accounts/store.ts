import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import { prepared, preparedInsert } from '../../storage/prepared.js';
import type { ConnectionsTable, SessionsTable, UserImagesTable, UsersTable } from '../../storage/schema.js';

/** A user with the tag and badge of the guild they wear as `primary_guild` (GUILDS.md §3.4). */
export type UserRow = Selectable<UsersTable> & {
  primary_guild_tag: string | null;
  primary_guild_badge: string | null;
};

/** Users joined to their primary guild's tag: every user read carries what `primary_guild` shows. */
function users(db: Executor) {
  return db
    .selectFrom('users')
    .leftJoin('guilds as primary_guild', 'primary_guild.id', 'users.primary_guild_id')
    .selectAll('users')
    .select(['primary_guild.tag as primary_guild_tag', 'primary_guild.badge as primary_guild_badge']);
}

/** The discriminators already paired with a username (bots and developer accounts share names). */
export async function discriminatorsOf(db: Executor, username: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('users')
    .select('discriminator')
    .where('username', '=', username)
    .execute();
  return new Set(rows.map((row) => row.discriminator));
}

export async function insertUser(db: Executor, row: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

/** A provisional account's row (one per new player of a game): prepared, these columns only. */
export const insertProvisionalUser: (db: Executor, row: Insertable<UsersTable>) => Promise<void> =
  preparedInsert('users', [
    'id',
    'username',
    'discriminator',
    'global_name',
    'email',
    'password_hash',
    'avatar',
    'banner',
    'bot',
    'flags',
    'premium_type',
    'provisional',
    'created_at',
  ]);

export const findUserById: (db: Executor, id: string) => Promise<UserRow | undefined> = prepared(
  1,
  (db, id: string) => users(db).where('users.id', '=', id),
);

export async function findUsersByIds(db: Executor, ids: readonly string[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return users(db).where('users.id', 'in', ids).execute();
}

export function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return users(db).where('users.email', '=', email).executeTakeFirst();
}

export async function usernameTaken(db: Executor, username: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('username', '=', username)
    .where('discriminator', '=', '0')
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertSession(db: Executor, row: Insertable<SessionsTable>): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

/** The user behind a live session token hash, in one indexed lookup (on every request: prepared). */
export const findSessionUser: (
  db: Executor,
  tokenHash: string,
  now: number,
  /** Sessions stored without an expiry (before lifetimes existed) live until created_at + lifetime. */
  undatedCreatedAfter: number,
) => Promise<(UserRow & { session_created_at: number; session_expires_at: number | null }) | undefined> =
  prepared(3, (db, tokenHash: string, now: number, undatedCreatedAfter: number) =>
    db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .leftJoin('guilds as primary_guild', 'primary_guild.id', 'users.primary_guild_id')
      .selectAll('users')
      .select(['primary_guild.tag as primary_guild_tag', 'primary_guild.badge as primary_guild_badge'])
      .select(['sessions.created_at as session_created_at', 'sessions.expires_at as session_expires_at'])
      .where('sessions.token_hash', '=', tokenHash)
      .where((eb) =>
        eb.or([
          eb('sessions.expires_at', '>', now),
          eb.and([
            eb('sessions.expires_at', 'is', null),
            eb('sessions.created_at', '>', undatedCreatedAfter),
          ]),
        ]),
      ),
  );

export async function deleteSession(db: Executor, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

export async function updateUser(db: Executor, id: string, changes: Updateable<UsersTable>): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

export type ConnectionRow = Selectable<ConnectionsTable>;

export async function insertConnection(db: Executor, row: Insertable<ConnectionsTable>): Promise<void> {
  await db.insertInto('connections').values(row).execute();
}

export function listConnections(db: Executor, userId: string): Promise<ConnectionRow[]> {
  return db.selectFrom('connections').selectAll().where('user_id', '=', userId).orderBy('id').execute();
}

/** Only a provisional row: a full account is never removed by a merge. */
export async function deleteProvisionalUser(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).where('provisional', '=', 1).execute();
}

export async function deleteSessionsOf(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

/** A migrated user (discriminator `0`) by username, for friend requests by name (PROTOCOL.md §B.6). */
export function findUserByUsername(db: Executor, username: string): Promise<UserRow | undefined> {
  return users(db)
    .where('users.username', '=', username)
    .where('users.discriminator', '=', '0')
    .executeTakeFirst();
}

export type UserImageRow = Selectable<UserImagesTable>;

/** Makes `row` the user's current image of its kind (the previous one, if any, is gone). */
export async function saveUserImage(db: Executor, row: Insertable<UserImagesTable>): Promise<void> {
  await deleteUserImage(db, row.user_id, row.kind);
  await db.insertInto('user_images').values(row).execute();
}

export async function deleteUserImage(
  db: Executor,
  userId: string,
  kind: UserImagesTable['kind'],
): Promise<void> {
  await db.deleteFrom('user_images').where('user_id', '=', userId).where('kind', '=', kind).execute();
}

export function findUserImage(
  db: Executor,
  userId: string,
  kind: UserImagesTable['kind'],
  hash: string,
): Promise<UserImageRow | undefined> {
  return db
    .selectFrom('user_images')
    .selectAll()
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .where('hash', '=', hash)
    .executeTakeFirst();
}
