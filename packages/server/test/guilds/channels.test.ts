import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { AuditLogEvents, FormErrors, GuildLimits, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { requiredKeys } from '../../../../test-support/openapi.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';

/** Guild channels (GUILDS.md §2; issue 14 "Channels"): every route through HTTP, events on the bus. */

type Json = Record<string, unknown>;
type DeliveredEvent = Parameters<Parameters<TestHearth['bus']['subscribe']>[0]>[0];

let hearth: TestHearth;
const withPostgres = await postgresAvailable();
let events: DeliveredEvent[] = [];

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  hearth.bus.subscribe((event) => events.push(event));
});
afterAll(() => hearth.close());
beforeEach(() => {
  events = [];
});

interface Answer<T> {
  status: number;
  body: T;
}

async function call<T = Json>(
  method: string,
  path: string,
  auth: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
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
const UNKNOWN_CHANNEL = { code: 10003, message: 'Unknown Channel' };
const UNKNOWN_GUILD = { code: 10004, message: 'Unknown Guild' };
const UNAUTHORIZED = { code: 0, message: '401: Unauthorized' };

async function create(guild: TestGuild, body: Json, auth = guild.owner.token) {
  return call('POST', `/guilds/${guild.id}/channels`, auth, body);
}

async function created(
  guild: TestGuild,
  body: Json,
  auth = guild.owner.token,
): Promise<Json & { id: string }> {
  const answer = await create(guild, body, auth);
  expect(answer.status).toBe(201);
  return answer.body as Json & { id: string };
}

async function setFeatures(guild: TestGuild, features: string[]) {
  await hearth.storage.db
    .updateTable('guilds')
    .set({ features: JSON.stringify(features) })
    .where('id', '=', guild.id)
    .execute();
}

async function auditEntries(guildId: string, actionType: number) {
  const rows = await hearth.storage.db
    .selectFrom('audit_log_entries')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('action_type', '=', actionType)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    user_id: row.user_id,
    target_id: row.target_id,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as unknown),
    options: row.options === null ? null : (JSON.parse(row.options) as unknown),
    reason: row.reason,
  }));
}

const textChannel = (guildId: string, fields: Json) => ({
  type: 0,
  guild_id: guildId,
  position: 0,
  flags: 0,
  parent_id: null,
  permission_overwrites: [],
  nsfw: false,
  last_message_id: null,
  rate_limit_per_user: 0,
  topic: null,
  last_pin_timestamp: null,
  default_thread_rate_limit_per_user: 0,
  ...fields,
});

