import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '@hearth/server';
import { afterAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { call, createThreadRoom, patchThread, post, startThread, type ThreadRoom } from './support.js';

/**
 * Threads on both engines (DESIGN: storage on SQLite and PostgreSQL): every query of the domain runs once
 * per engine, and what a server answered it answers again after a restart on the same database.
 */

const withPostgres = await postgresAvailable();
const MINUTE = 60_000;

type Json = Record<string, unknown>;

/** Threads of every kind, members, messages, an archived one and an auto-archived one; answers the reads. */
async function build(hearth: TestHearth, clock: ManualClock): Promise<{ room: ThreadRoom; reads: string[] }> {
  const room = await createThreadRoom(hearth);
  const message = await post(hearth, room.textId, room.member.token, { content: 'start here' });
  const fromMessage = await call<{ id: string }>(
    hearth,
    `/channels/${room.textId}/messages/${message.body.id}/threads`,
    { method: 'POST', auth: room.member.token, body: { name: 'from a message' } },
  );
  const secret = await startThread(hearth, room.textId, room.member.token, { type: 12, name: 'secret' });
  await call(hearth, `/channels/${secret}/thread-members/${room.other.id}`, {
    method: 'PUT',
    auth: room.member.token,
  });
  const forum = await call<{ id: string }>(hearth, `/channels/${room.forumId}/threads`, {
    method: 'POST',
    auth: room.member.token,
    body: { name: 'post', applied_tags: [room.tags.open], message: { content: 'first' } },
  });
  await post(hearth, forum.body.id, room.other.token, { content: 'reply' });
  const archived = await startThread(hearth, room.textId, room.member.token, { name: 'old' });
  clock.advance(MINUTE);
  await patchThread(hearth, archived, room.member.token, { archived: true });
  await startThread(hearth, room.textId, room.member.token, { name: 'quiet', auto_archive_duration: 60 });
  clock.advance(61 * MINUTE);
  expect(fromMessage.status).toBe(201);
  return {
    room,
    reads: [
      `/guilds/${room.guild.id}/threads/active`,
      `/channels/${room.textId}/threads/archived/public?limit=2`,
      `/channels/${room.textId}/users/@me/threads/archived/private`,
      `/channels/${secret}`,
      `/channels/${secret}/thread-members`,
      `/channels/${forum.body.id}`,
      `/channels/${forum.body.id}/messages`,
      `/channels/${room.textId}/messages/${message.body.id}`,
    ],
  };
}

async function survives(databaseUrl: string): Promise<void> {
  const clock = new ManualClock(Date.parse('2026-03-02T10:00:00Z'));
  const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 }, clock);
  let room: ThreadRoom;
  let reads: string[];
  const before: Json[] = [];
  try {
    ({ room, reads } = await build(first, clock));
    for (const path of reads) {
      const answer = await call<Json>(first, path, { auth: room.member.token });
      expect(answer.status, path).toBe(200);
      before.push(answer.body);
    }
    const active = before[0] as { threads: Json[] };
    expect(active.threads.map((thread) => thread['name'])).toEqual(['post', 'secret', 'from a message']);
    const archived = before[1] as { threads: Json[]; has_more: boolean };
    expect(archived.threads.map((thread) => thread['name'])).toEqual(['quiet', 'old']);
  } finally {
    await first.close();
  }
  const second = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 }, clock);
  try {
    for (const [index, path] of reads.entries())
      expect((await call<Json>(second, path, { auth: room.member.token })).body, path).toEqual(before[index]);
  } finally {
    await second.close();
  }
}

describe('Threads survive a restart, on both engines', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-threads-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it('on SQLite', async () => {
    await survives(`sqlite:${join(directory, 'hearth.db')}`);
  });

  it.skipIf(!withPostgres)('on PostgreSQL', async () => {
    const schema = postgresSchema();
    try {
      await survives(schema.url);
    } finally {
      await schema.drop();
    }
  });
});
