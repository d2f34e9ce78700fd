import type { Kysely, Migration } from 'kysely';

/** Provisional accounts, the external identities that key them, identity providers and bans. */
export const provisional: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('users')
      .addColumn('provisional', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    // Which account an identity of an application's player system (or of an identity provider) stands for.
    await db.schema
      .createTable('external_identities')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('provider_type', 'text', (c) => c.notNull())
      // The issuer for ID-token providers; '' where the type has none (bot-issued, Steam, EOS access tokens).
      .addColumn('provider_id', 'text', (c) => c.notNull())
      .addColumn('external_user_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      // Set when a ban turned the link into a restricted provisional account: the banned user's id.
      .addColumn('restricted_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('external_identities_key')
      .on('external_identities')
      .columns(['application_id', 'provider_type', 'provider_id', 'external_user_id'])
      .unique()
      .execute();
    await db.schema
      .createIndex('external_identities_user')
      .on('external_identities')
      .column('user_id')
      .execute();

    await db.schema
      .createTable('identity_providers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text')
      .addColumn('client_id', 'text')
      .addColumn('jwks_uri', 'text')
      // JSON array: the allowed algorithms the discovery document announced.
      .addColumn('algorithms', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('verification_url', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('identity_providers_application')
      .on('identity_providers')
      .column('application_id')
      .execute();

    await db.schema
      .createTable('user_bans')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('reason', 'text')
      // null: permanent.
      .addColumn('expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