describe('Create Guild Channel (POST /guilds/{id}/channels)', () => {
  it('creates a text channel: 201 with the channel object, CHANNEL_CREATE, audit CHANNEL_CREATE with the reason', async () => {
    const guild = await createTestGuild(hearth);
    const answer = await call(
      'POST',
      `/guilds/${guild.id}/channels`,
      guild.owner.token,
      { name: 'general', topic: 'hello', nsfw: true, rate_limit_per_user: 5 },
      { 'X-Audit-Log-Reason': encodeURIComponent('set up the guild') },
    );
    expect(answer.status).toBe(201);
    const id = answer.body['id'] as string;
    expect(answer.body).toEqual(
      textChannel(guild.id, { id, name: 'general', topic: 'hello', nsfw: true, rate_limit_per_user: 5 }),
    );
    expect(events.filter((event) => event.type === 'CHANNEL_CREATE')).toMatchObject([
      { data: answer.body, audience: { guildId: guild.id } },
    ]);
    expect(await auditEntries(guild.id, AuditLogEvents.ChannelCreate)).toEqual([
      {
        user_id: guild.owner.id,
        target_id: id,
        changes: [
          { key: 'name', new_value: 'general' },
          { key: 'type', new_value: 0 },
          { key: 'topic', new_value: 'hello' },
          { key: 'nsfw', new_value: true },
          { key: 'rate_limit_per_user', new_value: 5 },
          { key: 'parent_id' },
          { key: 'position', new_value: 0 },
          { key: 'flags', new_value: 0 },
          { key: 'default_thread_rate_limit_per_user', new_value: 0 },
          { key: 'permission_overwrites', new_value: [] },
        ].filter((change) => 'new_value' in change),
        options: null,
        reason: 'set up the guild',
      },
    ]);
  });

  it('creates voice, category, stage, forum and media channels with the keys of their type', async () => {
    const guild = await createTestGuild(hearth);
    const category = await created(guild, { name: 'Lounge', type: 4 });
    expect(category).toEqual({
      id: category.id,
      type: 4,
      guild_id: guild.id,
      name: 'Lounge',
      position: 0,
      flags: 0,
      parent_id: null,
      permission_overwrites: [],
      nsfw: false,
    });
    const voice = await created(guild, {
      name: 'Voice',
      type: 2,
      parent_id: category.id,
      bitrate: GuildLimits.voiceBitrateMax,
      user_limit: GuildLimits.voiceUserLimitMax,
      rtc_region: 'rotterdam',
      video_quality_mode: 2,
    });
    expect(voice).toEqual({
      id: voice.id,
      type: 2,
      guild_id: guild.id,
      name: 'Voice',
      position: 1,
      flags: 0,
      parent_id: category.id,
      permission_overwrites: [],
      nsfw: false,
      last_message_id: null,
      rate_limit_per_user: 0,
      bitrate: 96000,
      user_limit: 99,
      rtc_region: 'rotterdam',
      video_quality_mode: 2,
    });
    const stage = await created(guild, { name: 'Stage', type: 13, bitrate: 64000, user_limit: 10000 });
    expect(stage).toMatchObject({ type: 13, bitrate: 64000, user_limit: 10000, video_quality_mode: 1 });
    const forum = await created(guild, {
      name: 'forum',
      type: 15,
      topic: 'x'.repeat(GuildLimits.forumTopicMax),
      available_tags: [{ name: 'bug', emoji_name: '🐛' }],
      default_reaction_emoji: { emoji_name: '👍' },
      default_sort_order: 1,
      default_forum_layout: 2,
      default_auto_archive_duration: 1440,
    });
    const tags = forum['available_tags'] as Array<{ id: string }>;
    expect(forum).toMatchObject({
      type: 15,
      available_tags: [{ id: tags[0]?.id, name: 'bug', moderated: false, emoji_id: null, emoji_name: '🐛' }],
      default_reaction_emoji: { emoji_id: null, emoji_name: '👍' },
      default_sort_order: 1,
      default_forum_layout: 2,
      default_auto_archive_duration: 1440,
    });
    const media = await created(guild, { name: 'media', type: 16 });
    for (const channel of [category, voice, stage, forum, media])
      expect(Object.keys(channel)).toEqual(expect.arrayContaining(requiredKeys('GuildChannelResponse')));
    expect(media).toMatchObject({ type: 16, available_tags: [], default_reaction_emoji: null });
  });

  it('refuses a name of 0 or 101 characters and accepts 100 (GUILDS.md §2.4)', async () => {
    const guild = await createTestGuild(hearth);
    const bad = leaf(FormErrors.badLength(1, 100));
    expect(await create(guild, { name: '' })).toEqual({ status: 400, body: invalid({ name: bad }) });
    expect(await create(guild, { name: 'n'.repeat(101) })).toEqual({
      status: 400,
      body: invalid({ name: bad }),
    });
    expect((await create(guild, { name: 'n'.repeat(100) })).status).toBe(201);
    expect(await create(guild, {})).toEqual({
      status: 400,
      body: invalid({ name: leaf(FormErrors.required()) }),
    });
    expect(await create(guild, { name: 5, nsfw: 'yes' })).toEqual({
      status: 400,
      body: invalid({ name: leaf(FormErrors.string(5)), nsfw: leaf(FormErrors.boolean()) }),
    });
  });

  it('holds topic to 1024 characters, 4096 in forum and media channels', async () => {
    const guild = await createTestGuild(hearth);
    expect((await create(guild, { name: 't', topic: 'x'.repeat(1024) })).status).toBe(201);
    expect(await create(guild, { name: 't', topic: 'x'.repeat(1025) })).toEqual({
      status: 400,
      body: invalid({ topic: leaf(FormErrors.maxLength(1024)) }),
    });
    expect(await create(guild, { name: 'f', type: 16, topic: 'x'.repeat(4097) })).toEqual({
      status: 400,
      body: invalid({ topic: leaf(FormErrors.maxLength(4096)) }),
    });
  });

  it('holds rate_limit_per_user to 0–21600', async () => {
    const guild = await createTestGuild(hearth);
    expect((await create(guild, { name: 's', rate_limit_per_user: 21600 })).status).toBe(201);
    expect(await create(guild, { name: 's', rate_limit_per_user: 21601 })).toEqual({
      status: 400,
      body: invalid({ rate_limit_per_user: leaf(FormErrors.maximum(21600)) }),
    });
    expect(await create(guild, { name: 's', rate_limit_per_user: -1 })).toEqual({
      status: 400,
      body: invalid({ rate_limit_per_user: leaf(FormErrors.minimum(0)) }),
    });
  });

  it('holds bitrate to 8000–96000 in voice (384000 with VIP_REGIONS) and 64000 in stage', async () => {
    const guild = await createTestGuild(hearth);
    expect(await create(guild, { name: 'v', type: 2, bitrate: 7999 })).toEqual({
      status: 400,
      body: invalid({ bitrate: leaf(FormErrors.minimum(8000)) }),
    });
    expect(await create(guild, { name: 'v', type: 2, bitrate: 96001 })).toEqual({
      status: 400,
      body: invalid({ bitrate: leaf(FormErrors.maximum(96000)) }),
    });
    expect(await create(guild, { name: 's', type: 13, bitrate: 64001 })).toEqual({
      status: 400,
      body: invalid({ bitrate: leaf(FormErrors.maximum(64000)) }),
    });
    await setFeatures(guild, ['VIP_REGIONS']);
    expect((await create(guild, { name: 'v', type: 2, bitrate: 384000 })).status).toBe(201);
    expect(await create(guild, { name: 'v', type: 2, bitrate: 384001 })).toEqual({
      status: 400,
      body: invalid({ bitrate: leaf(FormErrors.maximum(384000)) }),
    });
  });

  it('holds user_limit to 99 in voice and 10000 in stage', async () => {
    const guild = await createTestGuild(hearth);
    expect(await create(guild, { name: 'v', type: 2, user_limit: 100 })).toEqual({
      status: 400,
      body: invalid({ user_limit: leaf(FormErrors.maximum(99)) }),
    });
    expect(await create(guild, { name: 's', type: 13, user_limit: 10001 })).toEqual({
      status: 400,
      body: invalid({ user_limit: leaf(FormErrors.maximum(10000)) }),
    });
  });

  it('accepts only guild channel types; announcement only with the NEWS feature', async () => {
    const guild = await createTestGuild(hearth);
    expect(await create(guild, { name: 'dm', type: 1 })).toEqual({
      status: 400,
      body: invalid({ type: leaf(FormErrors.choices([0, 2, 4, 13, 15, 16])) }),
    });
    expect(await create(guild, { name: 'news', type: 5 })).toEqual({
      status: 400,
      body: invalid({ type: leaf(FormErrors.choices([0, 2, 4, 13, 15, 16])) }),
    });
    await setFeatures(guild, ['NEWS']);
    expect((await create(guild, { name: 'news', type: 5 })).body).toMatchObject({ type: 5, name: 'news' });
  });

  it('holds available_tags to 20, default_auto_archive_duration to its four values', async () => {
    const guild = await createTestGuild(hearth);
    const tags = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `t${i}` }));
    expect((await create(guild, { name: 'f', type: 15, available_tags: tags(20) })).status).toBe(201);
    expect(await create(guild, { name: 'f', type: 15, available_tags: tags(21) })).toEqual({
      status: 400,
      body: invalid({ available_tags: leaf(FormErrors.maxItems(20)) }),
    });
    expect(await create(guild, { name: 'f', type: 15, default_auto_archive_duration: 61 })).toEqual({
      status: 400,
      body: invalid({ default_auto_archive_duration: leaf(FormErrors.choices([60, 1440, 4320, 10080])) }),
    });
  });

  it('answers 30013 past 500 channels', async () => {
    const guild = await createTestGuild(hearth);
    const now = hearth.clock.now();
    const rows = Array.from({ length: GuildLimits.channelsPerGuild - 1 }, (_, i) => ({
      id: String(BigInt(guild.id) + BigInt(i + 1)),
      guild_id: guild.id,
      type: 0,
      name: `c${i}`,
      position: i,
      nsfw: 0,
      rate_limit_per_user: 0,
      created_at: now,
    }));
    await hearth.storage.db.insertInto('channels').values(rows).execute();
    expect((await create(guild, { name: 'the 500th' })).status).toBe(201);
    expect(await create(guild, { name: 'the 501st' })).toEqual({
      status: 400,
      body: { code: 30013, message: 'Maximum number of guild channels reached (500)' },
    });
  });

  it('puts at most 50 channels in a category; parent_id must be a category of this guild', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const category = await created(guild, { name: 'cat', type: 4 });
    const text = await created(guild, { name: 'text' });
    const foreign = await created(other, { name: 'cat', type: 4 });
    const invalidParent = invalid({ parent_id: leaf(FormErrors.channelParentInvalid()) });
    expect(await create(guild, { name: 'x', parent_id: text.id })).toEqual({
      status: 400,
      body: invalidParent,
    });
    expect(await create(guild, { name: 'x', parent_id: foreign.id })).toEqual({
      status: 400,
      body: invalidParent,
    });
    expect(await create(guild, { name: 'x', type: 4, parent_id: category.id })).toEqual({
      status: 400,
      body: invalidParent,
    });
    for (let i = 0; i < GuildLimits.channelsPerCategory; i++)
      expect((await create(guild, { name: `c${i}`, parent_id: category.id })).status).toBe(201);
    expect(await create(guild, { name: 'one too many', parent_id: category.id })).toEqual({
      status: 400,
      body: invalid({ parent_id: leaf(FormErrors.channelParentMaxChannels(50)) }),
    });
  });

  it('needs MANAGE_CHANNELS (50013); non-members get 50001, unknown guilds 10004, revoked tokens 401', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    expect(await create(guild, { name: 'x' }, member.token)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const stranger = await addTestMember(hearth, await createTestGuild(hearth));
    expect(await create(guild, { name: 'x' }, stranger.token)).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(await call('POST', '/guilds/1234/channels', guild.owner.token, { name: 'x' })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
    await grantTestRole(hearth, guild, PermissionFlags.ManageChannels, [member.id]);
    expect((await create(guild, { name: 'x' }, member.token)).status).toBe(201);
    await hearth.storage.db.deleteFrom('sessions').where('user_id', '=', member.id).execute();
    expect(await create(guild, { name: 'x' }, member.token)).toEqual({ status: 401, body: UNAUTHORIZED });
    expect(await create(guild, { name: 'x' }, 'Bot not-a-token')).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
  });

  it('checks overwrite targets: roles and members of this guild (10011, 10007)', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const foreignRole = await grantTestRole(hearth, other, 0n, []);
    const outsider = await addTestMember(hearth, other);
    const overwrite = (id: string, type: number) => ({
      name: 'x',
      permission_overwrites: [{ id, type, deny: '1024' }],
    });
    expect(await create(guild, overwrite(foreignRole, 0))).toEqual({
      status: 404,
      body: { code: 10011, message: 'Unknown Role' },
    });
    expect(await create(guild, overwrite(outsider.id, 1))).toEqual({
      status: 404,
      body: { code: 10007, message: 'Unknown Member' },
    });
    expect(await create(guild, { name: 'x', permission_overwrites: [{ id: guild.id, type: 2 }] })).toEqual({
      status: 400,
      body: invalid({ permission_overwrites: { '0': { type: leaf(FormErrors.choices([0, 1])) } } }),
    });
    const made = await created(guild, overwrite(guild.id, 0));
    expect(made['permission_overwrites']).toEqual([{ id: guild.id, type: 0, allow: '0', deny: '1024' }]);
  });

  it('lets a non-administrator put in overwrites only bits it holds, and never MANAGE_ROLES', async () => {
    const guild = await createTestGuild(hearth);
    const mod = await addTestMember(hearth, guild);
    const { ManageChannels, BanMembers, SendMessages, ManageRoles } = PermissionFlags;
    await grantTestRole(hearth, guild, ManageChannels, [mod.id]);
    const with_ = (bits: bigint) => ({
      name: 'x',
      permission_overwrites: [{ id: guild.id, type: 0, allow: bits.toString() }],
    });
    expect((await create(guild, with_(SendMessages), mod.token)).status).toBe(201);
    expect(await create(guild, with_(BanMembers), mod.token)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, ManageRoles, [mod.id]);
    expect(await create(guild, with_(ManageRoles), mod.token)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect((await create(guild, with_(BanMembers | ManageRoles))).status).toBe(201);
  });
});

