import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestGuild, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth } from '../../../../test-support/hearth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { call } from '../guilds/core-helpers.js';
import { createRule, rulesPath } from './support.js';

const withPostgres = await postgresAvailable();

/**
 * Rules are acknowledged once committed and keep applying after a restart; what a blocked message set off
 * (alert, timeout, audit entries) was committed in its own transaction although the message was refused.
 */
async function survives(databaseUrl: string): Promise<void> {
  const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
  let ids: {
    guild: string;
    owner: string;
    channel: string;
    alerts: string;
    member: string;
    memberToken: string;
  };
  let rules: unknown;
  try {
    const guild = await createTestGuild(first);
    const member = await addTestMember(first, guild);
    const channel = await seedTestChannel(first, guild.id);
    const alerts = await seedTestChannel(first, guild.id);
    ids = {
      guild: guild.id,
      owner: guild.owner.token,
      channel,
      alerts,
      member: member.id,
      memberToken: member.token,
    };
    await createRule(first, guild, {
      trigger_metadata: { keyword_filter: ['forbidden'], regex_patterns: ['x{3,}'], allow_list: ['xxxl'] },
      actions: [
        { type: 1 },
        { type: 2, metadata: { channel_id: alerts } },
        { type: 3, metadata: { duration_seconds: 60 } },
      ],
    });
    await createRule(first, guild, { trigger_type: 5, trigger_metadata: { mention_total_limit: 3 } });
    rules = (await call(first, rulesPath(guild.id), { auth: guild.owner.token })).body;
    expect(rules).toHaveLength(2);
  } finally {
    await first.close();
  }
  const second = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
  try {
    expect((await call(second, rulesPath(ids.guild), { auth: ids.owner })).body).toEqual(rules);
    const sent = await call(second, `/channels/${ids.channel}/messages`, {
      method: 'POST',
      auth: ids.memberToken,
      body: { content: 'xxxx marks the spot' },
    });
    expect(sent).toEqual({
      status: 400,
      body: { code: 200000, message: 'Message was blocked by automatic moderation' },
    });
    const alerts = (await call(second, `/channels/${ids.alerts}/messages`, { auth: ids.owner })).body;
    expect(alerts).toMatchObject([{ type: 24, content: 'xxxx marks the spot', author: { id: ids.member } }]);
    const member = (await call(second, `/guilds/${ids.guild}/members/${ids.member}`, { auth: ids.owner }))
      .body;
    expect(member).toMatchObject({ communication_disabled_until: expect.any(String) });
    const log = (await call(second, `/guilds/${ids.guild}/audit-logs`, { auth: ids.owner })).body as {
      audit_log_entries: Array<{ action_type: number }>;
    };
    expect(log.audit_log_entries.map((entry) => entry.action_type).filter((type) => type >= 140)).toEqual([
      145, 144, 143, 140, 140,
    ]);
  } finally {
    await second.close();
  }
}

describe('AutoMod rules survive a restart and their actions commit though the message is refused', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-automod-'));
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
