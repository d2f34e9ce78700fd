import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { snowflakeFromTimestamp, snowflakeTimestamp } from '@hearth/protocol';
import { createHearth, ManualClock, testConfig } from '@hearth/server';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordResponse } from '../../../../test-support/conformance.js';
import { addTestBot } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { search } from '../../src/storage/migrations/0025_search.js';
import { createRoom, post, type Room } from '../channel-messages/support.js';
import { idsOf, queryOf, type SearchBody, searchGuild } from './support.js';

/**
 * A guild whose index is being built (PROTOCOL.md §E.2, GUILDS.md §4.11): searches answer 202 with 110000,
 * `documents_indexed` and `retry_after` until the background job's batches are through. The job runs by
 * the injected clock: a batch is due only when the test moves the clock, so every step is deterministic.
 */

const NOT_READY = { message: 'Index not yet available. Try again later', code: 110000 };

/** Messages stored straight into the table, as an older database holds them: no index saw them. */
async function storeOldMessages(hearth: TestHearth, room: Room, count: number, word: string) {
  const start = BigInt(snowflakeFromTimestamp(hearth.clock.now() - 60_000));
  const rows = Array.from({ length: count }, (_, n) => {
    const id = String(start + BigInt(n));
    return {
      id,
      channel_id: room.channelId,
      guild_id: room.guild.id,
      author_id: room.member.id,
      content: `${word} number ${n}`,
      created_at: snowflakeTimestamp(id),
    };
  });
  for (let n = 0; n < rows.length; n += 200)
    await hearth.storage.db
      .insertInto('messages')
      .values(rows.slice(n, n + 200))
      .execute();
  return rows.map((row) => row.id);
}

describe('an index being built answers 202 with 110000 (hearth search rebuild)', () => {
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  let hearth: TestHearth;
  let room: Room;

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    room = await createRoom(hearth);
  });

  afterAll(async () => {
    await hearth.close();
  });

  it('gets 110000 for a guild whose index is still being built', async () => {
    const { body: live } = await post(hearth, room.channelId, room.member.token, { content: 'ember glows' });
    const old = await storeOldMessages(hearth, room, 600, 'ember');
    // A new guild is indexed from the start: the old rows, written behind the index's back, are not found.
    expect(
      idsOf((await searchGuild(hearth, room.guild.id, room.owner.token, { content: 'ember' })).body),
    ).toEqual([live.id]);

    await hearth.services.searchIndex.rebuild(room.guild.id);
    const search = () => searchGuild(hearth, room.guild.id, room.owner.token, { content: 'ember' });
    expect(await search()).toEqual({
      status: 202,
      body: { ...NOT_READY, documents_indexed: 0, retry_after: 2 },
    });
    clock.advance(1000);
    expect((await search()).body).toEqual({ ...NOT_READY, documents_indexed: 0, retry_after: 1 });
    // A bot through @discordjs/core: the 202 is a success to the client, which hands over the body.
    const bot = await addTestBot(hearth, room.guild);
    const api = new API(new REST({ api: `${hearth.url}/api`, retries: 0 }).setToken(bot.botToken));
    expect(await api.guilds.searchForMessages(room.guild.id, { content: 'ember' })).toEqual({
      ...NOT_READY,
      documents_indexed: 0,
      retry_after: 1,
    });
    // Writes during the build are indexed with their transaction, as ever.
    const { body: during } = await post(hearth, room.channelId, room.member.token, {
      content: 'ember sparks',
    });

    // The server's own timer may run a due batch before the test does: either way, one batch of 500.
    clock.advance(1000);
    await hearth.services.searchIndex.runBatches();
    expect(await search()).toEqual({
      status: 202,
      body: { ...NOT_READY, documents_indexed: 500, retry_after: 0 },
    });
    // The clock has not moved: no batch is due.
    expect(await hearth.services.searchIndex.runBatches()).toBe(0);

    clock.advance(10);
    await hearth.services.searchIndex.runBatches();
    const { status, body } = await searchGuild<SearchBody>(hearth, room.guild.id, room.owner.token, {
      content: 'ember',
      limit: 25,
    });
    expect(status).toBe(200);
    expect(body.total_results).toBe(602);
    expect(idsOf(body).slice(0, 2)).toEqual([during.id, live.id]);
    const oldest = await searchGuild(hearth, room.guild.id, room.owner.token, {
      content: 'ember',
      sort_order: 'asc',
      limit: 3,
    });
    expect(idsOf(oldest.body)).toEqual(old.slice(0, 3));
  });

  it('another guild is searched as usual meanwhile; an unknown guild cannot be rebuilt (10004)', async () => {
    const other = await createRoom(hearth);
    await hearth.services.searchIndex.rebuild(room.guild.id);
    const { body } = await post(hearth, other.channelId, other.member.token, { content: 'unrelated flame' });
    expect(
      idsOf((await searchGuild(hearth, other.guild.id, other.owner.token, { content: 'flame' })).body),
    ).toEqual([body.id]);
    expect((await searchGuild(hearth, room.guild.id, room.owner.token)).status).toBe(202);
    await expect(hearth.services.searchIndex.rebuild('1234567890123456789')).rejects.toMatchObject({
      code: 10004,
    });
    clock.advance(2000);
    await hearth.services.searchIndex.runBatches();
    clock.advance(10);
    await hearth.services.searchIndex.runBatches();
    expect((await searchGuild(hearth, room.guild.id, room.owner.token)).status).toBe(200);
  });
});

describe('a database from before the index (0025_search migrates it)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-search-migrate-'));
  const databaseUrl = `sqlite:${join(dir, 'hearth.sqlite')}`;

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes the messages it holds in the background; until then its guilds answer 110000', async () => {
    const clock = new ManualClock('2026-03-01T12:00:00Z');
    // A server of the earlier schema: messages written, then the search tables as if never migrated.
    const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 }, clock);
    const room = await createRoom(first);
    const { body: sent } = await post(first, room.channelId, room.member.token, {
      content: 'ancient scroll',
    });
    const db = first.storage.db;
    await sql`DROP TRIGGER message_search_documents_fts_delete`.execute(db);
    for (const table of [
      'message_search_fts',
      'message_search_guilds',
      'message_search_terms',
      'message_search_documents',
    ])
      await sql`DROP TABLE ${sql.table(table)}`.execute(db);
    await sql`DROP INDEX messages_guild_order`.execute(db);
    // The upgrade: 0025_search runs on a database that holds messages (later migrations are already there).
    await search.up(db as Kysely<unknown>);
    await first.close();

    // One-shot commands run no background batches: this one migrates and serves, and the test runs them.
    const second = await createHearth({
      config: testConfig({ databaseUrl, rateLimitGlobal: 1_000_000 }),
      clock,
      deliverWebhooks: false,
      observeResponse: recordResponse,
    });
    try {
      const url = await second.listen();
      const searchFor = (content: string) =>
        fetch(`${url}/api/v10/guilds/${room.guild.id}/messages/search${queryOf({ content })}`, {
          headers: { authorization: room.owner.token },
        });
      const waiting = await searchFor('scroll');
      expect(waiting.status).toBe(202);
      expect(await waiting.json()).toEqual({ ...NOT_READY, documents_indexed: 0, retry_after: 0 });
      expect(await second.services.searchIndex.runBatches()).toBe(1);
      const ready = await searchFor('scroll');
      expect(ready.status).toBe(200);
      expect(idsOf((await ready.json()) as SearchBody)).toEqual([sent.id]);
    } finally {
      await second.close();
    }
  });
});
