import { MessageFlags, snowflakeTimestamp } from '@hearth/protocol';
import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type {
  DmChannelsTable,
  MessageReactionsTable,
  MessagesTable,
  SlowmodeMarksTable,
} from '../../storage/schema.js';

export type MessageRow = Selectable<MessagesTable>;
export type ReactionRow = Selectable<MessageReactionsTable>;
export type DmChannelRow = Selectable<DmChannelsTable>;

// ---- Messages ----

export async function insertMessage(db: Executor, row: Insertable<MessagesTable>): Promise<void> {
  await db.insertInto('messages').values(row).execute();
}

export function findMessage(db: Executor, channelId: string, id: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findMessages(db: Executor, ids: readonly string[]): Promise<MessageRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('messages').selectAll().where('id', 'in', ids).execute();
}

export async function updateMessage(
  db: Executor,
  id: string,
  changes: Updateable<MessagesTable>,
): Promise<void> {
  await db.updateTable('messages').set(changes).where('id', '=', id).execute();
}

export async function deleteMessage(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('messages').where('id', '=', id).execute();
}

/** A channel's messages and the marks kept for it (its deletion, GUILDS.md §2). */
export async function deleteChannelMessages(db: Executor, channelId: string): Promise<void> {
  await db.deleteFrom('messages').where('channel_id', '=', channelId).execute();
  await db.deleteFrom('slowmode_marks').where('channel_id', '=', channelId).execute();
}

/**
 * `(created_at, id)` orders as snowflakes do; comparing the timestamp first keeps to the index. Ids of the
 * same millisecond differ only in their low bits, so their decimal texts have the same length.
 */
function older(id: string) {
  const ms = snowflakeTimestamp(id);
  return sql<boolean>`(created_at < ${ms} or (created_at = ${ms} and (length(id) < ${id.length} or (length(id) = ${id.length} and id < ${id}))))`;
}

function newer(id: string) {
  const ms = snowflakeTimestamp(id);
  return sql<boolean>`(created_at > ${ms} or (created_at = ${ms} and (length(id) > ${id.length} or (length(id) = ${id.length} and id > ${id}))))`;
}

/** An ephemeral message (an interaction's, seen by its user alone) is never part of channel history. */
function notEphemeral() {
  return sql<boolean>`(flags & ${MessageFlags.Ephemeral}) = 0`;
}

/** Up to `limit` messages older than `before` (or the newest), newest first. */
export function messagesBefore(
  db: Executor,
  channelId: string,
  before: string | undefined,
  limit: number,
): Promise<MessageRow[]> {
  let query = db.selectFrom('messages').selectAll().where('channel_id', '=', channelId).where(notEphemeral());
  if (before !== undefined) query = query.where(older(before));
  return query
    .orderBy('created_at', 'desc')
    .orderBy(sql`length(id)`, 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Up to `limit` messages newer than `after`, the oldest of them first. */
export function messagesAfter(
  db: Executor,
  channelId: string,
  after: string,
  limit: number,
  inclusive = false,
): Promise<MessageRow[]> {
  const query = db
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where(notEphemeral());
  return query
    .where((eb) => (inclusive ? eb.or([newer(after), eb('id', '=', after)]) : newer(after)))
    .orderBy('created_at', 'asc')
    .orderBy(sql`length(id)`, 'asc')
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
}

// ---- enforce_nonce (seed: a repeat within a few minutes answers the first message) ----

export function findNonce(db: Executor, authorId: string, nonce: string) {
  return db
    .selectFrom('message_nonces')
    .selectAll()
    .where('author_id', '=', authorId)
    .where('nonce', '=', nonce)
    .executeTakeFirst();
}

/** Remembers the newest message of an author with this nonce (an expired row is replaced). */
export async function rememberNonce(
  db: Executor,
  row: { author_id: string; nonce: string; message_id: string; created_at: number },
): Promise<void> {
  await db
    .insertInto('message_nonces')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['author_id', 'nonce'])
        .doUpdateSet({ message_id: row.message_id, created_at: row.created_at }),
    )
    .execute();
}

/** Nonces older than the window answer nothing any more. */
export async function forgetNoncesBefore(db: Executor, authorId: string, before: number): Promise<void> {
  await db
    .deleteFrom('message_nonces')
    .where('author_id', '=', authorId)
    .where('created_at', '<', before)
    .execute();
}

// ---- Slowmode ----

