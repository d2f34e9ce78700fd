import { closeSync, openSync, readSync } from 'node:fs';
import type SQLite from 'better-sqlite3';
import { mapFileStart } from './shm-view.js';

/**
 * A value that differs once a commit has changed what a cache of reads may answer: what the cache checks on
 * every use, so that nothing it answers can be older than such a commit. Undefined when it cannot tell.
 */
export type ChangeStamps = () => string | undefined;

/** The two copies of the WAL-index header at the start of the `-shm` file, 48 bytes each. */
const HEADER_BYTES = 48;
const HEADER_WORDS = HEADER_BYTES / 4;

/**
 * A SQLite file in WAL mode: every commit, by any connection of any process, rewrites the WAL-index header in
 * the shared `-shm` file (its change counter, frame count and checksums; https://www.sqlite.org/walformat.html)
 * before another reader can see it. The copies differ only while a commit is writing them (the second first),
 * and then there is no stamp. They are read from a shared mapping of the file where the addon is built
 * (`mapFileStart`, 0.03 µs), else with one `pread` (1–1.5 µs alone, about 6 µs of a request's CPU in a
 * loaded server: a sixth of an authenticated read's).
 */
export function walIndexStamps(path: string, { map = true } = {}): ChangeStamps & { close(): void } {
  const header = new Uint32Array(2 * HEADER_WORDS);
  const bytes = Buffer.from(header.buffer);
  // The last stamp made, and its words: an unchanged header answers the same string without making one.
  const last = new Uint32Array(HEADER_WORDS);
  let lastStamp: string | undefined;
  let view: Uint32Array | undefined;
  // One descriptor of the `-shm` file, open until close(), which runs after SQLite's connections closed:
  // closing any descriptor of a file drops every POSIX lock this process holds on it, SQLite's among them.
  // Without its lock on the `-shm` file, the next process to open the database thinks itself alone and
  // truncates the file, and a read of the mapping (SQLite's own too) is then a SIGBUS.
  let fd: number | undefined;
  // Closed, nothing is opened or mapped again.
  let closed = false;
  const read = (): boolean => {
    if (closed) return false;
    try {
      fd ??= openSync(`${path}-shm`, 'r');
    } catch {
      return false;
    }
    if (map) view ??= mapped(fd);
    if (view !== undefined) {
      // The first copy before the second, in order (SQLite writes them the other way round).
      for (let i = 0; i < header.length; i++) header[i] = Atomics.load(view, i);
      return true;
    }
    try {
      return readSync(fd, bytes, 0, bytes.length, 0) === bytes.length;
    } catch {
      return false;
    }
  };
  const stamp = (): string | undefined => {
    if (!read()) return undefined;
    let unchanged = lastStamp !== undefined;
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (header[i] !== header[i + HEADER_WORDS]) return undefined;
      if (header[i] !== last[i]) unchanged = false;
    }
    if (unchanged) return lastStamp;
    last.set(header.subarray(0, HEADER_WORDS));
    lastStamp = bytes.toString('latin1', 0, HEADER_BYTES);
    return lastStamp;
  };
  return Object.assign(stamp, {
    close() {
      closed = true;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      view = undefined;
    },
  });
}

/** The `-shm` file's header words through a shared mapping, once the file holds them. */
function mapped(fd: number): Uint32Array | undefined {
  const buffer = mapFileStart(fd, 2 * HEADER_BYTES);
  return buffer === undefined ? undefined : new Uint32Array(buffer);
}

/**
 * Tables that no cached read reads (sessions, users, guilds, oauth_tokens, applications, relationships and
 * game_relationships are what they read), written by every lobby message: a commit that wrote only these
 * keeps the caches. Every other table is watched, so a table added later is watched by default.
 */
export const UNWATCHED_TABLES: ReadonlySet<string> = new Set([
  'lobby_messages',
  'lobbies',
  'event_log',
  'outbox',
]);

/** The SQL function the watching triggers call; its name is this process's own (temp schema only). */
const WATCH_FUNCTION = 'hearth_watched_write';
const TRIGGER_PREFIX = 'hearth_watch_';

/**
 * The stamps of a SQLite database of which this process holds one connection, `sqlite`. They change after
 * (1) a commit by any other connection (PRAGMA data_version, which SQLite keeps for exactly this: it moves
 * when another connection committed, never for this one's commits), or (2) a commit or rollback of this
 * connection that wrote a watched table (TEMP triggers on each, after every insert, update and delete,
 * cascades included). This connection's commits that wrote only `UNWATCHED_TABLES` keep them.
 *
 * `settle()` must run before and after every statement this connection runs (`withStatementCache`), so a
 * transaction's end is seen before the next statement; `watch()` after the schema changed (migrations).
 */
