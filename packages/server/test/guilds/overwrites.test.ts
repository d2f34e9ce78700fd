import { AuditLogEvents, FormErrors, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

/**
 * Edit/Delete Channel Permission (PUT/DELETE /channels/{id}/permissions/{overwrite_id}; GUILDS.md §1.2,
 * §2.4, §8): overwrites decide who sees a channel, need MANAGE_ROLES, and leave audit entries.
 */

type Json = Record<string, unknown>;
type DeliveredEvent = Parameters<Parameters<TestHearth['bus']['subscribe']>[0]>[0];

let hearth: TestHearth;
let events: DeliveredEvent[] = [];

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  hearth.bus.subscribe((event) => events.push(event));
});
afterAll(() => hearth.close());
beforeEach(() => {
  events = [];
});

async function call<T = Json>(
  method: string,
  path: string,
  auth: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const response = await hearth.api(path, {
    method,
    headers,
    ...(auth === undefined ? {} : { auth }),
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  expect(response.status).toBeLessThan(500);
  return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as T };
}

const invalid = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });
const leaf = (error: { code: string; message: string }) => ({ _errors: [error] });
const MISSING_PERMISSIONS = { code: 50013, message: 'Missing Permissions' };
const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
const NO_CONTENT = { status: 204, body: null };
const { ViewChannel, SendMessages, ManageRoles, BanMembers } = PermissionFlags;

async function channelIn(guild: TestGuild, body: Json = {}): Promise<string> {
  const answer = await call('POST', `/guilds/${guild.id}/channels`, guild.owner.token, {
    name: 'c',
    ...body,
  });
  expect(answer.status).toBe(201);
  return answer.body['id'] as string;
}

const put = (channelId: string, targetId: string, auth: string, body: unknown, headers = {}) =>
  call('PUT', `/channels/${channelId}/permissions/${targetId}`, auth, body, headers);
const remove = (channelId: string, targetId: string, auth: string) =>
  call('DELETE', `/channels/${channelId}/permissions/${targetId}`, auth);

async function overwritesOf(channelId: string, auth: string) {
  return (await call('GET', `/channels/${channelId}`, auth)).body['permission_overwrites'];
}

async function auditEntries(guildId: string) {
  const rows = await hearth.storage.db
    .selectFrom('audit_log_entries')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('action_type', 'in', [
      AuditLogEvents.ChannelOverwriteCreate,
      AuditLogEvents.ChannelOverwriteUpdate,
      AuditLogEvents.ChannelOverwriteDelete,
    ])
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    action_type: row.action_type,
    user_id: row.user_id,
    target_id: row.target_id,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as unknown),
    options: row.options === null ? null : (JSON.parse(row.options) as unknown),
    reason: row.reason,
  }));
}

