import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * The event log's append on PostgreSQL as one call (bus/database-bus.ts, issue 20): the table lock and the
 * insert in one round trip instead of four (BEGIN, LOCK, INSERT, COMMIT), and the events as one array
 * parameter, so that every batch size runs the same statement. A VOLATILE function takes a fresh snapshot
 * for each statement in it, so the insert, made under the lock, reads the `ms` of the last committed row;
 * the lock is held until the calling statement commits, so numbers are still committed in the order taken.
 * SQLite appends in one statement already (its write lock): nothing to add there.
 */
export const eventLogAppend: Migration = {
  async up(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) return;
    await sql`CREATE FUNCTION event_log_append(events text[], now_ms bigint) RETURNS SETOF event_log
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        LOCK TABLE event_log IN EXCLUSIVE MODE;
        RETURN QUERY INSERT INTO event_log (ms, event)
          SELECT greatest(now_ms, coalesce((SELECT last.ms FROM event_log AS last ORDER BY last.id DESC LIMIT 1), 0)),
            given.event
          FROM unnest(events) WITH ORDINALITY AS given(event, n)
          ORDER BY given.n
          RETURNING event_log.id, event_log.ms, event_log.event;
      END $$`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) return;
    await sql`DROP FUNCTION event_log_append(text[], bigint)`.execute(db);
  },
};
