import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { HearthError } from '../kernel/errors.js';
import type { Executor, Storage } from '../storage/database.js';

export interface SnapshotInfo {
  name: string;
  created_at: string;
}

/**
 * Tables a snapshot leaves alone: the migrations' bookkeeping, the event log every node tails by offset
 * (going back would make nodes skip new events), and gateway sessions, which a restore ends anyway.
 */
const LIVE_TABLES = new Set([
  'kysely_migration',
  'kysely_migration_lock',
  'event_log',
  'gateway_sessions',
  'gateway_session_dispatches',
  'sqlite_sequence',
]);

/**
 * Named copies of the whole database, restored in place while the server runs (README "Snapshots").
 * SQLite: `VACUUM INTO` a file, restored by ATTACH and a per-table delete/insert in one transaction with
 * foreign keys deferred. PostgreSQL: one schema per snapshot, restored the same way.
 */
export class Snapshots {
  readonly #storage: Storage;
  readonly #dir: string;
  /** PostgreSQL: `hearth_snapshot_<schema>_`, so deployments in several schemas of one database keep theirs apart. */
  #pgPrefix: string | undefined;

  readonly #reindex: ((tx: Executor, messageId: string) => Promise<void>) | undefined;

  /**
   * `reindex` puts a message back into SQLite's full-text index, whose shadow tables cannot be written
   * directly: a restore lets it rebuild the restored messages' entries.
   */
  constructor(deps: {
    storage: Storage;
    dir: string;
    reindex?: (tx: Executor, messageId: string) => Promise<void>;
  }) {
    this.#storage = deps.storage;
    this.#dir = deps.dir;
    this.#reindex = deps.reindex;
  }

  async save(name: string): Promise<SnapshotInfo> {
    return this.#storage.engine === 'sqlite' ? this.#saveSqlite(name) : this.#savePostgres(name);
  }

