import { DEFAULT_EVERYONE_PERMISSIONS, HOLOGRAPHIC_ROLE_COLORS, PermissionFlags } from '@hearth/protocol';
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
import {
  call,
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  recordEvents,
  UNKNOWN_GUILD,
  UNKNOWN_ROLE,
} from './core-helpers.js';

let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth({}, new ManualClock('2026-03-01T00:00:00Z'));
});
afterAll(() => hearth.close());

interface Role {
  id: string;
  name: string;
  position: number;
  permissions: string;
}

const setFeatures = (guild: TestGuild, features: string[]) =>
  hearth.storage.db
    .updateTable('guilds')
    .set({ features: JSON.stringify(features) })
    .where('id', '=', guild.id)
    .execute();

/** A member holding MANAGE_ROLES through a role at `position`. */
async function roleManager(guild: TestGuild, position = 2, extra = 0n) {
  const member = await addTestMember(hearth, guild);
  const roleId = await grantTestRole(
    hearth,
    guild,
    PermissionFlags.ManageRoles | extra,
    [member.id],
    position,
  );
  return { ...member, roleId };
}

describe('Get Guild Roles (GET /guilds/{guild.id}/roles) and Get Guild Role', () => {
  it('lists @everyone and the roles lowest first, each with every key SPEC GuildRoleResponse requires', async () => {
    const guild = await createTestGuild(hearth);
    const roleId = await grantTestRole(hearth, guild, PermissionFlags.KickMembers, [], 1);
    const { status, body } = await call(hearth, `/guilds/${guild.id}/roles`, { auth: guild.owner.token });
    expect(status).toBe(200);
    const roles = body as Role[];
    expect(roles.map((role) => role.id)).toEqual([guild.id, roleId]);
    for (const role of roles) {
      expect(requiredKeys('GuildRoleResponse').filter((key) => !(key in role))).toEqual([]);
    }
    const one = await call(hearth, `/guilds/${guild.id}/roles/${roleId}`, { auth: guild.owner.token });
    expect(one).toEqual({
      status: 200,
      body: {
        id: roleId,
        name: expect.any(String),
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position: 1,
        permissions: PermissionFlags.KickMembers.toString(),
        managed: false,
        mentionable: false,
        flags: 0,
      },
    });
  });

  it('answers 10011 for an unknown role or another guild’s role, 50001 to non-members, 10004 for unknown guilds', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const auth = guild.owner.token;
    expect(await call(hearth, `/guilds/${guild.id}/roles/123456789012345678`, { auth })).toEqual({
      status: 404,
      body: UNKNOWN_ROLE,
    });
    expect(await call(hearth, `/guilds/${guild.id}/roles/${other.id}`, { auth })).toEqual({
      status: 404,
      body: UNKNOWN_ROLE,
    });
    const stranger = await createPlayer(hearth);
    expect(await call(hearth, `/guilds/${guild.id}/roles`, { auth: stranger.token })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await call(hearth, '/guilds/123456789012345678/roles', { auth })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
  });
});

describe('Get Guild Role Member Counts (GET /guilds/{guild.id}/roles/member-counts)', () => {
  it('maps every role but @everyone to its member count', async () => {
    const guild = await createTestGuild(hearth);
    const a = await addTestMember(hearth, guild);
    const b = await addTestMember(hearth, guild);
    const held = await grantTestRole(hearth, guild, 0n, [a.id, b.id], 1);
    const empty = await grantTestRole(hearth, guild, 0n, [], 2);
    expect(await call(hearth, `/guilds/${guild.id}/roles/member-counts`, { auth: a.token })).toEqual({
      status: 200,
      body: { [held]: 2, [empty]: 0 },
    });
  });
});

