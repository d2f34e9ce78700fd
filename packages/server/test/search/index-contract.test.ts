import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestGuild, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { call, createRoom, post, type Room } from '../channel-messages/support.js';
import { idsOf, searchGuild } from './support.js';

/**
 * The search index contract, once per engine (SQLite FTS5, PostgreSQL tsvector): every message write is
 * in the index when its request answers — create, edit, delete, bulk delete, a channel's and a guild's
 * deletion — and the index's words are the same on both.
 */

const postgresUp = await postgresAvailable();
const postgres = postgresUp ? postgresSchema() : undefined;

const engines = [
  { name: 'SQLite', databaseUrl: 'sqlite::memory:', available: true },
  { name: 'PostgreSQL', databaseUrl: postgres?.url ?? '', available: postgresUp },
];

afterAll(async () => {
  await postgres?.drop();
});

for (const engine of engines) {
  describe.skipIf(!engine.available)(`search index contract: ${engine.name}`, () => {
    let hearth: TestHearth;
    let room: Room;
    // Background batches run only when the test moves this clock.
    const clock = new ManualClock();

    beforeAll(async () => {
      hearth = await startHearth({ databaseUrl: engine.databaseUrl, rateLimitGlobal: 1_000_000 }, clock);
      room = await createRoom(hearth);
    });

    afterAll(async () => {
      await hearth?.close();
    });

    const found = async (content: string, guildId = room.guild.id, token = room.owner.token) => {
      const { status, body } = await searchGuild(hearth, guildId, token, { content });
      expect(status).toBe(200);
      return idsOf(body);
    };

    it('a created message is found by each of its words, and an edit replaces them', async () => {
      const { body: created } = await post(hearth, room.channelId, room.member.token, {
        content: 'Quartz lanterns glow at dusk',
      });
      expect(await found('quartz')).toEqual([created.id]);
      expect(await found('DUSK lanterns')).toEqual([created.id]);
      const edited = await call(hearth, `/channels/${room.channelId}/messages/${created.id}`, {
        method: 'PATCH',
        auth: room.member.token,
        body: { content: 'Obsidian lanterns glow at dawn' },
      });
      expect(edited.status).toBe(200);
      expect(await found('quartz')).toEqual([]);
      expect(await found('dusk')).toEqual([]);
      expect(await found('obsidian dawn')).toEqual([created.id]);
    });

    it('an edit of the files or flags only keeps the words; words across scripts and accents match', async () => {
      const { body: created } = await post(hearth, room.channelId, room.member.token, {
        content: 'Crème brûlée und Käse, 東京 2026',
      });
      const suppress = await call(hearth, `/channels/${room.channelId}/messages/${created.id}`, {
        method: 'PATCH',
        auth: room.member.token,
        body: { flags: 4 },
      });
      expect(suppress.status).toBe(200);
      expect(await found('creme brulee')).toEqual([created.id]);
      expect(await found('KASE')).toEqual([created.id]);
      expect(await found('東京')).toEqual([created.id]);
      expect(await found('2026 und')).toEqual([created.id]);
    });

    it('orders by time both ways and by relevance, pages, and bounds by id alike on both engines', async () => {
      const ids: string[] = [];
      for (const content of [
        'kestrel once among many other words',
        'kestrel kestrel kestrel',
        'kestrel twice kestrel',
      ])
        ids.push((await post(hearth, room.channelId, room.member.token, { content })).body.id);
      const order = async (query: Parameters<typeof searchGuild>[3]) =>
        idsOf(
          (await searchGuild(hearth, room.guild.id, room.owner.token, { content: 'kestrel', ...query })).body,
        );
      expect(await order({})).toEqual([...ids].reverse());
      expect(await order({ sort_order: 'asc' })).toEqual(ids);
      expect(await order({ sort_by: 'relevance' })).toEqual([ids[1], ids[2], ids[0]]);
      expect(await order({ limit: 1, offset: 1 })).toEqual([ids[1]]);
      expect(await order({ min_id: ids[0]!, max_id: ids[2]! })).toEqual([ids[1]]);
    });

    it('a deleted message leaves the index with its request', async () => {
      const { body: created } = await post(hearth, room.channelId, room.member.token, {
        content: 'ephemeral mayfly note',
      });
      expect(await found('mayfly')).toEqual([created.id]);
      const deleted = await call(hearth, `/channels/${room.channelId}/messages/${created.id}`, {
        method: 'DELETE',
        auth: room.member.token,
      });
      expect(deleted.status).toBe(204);
      expect(await found('mayfly')).toEqual([]);
    });

    it('bulk deleted messages leave the index; the others stay', async () => {
      const ids: string[] = [];
      for (const word of ['alpha', 'beta', 'gamma'])
        ids.push(
          (await post(hearth, room.channelId, room.member.token, { content: `bulkword ${word}` })).body.id,
        );
      expect((await found('bulkword')).sort()).toEqual([...ids].sort());
      const bulk = await call(hearth, `/channels/${room.channelId}/messages/bulk-delete`, {
        method: 'POST',
        auth: room.owner.token,
        body: { messages: ids.slice(0, 2) },
      });
      expect(bulk.status).toBe(204);
      expect(await found('bulkword')).toEqual([ids[2]]);
    });

    it("a channel's deletion takes its messages out of the index", async () => {
      const channelId = await seedTestChannel(hearth, room.guild.id, { name: 'doomed' });
      const { body: created } = await post(hearth, channelId, room.member.token, {
        content: 'doomed whisper',
      });
      expect(await found('whisper')).toEqual([created.id]);
      const deleted = await call(hearth, `/channels/${channelId}`, {
        method: 'DELETE',
        auth: room.owner.token,
      });
      expect(deleted.status).toBe(200);
      expect(await found('whisper')).toEqual([]);
      const left = await hearth.storage.db
        .selectFrom('message_search_documents' as never)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('message_id' as never, '=', created.id as never)
        .executeTakeFirstOrThrow();
      expect(Number(left.n)).toBe(0);
    });

    it("a guild's deletion takes its documents and index state with it", async () => {
      const guild = await createTestGuild(hearth);
      const member = await addTestMember(hearth, guild);
      const channelId = await seedTestChannel(hearth, guild.id);
      await hearth.storage.db
        .insertInto('channel_overwrites')
        .values({ channel_id: channelId, target_id: guild.id, type: 0, allow: '3072', deny: '0' })
        .execute();
      const { body: created } = await post(hearth, channelId, member.token, { content: 'vanishing realm' });
      expect(await found('vanishing', guild.id, guild.owner.token)).toEqual([created.id]);
      await hearth.services.searchIndex.rebuild(guild.id);
      const deleted = await call(hearth, `/guilds/${guild.id}`, {
        method: 'DELETE',
        auth: guild.owner.token,
      });
      expect(deleted.status).toBe(204);
      for (const table of ['message_search_documents', 'message_search_terms', 'message_search_guilds']) {
        const rows = await hearth.storage.db
          .selectFrom(table as never)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('guild_id' as never, '=', guild.id as never)
          .executeTakeFirstOrThrow();
        expect(Number(rows.n), table).toBe(0);
      }
    });

    // FTS5 is SQLite's: the case exists on that engine only (PostgreSQL keeps its tsvector in the row).
    (engine.name === 'SQLite' ? it : () => undefined)(
      'the FTS5 table holds one row per document, none left by deletions',
      async () => {
        const { sql } = await import('kysely');
        const count = async (table: string) =>
          Number(
            (
              await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(
                hearth.storage.db,
              )
            ).rows[0]?.n,
          );
        const rowids = await sql<{ rowid: number }>`SELECT rowid FROM message_search_fts`.execute(
          hearth.storage.db,
        );
        const docIds = await sql<{ doc_id: number }>`SELECT doc_id FROM message_search_documents`.execute(
          hearth.storage.db,
        );
        expect(rowids.rows.map((row) => row.rowid).sort()).toEqual(
          docIds.rows.map((row) => row.doc_id).sort(),
        );
        expect(await count('message_search_documents')).toBeGreaterThan(0);
      },
    );

    it("a rebuild indexes the guild's messages again in batches, with the same results", async () => {
      const before = await found('lanterns');
      const everything = (await searchGuild(hearth, room.guild.id, room.owner.token, { limit: 25 })).body;
      await hearth.services.searchIndex.rebuild(room.guild.id);
      expect(
        (await searchGuild(hearth, room.guild.id, room.owner.token, { content: 'lanterns' })).status,
      ).toBe(202);
      clock.advance(60_000);
      await hearth.services.searchIndex.runBatches(); // (or the server's own timer ran it first)
      expect(await found('lanterns')).toEqual(before);
      expect((await searchGuild(hearth, room.guild.id, room.owner.token, { limit: 25 })).body).toEqual(
        everything,
      );
    });

    it('a write whose transaction fails leaves no document', async () => {
      // An empty message is refused inside the create's transaction, after nothing was stored.
      const refused = await post(hearth, room.channelId, room.member.token, { content: '' });
      expect(refused.status).toBe(400);
      const before = await found('lanterns');
      const missing = await call(hearth, `/channels/${room.channelId}/messages/1234567890123456789`, {
        method: 'PATCH',
        auth: room.member.token,
        body: { content: 'phantom lanterns' },
      });
      expect(missing.status).toBe(404);
      expect(await found('phantom')).toEqual([]);
      expect(await found('lanterns')).toEqual(before);
    });
  });
}