describe('Get Channel (GET /channels/{id}) and Get Guild Channels (GET /guilds/{id}/channels)', () => {
  it('answers a channel to members who can view it; 50001 otherwise; 10003 for an unknown id', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const open = await created(guild, { name: 'open' });
    const hidden = await created(guild, {
      name: 'hidden',
      permission_overwrites: [{ id: guild.id, type: 0, deny: PermissionFlags.ViewChannel.toString() }],
    });
    expect(await call('GET', `/channels/${open.id}`, member.token)).toEqual({ status: 200, body: open });
    expect(await call('GET', `/channels/${hidden.id}`, member.token)).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await call('GET', `/channels/${hidden.id}`, guild.owner.token)).toEqual({
      status: 200,
      body: hidden,
    });
    expect(await call('GET', '/channels/999999', member.token)).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
    const stranger = await addTestMember(hearth, await createTestGuild(hearth));
    expect(await call('GET', `/channels/${open.id}`, stranger.token)).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await call('GET', '/channels/not-an-id', member.token)).toEqual({
      status: 400,
      body: invalid({ channel_id: leaf(FormErrors.snowflake('not-an-id')) }),
    });
  });

  it('lists the channels the caller can view, by position then id; a role overwrite denying VIEW_CHANNEL hides one', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const muted = await grantTestRole(hearth, guild, 0n, [member.id]);
    const b = await created(guild, { name: 'b', position: 2 });
    const a = await created(guild, { name: 'a', position: 1 });
    const c = await created(guild, { name: 'c', position: 1 });
    const hidden = await created(guild, {
      name: 'hidden',
      position: 0,
      permission_overwrites: [{ id: muted, type: 0, deny: PermissionFlags.ViewChannel.toString() }],
    });
    const names = (answer: Answer<Json[]>) => answer.body.map((channel) => channel['name']);
    const byOwner = await call<Json[]>('GET', `/guilds/${guild.id}/channels`, guild.owner.token);
    expect(byOwner.status).toBe(200);
    expect(byOwner.body).toEqual([hidden, a, c, b]);
    expect(names(await call<Json[]>('GET', `/guilds/${guild.id}/channels`, member.token))).toEqual([
      'a',
      'c',
      'b',
    ]);
    const stranger = await addTestMember(hearth, await createTestGuild(hearth));
    expect(await call('GET', `/guilds/${guild.id}/channels`, stranger.token)).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await call('GET', '/guilds/1234/channels', member.token)).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
    expect(await call('GET', `/guilds/${guild.id}/channels`, 'revoked')).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
  });
});

