import { execFile } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { walIndexStamps } from '../src/storage/change-stamp.js';
import { mapFileStart } from '../src/storage/shm-view.js';

/**
 * The stamp that keeps the credential caches honest (credential-cache.test.ts proves them through HTTP):
 * read from a shared mapping of the `-shm` file where npm's install built the addon, else with `pread`.
 * Both must see every commit of another connection, and agree byte for byte.
 */
const directory = mkdtempSync(join(tmpdir(), 'hearth-stamps-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function database(name: string): { path: string; writer: SQLite.Database } {
  const path = join(directory, name);
  const writer = new SQLite(path);
  writer.pragma('journal_mode = WAL');
  writer.exec('CREATE TABLE t (x INTEGER)');
  return { path, writer };
}

/**
 * The process holding a read lock on the -shm file's DMS byte (offset 128: SQLite's unix VFS, 22 + 8 lock
 * slots of 4 bytes, then the 8 slots), as another process sees it with F_GETLK; 0 when none does.
 */
function dmsLockHolder(path: string): Promise<number> {
  const script = [
    'import fcntl, os, struct, sys',
    'fd = os.open(sys.argv[1], os.O_RDONLY)',
    "wanted = struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, 128, 1, 0)",
    "kind, _, _, _, pid = struct.unpack('hhqqi4x', fcntl.fcntl(fd, fcntl.F_GETLK, wanted))",
    'print(0 if kind == fcntl.F_UNLCK else pid)',
  ].join('\n');
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/python3', ['-c', script, `${path}-shm`], (error, stdout) =>
      error ? reject(error) : resolve(Number(stdout.trim())),
    );
  });
}

describe('WAL-index stamps', () => {
  it('npm install built the shared-memory view, and it maps the -shm file', () => {
    const { path, writer } = database('view.sqlite');
    const fd = openSync(`${path}-shm`, 'r');
    const view = mapFileStart(fd, 96);
    expect(view?.byteLength).toBe(96);
    // The header's change counter (offset 8) moves with a commit made after the mapping.
    const before = new Uint32Array(view!)[2];
    writer.prepare('INSERT INTO t VALUES (1)').run();
    expect(new Uint32Array(view!)[2]).toBe(before! + 1);
    writer.close();
    closeSync(fd);
  });

  it('cannot map a file shorter than the view, or none', () => {
    expect(mapFileStart(-1, 96)).toBeUndefined();
    const { path, writer } = database('short.sqlite');
    const fd = openSync(`${path}-shm`, 'r');
    expect(mapFileStart(fd, 1 << 20)).toBeUndefined();
    writer.close();
    closeSync(fd);
  });

  for (const map of [true, false]) {
    it(`${map ? 'mapped' : 'pread'}: the same stamp until another connection commits, a new one after`, () => {
      const { path, writer } = database(`stamps-${map}.sqlite`);
      const stamps = walIndexStamps(path, { map });
      const first = stamps();
      expect(first).toBeDefined();
      expect(stamps()).toBe(first);
      writer.prepare('INSERT INTO t VALUES (1)').run();
      const second = stamps();
      expect(second).toBeDefined();
      expect(second).not.toBe(first);
      expect(stamps()).toBe(second);
      // A rollback commits nothing: the stamp stays.
      writer.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (2); ROLLBACK');
      expect(stamps()).toBe(second);
      stamps.close();
      writer.close();
    });
  }

  for (const map of [true, false]) {
    it(`${map ? 'mapped' : 'pread'}: closed, it answers no stamp and reads the file no more`, () => {
      const { path, writer } = database(`closed-${map}.sqlite`);
      const stamps = walIndexStamps(path, { map });
      expect(stamps()).toBeDefined();
      stamps.close();
      // The file is still there: a stamp now would come from a mapping or descriptor made after close.
      expect(stamps()).toBeUndefined();
      writer.prepare('INSERT INTO t VALUES (1)').run();
      expect(stamps()).toBeUndefined();
      writer.close();
    });
  }

  for (const map of [true, false]) {
    it(`${map ? 'mapped' : 'pread'}: reading leaves SQLite's lock on the -shm file to SQLite`, async () => {
      const { path, writer } = database(`lock-${map}.sqlite`);
      writer.prepare('INSERT INTO t VALUES (1)').run();
      expect(await dmsLockHolder(path)).toBe(process.pid);
      const stamps = walIndexStamps(path, { map });
      expect(stamps()).toBeDefined();
      // Closing a descriptor of the file would have dropped it: the next process to open the database would
      // think itself alone and truncate the -shm file under this one's mappings.
      expect(await dmsLockHolder(path)).toBe(process.pid);
      writer.close();
      stamps.close();
    });
  }

  it('mapped and pread read the same header', () => {
    const { path, writer } = database('agree.sqlite');
    const mapped = walIndexStamps(path);
    const read = walIndexStamps(path, { map: false });
    for (let i = 0; i < 5; i++) {
      expect(mapped()).toBe(read());
      writer.prepare('INSERT INTO t VALUES (?)').run(i);
    }
    mapped.close();
    read.close();
    writer.close();
  });
});
