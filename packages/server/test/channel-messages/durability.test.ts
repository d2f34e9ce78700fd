import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, describe, expect, it } from 'vitest';
import { startHearth } from '../../../../test-support/hearth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { call, createRoom, post } from './support.js';

const withPostgres = await postgresAvailable();

/** A message is acknowledged once committed: it, a reply to it and the history read back after a restart. */
async function survives(databaseUrl: string): Promise<void> {
  const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
  let path: string;
  let token: string;
  let before: APIMessage[];
  try {
    const room = await createRoom(first);
    token = room.member.token;
    path = `/channels/${room.channelId}/messages`;
    const original = await post(first, room.channelId, room.owner.token, { content: 'kept', nonce: 42 });
    const reply = await post(first, room.channelId, room.member.token, {
      content: `kept too <@${room.owner.id}>`,
      message_reference: { message_id: original.body.id },
      embeds: [{ title: 'an embed' }],
    });
    expect(reply.status).toBe(200);
    before = (await call<APIMessage[]>(first, path, { auth: token })).body;
    expect(before.map((message) => message.content)).toEqual([`kept too <@${room.owner.id}>`, 'kept']);
  } finally {
    await first.close();
  }
  const second = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
  try {
    expect(await call<APIMessage[]>(second, path, { auth: token })).toEqual({ status: 200, body: before });
  } finally {
    await second.close();
  }
}

describe('a posted message survives a restart (issue 15, Done when)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-messages-'));
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
