import type { Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { DmMessagesTable } from '../../storage/schema.js';

export type MessageRow = Selectable<DmMessagesTable>;

/** The pair's channel: `low` < `high` as snowflakes. */
export async function findChannel(db: Executor, low: string, high: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('dm_channels')
    .select('id')
    .where('user_low', '=', low)
    .where('user_high', '=', high)
    .executeTakeFirst();
  return row?.id;
}

export async function insertChannel(
  db: Executor,
  row: { id: string; user_low: string; user_high: string; created_at: number },
): Promise<void> {
  await db.insertInto('dm_channels').values(row).execute();
}

export async function insertMessage(db: Executor, row: MessageRow): Promise<void> {
  await db.insertInto('dm_messages').values(row).execute();
}

export function findMessage(db: Executor, channelId: string, id: string): Promise<MessageRow | undefined> {
  return db
    .selectFrom('dm_messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function updateMessage(
  db: Executor,
  id: string,
  changes: Partial<Pick<MessageRow, 'content' | 'metadata' | 'moderation_metadata' | 'edited_at'>>,
): Promise<void> {
  await db.updateTable('dm_messages').set(changes).where('id', '=', id).execute();
}

export async function deleteMessage(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('dm_messages').where('id', '=', id).execute();
}

/** The newest persisted messages of a channel since `since`, newest first. */
export function history(
  db: Executor,
  channelId: string,
  since: number,
  limit: number,
): Promise<MessageRow[]> {
  return db
    .selectFrom('dm_messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where('ephemeral', '=', 0)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Keeps the channel's newest `keep` messages: the history is at most 200 messages (PROTOCOL.md §B.5). */
export async function trimChannel(db: Executor, channelId: string, keep: number): Promise<void> {
  const cutoff = await db
    .selectFrom('dm_messages')
    .select(['created_at', 'id'])
    .where('channel_id', '=', channelId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(keep)
    .limit(1)
    .executeTakeFirst();
  if (!cutoff) return;
  await db
    .deleteFrom('dm_messages')
    .where('channel_id', '=', channelId)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', cutoff.created_at),
        eb.and([eb('created_at', '=', cutoff.created_at), eb('id', '<=', cutoff.id)]),
      ]),
    )
    .execute();
}

/** The newest persisted message of each of the user's DM channels since `since`. */
export async function summaries(
  db: Executor,
  userId: string,
  since: number,
): Promise<Array<{ other_id: string; last_message_id: string }>> {
  const channels = await db
    .selectFrom('dm_channels')
    .select(['id', 'user_low', 'user_high'])
    .where((eb) => eb.or([eb('user_low', '=', userId), eb('user_high', '=', userId)]))
    .execute();
  const out: Array<{ other_id: string; last_message_id: string }> = [];
  for (const channel of channels) {
    const [last] = await history(db, channel.id, since, 1);
    if (last)
      out.push({
        other_id: channel.user_low === userId ? channel.user_high : channel.user_low,
        last_message_id: last.id,
      });
  }
  return out;
}

// ---- Account links (PROTOCOL.md §B.3) ----

/** The user's DM channels. */
export function channelsOf(
  db: Executor,
  userId: string,
): Promise<Array<{ id: string; user_low: string; user_high: string }>> {
  return db
    .selectFrom('dm_channels')
    .select(['id', 'user_low', 'user_high'])
    .where((eb) => eb.or([eb('user_low', '=', userId), eb('user_high', '=', userId)]))
    .execute();
}

/** Gives a channel to another pair (the caller made sure that pair has none). */
export async function reassignChannel(
  db: Executor,
  channelId: string,
  low: string,
  high: string,
): Promise<void> {
  await db
    .updateTable('dm_channels')
    .set({ user_low: low, user_high: high })
    .where('id', '=', channelId)
    .execute();
}

/** Moves every message of one channel into another. */
export async function moveMessages(db: Executor, fromChannelId: string, toChannelId: string): Promise<void> {
  await db
    .updateTable('dm_messages')
    .set({ channel_id: toChannelId })
    .where('channel_id', '=', fromChannelId)
    .execute();
}

/** Deletes a channel; its messages go with it (foreign key cascade). */
export async function deleteChannel(db: Executor, channelId: string): Promise<void> {
  await db.deleteFrom('dm_channels').where('id', '=', channelId).execute();
}

/** Every message `from` wrote or received is now `to`'s. */
export async function reassignParticipant(db: Executor, from: string, to: string): Promise<void> {
  await db.updateTable('dm_messages').set({ author_id: to }).where('author_id', '=', from).execute();
  await db.updateTable('dm_messages').set({ recipient_id: to }).where('recipient_id', '=', from).execute();
}
