import type { Kysely, Migration } from 'kysely';

export const foundation: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('discriminator', 'text', (c) => c.notNull())
      .addColumn('global_name', 'text')
      .addColumn('email', 'text')
      .addColumn('password_hash', 'text')
      .addColumn('avatar', 'text')
      .addColumn('bot', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('flags', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('users_username')
      .on('users')
      .columns(['username', 'discriminator'])
      .unique()
      .execute();
    await db.schema.createIndex('users_email').on('users').column('email').unique().execute();

    await db.schema
      .createTable('sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

    await db.schema
      .createTable('applications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'text', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('bot_user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('bot_token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('client_secret_hash', 'text', (c) => c.notNull())
      .addColumn('public_client', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('flags', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('verify_key', 'text', (c) => c.notNull())
      .addColumn('signing_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
