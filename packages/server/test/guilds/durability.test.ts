import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';

const withPostgres = await postgresAvailable();

/** What a guild is made of, as its owner reads it through the API. */
async function readGuild(hearth: TestHearth, guildId: string, owner: string, memberId: string) {
  const read = async (path: string) => {
    const response = await hearth.api(path, { auth: owner });
    expect(response.status).toBe(200);
    return response.json();
  };
  return {
    guild: await read(`/guilds/${guildId}`),
    roles: await read(`/guilds/${guildId}/roles`),
    member: await read(`/guilds/${guildId}/members/${memberId}`),
    bans: await read(`/guilds/${guildId}/bans`),
    audit: await read(`/guilds/${guildId}/audit-logs`),
  };
}

/** Guild data and membership are acknowledged only once committed: all of it reads back after a restart. */
async function survives(databaseUrl: string): Promise<void> {
  const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
  let ids: { guild: string; owner: string; member: string };
  let before: Awaited<ReturnType<typeof readGuild>>;
  try {
    const guild = await createTestGuild(first);
    const member = await addTestMember(first, guild);
    const banned = await createPlayer(first);
    const auth = guild.owner.token;
    ids = { guild: guild.id, owner: auth, member: member.id };
    const call = async (path: string, method: string, body?: unknown) => {
      const response = await first.api(path, { method, auth, ...(body === undefined ? {} : { body }) });
      expect(response.status).toBeLessThan(300);
      return response.status === 204 ? undefined : ((await response.json()) as { id: string });
    };
    await call(`/guilds/${guild.id}`, 'PATCH', { name: 'Kept Hall', description: 'still here' });
    const role = await call(`/guilds/${guild.id}/roles`, 'POST', { name: 'keeper', permissions: '1024' });
    await call(`/guilds/${guild.id}/members/${member.id}/roles/${role!.id}`, 'PUT');
    await call(`/guilds/${guild.id}/members/${member.id}`, 'PATCH', { nick: 'Kept' });
    await call(`/guilds/${guild.id}/bans/${banned.user.id}`, 'PUT', {});
    before = await readGuild(first, guild.id, auth, member.id);
    expect(before.member).toMatchObject({ nick: 'Kept', roles: [role!.id] });
    expect(before.bans).toHaveLength(1);
  } finally {
    await first.close();
  }
  const second = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
  try {
    expect(await readGuild(second, ids.guild, ids.owner, ids.member)).toEqual(before);
  } finally {
    await second.close();
  }
}

describe('guild data and membership survive a restart (issue 14, Done when)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-guilds-'));
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
