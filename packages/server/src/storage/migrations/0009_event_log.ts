import { type Kysely, type Migration, SqliteAdapter } from 'kysely';

/**
 * The event log every node tails when no Redis is configured (bus/database-bus.ts): one row per bus event,
 * numbered in commit order, so that a `hearth` command's events reach the servers on the same database.
 */
export const eventLog: Migration = {
  async up(db: Kysely<unknown>) {
    // AUTOINCREMENT on SQLite: a number is never reused, even once trimming has emptied the table.
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    await db.schema
      .createTable('event_log')
      .addColumn('id', sqlite ? 'integer' : 'bigint', (c) =>
        sqlite ? c.primaryKey().autoIncrement() : c.primaryKey().generatedAlwaysAsIdentity(),
      )
      .addColumn('ms', 'bigint', (c) => c.notNull())
      .addColumn('event', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('event_log').execute();
  },
};
