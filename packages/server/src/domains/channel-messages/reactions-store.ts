import { sql } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ReactionEmoji } from './reaction-emoji.js';

/** How many different emoji a message carries (the 20-emoji limit counts these). */
export async function countEmoji(db: Executor, messageId: string): Promise<number> {
  const row = await db
    .selectFrom('message_reactions')
    .select(sql<number>`count(distinct emoji_key)`.as('n'))
    .where('message_id', '=', messageId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Whether anyone has reacted to the message with this emoji (then ADD_REACTIONS is not needed). */
export async function hasEmoji(db: Executor, messageId: string, emojiKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('message_reactions')
    .select('user_id')
    .where('message_id', '=', messageId)
    .where('emoji_key', '=', emojiKey)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Adds one user's reaction; false when they had already reacted so (nothing changes). */
export async function insertReaction(
  db: Executor,
  reaction: { messageId: string; emoji: ReactionEmoji; userId: string; burst: boolean; createdAt: number },
): Promise<boolean> {
  const result = await db
    .insertInto('message_reactions')
    .values({
      message_id: reaction.messageId,
      emoji_key: reaction.emoji.key,
      emoji_id: reaction.emoji.id,
      emoji_name: reaction.emoji.name,
      emoji_animated: reaction.emoji.animated ? 1 : 0,
      user_id: reaction.userId,
      burst: reaction.burst ? 1 : 0,
      created_at: reaction.createdAt,
    })
    .onConflict((conflict) => conflict.columns(['message_id', 'emoji_key', 'user_id', 'burst']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** Removes one user's reactions with an emoji (normal and burst); answers whether there were any. */
export async function deleteUserReaction(
  db: Executor,
  messageId: string,
  emojiKey: string,
  userId: string,
): Promise<{ burst: boolean } | undefined> {
  const rows = await db
    .deleteFrom('message_reactions')
    .where('message_id', '=', messageId)
    .where('emoji_key', '=', emojiKey)
    .where('user_id', '=', userId)
    .returning('burst')
    .execute();
  if (rows.length === 0) return undefined;
  return { burst: rows.every((row) => Number(row.burst) === 1) };
}

/** Removes every reaction with an emoji; answers how many there were. */
export async function deleteEmojiReactions(
  db: Executor,
  messageId: string,
  emojiKey: string,
): Promise<number> {
  const result = await db
    .deleteFrom('message_reactions')
    .where('message_id', '=', messageId)
    .where('emoji_key', '=', emojiKey)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes every reaction of a message; answers how many there were. */
export async function deleteAllReactions(db: Executor, messageId: string): Promise<number> {
  const result = await db
    .deleteFrom('message_reactions')
    .where('message_id', '=', messageId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** One page of the users who reacted with an emoji (normal or burst), by user id after `after`. */
export async function reactionUserIds(
  db: Executor,
  query: { messageId: string; emojiKey: string; burst: boolean; after: string | undefined; limit: number },
): Promise<string[]> {
  let select = db
    .selectFrom('message_reactions')
    .select('user_id')
    .where('message_id', '=', query.messageId)
    .where('emoji_key', '=', query.emojiKey)
    .where('burst', '=', query.burst ? 1 : 0);
  // Snowflakes are decimal strings of varying length: longer is larger, then text order.
  if (query.after !== undefined) {
    const after = query.after;
    select = select.where(
      sql<boolean>`(length(user_id) > ${after.length} or (length(user_id) = ${after.length} and user_id > ${after}))`,
    );
  }
  const rows = await select
    .orderBy((eb) => eb.fn('length', ['user_id']))
    .orderBy('user_id')
    .limit(query.limit)
    .execute();
  return rows.map((row) => row.user_id);
}
