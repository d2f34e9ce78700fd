import type { Kysely, Migration } from 'kysely';

export const lobbies: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('lobbies')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('metadata', 'text')
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('idle_timeout_seconds', 'integer', (c) => c.notNull())
      // Only SDK-created lobbies have a secret; it stops admitting members at secret_expires_at.
      .addColumn('secret', 'text')
      .addColumn('secret_expires_at', 'bigint')
      // SDK-created lobbies (create-or-join) are the only ones players may join or leave themselves.
      .addColumn('sdk_created', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('override_event_webhooks_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // When the lobby last had activity or a connected member; the idle sweeper reads it.
      .addColumn('active_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('lobbies_secret')
      .on('lobbies')
      .columns(['application_id', 'secret'])
      .unique()
      .execute();
    await db.schema.createIndex('lobbies_active').on('lobbies').column('active_at').execute();

    await db.schema
      .createTable('lobby_members')
      .addColumn('lobby_id', 'text', (c) => c.notNull().references('lobbies.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      // Denormalized so the per-application lobby cap is one indexed count.
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text')
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('additional_name', 'text')
      .addColumn('joined_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('lobby_members_pk', ['lobby_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('lobby_members_user')
      .on('lobby_members')
      .columns(['user_id', 'application_id'])
      .execute();

    await db.schema
      .createTable('lobby_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('lobby_id', 'text', (c) => c.notNull().references('lobbies.id').onDelete('cascade'))
      .addColumn('author_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text')
      .addColumn('moderation_metadata', 'text')
      .addColumn('author_additional_name', 'text')
      .addColumn('flags', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('edited_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('lobby_messages_lobby')
      .on('lobby_messages')
      .columns(['lobby_id', 'created_at'])
      .execute();
  },
};