describe('Modify Channel (PATCH /channels/{id})', () => {
  it('changes fields, answers the channel, sends CHANNEL_UPDATE and records CHANNEL_UPDATE with its changes', async () => {
    const guild = await createTestGuild(hearth);
    const channel = await created(guild, { name: 'old', topic: 'a' });
    events = [];
    const answer = await call(
      'PATCH',
      `/channels/${channel.id}`,
      guild.owner.token,
      { name: 'new', topic: null, nsfw: true },
      { 'X-Audit-Log-Reason': 'tidy' },
    );
    expect(answer).toEqual({ status: 200, body: { ...channel, name: 'new', topic: null, nsfw: true } });
    expect(events.map((event) => [event.type, event.data])).toEqual([['CHANNEL_UPDATE', answer.body]]);
    expect(await auditEntries(guild.id, AuditLogEvents.ChannelUpdate)).toEqual([
      {
        user_id: guild.owner.id,
        target_id: channel.id,
        changes: [
          { key: 'name', old_value: 'old', new_value: 'new' },
          { key: 'topic', old_value: 'a', new_value: null },
          { key: 'nsfw', old_value: false, new_value: true },
        ],
        options: null,
        reason: 'tidy',
      },
    ]);
  });

  it('applies the create limits: name 101 characters, bitrate past the maximum', async () => {
    const guild = await createTestGuild(hearth);
    const voice = await created(guild, { name: 'v', type: 2 });
    expect(
      await call('PATCH', `/channels/${voice.id}`, guild.owner.token, { name: 'n'.repeat(101) }),
    ).toEqual({
      status: 400,
      body: invalid({ name: leaf(FormErrors.badLength(1, 100)) }),
    });
    expect(await call('PATCH', `/channels/${voice.id}`, guild.owner.token, { bitrate: 96001 })).toEqual({
      status: 400,
      body: invalid({ bitrate: leaf(FormErrors.maximum(96000)) }),
    });
    expect(await call('PATCH', `/channels/${voice.id}`, guild.owner.token, { user_limit: 99 })).toMatchObject(
      {
        status: 200,
        body: { user_limit: 99 },
      },
    );
  });

  it('changes type only between text and announcement, only with the NEWS feature', async () => {
    const guild = await createTestGuild(hearth);
    const text = await created(guild, { name: 't' });
    const voice = await created(guild, { name: 'v', type: 2 });
    expect(await call('PATCH', `/channels/${text.id}`, guild.owner.token, { type: 5 })).toEqual({
      status: 400,
      body: invalid({ type: leaf(FormErrors.choices([0])) }),
    });
    await setFeatures(guild, ['NEWS']);
    expect(await call('PATCH', `/channels/${text.id}`, guild.owner.token, { type: 5 })).toMatchObject({
      status: 200,
      body: { type: 5 },
    });
    expect(await call('PATCH', `/channels/${voice.id}`, guild.owner.token, { type: 0 })).toEqual({
      status: 400,
      body: invalid({ type: leaf(FormErrors.choices([2])) }),
    });
  });

  it('moves a channel into a category and out again', async () => {
    const guild = await createTestGuild(hearth);
    const category = await created(guild, { name: 'cat', type: 4 });
    const text = await created(guild, { name: 't' });
    expect(
      await call('PATCH', `/channels/${text.id}`, guild.owner.token, { parent_id: category.id }),
    ).toMatchObject({
      status: 200,
      body: { parent_id: category.id },
    });
    expect(await call('PATCH', `/channels/${text.id}`, guild.owner.token, { parent_id: null })).toMatchObject(
      {
        status: 200,
        body: { parent_id: null },
      },
    );
    expect(await call('PATCH', `/channels/${text.id}`, guild.owner.token, { parent_id: text.id })).toEqual({
      status: 400,
      body: invalid({ parent_id: leaf(FormErrors.channelParentInvalid()) }),
    });
  });

  it('needs MANAGE_CHANNELS, and MANAGE_ROLES to replace overwrites; 50001 without VIEW_CHANNEL; 10003 unknown', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const channel = await created(guild, { name: 'c' });
    const hidden = await created(guild, {
      name: 'h',
      permission_overwrites: [{ id: member.id, type: 1, deny: PermissionFlags.ViewChannel.toString() }],
    });
    expect(await call('PATCH', `/channels/${channel.id}`, member.token, { name: 'x' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, PermissionFlags.ManageChannels, [member.id]);
    expect(await call('PATCH', `/channels/${hidden.id}`, member.token, { name: 'x' })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect((await call('PATCH', `/channels/${channel.id}`, member.token, { name: 'x' })).status).toBe(200);
    expect(
      await call('PATCH', `/channels/${channel.id}`, member.token, {
        permission_overwrites: [{ id: guild.id, type: 0, deny: '2048' }],
      }),
    ).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await call('PATCH', '/channels/424242', member.token, { name: 'x' })).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
  });

  it('replaces overwrites when given, with an audit entry per overwrite', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const channel = await created(guild, {
      name: 'c',
      permission_overwrites: [{ id: member.id, type: 1, allow: '1024' }],
    });
    const answer = await call('PATCH', `/channels/${channel.id}`, guild.owner.token, {
      permission_overwrites: [{ id: guild.id, type: 0, deny: '2048' }],
    });
    expect(answer.body['permission_overwrites']).toEqual([
      { id: guild.id, type: 0, allow: '0', deny: '2048' },
    ]);
    expect(await auditEntries(guild.id, AuditLogEvents.ChannelOverwriteCreate)).toMatchObject([
      { target_id: channel.id, options: { id: guild.id, type: '0', role_name: '@everyone' } },
    ]);
    expect(await auditEntries(guild.id, AuditLogEvents.ChannelOverwriteDelete)).toMatchObject([
      { target_id: channel.id, options: { id: member.id, type: '1' } },
    ]);
  });
});

