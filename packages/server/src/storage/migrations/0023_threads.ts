import type { Kysely, Migration } from 'kysely';

/**
 * Threads (GUILDS.md §2.5): sub-channels of a text, announcement, forum or media channel, kept apart from
 * `channels` so guild channel lists, counts and GUILD_CREATE's `channels` never hold them; their messages
 * live in `messages` under the thread's id. `thread_members` is each thread's explicit membership.
 */
export const threads: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('threads')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('parent_id', 'text', (c) => c.notNull())
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('rate_limit_per_user', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_message_id', 'text')
      .addColumn('last_pin_timestamp', 'bigint')
      .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('auto_archive_duration', 'integer', (c) => c.notNull())
      .addColumn('archive_timestamp', 'bigint', (c) => c.notNull())
      .addColumn('locked', 'integer', (c) => c.notNull().defaultTo(0))
      // Private threads only; null elsewhere.
      .addColumn('invitable', 'integer')
      .addColumn('message_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('total_message_sent', 'integer', (c) => c.notNull().defaultTo(0))
      // JSON array of forum tag ids.
      .addColumn('applied_tags', 'text', (c) => c.notNull().defaultTo('[]'))
      // The last activity (a message, an unarchive, a new auto-archive duration): auto-archive counts from it.
      .addColumn('last_activity_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('threads_guild').on('threads').columns(['guild_id', 'archived']).execute();
    await db.schema
      .createIndex('threads_parent')
      .on('threads')
      .columns(['parent_id', 'archived', 'archive_timestamp'])
      .execute();

    await db.schema
      .createTable('thread_members')
      .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('join_timestamp', 'bigint', (c) => c.notNull())
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('thread_members_pk', ['thread_id', 'user_id'])
      .execute();
    await db.schema.createIndex('thread_members_user').on('thread_members').column('user_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('thread_members').execute();
    await db.schema.dropTable('threads').execute();
  },
};
