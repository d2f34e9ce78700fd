import type { Kysely, Migration } from 'kysely';

/**
 * Channel messages (GUILDS.md §4–§6): messages of guild and DM channels, their attachments and reactions,
 * the `enforce_nonce` ledger, slowmode marks and AutoMod rules. A message's `channel_id` has no foreign key:
 * it names a guild channel (`channels`) or a DM channel (`dm_channels`); the channel's own deletion removes
 * its messages.
 */
export const messages: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('guild_id', 'text', (c) => c.references('guilds.id').onDelete('cascade'))
      .addColumn('author_id', 'text', (c) => c.notNull())
      .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('tts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('mention_everyone', 'integer', (c) => c.notNull().defaultTo(0))
      // JSON arrays of ids, and JSON objects as the wire has them.
      .addColumn('mentions', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('mention_roles', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('embeds', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('components', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('message_reference', 'text')
      .addColumn('message_snapshots', 'text')
      .addColumn('interaction_metadata', 'text')
      .addColumn('nonce', 'text')
      .addColumn('pinned', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pinned_at', 'bigint')
      .addColumn('webhook_id', 'text')
      .addColumn('application_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('edited_at', 'bigint')
      .execute();
    // History pages: `created_at` is the id's own timestamp, so (created_at, id) orders as snowflakes do.
    await db.schema
      .createIndex('messages_channel_order')
      .on('messages')
      .columns(['channel_id', 'created_at', 'id'])
      .execute();

    // `enforce_nonce` (seed): one row per author and nonce, its message and when; expired rows are replaced.
    await db.schema
      .createTable('message_nonces')
      .addColumn('author_id', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_nonces_pk', ['author_id', 'nonce'])
      .execute();

    await db.schema
      .createTable('message_attachments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('message_id', 'text', (c) => c.references('messages.id').onDelete('set null'))
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('title', 'text')
      .addColumn('description', 'text')
      .addColumn('content_type', 'text')
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('width', 'integer')
      .addColumn('height', 'integer')
      .addColumn('duration_secs', 'real')
      .addColumn('waveform', 'text')
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      // Where the bytes are, relative to the attachment store's root.
      .addColumn('storage_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('message_attachments_message')
      .on('message_attachments')
      .columns(['message_id', 'position'])
      .execute();

    // A reaction: one user, one emoji (a custom emoji's id, or the unicode text), normal or burst.
    await db.schema
      .createTable('message_reactions')
      .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
      .addColumn('emoji_key', 'text', (c) => c.notNull())
      .addColumn('emoji_id', 'text')
      .addColumn('emoji_name', 'text')
      .addColumn('emoji_animated', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('burst', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_reactions_pk', ['message_id', 'emoji_key', 'user_id', 'burst'])
      .execute();

    // Slowmode (`rate_limit_per_user`): when a member may next send in a channel.
    await db.schema
      .createTable('slowmode_marks')
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('until', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('slowmode_marks_pk', ['channel_id', 'user_id'])
      .execute();

    await db.schema
      .createTable('auto_moderation_rules')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('creator_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'integer', (c) => c.notNull())
      .addColumn('trigger_type', 'integer', (c) => c.notNull())
      .addColumn('trigger_metadata', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('actions', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('exempt_roles', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('exempt_channels', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('auto_moderation_rules_guild')
      .on('auto_moderation_rules')
      .column('guild_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    for (const table of [
      'auto_moderation_rules',
      'slowmode_marks',
      'message_reactions',
      'message_attachments',
      'message_nonces',
      'messages',
    ])
      await db.schema.dropTable(table).execute();
  },
};
