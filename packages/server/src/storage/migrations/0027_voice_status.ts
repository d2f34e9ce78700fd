import type { Kysely, Migration } from 'kysely';

/**
 * Voice channel status and voice start time (PROTOCOL.md §D.7): ephemeral data of a voice channel, kept
 * beside the channel rather than in it (never part of the channel object). A row goes with its channel.
 */
export const voiceStatus: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('voice_channel_statuses')
      .addColumn('channel_id', 'text', (c) => c.primaryKey().references('channels.id').onDelete('cascade'))
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('status', 'text')
      .addColumn('voice_start_time', 'bigint')
      .execute();
    await db.schema
      .createIndex('voice_channel_statuses_guild')
      .on('voice_channel_statuses')
      .column('guild_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('voice_channel_statuses').execute();
  },
};