describe('Delete Channel (DELETE /channels/{id})', () => {
  it('answers the deleted channel, sends CHANNEL_DELETE and records CHANNEL_DELETE', async () => {
    const guild = await createTestGuild(hearth);
    const channel = await created(guild, { name: 'gone' });
    events = [];
    expect(await call('DELETE', `/channels/${channel.id}`, guild.owner.token)).toEqual({
      status: 200,
      body: channel,
    });
    expect(events.map((event) => [event.type, event.data])).toEqual([['CHANNEL_DELETE', channel]]);
    expect(await call('GET', `/channels/${channel.id}`, guild.owner.token)).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
    expect(await auditEntries(guild.id, AuditLogEvents.ChannelDelete)).toMatchObject([
      {
        user_id: guild.owner.id,
        target_id: channel.id,
        changes: expect.arrayContaining([{ key: 'name', old_value: 'gone' }]),
      },
    ]);
    expect(await call('DELETE', `/channels/${channel.id}`, guild.owner.token)).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
  });

  it('orphans a category’s children with a CHANNEL_UPDATE each', async () => {
    const guild = await createTestGuild(hearth);
    const category = await created(guild, { name: 'cat', type: 4 });
    const one = await created(guild, { name: 'one', parent_id: category.id });
    const two = await created(guild, { name: 'two', type: 2, parent_id: category.id });
    events = [];
    expect((await call('DELETE', `/channels/${category.id}`, guild.owner.token)).status).toBe(200);
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ['CHANNEL_UPDATE', { ...one, parent_id: null }],
      ['CHANNEL_UPDATE', { ...two, parent_id: null }],
      ['CHANNEL_DELETE', category],
    ]);
    expect(await call('GET', `/channels/${one.id}`, guild.owner.token)).toMatchObject({
      body: { parent_id: null },
    });
  });

  it('clears the guild’s system channel when it is deleted, with GUILD_UPDATE', async () => {
    const guild = await createTestGuild(hearth);
    const channel = await created(guild, { name: 'system' });
    await hearth.storage.db
      .updateTable('guilds')
      .set({ system_channel_id: channel.id })
      .where('id', '=', guild.id)
      .execute();
    events = [];
    expect((await call('DELETE', `/channels/${channel.id}`, guild.owner.token)).status).toBe(200);
    expect(events.map((event) => event.type)).toEqual(['CHANNEL_DELETE', 'GUILD_UPDATE']);
    expect(events[1]?.data).toMatchObject({ id: guild.id, system_channel_id: null });
  });

  it('needs MANAGE_CHANNELS (50013)', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const channel = await created(guild, { name: 'c' });
    expect(await call('DELETE', `/channels/${channel.id}`, member.token)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });
});

