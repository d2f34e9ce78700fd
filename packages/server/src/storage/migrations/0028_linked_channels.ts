import type { Kysely, Migration } from 'kysely';

/**
 * Linked channels (PROTOCOL.md §A.5): at most one guild text channel per lobby and one lobby per channel.
 * Deleting either side removes the link. A lobby message records the linked channel it also lives in.
 */
export const linkedChannels: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('lobby_channel_links')
      .addColumn('lobby_id', 'text', (c) => c.primaryKey().references('lobbies.id').onDelete('cascade'))
      .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('linked_by', 'text', (c) => c.notNull())
      .addColumn('linked_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('lobby_channel_links_channel')
      .on('lobby_channel_links')
      .column('channel_id')
      .unique()
      .execute();
    await db.schema
      .createIndex('lobby_channel_links_guild')
      .on('lobby_channel_links')
      .column('guild_id')
      .execute();
    await db.schema.alterTable('lobby_messages').addColumn('channel_id', 'text').execute();
  },
};
