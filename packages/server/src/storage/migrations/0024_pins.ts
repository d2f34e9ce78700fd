import type { Kysely, Migration } from 'kysely';

/**
 * Pins (GUILDS.md §3.7) reuse `messages.pinned` / `pinned_at` (0016_messages); a message's `pinned_at` is
 * set exactly while it is pinned. Pages of a channel's pins run newest pin first on this index, and the
 * per-channel count of the 250 limit reads it too.
 */
export const pins: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('messages_channel_pins')
      .on('messages')
      .columns(['channel_id', 'pinned_at', 'id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('messages_channel_pins').execute();
  },
};
