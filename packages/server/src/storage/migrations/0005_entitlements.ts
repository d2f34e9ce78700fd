import type { Kysely, Migration } from 'kysely';

/** SKUs, entitlements and subscriptions (PROTOCOL.md §I). */
export const entitlements: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('skus')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('flags', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('skus_application').on('skus').column('application_id').execute();

    await db.schema
      .createTable('subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('sku_ids', 'text', (c) => c.notNull())
      .addColumn('entitlement_ids', 'text', (c) => c.notNull())
      .addColumn('renewal_sku_ids', 'text')
      .addColumn('current_period_start', 'bigint', (c) => c.notNull())
      .addColumn('current_period_end', 'bigint', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('canceled_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('subscriptions_user')
      .on('subscriptions')
      .columns(['application_id', 'user_id'])
      .execute();

    await db.schema
      .createTable('entitlements')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('sku_id', 'text', (c) => c.notNull().references('skus.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('guild_id', 'text', (c) => c.references('guilds.id').onDelete('cascade'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('consumed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('starts_at', 'bigint')
      .addColumn('ends_at', 'bigint')
      .addColumn('subscription_id', 'text', (c) => c.references('subscriptions.id').onDelete('set null'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('entitlements_application')
      .on('entitlements')
      .columns(['application_id', 'id'])
      .execute();
  },
};
