import type { Engine, Executor } from '../../storage/database.js';
import type { MessageRow } from './store.js';

/**
 * The queries of pins (GUILDS.md §3.7): a message is pinned while its `pinned_at` is set (0024_pins
 * indexes a channel's pins by it). Pages run newest pin first; the id breaks ties of the same instant.
 */

/** Up to `limit` pinned messages of the channel pinned before `before` (ms), or the newest ones. */
export function pinnedMessages(
  db: Executor,
  channelId: string,
  before: number | undefined,
  limit: number,
): Promise<MessageRow[]> {
  let query = db
    .selectFrom('messages')
    .selectAll()
    .where('channel_id', '=', channelId)
    .where('pinned_at', 'is not', null);
  if (before !== undefined) query = query.where('pinned_at', '<', before);
  return query.orderBy('pinned_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** How many messages of the channel are pinned. */
export async function countPins(db: Executor, channelId: string): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('channel_id', '=', channelId)
    .where('pinned_at', 'is not', null)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** When the channel's newest pin was made (ms), or null when nothing is pinned. */
export async function lastPinAt(db: Executor, channelId: string): Promise<number | null> {
  const row = await db
    .selectFrom('messages')
    .select('pinned_at')
    .where('channel_id', '=', channelId)
    .where('pinned_at', 'is not', null)
    .orderBy('pinned_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.pinned_at === undefined || row.pinned_at === null ? null : Number(row.pinned_at);
}

/** Pins the message at `at` (ms), or unpins it (null). */
export async function setPinned(db: Executor, messageId: string, at: number | null): Promise<void> {
  await db
    .updateTable('messages')
    .set({ pinned: at === null ? 0 : 1, pinned_at: at })
    .where('id', '=', messageId)
    .execute();
}

/**
 * Locks the channel (a guild channel's, a DM's or a group DM's row) for the rest of the transaction on PostgreSQL, so
 * that concurrent pins of a channel count and mark one after another (SQLite's single writer already does).
 */
export async function lockChannel(db: Executor, channelId: string, engine: Engine): Promise<void> {
  if (engine !== 'postgres') return;
  await db.selectFrom('channels').select('id').where('id', '=', channelId).forUpdate().execute();
  await db.selectFrom('dm_channels').select('id').where('id', '=', channelId).forUpdate().execute();
  await db.selectFrom('group_dm_channels').select('id').where('id', '=', channelId).forUpdate().execute();
}
