import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { DatabaseSessionStore, type StoredSession } from '../../src/gateway/session-store.js';
import { RESUME_BUFFER_SIZE, type Sent } from '../../src/gateway/sessions.js';
import { openStorage, type Storage } from '../../src/storage/database.js';

/**
 * The shared session store on both engines (PROTOCOL.md §D.3: resume on any node, miss nothing): what an
 * owner appends is what a node taking the session over replays, and an append after the claim is refused.
 */
const postgresUp = await postgresAvailable();

let counter = 0;
function session(): StoredSession {
  return {
    id: `session-${process.pid}-${++counter}`,
    identity: { kind: 'bot', userId: '1', applicationId: undefined, scopes: [], tokenHash: 'hash' },
    intents: 0,
    shard: [0, 1],
    guildIds: [],
    sinceEventId: undefined,
  };
}

// Quotes, backslashes, array syntax, line breaks, NUL and a lone surrogate: each must come back as it went.
const sent = (seq: number): Sent => ({
  seq,
  t: 'TEST',
  d: { seq, text: `"quoted" \\ {a,b} NULL é\nline\r\u0000 \ud800 😀` },
});

for (const engine of ['SQLite file', 'PostgreSQL'] as const) {
  describe.skipIf(engine === 'PostgreSQL' && !postgresUp)(`DatabaseSessionStore (${engine})`, () => {
    let drop = async () => {};
    const storages: Storage[] = [];
    /** Two nodes' stores, each on its own connection to one database. */
    let a: DatabaseSessionStore;
    let b: DatabaseSessionStore;

    beforeAll(async () => {
      let url: string;
      if (engine === 'PostgreSQL') {
        const schema = postgresSchema();
        url = schema.url;
        drop = schema.drop;
      } else {
        const directory = mkdtempSync(join(tmpdir(), 'hearth-sessions-'));
        url = `sqlite:${join(directory, 'hearth.sqlite')}`;
        drop = async () => rmSync(directory, { recursive: true, force: true });
      }
      const first = await openStorage(url);
      storages.push(first);
      await first.migrate();
      storages.push(await openStorage(url));
      a = new DatabaseSessionStore(storages[0]!);
      b = new DatabaseSessionStore(storages[1]!);
    });

    afterAll(async () => {
      await Promise.all([a?.flush(), b?.flush()]);
      for (const storage of storages) await storage.close();
      await drop();
    });

    it("the owner's appends come back to a node claiming the session, in seq order, repeats once", async () => {
      const stored = session();
      await a.create(stored, 'A', 0);
      const owned = await Promise.all([1, 2, 3, 2, 4].map((seq) => a.append(stored.id, 'A', sent(seq))));
      expect(owned).toEqual([true, true, true, true, true]);
      const claimed = await b.claim(stored.id, 'B', 1);
      expect(claimed?.session).toEqual(stored);
      expect(claimed?.buffer).toEqual([1, 2, 3, 4].map(sent));
    });

    it('an append by a node that no longer owns the session is refused and not stored', async () => {
      const stored = session();
      await a.create(stored, 'A', 0);
      await a.append(stored.id, 'A', sent(1));
      await b.claim(stored.id, 'B', 1);
      expect(await a.append(stored.id, 'A', sent(2))).toBe(false);
      expect(await b.append(stored.id, 'B', sent(3))).toBe(true);
      expect(await a.append('no such session', 'A', sent(1))).toBe(false);
      expect((await a.claim(stored.id, 'A', 2))?.buffer).toEqual([sent(1), sent(3)]);
    });

    it('one batch for many sessions of two owners settles each by its own ownership', async () => {
      const [mine, theirs] = [session(), session()];
      await a.create(mine, 'A', 0);
      await a.create(theirs, 'B', 0);
      const answers = await Promise.all([
        a.append(mine.id, 'A', sent(1)),
        a.append(theirs.id, 'A', sent(1)),
        a.append(theirs.id, 'B', sent(1)),
        a.append(mine.id, 'B', sent(2)),
      ]);
      expect(answers).toEqual([true, false, true, false]);
      expect((await b.claim(mine.id, 'C', 1))?.buffer).toEqual([sent(1)]);
      expect((await b.claim(theirs.id, 'C', 1))?.buffer).toEqual([sent(1)]);
    });

    it("a bus event's data is stored as that event had it, when a later event publishes the same object changed", async () => {
      const stored = session();
      await a.create(stored, 'A', 0);
      const d = { id: '7', content: 'first "take"' };
      // Two sessions receive each event, as a fan-out does: the second copy reuses the first's text.
      const other = session();
      await a.create(other, 'A', 0);
      const first = (s: number): Sent => ({ seq: s, t: 'MESSAGE_UPDATE', d, eventId: '100-1' });
      expect(
        await Promise.all([a.append(stored.id, 'A', first(1)), a.append(other.id, 'A', first(1))]),
      ).toEqual([true, true]);
      d.content = 'second';
      expect(await a.append(stored.id, 'A', { seq: 2, t: 'MESSAGE_UPDATE', d, eventId: '100-2' })).toBe(true);
      // Data that is not an object (none at all here) is copied as JSON.stringify has it.
      expect(await a.append(stored.id, 'A', { seq: 3, t: 'EMPTY', d: undefined, eventId: '100-3' })).toBe(
        true,
      );
      expect((await b.claim(stored.id, 'B', 1))?.buffer).toEqual([
        { seq: 1, t: 'MESSAGE_UPDATE', d: { id: '7', content: 'first "take"' }, eventId: '100-1' },
        { seq: 2, t: 'MESSAGE_UPDATE', d: { id: '7', content: 'second' }, eventId: '100-2' },
        { seq: 3, t: 'EMPTY', eventId: '100-3' },
      ]);
      expect((await b.claim(other.id, 'B', 1))?.buffer).toEqual([
        { seq: 1, t: 'MESSAGE_UPDATE', d: { id: '7', content: 'first "take"' }, eventId: '100-1' },
      ]);
    });

    it(`keeps the newest ${RESUME_BUFFER_SIZE} dispatches of a session, and at most ${RESUME_BUFFER_SIZE} + 100`, async () => {
      const stored = session();
      await a.create(stored, 'A', 0);
      const total = RESUME_BUFFER_SIZE + 250;
      for (let seq = 1; seq <= total; seq += 50) {
        await Promise.all(Array.from({ length: 50 }, (_, i) => a.append(stored.id, 'A', sent(seq + i))));
      }
      const buffer = (await b.claim(stored.id, 'B', 1))?.buffer ?? [];
      expect(buffer.length).toBeGreaterThanOrEqual(RESUME_BUFFER_SIZE);
      expect(buffer.length).toBeLessThanOrEqual(RESUME_BUFFER_SIZE + 100);
      expect(buffer.at(-1)).toEqual(sent(total));
      expect(buffer.map((s) => s.seq)).toEqual(
        Array.from({ length: buffer.length }, (_, i) => total - buffer.length + 1 + i),
      );
    });

    it('appends racing a claim: every append answered true is in the claimed buffer, none after it is stored', async () => {
      const stored = session();
      await a.create(stored, 'A', 0);
      const answers: Array<Promise<boolean>> = [];
      let seq = 0;
      let claimed = false;
      // Appends keep coming, one batch a turn, from before node B claims the session until after.
      const appending = (async () => {
        for (let after = 0; after < 3; after += claimed ? 1 : 0) {
          for (let i = 0; i < 5; i++) answers.push(a.append(stored.id, 'A', sent(++seq)));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      await new Promise((resolve) => setImmediate(resolve));
      await answers[0];
      const claim = await b.claim(stored.id, 'B', 1);
      claimed = true;
      await appending;
      const owned = await Promise.all(answers);
      const accepted = owned.flatMap((ok, i) => (ok ? [i + 1] : []));
      expect(accepted.length).toBeGreaterThan(0);
      expect(accepted.length).toBeLessThan(owned.length);
      expect(claim?.buffer.map((s) => s.seq)).toEqual(accepted);
      // Once refused, refused for good: the accepted ones are a prefix.
      expect(accepted).toEqual(Array.from({ length: accepted.length }, (_, i) => i + 1));
      expect((await b.claim(stored.id, 'B', 2))?.buffer.map((s) => s.seq)).toEqual(accepted);
    });
  });
}
