import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Durable delivery of the outbox (PROTOCOL.md §F.2) and each application's event webhook settings (§F.1).
 * A row is leased by one node at a time, so several nodes on one database never deliver it concurrently.
 */
export const webhooks: Migration = {
  async up(db: Kysely<unknown>) {
    // pending → delivered | failed (retries spent) | skipped (not subscribed, no URL, disabled).
    await db.schema
      .alterTable('outbox')
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
      .execute();
    await db.schema
      .alterTable('outbox')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('outbox')
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('outbox').addColumn('lease_owner', 'text').execute();
    await db.schema.alterTable('outbox').addColumn('lease_until', 'bigint').execute();
    await db.schema.alterTable('outbox').addColumn('finished_at', 'bigint').execute();
    await db.schema.alterTable('outbox').addColumn('last_error', 'text').execute();
    await db.schema.alterTable('outbox').addColumn('override_url', 'text').execute();
    // Rows recorded before this migration are due at once.
    await sql`UPDATE outbox SET next_attempt_at = created_at`.execute(db);
    await db.schema.createIndex('outbox_due').on('outbox').columns(['status', 'next_attempt_at']).execute();
    await db.schema
      .createIndex('outbox_application')
      .on('outbox')
      .columns(['application_id', 'created_at'])
      .execute();

    // One row per attempt: the delivery log `hearth webhooks log` reads.
    await db.schema
      .createTable('webhook_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull().references('outbox.id').onDelete('cascade'))
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_attempts_event').on('webhook_attempts').column('event_id').execute();

    await db.schema
      .createTable('event_webhooks')
      .addColumn('application_id', 'text', (c) =>
        c.primaryKey().references('applications.id').onDelete('cascade'),
      )
      .addColumn('url', 'text')
      .addColumn('status', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('types', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('disabled_reason', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