describe('Create Guild Role (POST /guilds/{guild.id}/roles)', () => {
  it('creates the role at position 1, moves the others up, publishes GUILD_ROLE_CREATE and records ROLE_CREATE', async () => {
    const guild = await createTestGuild(hearth);
    const existing = await grantTestRole(hearth, guild, 0n, [], 1);
    const events = recordEvents(hearth, guild.id);
    const { status, body } = await call(hearth, `/guilds/${guild.id}/roles`, {
      auth: guild.owner.token,
      method: 'POST',
      headers: { 'x-audit-log-reason': 'mods' },
      body: { name: 'Mods', permissions: '8192', color: 255, hoist: true, mentionable: true },
    });
    expect(status).toBe(200);
    const role = body as Role;
    expect(role).toMatchObject({
      name: 'Mods',
      permissions: '8192',
      color: 255,
      colors: { primary_color: 255, secondary_color: null, tertiary_color: null },
      hoist: true,
      mentionable: true,
      position: 1,
      managed: false,
    });
    expect(await events.next('GUILD_ROLE_CREATE')).toEqual({ guild_id: guild.id, role });
    const moved = events.events.find((event) => event.type === 'GUILD_ROLE_UPDATE');
    expect(moved?.data).toMatchObject({ guild_id: guild.id, role: { id: existing, position: 2 } });
    const entry = await events.next('GUILD_AUDIT_LOG_ENTRY_CREATE');
    expect(entry).toMatchObject({ action_type: 30, target_id: role.id, reason: 'mods' });
    expect(entry['changes']).toEqual(
      expect.arrayContaining([
        { key: 'name', new_value: 'Mods' },
        { key: 'permissions', new_value: '8192' },
      ]),
    );
    events.stop();
  });

  it('names a role "new role" with @everyone’s permissions when the body is empty', async () => {
    const guild = await createTestGuild(hearth);
    const { body } = await call(hearth, `/guilds/${guild.id}/roles`, {
      auth: guild.owner.token,
      method: 'POST',
      body: {},
    });
    expect(body).toMatchObject({ name: 'new role', permissions: DEFAULT_EVERYONE_PERMISSIONS.toString() });
  });

  it('refuses without MANAGE_ROLES, or permissions the actor lacks, with 403 50013', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const manager = await roleManager(guild);
    const post = (auth: string, body: unknown) =>
      call(hearth, `/guilds/${guild.id}/roles`, { auth, method: 'POST', body });
    expect(await post(member.token, { name: 'x' })).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await post(manager.token, { permissions: PermissionFlags.Administrator.toString() })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect((await post(manager.token, { permissions: PermissionFlags.ManageRoles.toString() })).status).toBe(
      200,
    );
  });

  it('answers 50035 for an over-long name, a bad permission string and a colour out of range', async () => {
    const guild = await createTestGuild(hearth);
    const post = (body: unknown) =>
      call(hearth, `/guilds/${guild.id}/roles`, { auth: guild.owner.token, method: 'POST', body });
    expect(await post({ name: 'r'.repeat(101) })).toEqual({
      status: 400,
      body: invalidForm({
        name: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 100 or fewer in length.' }] },
      }),
    });
    expect(await post({ permissions: 'all' })).toMatchObject({ status: 400, body: { code: 50035 } });
    expect(await post({ color: 16777216 })).toEqual({
      status: 400,
      body: invalidForm({
        color: {
          _errors: [
            { code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 16777215.' },
          ],
        },
      }),
    });
  });

  it('accepts gradient and holographic colours only with ENHANCED_ROLE_COLORS', async () => {
    const guild = await createTestGuild(hearth);
    const post = (body: unknown) =>
      call(hearth, `/guilds/${guild.id}/roles`, { auth: guild.owner.token, method: 'POST', body });
    expect(await post({ colors: { primary_color: 1, secondary_color: 2 } })).toEqual({
      status: 400,
      body: invalidForm({
        colors: { secondary_color: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
      }),
    });
    await setFeatures(guild, ['ENHANCED_ROLE_COLORS']);
    expect((await post({ colors: { primary_color: 1, secondary_color: 2 } })).body).toMatchObject({
      color: 1,
      colors: { primary_color: 1, secondary_color: 2, tertiary_color: null },
    });
    expect(
      (await post({ colors: { primary_color: 1, secondary_color: 2, tertiary_color: 3 } })).body,
    ).toMatchObject({
      color: HOLOGRAPHIC_ROLE_COLORS.primary_color,
      colors: HOLOGRAPHIC_ROLE_COLORS,
    });
  });

  it('needs ROLE_ICONS for unicode_emoji (400 50101)', async () => {
    const guild = await createTestGuild(hearth);
    const post = () =>
      call(hearth, `/guilds/${guild.id}/roles`, {
        auth: guild.owner.token,
        method: 'POST',
        body: { unicode_emoji: '🔥' },
      });
    expect(await post()).toEqual({
      status: 400,
      body: { code: 50101, message: 'This server needs more boosts to perform this action' },
    });
    await setFeatures(guild, ['ROLE_ICONS']);
    expect((await post()).body).toMatchObject({ unicode_emoji: '🔥' });
  });

  it('refuses the 251st role with 400 30005', async () => {
    const guild = await createTestGuild(hearth);
    const rows = Array.from({ length: 249 }, (_, i) => ({
      id: String(BigInt(guild.id) + BigInt(10_000_000 + i)),
      guild_id: guild.id,
      name: `r${i}`,
      permissions: '0',
      color: 0,
      hoist: 0,
      managed: 0,
      mentionable: 0,
      position: i + 1,
      created_at: 0,
    }));
    await hearth.storage.db.insertInto('guild_roles').values(rows).execute();
    expect(
      await call(hearth, `/guilds/${guild.id}/roles`, { auth: guild.owner.token, method: 'POST', body: {} }),
    ).toEqual({ status: 400, body: { code: 30005, message: 'Maximum number of guild roles reached (250)' } });
  });
});

describe('Modify Guild Role (PATCH /guilds/{guild.id}/roles/{role.id})', () => {
  it('changes the role, publishes GUILD_ROLE_UPDATE and records ROLE_UPDATE with old and new values', async () => {
    const guild = await createTestGuild(hearth);
    const roleId = await grantTestRole(hearth, guild, 0n, [], 1);
    const events = recordEvents(hearth, guild.id);
    const { status, body } = await call(hearth, `/guilds/${guild.id}/roles/${roleId}`, {
      auth: guild.owner.token,
      method: 'PATCH',
      body: { name: 'Renamed', mentionable: true },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: roleId, name: 'Renamed', mentionable: true });
    expect(await events.next('GUILD_ROLE_UPDATE')).toEqual({ guild_id: guild.id, role: body });
    const entry = await events.next('GUILD_AUDIT_LOG_ENTRY_CREATE');
    expect(entry).toMatchObject({ action_type: 31, target_id: roleId });
    expect(entry['changes']).toEqual([
      { key: 'name', old_value: expect.any(String), new_value: 'Renamed' },
      { key: 'mentionable', old_value: false, new_value: true },
    ]);
    events.stop();
  });

  it('keeps the hierarchy: a role at or above the actor’s highest is refused with 50013', async () => {
    const guild = await createTestGuild(hearth);
    const manager = await roleManager(guild, 2);
    const below = await grantTestRole(hearth, guild, 0n, [], 1);
    const above = await grantTestRole(hearth, guild, 0n, [], 3);
    const patch = (roleId: string) =>
      call(hearth, `/guilds/${guild.id}/roles/${roleId}`, {
        auth: manager.token,
        method: 'PATCH',
        body: { name: 'mine' },
      });
    expect((await patch(below)).status).toBe(200);
    expect(await patch(above)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await patch(manager.roleId)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
  });

  it('answers 10011 for an unknown role', async () => {
    const guild = await createTestGuild(hearth);
    expect(
      await call(hearth, `/guilds/${guild.id}/roles/123456789012345678`, {
        auth: guild.owner.token,
        method: 'PATCH',
        body: { name: 'x' },
      }),
    ).toEqual({ status: 404, body: UNKNOWN_ROLE });
  });
});

describe('Modify Guild Role Positions (PATCH /guilds/{guild.id}/roles)', () => {
  it('moves the roles, answers them all and publishes GUILD_ROLE_UPDATE for each moved role', async () => {
    const guild = await createTestGuild(hearth);
    const a = await grantTestRole(hearth, guild, 0n, [], 1);
    const b = await grantTestRole(hearth, guild, 0n, [], 2);
    const c = await grantTestRole(hearth, guild, 0n, [], 3);
    const events = recordEvents(hearth, guild.id);
    const { status, body } = await call(hearth, `/guilds/${guild.id}/roles`, {
      auth: guild.owner.token,
      method: 'PATCH',
      body: [{ id: c, position: 1 }],
    });
    expect(status).toBe(200);
    expect((body as Role[]).map((role) => [role.id, role.position])).toEqual([
      [guild.id, 0],
      [c, 1],
      [a, 2],
      [b, 3],
    ]);
    await events.next('GUILD_ROLE_UPDATE');
    expect(events.events.filter((event) => event.type === 'GUILD_ROLE_UPDATE')).toHaveLength(3);
    events.stop();
  });

  it('refuses moving a role above the actor’s highest (50013), unknown ids (10011) and a non-array (50035)', async () => {
    const guild = await createTestGuild(hearth);
    const manager = await roleManager(guild, 2);
    const low = await grantTestRole(hearth, guild, 0n, [], 1);
    const patch = (body: unknown) =>
      call(hearth, `/guilds/${guild.id}/roles`, { auth: manager.token, method: 'PATCH', body });
    expect(await patch([{ id: low, position: 5 }])).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await patch([{ id: '123456789012345678', position: 1 }])).toEqual({
      status: 404,
      body: UNKNOWN_ROLE,
    });
    expect(await patch({ id: low })).toEqual({
      status: 400,
      body: invalidForm({
        _errors: [{ code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' }],
      }),
    });
  });
});

describe('Delete Guild Role (DELETE /guilds/{guild.id}/roles/{role.id})', () => {
  it('deletes the role: 204, GUILD_ROLE_DELETE, ROLE_DELETE, and members lose it', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const roleId = await grantTestRole(hearth, guild, 0n, [member.id], 1);
    const events = recordEvents(hearth, guild.id);
    const deleted = await call(hearth, `/guilds/${guild.id}/roles/${roleId}`, {
      auth: guild.owner.token,
      method: 'DELETE',
      headers: { 'x-audit-log-reason': 'gone' },
    });
    expect(deleted.status).toBe(204);
    expect(await events.next('GUILD_ROLE_DELETE')).toEqual({ guild_id: guild.id, role_id: roleId });
    expect(await events.next('GUILD_AUDIT_LOG_ENTRY_CREATE')).toMatchObject({
      action_type: 32,
      target_id: roleId,
      reason: 'gone',
    });
    expect(
      await call(hearth, `/guilds/${guild.id}/roles/member-counts`, { auth: guild.owner.token }),
    ).toEqual({
      status: 200,
      body: {},
    });
    events.stop();
  });

  it('refuses @everyone and managed roles with 400 50028, roles above the actor with 50013', async () => {
    const guild = await createTestGuild(hearth);
    const del = (auth: string, roleId: string) =>
      call(hearth, `/guilds/${guild.id}/roles/${roleId}`, { auth, method: 'DELETE' });
    const invalidRole = { status: 400, body: { code: 50028, message: 'Invalid Role' } };
    expect(await del(guild.owner.token, guild.id)).toEqual(invalidRole);
    const managed = await grantTestRole(hearth, guild, 0n, [], 1);
    await hearth.storage.db
      .updateTable('guild_roles')
      .set({ managed: 1 })
      .where('id', '=', managed)
      .execute();
    expect(await del(guild.owner.token, managed)).toEqual(invalidRole);
    const manager = await roleManager(guild, 2);
    const above = await grantTestRole(hearth, guild, 0n, [], 3);
    expect(await del(manager.token, above)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await del(manager.token, '123456789012345678')).toEqual({ status: 404, body: UNKNOWN_ROLE });
  });
});
