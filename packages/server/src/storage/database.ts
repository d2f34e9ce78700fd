import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  type MigrationResultSet,
  Migrator,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteStatement,
  sql,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { type ChangeStamps, noStamps, SqliteChangeStamps, walIndexStamps } from './change-stamp.js';
import { migrationProvider } from './migrations/index.js';
import { SearchPathPostgresDialect } from './postgres-dialect.js';
import type { Schema } from './schema.js';

export type Engine = 'sqlite' | 'postgres';
export type Database = Kysely<Schema>;
/** What a store runs its queries on: the database itself, or an open transaction. */
export type Executor = Kysely<Schema> | Transaction<Schema>;

export interface Storage {
  readonly engine: Engine;
  readonly db: Database;
  /**
   * Runs `work` in one transaction; it commits before the promise resolves. Inside, query only through
   * `tx`: SQLite has one connection, so a query on `db` would wait for the transaction forever.
   */
  transaction<T>(work: (tx: Transaction<Schema>) => Promise<T>): Promise<T>;
  /** Calls `listener` with each transaction after it committed (the webhook worker wakes on its own writes). */
  onCommit(listener: (tx: Transaction<Schema>) => void): () => void;
  migrate(): Promise<string[]>;
  /** The migrations this code knows that the database has not applied (the readiness probe asks). */
  pendingMigrations(): Promise<string[]>;
  /** The PostgreSQL pool's connections (metrics); undefined on SQLite, which has one connection. */
  pool(): { total: number; idle: number; waiting: number } | undefined;
  /**
   * Differs after every commit by another process, and after this one's commits but those that wrote only
   * tables no cached read reads (`ReadCache`); on PostgreSQL never known.
   */
  readonly changeStamps: ChangeStamps;
  close(): Promise<void>;
}

/** Opens `sqlite:PATH`, `sqlite::memory:` or `postgres://…[?schema=NAME]`. */
export async function openStorage(url: string): Promise<Storage> {
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url);
  throw new Error(`unsupported database URL "${url}"`);
}

function openSqlite(path: string): Storage {
  const inMemory = path === ':memory:' || path === '';
  if (!inMemory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SQLite(inMemory ? ':memory:' : path);
  // First: a process opening the file while another migrates it waits for the write lock instead of failing
  // (switching a new file to WAL takes it too); 15 s covers a cold migration on a loaded machine.
  sqlite.pragma('busy_timeout = 15000');
  // WAL lets the CLI write while a server reads; NORMAL sync is durable across process restarts.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const checkpointer = inMemory ? undefined : startCheckpointer(resolve(path));
  // The checkpointer copies the log into the file; this connection does it only if the log grows far beyond
  // the usual 1,000 pages (the checkpointer stopped or cannot keep up), so the log stays bounded either way.
  if (checkpointer) sqlite.pragma(`wal_autocheckpoint = ${CHECKPOINT_FALLBACK_PAGES}`);
  const walIndex = inMemory ? undefined : walIndexStamps(resolve(path));
  const stamps = new SqliteChangeStamps(sqlite, walIndex);
  const storage = wrap(
    'sqlite',
    new Kysely<Schema>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite, stamps) }) }),
    stamps.stamps,
  );
  return {
    ...storage,
    async migrate() {
      const applied = await storage.migrate();
      // New tables are watched too; a migration's own writes change the stamp.
      stamps.watch();
      return applied;
    },
    async close() {
      await checkpointer?.terminate();
      await storage.close();
      // Last: its descriptor of the -shm file holds SQLite's locks there until SQLite let them go.
      walIndex?.close();
    },
  };
}

/** SQLite's own automatic checkpoint: a commit that finds the log at this many pages copies it to the file. */
const CHECKPOINT_PAGES = 1000;
const CHECKPOINT_FALLBACK_PAGES = 10 * CHECKPOINT_PAGES;

/**
 * Checkpoints on a thread of their own. SQLite's automatic checkpoint runs in the commit that crosses the
 * threshold, on the one thread that serves every request: copying the pages and two fsyncs were about half
 * of a token exchange's storage time. Here a second connection reads, ten times a second, how many frames of
 * the log are not yet copied (the WAL-index header in the `-shm` file: mxFrame at byte 16, nBackfill at 96,
 * https://www.sqlite.org/walformat.html) and past the usual threshold makes a passive checkpoint, which never
 * waits for or blocks a reader or the writer; the writer restarts the log by itself once all was copied.
 */
function startCheckpointer(path: string): Worker {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINTER_SOURCE, {
    eval: true,
    workerData: { driver, path, thresholdFrames: CHECKPOINT_PAGES },
  });
  // A failed checkpointer leaves the fallback threshold in charge; it never keeps the process alive.
  worker.on('error', () => {});
  worker.unref();
  return worker;
}

