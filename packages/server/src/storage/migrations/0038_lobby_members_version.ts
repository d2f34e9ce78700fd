import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * A lobby's member list has a version, changed by the database itself on every insert, update or delete of
 * one of its member rows (cascades, other nodes and CLI processes included): a node may keep the list it
 * read under that version and reuse it while the lobby row still shows the same value (issue 20). Each
 * change draws a new random 52-bit value rather than counting: a restored backup or emulator snapshot
 * must not bring back a number a node already saw with other members.
 */
export const lobbyMembersVersion: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const NEXT = sql.raw(sqlite ? '(random() >> 12)' : 'floor(random() * 4503599627370496)::bigint');
    await db.schema
      .alterTable('lobbies')
      .addColumn('members_version', sqlite ? 'integer' : 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    if (sqlite) {
      await sql`CREATE TRIGGER lobby_members_version_insert AFTER INSERT ON lobby_members
        BEGIN UPDATE lobbies SET members_version = ${NEXT} WHERE id = new.lobby_id; END`.execute(db);
      await sql`CREATE TRIGGER lobby_members_version_update AFTER UPDATE ON lobby_members
        BEGIN UPDATE lobbies SET members_version = ${NEXT}
          WHERE id = old.lobby_id OR id = new.lobby_id; END`.execute(db);
      await sql`CREATE TRIGGER lobby_members_version_delete AFTER DELETE ON lobby_members
        BEGIN UPDATE lobbies SET members_version = ${NEXT} WHERE id = old.lobby_id; END`.execute(db);
      return;
    }
    await sql`CREATE FUNCTION lobby_members_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          UPDATE lobbies SET members_version = ${NEXT} WHERE id = OLD.lobby_id;
        END IF;
        IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.lobby_id <> OLD.lobby_id) THEN
          UPDATE lobbies SET members_version = ${NEXT} WHERE id = NEW.lobby_id;
        END IF;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE TRIGGER lobby_members_version AFTER INSERT OR UPDATE OR DELETE ON lobby_members
      FOR EACH ROW EXECUTE FUNCTION lobby_members_version()`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      for (const name of ['insert', 'update', 'delete']) {
        await sql.raw(`DROP TRIGGER lobby_members_version_${name}`).execute(db);
      }
    } else {
      await sql`DROP TRIGGER lobby_members_version ON lobby_members`.execute(db);
      await sql`DROP FUNCTION lobby_members_version()`.execute(db);
    }
    await db.schema.alterTable('lobbies').dropColumn('members_version').execute();
  },
};
