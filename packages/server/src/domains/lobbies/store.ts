import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Engine, Executor } from '../../storage/database.js';
import { prepared, preparedInsert } from '../../storage/prepared.js';
import type { LobbiesTable, LobbyMembersTable, LobbyMessagesTable } from '../../storage/schema.js';

export type LobbyRow = Selectable<LobbiesTable>;
export type MemberRow = Selectable<LobbyMembersTable>;
export type MessageRow = Selectable<LobbyMessagesTable>;

export async function insertLobby(db: Executor, row: Insertable<LobbiesTable>): Promise<void> {
  await db.insertInto('lobbies').values(row).execute();
}

/**
 * The lobby, locked for the rest of the transaction on PostgreSQL so that concurrent joins count members
 * one after another (SQLite's single writer already does).
 */
export async function findLobby(db: Executor, id: string, lock?: Engine): Promise<LobbyRow | undefined> {
  if (lock === 'postgres')
    return db.selectFrom('lobbies').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  return findLobbyUnlocked(db, id);
}

/** Read by every lobby message: prepared. */
const findLobbyUnlocked = prepared(1, (db, id: string) =>
  db.selectFrom('lobbies').selectAll().where('id', '=', id),
);

export async function lobbiesOf(db: Executor, userId: string, applicationId: string): Promise<LobbyRow[]> {
  return db
    .selectFrom('lobbies')
    .selectAll('lobbies')
    .innerJoin('lobby_members', 'lobby_members.lobby_id', 'lobbies.id')
    .where('lobby_members.user_id', '=', userId)
    .where('lobby_members.application_id', '=', applicationId)
    .orderBy('lobbies.id')
    .execute();
}

export async function findLobbyBySecret(
  db: Executor,
  applicationId: string,
  secret: string,
  lock?: Engine,
): Promise<LobbyRow | undefined> {
  const query = db
    .selectFrom('lobbies')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('secret', '=', secret);
  return (lock === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}

export async function updateLobby(
  db: Executor,
  id: string,
  changes: Updateable<LobbiesTable>,
): Promise<void> {
  await db.updateTable('lobbies').set(changes).where('id', '=', id).execute();
}

export async function deleteLobby(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('lobbies').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function listMembers(db: Executor, lobbyId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('lobby_members')
    .selectAll()
    .where('lobby_id', '=', lobbyId)
    .orderBy('joined_at')
    .orderBy('user_id')
    .execute();
}

export async function findMember(
  db: Executor,
  lobbyId: string,
  userId: string,
): Promise<MemberRow | undefined> {
  return db
    .selectFrom('lobby_members')
    .selectAll()
    .where('lobby_id', '=', lobbyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function countMembers(db: Executor, lobbyId: string): Promise<number> {
  const row = await db
    .selectFrom('lobby_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('lobby_id', '=', lobbyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** How many lobbies of an application a user is in (the per-user cap). */
export async function countLobbiesOf(db: Executor, userId: string, applicationId: string): Promise<number> {
  const row = await db
    .selectFrom('lobby_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertMember(db: Executor, row: Insertable<LobbyMembersTable>): Promise<void> {
  await db.insertInto('lobby_members').values(row).execute();
}

export async function updateMember(
  db: Executor,
  lobbyId: string,
  userId: string,
  changes: Updateable<LobbyMembersTable>,
): Promise<void> {
  await db
    .updateTable('lobby_members')
    .set(changes)
    .where('lobby_id', '=', lobbyId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteMember(db: Executor, lobbyId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('lobby_members')
    .where('lobby_id', '=', lobbyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every column, prepared (one insert per lobby message); `channel_id` defaults to NULL. */
export const insertMessage: (db: Executor, row: Insertable<LobbyMessagesTable>) => Promise<void> =
  preparedInsert('lobby_messages', [
    'id',
    'lobby_id',
    'author_id',
    'application_id',
    'content',
    'metadata',
    'moderation_metadata',
    'author_additional_name',
    'flags',
    'created_at',
    'edited_at',
    'channel_id',
  ]);

export async function findMessage(
  db: Executor,
  lobbyId: string,
  id: string,
): Promise<MessageRow | undefined> {
  return db
    .selectFrom('lobby_messages')
    .selectAll()
    .where('lobby_id', '=', lobbyId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateMessage(
  db: Executor,
  id: string,
  changes: Updateable<LobbyMessagesTable>,
): Promise<void> {
  await db.updateTable('lobby_messages').set(changes).where('id', '=', id).execute();
}

export async function deleteMessage(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('lobby_messages').where('id', '=', id).execute();
}

/** The most recent messages, newest first, none older than `since`. */
export async function recentMessages(
  db: Executor,
  lobbyId: string,
  since: number,
  limit: number,
): Promise<MessageRow[]> {
  return db
    .selectFrom('lobby_messages')
    .selectAll()
    .where('lobby_id', '=', lobbyId)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Marks the lobbies of these members (of one application) active now: a connected member keeps a lobby. */
export async function touchLobbiesOf(
  db: Executor,
  applicationId: string,
  userIds: readonly string[],
  now: number,
): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .updateTable('lobbies')
    .set({ active_at: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('lobby_members')
        .select('lobby_id')
        .where('application_id', '=', applicationId)
        .where('user_id', 'in', userIds),
    )
    .execute();
}

/** Lobbies idle past their timeout at `now`, a bounded batch. */
export async function idleLobbies(db: Executor, now: number, limit: number): Promise<LobbyRow[]> {
  return db
    .selectFrom('lobbies')
    .selectAll()
    .where((eb) => eb(eb('active_at', '+', eb(eb.ref('idle_timeout_seconds'), '*', 1000)), '<', now))
    .limit(limit)
    .execute();
}

/** Messages past the history window; the platform keeps none older (§A.3: 72 hours). */
export async function pruneMessages(db: Executor, before: number): Promise<void> {
  await db.deleteFrom('lobby_messages').where('created_at', '<', before).execute();
}

/**
 * Gives `from`'s memberships in an application's lobbies to `to`: where `to` is already a member, `from`'s
 * membership just ends. With `messages`, `from`'s lobby messages there become `to`'s too.
 */
export async function transferMemberships(
  db: Executor,
  from: string,
  to: string,
  applicationId: string,
  messages: boolean,
): Promise<void> {
  await db
    .deleteFrom('lobby_members')
    .where('user_id', '=', from)
    .where('application_id', '=', applicationId)
    .where('lobby_id', 'in', (eb) =>
      eb.selectFrom('lobby_members as m').select('m.lobby_id').where('m.user_id', '=', to),
    )
    .execute();
  await db
    .updateTable('lobby_members')
    .set({ user_id: to })
    .where('user_id', '=', from)
    .where('application_id', '=', applicationId)
    .execute();
  if (messages) {
    await db
      .updateTable('lobby_messages')
      .set({ author_id: to })
      .where('author_id', '=', from)
      .where('application_id', '=', applicationId)
      .execute();
  }
}