const CHECKPOINTER_SOURCE = `
const { openSync, readSync } = require('node:fs');
const { endianness } = require('node:os');
const { workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path, { fileMustExist: true });
db.pragma('wal_autocheckpoint = 0');
const header = Buffer.alloc(100);
const little = endianness() === 'LE';
const word = (offset) => (little ? header.readUInt32LE(offset) : header.readUInt32BE(offset));
let shm;
setInterval(() => {
  try {
    shm ??= openSync(workerData.path + '-shm', 'r');
    if (readSync(shm, header, 0, 100, 0) < 100) return;
  } catch {
    // The descriptor stays open: closing one drops every POSIX lock of the process on the file, SQLite's too.
    return;
  }
  if (word(16) - word(96) < workerData.thresholdFrames) return;
  // Another process's checkpoint under way, or a lock held: the next tick tries again.
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, 100);
`;

/**
 * Kysely asks better-sqlite3 to prepare every query it runs; preparing costs more than running a point
 * lookup. Keep the most recently used statements prepared (bounded, least recently used out first). Each
 * runs between two `settle()`s of the change stamps, which see the end of a transaction that wrote.
 */
function withStatementCache(sqlite: SQLite.Database, stamps: SqliteChangeStamps, size = 512): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(text) {
      // A deferred transaction that reads, then writes, fails at once with SQLITE_BUSY (no busy wait) when
      // another process committed in between; taking the write lock at BEGIN makes it wait instead.
      const sql = text === 'begin' ? 'begin immediate' : text;
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = settled(sqlite.prepare(sql), stamps);
        if (cache.size >= size) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

function settled(statement: SQLite.Statement, stamps: SqliteChangeStamps): SqliteStatement {
  const around = <T>(run: () => T): T => {
    stamps.settle();
    try {
      return run();
    } finally {
      stamps.settle();
    }
  };
  return {
    reader: statement.reader,
    all: (parameters) => around(() => statement.all(parameters)),
    run: (parameters) => around(() => statement.run(parameters)),
    *iterate(parameters) {
      stamps.settle();
      try {
        yield* statement.iterate(parameters);
      } finally {
        stamps.settle();
      }
    },
  };
}

async function openPostgres(url: string): Promise<Storage> {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name "${schema}"`);
  }
  const pool = new pg.Pool({
    connectionString: parsed.toString(),
    max: 10,
    // int8 columns hold millisecond instants and flag bits below 2^53: read them as numbers.
    types: { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) },
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // A connection the server or network dropped: the query on it (if any) fails, and the pool discards it
  // and opens another on next use. pg emits 'error' on the pool (idle connection) or on the client
  // (one in use); unlistened, either would end the process. /readyz reports the outage instead.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  const { rows } = await pool.query<{ schema: string | null }>('SELECT current_schema() AS schema');
  const migrationSchema = rows[0]?.schema ?? undefined;
  return wrap(
    'postgres',
    new Kysely<Schema>({ dialect: new SearchPathPostgresDialect({ pool }) }),
    noStamps,
    migrationSchema,
    () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
    }),
  );
}

/**
 * `migrationSchema` pins Kysely's bookkeeping tables to our schema: unpinned, its existence check sees
 * another schema's `kysely_migration` in the same database and skips creating ours.
 */
function wrap(
  engine: Engine,
  db: Database,
  changeStamps: ChangeStamps,
  migrationSchema?: string,
  pool: Storage['pool'] = () => undefined,
): Storage {
  const committed = new Set<(tx: Transaction<Schema>) => void>();
  const migrator = () =>
    new Migrator({
      db,
      provider: migrationProvider,
      ...(migrationSchema === undefined ? {} : { migrationTableSchema: migrationSchema }),
    });
  return {
    engine,
    db,
    changeStamps,
    async transaction(work) {
      let open: Transaction<Schema> | undefined;
      const result = await db.transaction().execute((tx) => {
        open = tx;
        return work(tx);
      });
      if (open) for (const listener of committed) listener(open);
      return result;
    },
    onCommit(listener) {
      committed.add(listener);
      return () => committed.delete(listener);
    },
    async migrate() {
      const migrations = migrator();
      // SQLite gives Kysely no migration lock: processes opening one new file at once (a server and a CLI
      // command) would each run the same migration. One IMMEDIATE transaction around the run serializes
      // them; the later one then finds the migrations done. (PostgreSQL: Kysely takes an advisory lock.)
      // Only when something is pending: an up-to-date file must not make every process queue for the write lock.
      const pending = async () => (await migrations.getMigrations()).some((m) => m.executedAt === undefined);
      const serialized = engine === 'sqlite' && (await pending());
      if (serialized) await sql`BEGIN IMMEDIATE`.execute(db);
      let outcome: MigrationResultSet;
      try {
        outcome = await migrations.migrateToLatest();
      } catch (thrown) {
        if (serialized) await sql`ROLLBACK`.execute(db);
        throw thrown;
      }
      if (serialized) await sql.raw(outcome.error ? 'ROLLBACK' : 'COMMIT').execute(db);
      const { error, results } = outcome;
      if (error) throw error;
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    async pendingMigrations() {
      const migrations = await migrator().getMigrations();
      return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
    },
    pool,
    close: () => db.destroy(),
  };
}

/** True when `error` is a unique-constraint violation on either engine. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code } = error as { code?: unknown };
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
