import type { Kysely, Migration } from 'kysely';

export const oauth2: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('users')
      .addColumn('premium_type', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('applications')
      .addColumn('parent_application_id', 'text', (c) => c.references('applications.id').onDelete('set null'))
      .execute();
    await db.schema
      .alterTable('applications')
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema.alterTable('applications').addColumn('custom_install_url', 'text').execute();

    // One authorization of an application by a user: what prompt=none and the install count read.
    await db.schema
      .createTable('oauth_grants')
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('integration_type', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oauth_grants_pk', ['application_id', 'user_id'])
      .execute();

    await db.schema
      .createTable('oauth_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('redirect_uri', 'text')
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text')
      .addColumn('code_challenge', 'text')
      .addColumn('integration_type', 'integer')
      .addColumn('auth_time', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    // One row per access token. A refresh rotates: the new row keeps the family, the old refresh is spent.
    await db.schema
      .createTable('oauth_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('access_hash', 'text', (c) => c.notNull().unique())
      .addColumn('refresh_hash', 'text', (c) => c.unique())
      .addColumn('refresh_spent', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('refresh_expires_at', 'bigint')
      .addColumn('family_id', 'text', (c) => c.notNull())
      .addColumn('code_hash', 'text')
      .addColumn('parent_family_id', 'text')
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('oauth_tokens_grant')
      .on('oauth_tokens')
      .columns(['application_id', 'user_id'])
      .execute();
    await db.schema.createIndex('oauth_tokens_family').on('oauth_tokens').column('family_id').execute();
    await db.schema
      .createIndex('oauth_tokens_parent')
      .on('oauth_tokens')
      .column('parent_family_id')
      .execute();
    await db.schema.createIndex('oauth_tokens_code').on('oauth_tokens').column('code_hash').execute();

    // ID-token signing keys; a retired key stays published until the tokens it signed expire.
    await db.schema
      .createTable('signing_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('alg', 'text', (c) => c.notNull())
      .addColumn('private_jwk', 'text', (c) => c.notNull())
      .addColumn('public_jwk', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('retired_at', 'bigint')
      .execute();

    await db.schema
      .createTable('connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('external_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('visibility', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('legacy_publisher', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connections_user').on('connections').column('user_id').execute();

    await db.schema
      .createTable('guilds')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('icon', 'text')
      .addColumn('banner', 'text')
      .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('features', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('guild_members')
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('0'))
      .addColumn('joined_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('guild_members_pk', ['guild_id', 'user_id'])
      .execute();
    await db.schema.createIndex('guild_members_user').on('guild_members').column('user_id').execute();

    // Events bound for webhooks, written in the transaction of the change that caused them.
    await db.schema
      .createTable('outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
