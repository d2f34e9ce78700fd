import { mkdtempSync, rmSync } from 'node:fs';
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

describe('WAL-index stamps', () => {
  it('npm install built the shared-memory view, and it maps the -shm file', () => {
    const { path, writer } = database('view.sqlite');
    const view = mapFileStart(`${path}-shm`, 96);
    expect(view?.byteLength).toBe(96);
    // The header's change counter (offset 8) moves with a commit made after the mapping.
    const before = new Uint32Array(view!)[2];
    writer.prepare('INSERT INTO t VALUES (1)').run();
    expect(new Uint32Array(view!)[2]).toBe(before! + 1);
    writer.close();
  });

  it('cannot map a file shorter than the view, or none', () => {
    expect(mapFileStart(join(directory, 'missing-shm'), 96)).toBeUndefined();
    const { path, writer } = database('short.sqlite');
    expect(mapFileStart(`${path}-shm`, 1 << 20)).toBeUndefined();
    writer.close();
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