describe('Edit Channel Permissions (PUT /channels/{id}/permissions/{overwrite_id})', () => {
  it('creates then updates a role overwrite: 204, CHANNEL_UPDATE, CHANNEL_OVERWRITE_CREATE/UPDATE with {id, type, role_name}', async () => {
    const guild = await createTestGuild(hearth);
    const role = await grantTestRole(hearth, guild, 0n, []);
    const channel = await channelIn(guild);
    events = [];
    expect(
      await put(
        channel,
        role,
        guild.owner.token,
        { type: 0, allow: '2048', deny: '1024' },
        {
          'X-Audit-Log-Reason': 'lock it',
        },
      ),
    ).toEqual(NO_CONTENT);
    expect(await overwritesOf(channel, guild.owner.token)).toEqual([
      { id: role, type: 0, allow: '2048', deny: '1024' },
    ]);
    expect(events.map((event) => event.type)).toEqual(['CHANNEL_UPDATE']);
    expect(events[0]?.data).toMatchObject({
      id: channel,
      guild_id: guild.id,
      permission_overwrites: [{ id: role, type: 0, allow: '2048', deny: '1024' }],
    });
    expect(events[0]?.audience).toEqual({ guildId: guild.id });

    // Integers are accepted too (OAS types allow/deny as integers).
    expect(await put(channel, role, guild.owner.token, { type: 0, allow: 0, deny: 1024 })).toEqual(
      NO_CONTENT,
    );
    const roleName = (
      await hearth.storage.db
        .selectFrom('guild_roles')
        .select('name')
        .where('id', '=', role)
        .executeTakeFirstOrThrow()
    ).name;
    expect(await auditEntries(guild.id)).toEqual([
      {
        action_type: AuditLogEvents.ChannelOverwriteCreate,
        user_id: guild.owner.id,
        target_id: channel,
        changes: [
          { key: 'id', new_value: role },
          { key: 'type', new_value: 0 },
          { key: 'allow', new_value: '2048' },
          { key: 'deny', new_value: '1024' },
        ],
        options: { id: role, type: '0', role_name: roleName },
        reason: 'lock it',
      },
      {
        action_type: AuditLogEvents.ChannelOverwriteUpdate,
        user_id: guild.owner.id,
        target_id: channel,
        changes: [{ key: 'allow', old_value: '2048', new_value: '0' }],
        options: { id: role, type: '0', role_name: roleName },
        reason: null,
      },
    ]);
  });

  it('sets a member overwrite (type 1) whose options carry no role_name', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const channel = await channelIn(guild);
    expect(await put(channel, member.id, guild.owner.token, { type: 1, allow: '1024' })).toEqual(NO_CONTENT);
    expect(await overwritesOf(channel, guild.owner.token)).toEqual([
      { id: member.id, type: 1, allow: '1024', deny: '0' },
    ]);
    expect((await auditEntries(guild.id))[0]?.options).toEqual({ id: member.id, type: '1' });
  });

  it('hides a channel from GET /guilds/{id}/channels and GET /channels/{id} when @everyone is denied VIEW_CHANNEL; a member overwrite lets one back in', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const invited = await addTestMember(hearth, guild);
    const channel = await channelIn(guild, { name: 'secret' });
    const listed = async (auth: string) =>
      (await call<Json[]>('GET', `/guilds/${guild.id}/channels`, auth)).body.map((c) => c['id']);
    expect(await listed(member.token)).toEqual([channel]);
    expect(
      await put(channel, guild.id, guild.owner.token, { type: 0, deny: ViewChannel.toString() }),
    ).toEqual(NO_CONTENT);
    expect(
      await put(channel, invited.id, guild.owner.token, { type: 1, allow: ViewChannel.toString() }),
    ).toEqual(NO_CONTENT);
    expect(await listed(member.token)).toEqual([]);
    expect(await call('GET', `/channels/${channel}`, member.token)).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await listed(invited.token)).toEqual([channel]);
    expect(await listed(guild.owner.token)).toEqual([channel]);
  });

  it('needs MANAGE_ROLES in the channel (50013); 50001 when the caller cannot view it', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const channel = await channelIn(guild);
    expect(await put(channel, guild.id, member.token, { type: 0, deny: '2048' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(await remove(channel, guild.id, member.token)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    const hidden = await channelIn(guild, {
      permission_overwrites: [{ id: member.id, type: 1, deny: ViewChannel.toString() }],
    });
    await grantTestRole(hearth, guild, ManageRoles, [member.id]);
    expect(await put(hidden, guild.id, member.token, { type: 0, deny: '2048' })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await put(channel, guild.id, member.token, { type: 0, deny: '2048' })).toEqual(NO_CONTENT);
  });

  it('lets a non-administrator allow or deny only bits it holds (GUILDS.md §2.4)', async () => {
    const guild = await createTestGuild(hearth);
    const mod = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, ManageRoles, [mod.id]);
    const channel = await channelIn(guild);
    expect(await put(channel, guild.id, mod.token, { type: 0, deny: SendMessages.toString() })).toEqual(
      NO_CONTENT,
    );
    expect(await put(channel, guild.id, mod.token, { type: 0, allow: BanMembers.toString() })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(await put(channel, guild.id, mod.token, { type: 0, allow: ManageRoles.toString() })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    // An explicit MANAGE_ROLES overwrite for the actor in the channel lifts the restriction.
    expect(await put(channel, mod.id, guild.owner.token, { type: 1, allow: ManageRoles.toString() })).toEqual(
      NO_CONTENT,
    );
    expect(await put(channel, guild.id, mod.token, { type: 0, allow: BanMembers.toString() })).toEqual(
      NO_CONTENT,
    );
  });

  it('refuses unknown channels (10003), other guilds’ roles (10011), non-members (10007) and bad bodies (50035)', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const foreignRole = await grantTestRole(hearth, other, 0n, []);
    const outsider = await addTestMember(hearth, other);
    const channel = await channelIn(guild);
    expect(await put('777777', guild.id, guild.owner.token, { type: 0 })).toEqual({
      status: 404,
      body: { code: 10003, message: 'Unknown Channel' },
    });
    expect(await put(channel, foreignRole, guild.owner.token, { type: 0 })).toEqual({
      status: 404,
      body: { code: 10011, message: 'Unknown Role' },
    });
    expect(await put(channel, outsider.id, guild.owner.token, { type: 1 })).toEqual({
      status: 404,
      body: { code: 10007, message: 'Unknown Member' },
    });
    expect(await put(channel, guild.id, guild.owner.token, {})).toEqual({
      status: 400,
      body: invalid({ type: leaf(FormErrors.required()) }),
    });
    expect(await put(channel, guild.id, guild.owner.token, { type: 2 })).toEqual({
      status: 400,
      body: invalid({ type: leaf(FormErrors.choices([0, 1])) }),
    });
    const bad = await put(channel, guild.id, guild.owner.token, { type: 0, allow: 'lots' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 50035, errors: { allow: {} } });
    expect(await put(channel, guild.id, 'revoked-token', { type: 0 })).toEqual({
      status: 401,
      body: { code: 0, message: '401: Unauthorized' },
    });
  });
});

describe('Delete Channel Permission (DELETE /channels/{id}/permissions/{overwrite_id})', () => {
  it('removes an overwrite: 204, CHANNEL_UPDATE, CHANNEL_OVERWRITE_DELETE; 10009 when there is none', async () => {
    const guild = await createTestGuild(hearth);
    const channel = await channelIn(guild, {
      permission_overwrites: [{ id: guild.id, type: 0, deny: SendMessages.toString() }],
    });
    events = [];
    expect(await remove(channel, guild.id, guild.owner.token)).toEqual(NO_CONTENT);
    expect(await overwritesOf(channel, guild.owner.token)).toEqual([]);
    expect(events.map((event) => [event.type, (event.data as Json)['permission_overwrites']])).toEqual([
      ['CHANNEL_UPDATE', []],
    ]);
    expect(await auditEntries(guild.id)).toEqual([
      {
        action_type: AuditLogEvents.ChannelOverwriteDelete,
        user_id: guild.owner.id,
        target_id: channel,
        changes: [
          { key: 'id', old_value: guild.id },
          { key: 'type', old_value: 0 },
          { key: 'allow', old_value: '0' },
          { key: 'deny', old_value: SendMessages.toString() },
        ],
        options: { id: guild.id, type: '0', role_name: '@everyone' },
        reason: null,
      },
    ]);
    expect(await remove(channel, guild.id, guild.owner.token)).toEqual({
      status: 404,
      body: { code: 10009, message: 'Unknown Overwrite' },
    });
  });
});