describe('Modify Guild Channel Positions (PATCH /guilds/{id}/channels)', () => {
  it('moves channels, answers 204 and sends CHANNEL_UPDATE only for the channels that changed', async () => {
    const guild = await createTestGuild(hearth);
    const a = await created(guild, { name: 'a' });
    const b = await created(guild, { name: 'b' });
    events = [];
    const answer = await call('PATCH', `/guilds/${guild.id}/channels`, guild.owner.token, [
      { id: a.id, position: 1 },
      { id: b.id, position: 1 },
    ]);
    expect(answer).toEqual({ status: 204, body: null });
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ['CHANNEL_UPDATE', { ...a, position: 1 }],
    ]);
    const listed = await call<Json[]>('GET', `/guilds/${guild.id}/channels`, guild.owner.token);
    expect(listed.body.map((channel) => channel['name'])).toEqual(['a', 'b']);
  });

  it('moves a channel into a category and syncs its overwrites with lock_permissions', async () => {
    const guild = await createTestGuild(hearth);
    const category = await created(guild, {
      name: 'cat',
      type: 4,
      permission_overwrites: [{ id: guild.id, type: 0, deny: '2048' }],
    });
    const text = await created(guild, { name: 't' });
    expect(
      (
        await call('PATCH', `/guilds/${guild.id}/channels`, guild.owner.token, [
          { id: text.id, parent_id: category.id, lock_permissions: true },
        ])
      ).status,
    ).toBe(204);
    expect(await call('GET', `/channels/${text.id}`, guild.owner.token)).toMatchObject({
      body: {
        parent_id: category.id,
        permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: '2048' }],
      },
    });
  });

  it('refuses unknown channels (10003), other guilds’ channels, bad bodies and members without MANAGE_CHANNELS', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const theirs = await created(other, { name: 'theirs' });
    const mine = await created(guild, { name: 'mine' });
    const patch = (auth: string, body: unknown) => call('PATCH', `/guilds/${guild.id}/channels`, auth, body);
    expect(await patch(guild.owner.token, [{ id: theirs.id, position: 0 }])).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
    expect(await patch(guild.owner.token, [{ id: mine.id, position: -1 }])).toEqual({
      status: 400,
      body: invalid({ '0': { position: leaf(FormErrors.minimum(0)) } }),
    });
    expect(await patch(guild.owner.token, { id: mine.id })).toEqual({
      status: 400,
      body: invalid({ _errors: [FormErrors.array()] }),
    });
    expect(await patch(member.token, [{ id: mine.id, position: 3 }])).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });
});