export class SqliteChangeStamps {
  readonly #sqlite: SQLite.Database;
  readonly #unwatched: ReadonlySet<string>;
  readonly #dataVersion: SQLite.Statement;
  readonly #schemaVersion: SQLite.Statement;
  /**
   * The WAL-index header on a file: unchanged since the last data_version read, nothing was committed (0.9 µs
   * against 2.5). Undefined in memory, where no other connection can be.
   */
  readonly #header: ChangeStamps | undefined;
  #headerSeen: string | undefined;
  /** Whether the transaction open (or just ended) wrote a watched table. */
  #dirty = false;
  /** Whether another connection may have changed the schema since the triggers were made (a new table). */
  #schemaUnsure = false;
  #version: unknown;
  #schema: unknown;
  #epoch = 0;
  #stamp = '0';

  constructor(sqlite: SQLite.Database, header?: ChangeStamps, unwatched = UNWATCHED_TABLES) {
    this.#sqlite = sqlite;
    this.#header = header;
    this.#unwatched = unwatched;
    sqlite.function(WATCH_FUNCTION, { deterministic: false }, () => {
      this.#dirty = true;
      return null;
    });
    this.#dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    this.#schemaVersion = sqlite.prepare('PRAGMA schema_version').pluck();
    this.#version = this.#dataVersion.get();
    this.watch();
  }

  /** The current stamp (`ChangeStamps`). */
  readonly stamps: ChangeStamps = () => {
    this.settle();
    // This connection's transaction wrote a watched table and has not ended: no answer from memory meanwhile.
    if (this.#dirty) return undefined;
    const header = this.#header?.();
    if (this.#header !== undefined && (header === undefined || header !== this.#headerSeen)) {
      const version = this.#dataVersion.get();
      // Inside a transaction, data_version is its snapshot's: the header is trusted only once read outside.
      this.#headerSeen = this.#sqlite.inTransaction ? undefined : header;
      if (version !== this.#version) {
        this.#version = version;
        this.#bump();
        this.#schemaUnsure = true;
      }
    }
    if (this.#schemaUnsure) {
      // Triggers are made outside transactions only (a rollback would drop them); until then, no stamp.
      if (this.#sqlite.inTransaction) return undefined;
      if (this.#schemaVersion.get() !== this.#schema) this.watch();
      this.#schemaUnsure = false;
    }
    return this.#stamp;
  };

  /** Around every statement of this connection: whether a transaction that wrote a watched table ended. */
  settle(): void {
    if (this.#dirty && !this.#sqlite.inTransaction) {
      this.#dirty = false;
      this.#bump();
    }
  }

  /**
   * (Re)makes the triggers, one per table and kind of write, on every table but `UNWATCHED_TABLES`: after the
   * schema changed. The stamp changes too (a write to a table that had no trigger yet may have committed).
   */
  watch(): void {
    // A rollback would drop them with the transaction: made at the next stamp outside one instead.
    if (this.#sqlite.inTransaction) {
      this.#schema = undefined;
      this.#schemaUnsure = true;
      return;
    }
    const triggers = this.#sqlite
      .prepare("SELECT name FROM temp.sqlite_master WHERE type = 'trigger' AND name GLOB ?")
      .pluck()
      .all(`${TRIGGER_PREFIX}*`) as string[];
    // Ordinary tables only: virtual tables take no triggers (the search index, read by no cache).
    const tables = (this.#sqlite.pragma('main.table_list') as { name: string; type: string }[])
      .filter(
        ({ name, type }) => type === 'table' && !name.startsWith('sqlite_') && !this.#unwatched.has(name),
      )
      .map(({ name }) => name);
    this.#sqlite.transaction(() => {
      for (const name of triggers) this.#sqlite.exec(`DROP TRIGGER temp.${quote(name)}`);
      tables.forEach((table, i) => {
        for (const write of ['INSERT', 'UPDATE', 'DELETE']) {
          this.#sqlite.exec(
            `CREATE TEMP TRIGGER ${quote(`${TRIGGER_PREFIX}${i}_${write}`)} AFTER ${write} ON main.${quote(table)} BEGIN SELECT ${WATCH_FUNCTION}(); END`,
          );
        }
      });
    })();
    this.#schema = this.#schemaVersion.get();
    this.#dirty = false;
    this.#bump();
  }

  #bump(): void {
    this.#epoch += 1;
    this.#stamp = String(this.#epoch);
  }
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Where no signal is cheap enough to read on every use (PostgreSQL, other nodes): never cache. */
export const noStamps: ChangeStamps = () => undefined;