  async restore(name: string): Promise<void> {
    if (this.#storage.engine === 'sqlite') await this.#restoreSqlite(name);
    else await this.#restorePostgres(name);
  }

  async list(): Promise<SnapshotInfo[]> {
    return this.#storage.engine === 'sqlite' ? this.#listSqlite() : this.#listPostgres();
  }

  /** False when there is no snapshot by that name. */
  async delete(name: string): Promise<boolean> {
    const known = (await this.list()).some((s) => s.name === name);
    if (!known) return false;
    if (this.#storage.engine === 'sqlite') await rm(this.#file(name), { force: true });
    else await sql.raw(`DROP SCHEMA ${await this.#pgSchema(name)} CASCADE`).execute(this.#storage.db);
    return true;
  }

  // ---- SQLite ----

  #file(name: string): string {
    return join(this.#dir, `${name}.sqlite`);
  }

  async #saveSqlite(name: string): Promise<SnapshotInfo> {
    await mkdir(this.#dir, { recursive: true });
    const file = this.#file(name);
    await rm(file, { force: true });
    await sql.raw(`VACUUM INTO ${quoteText(file)}`).execute(this.#storage.db);
    return { name, created_at: (await stat(file)).mtime.toISOString() };
  }

  async #restoreSqlite(name: string): Promise<void> {
    const file = this.#file(name);
    if (!(await stat(file).catch(() => undefined))) throw new HearthError('GeneralNotFound');
    const db = this.#storage.db;
    await sql.raw(`ATTACH DATABASE ${quoteText(file)} AS snapshot`).execute(db);
    try {
      const tables = await sql<{ name: string; sql: string }>`
        SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`.execute(
        db,
      );
      // A full-text table and its shadow tables are rebuilt from the restored rows, not copied.
      const virtual = tables.rows.filter((row) => /^CREATE VIRTUAL/i.test(row.sql)).map((row) => row.name);
      const copied = tables.rows
        .map((row) => row.name)
        .filter(
          (table) =>
            !LIVE_TABLES.has(table) && !virtual.some((v) => table === v || table.startsWith(`${v}_`)),
        );
      await this.#storage.transaction(async (tx) => {
        // Rows come back table by table: the references between them hold again once all are in.
        await sql`PRAGMA defer_foreign_keys = ON`.execute(tx);
        // Every table is emptied before any is filled: a cascade from a later delete would empty a filled one.
        for (const table of copied) await sql.raw(`DELETE FROM main.${quoteName(table)}`).execute(tx);
        for (const table of copied) {
          await sql
            .raw(`INSERT INTO main.${quoteName(table)} SELECT * FROM snapshot.${quoteName(table)}`)
            .execute(tx);
        }
        for (const table of virtual) await sql.raw(`DELETE FROM main.${quoteName(table)}`).execute(tx);
        if (this.#reindex && copied.includes('message_search_documents')) {
          const documents = await sql<{ message_id: string }>`
            SELECT message_id FROM main.message_search_documents`.execute(tx);
          for (const { message_id } of documents.rows) await this.#reindex(tx, message_id);
        }
      });
    } finally {
      await sql.raw('DETACH DATABASE snapshot').execute(db);
    }
  }

  async #listSqlite(): Promise<SnapshotInfo[]> {
    const names = await readdir(this.#dir).catch(() => [] as string[]);
    const out: SnapshotInfo[] = [];
    for (const file of names.filter((n) => n.endsWith('.sqlite')).sort()) {
      const info = await stat(join(this.#dir, file));
      out.push({ name: file.slice(0, -'.sqlite'.length), created_at: info.mtime.toISOString() });
    }
    return out;
  }

  // ---- PostgreSQL ----

  async #prefix(): Promise<string> {
    if (this.#pgPrefix === undefined) {
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(
        this.#storage.db,
      );
      this.#pgPrefix = `hearth_snapshot_${rows[0]?.schema ?? 'public'}_`;
    }
    return this.#pgPrefix;
  }

  /** Snapshot names are checked (`[A-Za-z0-9_-]`); quoted, the schema keeps their case. */
  async #pgSchema(name: string): Promise<string> {
    return quoteName(`${await this.#prefix()}${name}`);
  }

  async #tablesPostgres(): Promise<string[]> {
    const { rows } = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(this.#storage.db);
    return rows.map((row) => row.table_name).filter((table) => !LIVE_TABLES.has(table));
  }

  async #savePostgres(name: string): Promise<SnapshotInfo> {
    const schema = await this.#pgSchema(name);
    const tables = await this.#tablesPostgres();
    await this.#storage.transaction(async (tx) => {
      await sql.raw(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).execute(tx);
      await sql.raw(`CREATE SCHEMA ${schema}`).execute(tx);
      await sql.raw(`COMMENT ON SCHEMA ${schema} IS ${quoteText(new Date().toISOString())}`).execute(tx);
      for (const table of tables) {
        await sql
          .raw(`CREATE TABLE ${schema}.${quoteName(table)} AS SELECT * FROM ${quoteName(table)}`)
          .execute(tx);
      }
    });
    return { name, created_at: new Date().toISOString() };
  }

  async #restorePostgres(name: string): Promise<void> {
    if (!(await this.#listPostgres()).some((s) => s.name === name)) throw new HearthError('GeneralNotFound');
    const schema = await this.#pgSchema(name);
    const tables = await this.#tablesPostgres();
    await this.#storage.transaction(async (tx) => {
      // Foreign-key triggers stay off for this transaction: the tables are refilled in any order.
      await sql`SET LOCAL session_replication_role = replica`.execute(tx);
      await sql.raw(`TRUNCATE ${tables.map(quoteName).join(', ')}`).execute(tx);
      for (const table of tables) {
        await sql
          .raw(
            `INSERT INTO ${quoteName(table)} OVERRIDING SYSTEM VALUE SELECT * FROM ${schema}.${quoteName(table)}`,
          )
          .execute(tx);
      }
    });
  }

  async #listPostgres(): Promise<SnapshotInfo[]> {
    const prefix = await this.#prefix();
    const { rows } = await sql<{ nspname: string; comment: string | null }>`
      SELECT nspname, obj_description(oid, 'pg_namespace') AS comment FROM pg_namespace
      WHERE starts_with(nspname, ${prefix}) ORDER BY nspname`.execute(this.#storage.db);
    return rows.map((row) => ({
      name: row.nspname.slice(prefix.length),
      created_at: row.comment ?? new Date(0).toISOString(),
    }));
  }
}

const quoteName = (name: string) => `"${name.replace(/"/g, '""')}"`;
const quoteText = (text: string) => `'${text.replace(/'/g, "''")}'`;