describe('@discordjs/core drives the channel routes', () => {
  it('creates, edits, lists and deletes channels as a bot holding MANAGE_CHANNELS through a role', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.ManageChannels, [game.botUserId]);
    const rest = new REST({ api: `${hearth.url}/api`, retries: 0 }).setToken(game.botToken);
    const api = new API(rest);
    const channel = await api.guilds.createChannel(guild.id, { name: 'from-core', topic: 'made by a bot' });
    expect(channel).toMatchObject({ type: 0, name: 'from-core', topic: 'made by a bot', guild_id: guild.id });
    const edited = await api.channels.edit(channel.id, { name: 'renamed' }, { reason: 'because' });
    expect(edited).toMatchObject({ id: channel.id, name: 'renamed' });
    expect((await api.guilds.getChannels(guild.id)).map((c) => c.name)).toEqual(['renamed']);
    const second = await api.guilds.createChannel(guild.id, { name: 'second', type: 2 });
    await api.guilds.setChannelPositions(guild.id, [
      { id: second.id, position: 0 },
      { id: channel.id, position: 1 },
    ]);
    expect((await api.guilds.getChannels(guild.id)).map((c) => c.name)).toEqual(['second', 'renamed']);
    await api.channels.delete(second.id);
    // Overwrites through core need MANAGE_ROLES ("Manage Permissions") as well.
    await expect(
      api.channels.editPermissionOverwrite(channel.id, guild.id, { type: 0, deny: '2048' }),
    ).rejects.toMatchObject({ status: 403, code: 50013 });
    await grantTestRole(hearth, guild, PermissionFlags.ManageRoles | PermissionFlags.SendMessages, [
      game.botUserId,
    ]);
    await api.channels.editPermissionOverwrite(
      channel.id,
      guild.id,
      { type: 0, deny: '2048' },
      { reason: 'quiet' },
    );
    expect(await api.channels.get(channel.id)).toMatchObject({
      permission_overwrites: [{ id: guild.id, type: 0, allow: '0', deny: '2048' }],
    });
    await api.channels.deletePermissionOverwrite(channel.id, guild.id);
    expect(await api.channels.delete(channel.id)).toMatchObject({ id: channel.id, name: 'renamed' });
    expect(await api.guilds.getChannels(guild.id)).toEqual([]);
    expect((await auditEntries(guild.id, AuditLogEvents.ChannelUpdate))[0]).toMatchObject({
      reason: 'because',
    });
  });
});