export function slowmodeMark(db: Executor, channelId: string, userId: string) {
  return db
    .selectFrom('slowmode_marks')
    .select('until')
    .where('channel_id', '=', channelId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function setSlowmodeMark(db: Executor, row: Selectable<SlowmodeMarksTable>): Promise<void> {
  await db
    .insertInto('slowmode_marks')
    .values(row)
    .onConflict((oc) => oc.columns(['channel_id', 'user_id']).doUpdateSet({ until: row.until }))
    .execute();
}

// ---- Reactions (written by the reaction routes; read here for the message object) ----

export function reactionsOf(db: Executor, messageIds: readonly string[]): Promise<ReactionRow[]> {
  if (messageIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('message_reactions')
    .selectAll()
    .where('message_id', 'in', messageIds)
    .orderBy('created_at')
    .execute();
}

// ---- DM channels (the one channel per pair of users that game DMs use too) ----

export function findDmChannel(db: Executor, id: string): Promise<DmChannelRow | undefined> {
  return db.selectFrom('dm_channels').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The ids of the DM channels a user is in. */
export async function dmChannelIdsOf(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('dm_channels')
    .select('id')
    .where((eb) => eb.or([eb('user_low', '=', userId), eb('user_high', '=', userId)]))
    .execute();
  return rows.map((row) => row.id);
}

export function findDmChannelOf(db: Executor, low: string, high: string): Promise<DmChannelRow | undefined> {
  return db
    .selectFrom('dm_channels')
    .selectAll()
    .where('user_low', '=', low)
    .where('user_high', '=', high)
    .executeTakeFirst();
}

export async function insertDmChannel(db: Executor, row: DmChannelRow): Promise<void> {
  await db.insertInto('dm_channels').values(row).execute();
}

// ---- Group DMs (channel type 3) ----

export function findGroupDm(db: Executor, id: string) {
  return db.selectFrom('group_dm_channels').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A group DM's recipients, in the order they came in. */
export async function groupDmRecipients(db: Executor, channelId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('group_dm_recipients')
    .select('user_id')
    .where('channel_id', '=', channelId)
    .orderBy('added_at')
    .orderBy('user_id')
    .execute();
  return rows.map((row) => row.user_id);
}

/** The group DMs a user is in. */
export async function groupDmIdsOf(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('group_dm_recipients')
    .select('channel_id')
    .where('user_id', '=', userId)
    .execute();
  return rows.map((row) => row.channel_id);
}

/** The nicknames a managing bot gave a group DM's recipients (`nicks`), in the recipients' order. */
export async function groupDmNicks(db: Executor, channelId: string): Promise<{ id: string; nick: string }[]> {
  const rows = await db
    .selectFrom('group_dm_recipients')
    .select(['user_id', 'nick'])
    .where('channel_id', '=', channelId)
    .where('nick', 'is not', null)
    .orderBy('added_at')
    .orderBy('user_id')
    .execute();
  return rows.map((row) => ({ id: row.user_id, nick: row.nick! }));
}

export async function insertGroupDm(
  db: Executor,
  row: {
    id: string;
    owner_id: string;
    name: string | null;
    application_id: string | null;
    created_at: number;
  },
  recipients: readonly string[],
  nicks: ReadonlyMap<string, string> = new Map(),
): Promise<void> {
  await db
    .insertInto('group_dm_channels')
    .values({ ...row, icon: null })
    .execute();
  await addGroupDmRecipients(db, row.id, recipients, row.created_at, nicks);
}

export async function addGroupDmRecipients(
  db: Executor,
  channelId: string,
  userIds: readonly string[],
  at: number,
  nicks: ReadonlyMap<string, string> = new Map(),
): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insertInto('group_dm_recipients')
    .values(
      userIds.map((user_id) => ({
        channel_id: channelId,
        user_id,
        added_at: at,
        nick: nicks.get(user_id) ?? null,
      })),
    )
    .onConflict((oc) => oc.columns(['channel_id', 'user_id']).doNothing())
    .execute();
}

export async function removeGroupDmRecipient(db: Executor, channelId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('group_dm_recipients')
    .where('channel_id', '=', channelId)
    .where('user_id', '=', userId)
    .execute();
}

export async function updateGroupDm(
  db: Executor,
  channelId: string,
  changes: { owner_id?: string; name?: string | null; icon?: string | null },
): Promise<void> {
  await db.updateTable('group_dm_channels').set(changes).where('id', '=', channelId).execute();
}

/** Makes `row` the group DM's icon image (the previous one, if any, is gone); null removes it. */
export async function replaceGroupDmIcon(
  db: Executor,
  channelId: string,
  row: { hash: string; content_type: string; bytes: Buffer; created_at: number } | null,
): Promise<void> {
  await db.deleteFrom('group_dm_icons').where('channel_id', '=', channelId).execute();
  if (row)
    await db
      .insertInto('group_dm_icons')
      .values({ channel_id: channelId, ...row })
      .execute();
}

export function findGroupDmIcon(db: Executor, channelId: string, hash: string) {
  return db
    .selectFrom('group_dm_icons')
    .select(['content_type', 'bytes'])
    .where('channel_id', '=', channelId)
    .where('hash', '=', hash)
    .executeTakeFirst();
}

export async function deleteGroupDm(db: Executor, channelId: string): Promise<void> {
  await db.deleteFrom('group_dm_icons').where('channel_id', '=', channelId).execute();
  await db.deleteFrom('group_dm_recipients').where('channel_id', '=', channelId).execute();
  await db.deleteFrom('group_dm_channels').where('id', '=', channelId).execute();
}

/** The newest message of a DM channel: its `last_message_id`. */
export async function lastMessageId(db: Executor, channelId: string): Promise<string | null> {
  const [row] = await messagesBefore(db, channelId, undefined, 1);
  return row?.id ?? null;
}

// ---- What mentions need of the guild (read only) ----

/** The guild's roles among `ids` and whether each is `mentionable`. */
export async function rolesAmong(
  db: Executor,
  guildId: string,
  ids: readonly string[],
): Promise<Map<string, boolean>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('guild_roles')
    .select(['id', 'mentionable'])
    .where('guild_id', '=', guildId)
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, Number(row.mentionable) === 1]));
}
