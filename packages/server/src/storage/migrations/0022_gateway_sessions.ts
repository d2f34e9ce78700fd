import type { Kysely, Migration } from 'kysely';

/**
 * Gateway sessions shared by the nodes of a deployment (gateway/session-store.ts): what a node needs to take
 * a session over, and its recent dispatches. In the database rather than Redis, so that a Redis restart or
 * outage ends no session and loses no dispatch (Redis only speeds up the event log).
 */
export const gatewaySessions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('gateway_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('session', 'text', (c) => c.notNull())
      .addColumn('touched_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('gateway_sessions_touched')
      .on('gateway_sessions')
      .column('touched_at')
      .execute();
    await db.schema
      .createTable('gateway_session_dispatches')
      .addColumn('session_id', 'text', (c) =>
        c.notNull().references('gateway_sessions.id').onDelete('cascade'),
      )
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('sent', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('gateway_session_dispatches_pk', ['session_id', 'seq'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('gateway_session_dispatches').execute();
    await db.schema.dropTable('gateway_sessions').execute();
  },
};
