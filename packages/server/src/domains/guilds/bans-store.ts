import type { Executor } from '../../storage/database.js';
import { idAfter, idBefore } from './members-store.js';

export function findBan(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('guild_bans')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** One page of bans by user id: after `after` ascending, or the last ones before `before`. */
export async function listBans(
  db: Executor,
  guildId: string,
  page: { before?: string | undefined; after?: string | undefined; limit: number },
) {
  let query = db.selectFrom('guild_bans').selectAll().where('guild_id', '=', guildId);
  if (page.after !== undefined) query = query.where(idAfter('guild_bans.user_id', page.after));
  if (page.before !== undefined) query = query.where(idBefore('guild_bans.user_id', page.before));
  // `before` alone pages backwards: take the nearest ones, then answer them in id order.
  const backwards = page.before !== undefined && page.after === undefined;
  const direction = backwards ? 'desc' : 'asc';
  const rows = await query
    .orderBy((eb) => eb.fn('length', ['guild_bans.user_id']), direction)
    .orderBy('guild_bans.user_id', direction)
    .limit(page.limit)
    .execute();
  return backwards ? rows.reverse() : rows;
}

/** Bans a user, or replaces the reason of an existing ban. */
export async function upsertBan(
  db: Executor,
  row: { guild_id: string; user_id: string; reason: string | null; created_at: number },
): Promise<void> {
  await db
    .insertInto('guild_bans')
    .values(row)
    .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doUpdateSet({ reason: row.reason }))
    .execute();
}

export async function deleteBan(db: Executor, guildId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('guild_bans')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