describe('Channels survive a restart (issue 14, Done when)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-channels-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  async function survives(databaseUrl: string): Promise<void> {
    const first = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
    let guild: TestGuild;
    let before: Json[];
    try {
      guild = await createTestGuild(first);
      const member = await addTestMember(first, guild);
      const made = await first.api(`/guilds/${guild.id}/channels`, {
        method: 'POST',
        auth: guild.owner.token,
        body: { name: 'cat', type: 4, permission_overwrites: [{ id: member.id, type: 1, deny: '1024' }] },
      });
      const category = (await made.json()) as { id: string };
      await first.api(`/guilds/${guild.id}/channels`, {
        method: 'POST',
        auth: guild.owner.token,
        body: { name: 'voice', type: 2, parent_id: category.id, user_limit: 5 },
      });
      before = (await (
        await first.api(`/guilds/${guild.id}/channels`, { auth: guild.owner.token })
      ).json()) as Json[];
      expect(before).toHaveLength(2);
    } finally {
      await first.close();
    }
    const second = await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000 });
    try {
      const after = await second.api(`/guilds/${guild.id}/channels`, { auth: guild.owner.token });
      expect(await after.json()).toEqual(before);
      expect(await second.services.channels.channelsOf(guild.id)).toEqual(before);
    } finally {
      await second.close();
    }
  }

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

describe('no 500s: malformed requests to every channel route get a 4xx and an error body', () => {
  const ROUTES: ReadonlyArray<readonly [string, string]> = [
    ['GET', '/guilds/:guild/channels'],
    ['POST', '/guilds/:guild/channels'],
    ['PATCH', '/guilds/:guild/channels'],
    ['GET', '/channels/:channel'],
    ['PATCH', '/channels/:channel'],
    ['PUT', '/channels/:channel/permissions/:target'],
    ['DELETE', '/channels/:channel/permissions/:target'],
    ['DELETE', '/channels/:channel'],
  ];
  const BAD_IDS = ['1234567890123456789', 'abc', '99999999999999999999999', '-1'];
  const BODIES: unknown[] = [
    undefined,
    null,
    [],
    [{ id: {} }],
    [{ id: '1', position: 2 ** 40, parent_id: 'x', lock_permissions: 'yes' }],
    'text',
    12,
    { name: 5, type: 'x', position: 2 ** 40, permission_overwrites: {}, bitrate: 1e30 },
    { name: 'x', type: 2, bitrate: 1e30, user_limit: 1e30, flags: 1e30, rtc_region: 'x'.repeat(500) },
    {
      name: 'x',
      permission_overwrites: [
        { id: 'x', allow: -1 },
        { id: '1', allow: 1.5 },
      ],
    },
    { name: 'x', available_tags: [{ name: 'x'.repeat(300) }], default_reaction_emoji: 'x' },
    { type: 0, allow: '99999999999999999999', deny: 1e25 },
    { type: 1, allow: {} },
  ];

  it('answers every bad id and body with a 4xx error body', { timeout: 180_000 }, async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const channel = await created(guild, { name: 'target' });
    const real: Record<string, string> = { guild: guild.id, channel: channel.id, target: member.id };
    const attempts: Array<[string, string, unknown, string]> = [];
    for (const [method, template] of ROUTES) {
      const realPath = template.replace(/:(\w+)/g, (_, name: string) => real[name] ?? '');
      const badPaths = BAD_IDS.map((id) => template.replace(/:(\w+)/g, id));
      for (const body of method === 'GET' ? [undefined] : BODIES) {
        for (const auth of [guild.owner.token, member.token, 'Bot nope'])
          attempts.push([method, realPath, body, auth]);
        for (const path of badPaths) attempts.push([method, path, body, guild.owner.token]);
      }
    }
    for (const [method, path, body, auth] of attempts) {
      const response = await hearth.api(path, { method, auth, ...(body === undefined ? {} : { body }) });
      const text = await response.text();
      expect(response.status, `${method} ${path} ${JSON.stringify(body)}: ${text}`).toBeLessThan(500);
      if (response.status >= 400) expect(JSON.parse(text)).toHaveProperty('code');
    }
  });
});
