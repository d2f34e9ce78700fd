import type { Kysely, Migration } from 'kysely';

/** Relationships, game relationships and game direct messages (PROTOCOL.md §B.4–B.6, §B.9). */
export const social: Migration = {
  async up(db: Kysely<unknown>) {
    // One row per direction: A's view of B. A friendship is two rows; a block is the blocker's row only.
    await db.schema
      .createTable('relationships')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('target_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('relationships_pk', ['user_id', 'target_id'])
      .execute();
    await db.schema.createIndex('relationships_target').on('relationships').column('target_id').execute();

    await db.schema
      .createTable('game_relationships')
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('target_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('game_relationships_pk', ['application_id', 'user_id', 'target_id'])
      .execute();
    await db.schema
      .createIndex('game_relationships_user')
      .on('game_relationships')
      .columns(['user_id', 'target_id'])
      .execute();

    // The DM channel of two users: `user_low` < `user_high` as snowflakes, so a pair has one channel.
    await db.schema
      .createTable('dm_channels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_low', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('user_high', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('dm_channels_pair', ['user_low', 'user_high'])
      .execute();

    await db.schema
      .createTable('dm_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('channel_id', 'text', (c) => c.notNull().references('dm_channels.id').onDelete('cascade'))
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('author_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('recipient_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text')
      .addColumn('moderation_metadata', 'text')
      .addColumn('activity', 'text')
      .addColumn('nonce', 'text')
      .addColumn('flags', 'integer', (c) => c.notNull())
      .addColumn('ephemeral', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('edited_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('dm_messages_channel')
      .on('dm_messages')
      .columns(['channel_id', 'created_at'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('dm_messages').execute();
    await db.schema.dropTable('dm_channels').execute();
    await db.schema.dropTable('game_relationships').execute();
    await db.schema.dropTable('relationships').execute();
  },
};
