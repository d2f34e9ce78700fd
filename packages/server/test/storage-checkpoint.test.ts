import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../../test-support/wait.js';
import { openStorage } from '../src/storage/database.js';

const directory = mkdtempSync(join(tmpdir(), 'hearth-checkpoint-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Frames of the log not yet copied into the database file (WAL-index header, sqlite.org/walformat.html). */
function pendingFrames(path: string): number {
  const header = readFileSync(`${path}-shm`).subarray(0, 100);
  const word = (offset: number) =>
    endianness() === 'LE' ? header.readUInt32LE(offset) : header.readUInt32BE(offset);
  return word(16) - word(96);
}

describe('SQLite checkpoints', () => {
  it('copy the log into the file on their own thread, long before the writer would (10,000 pages)', async () => {
    const path = join(directory, 'checkpoint.sqlite');
    const storage = await openStorage(`sqlite:${path}`);
    await storage.migrate();
    await sql`CREATE TABLE filler (bytes BLOB NOT NULL)`.execute(storage.db);
    // About 3,000 pages in one commit: past the checkpointer's threshold, short of the writer's fallback.
    await storage.transaction(async (tx) => {
      for (let i = 0; i < 3000; i++) await sql`INSERT INTO filler VALUES (randomblob(4000))`.execute(tx);
    });
    expect(pendingFrames(path)).toBeGreaterThan(1000);
    await until(() => pendingFrames(path) === 0, 'the checkpointer to copy the log');
    // The next write restarts the log from its beginning, and the data is whole in the file.
    await sql`INSERT INTO filler VALUES (x'00')`.execute(storage.db);
    expect(pendingFrames(path)).toBeLessThan(10);
    await storage.close();
    const reader = new SQLite(path, { readonly: true });
    expect(reader.prepare('SELECT count(*) AS n FROM filler').get()).toEqual({ n: 3001 });
    reader.close();
  });
});
