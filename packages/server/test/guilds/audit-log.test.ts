import { PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { requiredKeys } from '../../../../test-support/openapi.js';
import { call, invalidForm, MISSING_ACCESS, MISSING_PERMISSIONS, UNKNOWN_GUILD } from './core-helpers.js';

let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth({}, new ManualClock('2026-03-01T00:00:00Z'));
});
afterAll(() => hearth.close());

interface AuditLog {
  audit_log_entries: Array<{
    id: string;
    action_type: number;
    user_id: string;
    target_id: string;
    reason?: string;
  }>;
  users: Array<{ id: string }>;
}

/** A guild with a rename (1), a role created (30) by a second admin, then that role renamed (31). */
async function guildWithHistory(): Promise<{ guild: TestGuild; admin: { id: string; token: string } }> {
  const guild = await createTestGuild(hearth);
  const admin = await addTestMember(hearth, guild);
  await grantTestRole(hearth, guild, PermissionFlags.Administrator, [admin.id], 5);
  const auth = guild.owner.token;
  await call(hearth, `/guilds/${guild.id}`, { auth, method: 'PATCH', body: { name: 'Renamed' } });
  const created = await call(hearth, `/guilds/${guild.id}/roles`, {
    auth: admin.token,
    method: 'POST',
    headers: { 'x-audit-log-reason': 'for the team' },
    body: { name: 'Team' },
  });
  const roleId = (created.body as { id: string }).id;
  await call(hearth, `/guilds/${guild.id}/roles/${roleId}`, {
    auth,
    method: 'PATCH',
    body: { name: 'Crew' },
  });
  return { guild, admin };
}

describe('Get Guild Audit Log (GET /guilds/{guild.id}/audit-logs)', () => {
  it('answers the entries newest first with the actors and targets in `users`, and the empty lists SPEC requires', async () => {
    const { guild, admin } = await guildWithHistory();
    const { status, body } = await call(hearth, `/guilds/${guild.id}/audit-logs`, {
      auth: guild.owner.token,
    });
    expect(status).toBe(200);
    const log = body as AuditLog;
    expect(requiredKeys('GuildAuditLogResponse').filter((key) => !(key in log))).toEqual([]);
    expect(log).toMatchObject({
      application_commands: [],
      auto_moderation_rules: [],
      guild_scheduled_events: [],
      integrations: [],
      threads: [],
      webhooks: [],
    });
    expect(log.audit_log_entries.map((entry) => entry.action_type)).toEqual([31, 30, 1]);
    const [, created, renamed] = log.audit_log_entries;
    expect(created).toMatchObject({ user_id: admin.id, reason: 'for the team' });
    expect(renamed).toEqual({
      id: expect.any(String),
      user_id: guild.owner.id,
      target_id: guild.id,
      action_type: 1,
      changes: [{ key: 'name', old_value: expect.any(String), new_value: 'Renamed' }],
    });
    for (const entry of log.audit_log_entries) {
      expect(requiredKeys('AuditLogEntryResponse').filter((key) => !(key in entry))).toEqual([]);
    }
    expect(log.users.map((user) => user.id).sort()).toEqual([admin.id, guild.owner.id].sort());
  });

  it('filters by user_id, action_type and target_id, pages with before, after and limit', async () => {
    const { guild, admin } = await guildWithHistory();
    const get = async (query: string) =>
      (
        (await call(hearth, `/guilds/${guild.id}/audit-logs?${query}`, { auth: guild.owner.token }))
          .body as AuditLog
      ).audit_log_entries;
    const all = await get('');
    expect((await get(`user_id=${admin.id}`)).map((e) => e.action_type)).toEqual([30]);
    expect((await get('action_type=1')).map((e) => e.action_type)).toEqual([1]);
    expect((await get(`target_id=${guild.id}`)).map((e) => e.action_type)).toEqual([1]);
    expect(await get('limit=1')).toEqual([all[0]]);
    expect(await get(`before=${all[0]?.id}`)).toEqual(all.slice(1));
    expect(await get(`after=${all[2]?.id}&limit=1`)).toEqual([all[1]]);
  });

  it('needs VIEW_AUDIT_LOG (50013); non-members get 50001, unknown guilds 10004', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    expect(await call(hearth, `/guilds/${guild.id}/audit-logs`, { auth: member.token })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, PermissionFlags.ViewAuditLog, [member.id]);
    expect((await call(hearth, `/guilds/${guild.id}/audit-logs`, { auth: member.token })).status).toBe(200);
    const stranger = await createPlayer(hearth);
    expect(await call(hearth, `/guilds/${guild.id}/audit-logs`, { auth: stranger.token })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await call(hearth, '/guilds/123456789012345678/audit-logs', { auth: stranger.token })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
  });

  it('answers 50035 for a limit out of 1–100 and a non-snowflake user_id', async () => {
    const guild = await createTestGuild(hearth);
    const get = (query: string) =>
      call(hearth, `/guilds/${guild.id}/audit-logs?${query}`, { auth: guild.owner.token });
    expect(await get('limit=101')).toEqual({
      status: 400,
      body: invalidForm({
        limit: {
          _errors: [{ code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 100.' }],
        },
      }),
    });
    expect(await get('limit=0')).toMatchObject({ status: 400, body: { code: 50035 } });
    expect(await get('user_id=me')).toMatchObject({ status: 400, body: { code: 50035 } });
  });

  it('keeps X-Audit-Log-Reason at 512 characters', async () => {
    const guild = await createTestGuild(hearth);
    await call(hearth, `/guilds/${guild.id}`, {
      auth: guild.owner.token,
      method: 'PATCH',
      headers: { 'x-audit-log-reason': 'r'.repeat(600) },
      body: { name: 'Long reason' },
    });
    const log = (await call(hearth, `/guilds/${guild.id}/audit-logs`, { auth: guild.owner.token }))
      .body as AuditLog;
    expect(log.audit_log_entries[0]?.reason).toBe('r'.repeat(512));
  });
});
