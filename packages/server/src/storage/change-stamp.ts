import { closeSync, openSync, readSync } from 'node:fs';
import type SQLite from 'better-sqlite3';

/**
 * A value that differs once a commit has changed the database, whoever made it: what a cache of reads checks
 * on every use, so that nothing it answers can be older than the last commit. Undefined when it cannot tell.
 */
export type ChangeStamps = () => string | undefined;

/** The two copies of the WAL-index header at the start of the `-shm` file, 48 bytes each. */
const HEADER_BYTES = 48;

/**
 * A SQLite file in WAL mode: every commit, by any connection of any process, rewrites the WAL-index header in
 * the shared `-shm` file (its change counter, frame count and checksums; https://www.sqlite.org/walformat.html)
 * before another reader can see it. One `pread` of both copies costs 0.5 to 1.6 µs (by machine); the copies
 * differ only while a commit is writing them (the second first), and then there is no stamp.
 */
export function walIndexStamps(path: string): ChangeStamps & { close(): void } {
  const header = Buffer.alloc(2 * HEADER_BYTES);
  // The last stamp made, and its bytes: an unchanged header answers the same string without making one.
  const last = Buffer.alloc(HEADER_BYTES);
  let lastStamp: string | undefined;
  let fd: number | undefined;
  const stamp = (): string | undefined => {
    try {
      fd ??= openSync(`${path}-shm`, 'r');
      if (readSync(fd, header, 0, header.length, 0) < header.length) return undefined;
    } catch {
      return undefined;
    }
    if (header.compare(header, 0, HEADER_BYTES, HEADER_BYTES, 2 * HEADER_BYTES) !== 0) return undefined;
    if (lastStamp !== undefined && header.compare(last, 0, HEADER_BYTES, 0, HEADER_BYTES) === 0)
      return lastStamp;
    header.copy(last, 0, 0, HEADER_BYTES);
    lastStamp = header.toString('latin1', 0, HEADER_BYTES);
    return lastStamp;
  };
  return Object.assign(stamp, {
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  });
}

/**
 * An in-memory SQLite database has one connection, this one: the rows it has changed so far (inserted,
 * updated or deleted, rolled back or not) move with every change, at about 0.1 µs a read.
 */
export function totalChangesStamps(sqlite: SQLite.Database): ChangeStamps {
  const statement = sqlite.prepare('SELECT total_changes()').pluck();
  return () => String(statement.get());
}

/** Where no signal is cheap enough to read on every use (PostgreSQL, other nodes): never cache. */
export const noStamps: ChangeStamps = () => undefined;
