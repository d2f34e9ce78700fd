import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  ALREADY_CREATED,
  call,
  createThreadRoom,
  invalidForm,
  MEMBER_PERMISSIONS,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  patchThread,
  post,
  startThread,
  TAG_REQUIRED,
  THREAD_ARCHIVED,
  type ThreadRoom,
  UNKNOWN_CHANNEL,
  UNKNOWN_MEMBER,
  UNKNOWN_MESSAGE,
  WRONG_CHANNEL_TYPE,
} from './support.js';

/**
 * Threads (GUILDS.md §2.5; platform docs, Threads topic and channel resource): started from a message,
 * without one and as forum posts, modified and deleted through the channel routes, their members and
 * lists, and auto-archive by the injected clock. The main flows go through @discordjs/core unchanged.
 */

const T0 = Date.parse('2026-03-02T10:00:00Z');
const clock = new ManualClock(T0);
const MINUTE = 60_000;

let hearth: TestHearth;
let room: ThreadRoom;
let api: API;
let botId: string;
let botApplicationId: string;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  room = await createThreadRoom(hearth);
  const bot = await addTestBot(hearth, room.guild);
  botId = bot.botUserId;
  botApplicationId = bot.id;
  await grantTestRole(hearth, room.guild, MEMBER_PERMISSIONS, [botId]);
  api = new API(new REST({ api: `${hearth.url}/api`, retries: 0 }).setToken(bot.botToken));
});
afterAll(() => hearth.close());

type Json = Record<string, unknown>;

describe('Start Thread from Message (@discordjs/core)', () => {
  it('makes a public thread sharing the message id; the message gets HAS_THREAD and `thread`, the thread a starter message', async () => {
    const message = await post(hearth, room.textId, room.member.token, { content: 'let us talk' });
    const thread = await api.channels.createThread(
      room.textId,
      { name: 'talk', rate_limit_per_user: 5 },
      message.body.id,
    );
    expect(thread).toMatchObject({
      id: message.body.id,
      type: 11,
      guild_id: room.guild.id,
      parent_id: room.textId,
      owner_id: botId,
      name: 'talk',
      rate_limit_per_user: 5,
      message_count: 0,
      member_count: 1,
      total_message_sent: 0,
      thread_metadata: {
        archived: false,
        auto_archive_duration: 1440,
        locked: false,
        archive_timestamp: new Date(T0).toISOString(),
        create_timestamp: new Date(T0).toISOString(),
      },
      member: { id: message.body.id, user_id: botId, flags: 0 },
    });
    expect(thread.thread_metadata).not.toHaveProperty('invitable');

    const started = await call<Json>(hearth, `/channels/${room.textId}/messages/${message.body.id}`, {
      auth: room.member.token,
    });
    expect(Number(started.body['flags']) & 32).toBe(32);
    expect(started.body['thread']).toMatchObject({ id: thread.id, type: 11, name: 'talk' });

    const inThread = await api.channels.getMessages(thread.id);
    expect(inThread).toHaveLength(1);
    expect(inThread[0]).toMatchObject({
      type: 21,
      message_reference: { channel_id: room.textId, guild_id: room.guild.id, message_id: message.body.id },
    });

    // One thread per message (160004).
    expect(
      await call(hearth, `/channels/${room.textId}/messages/${message.body.id}/threads`, {
        method: 'POST',
        auth: room.member.token,
        body: { name: 'again' },
      }),
    ).toEqual({ status: 400, body: ALREADY_CREATED });
  });

  it('in an announcement channel makes an ANNOUNCEMENT_THREAD (10)', async () => {
    const message = await post(hearth, room.announcementId, room.member.token, { content: 'news' });
    const thread = await api.channels.createThread(
      room.announcementId,
      { name: 'about news' },
      message.body.id,
    );
    expect(thread).toMatchObject({ id: message.body.id, type: 10, parent_id: room.announcementId });
  });

  it('refuses unknown messages, other channels’ messages, forum parents and missing CREATE_PUBLIC_THREADS', async () => {
    const path = (channel: string, message: string) => `/channels/${channel}/messages/${message}/threads`;
    const message = await post(hearth, room.textId, room.member.token, { content: 'x' });
    const elsewhere = await seedTestChannel(hearth, room.guild.id, { name: 'elsewhere' });
    const start = (channel: string, id: string, body: unknown = { name: 'n' }, token = room.member.token) =>
      call(hearth, path(channel, id), { method: 'POST', auth: token, body });
    expect(await start(room.textId, '1234567890123456789')).toEqual({ status: 404, body: UNKNOWN_MESSAGE });
    expect(await start(elsewhere, message.body.id)).toEqual({ status: 404, body: UNKNOWN_MESSAGE });
    expect(await start(room.forumId, message.body.id)).toEqual({ status: 400, body: WRONG_CHANNEL_TYPE });
    expect(await start(room.textId, message.body.id, {})).toEqual({
      status: 400,
      body: invalidForm({
        name: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      }),
    });
    const long = await start(room.textId, message.body.id, { name: 'x'.repeat(101) });
    expect(long).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH' }] } } },
    });
    const duration = await start(room.textId, message.body.id, { name: 'n', auto_archive_duration: 61 });
    expect(duration).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { auto_archive_duration: {} } },
    });
    const denied = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.CreatePublicThreads }],
    });
    const there = await post(hearth, denied, room.member.token, { content: 'y' });
    expect(await start(denied, there.body.id)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
  });
});

describe('Start Thread without Message', () => {
  it('is private by default (invitable), and announces nothing in the parent', async () => {
    const before = await api.channels.getMessages(room.textId, { limit: 1 });
    const thread = await api.channels.createThread(room.textId, { name: 'secret' });
    expect(thread).toMatchObject({ type: 12, owner_id: botId, thread_metadata: { invitable: true } });
    expect(await api.channels.getMessages(room.textId, { limit: 1 })).toEqual(before);
    const closed = await api.channels.createThread(room.textId, {
      name: 'closed',
      type: 12,
      invitable: false,
    });
    expect(closed.thread_metadata).toMatchObject({ invitable: false });
  });

  it('a public one posts a THREAD_CREATED (18) message in the parent naming it', async () => {
    const thread = await api.channels.createThread(room.textId, { name: 'open talk', type: 11 });
    expect(thread).toMatchObject({ type: 11, parent_id: room.textId });
    const [latest] = await api.channels.getMessages(room.textId, { limit: 1 });
    expect(latest).toMatchObject({
      type: 18,
      content: 'open talk',
      author: { id: botId },
      message_reference: { channel_id: thread.id, guild_id: room.guild.id },
    });
  });

  it('takes the parent’s default auto-archive duration and thread slowmode', async () => {
    const parent = await seedTestChannel(hearth, room.guild.id, { name: 'defaults' });
    await call(hearth, `/channels/${parent}`, {
      method: 'PATCH',
      auth: room.owner.token,
      body: { default_auto_archive_duration: 4320, default_thread_rate_limit_per_user: 30 },
    });
    const thread = await api.channels.createThread(parent, { name: 'defaulted', type: 11 });
    expect(thread).toMatchObject({
      rate_limit_per_user: 30,
      thread_metadata: { auto_archive_duration: 4320 },
    });
  });

  it('refuses wrong types, parents that hold no threads, and missing CREATE_PRIVATE_THREADS', async () => {
    const start = (channel: string, body: unknown, token = room.member.token) =>
      call(hearth, `/channels/${channel}/threads`, { method: 'POST', auth: token, body });
    expect(await start(room.textId, { name: 'n', type: 10 })).toEqual({
      status: 400,
      body: invalidForm({
        type: { _errors: [{ code: 'BASE_TYPE_CHOICES', message: "Value must be one of ('11', '12')." }] },
      }),
    });
    expect((await start(room.announcementId, { name: 'n', type: 12 })).body).toMatchObject({
      code: 50035,
      errors: { type: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } },
    });
    const voice = await seedTestChannel(hearth, room.guild.id, { type: 2 });
    expect(await start(voice, { name: 'n' })).toEqual({ status: 400, body: WRONG_CHANNEL_TYPE });
    const thread = await startThread(hearth, room.textId, room.member.token);
    expect(await start(thread, { name: 'n' })).toEqual({ status: 400, body: WRONG_CHANNEL_TYPE });
    expect(await start('1234567890123456789', { name: 'n' })).toEqual({ status: 404, body: UNKNOWN_CHANNEL });
    const noPrivate = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.CreatePrivateThreads }],
    });
    expect(await start(noPrivate, { name: 'n' })).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect((await start(noPrivate, { name: 'n', type: 11 })).status).toBe(201);
    // A guild the caller is not in.
    const foreign = await createTestGuild(hearth);
    const foreignChannel = await seedTestChannel(hearth, foreign.id);
    expect(await start(foreignChannel, { name: 'n' })).toEqual({ status: 403, body: MISSING_ACCESS });
  });
});

describe('Start Thread in Forum or Media Channel', () => {
  it('creates a post whose first message shares its id, with tags from the forum (@discordjs/core)', async () => {
    const thread = (await api.channels.createForumThread(room.forumId, {
      name: 'first post',
      applied_tags: [room.tags.open],
      message: { content: 'hello forum' },
    })) as unknown as Json & { id: string; message: Json };
    expect(thread).toMatchObject({
      type: 11,
      parent_id: room.forumId,
      applied_tags: [room.tags.open],
      message_count: 0,
      total_message_sent: 0,
      last_message_id: thread.id,
      message: { id: thread.id, channel_id: thread.id, content: 'hello forum', type: 0 },
    });
    expect(thread.message).not.toHaveProperty('thread');
    const forum = await api.channels.get(room.forumId);
    expect(forum).toMatchObject({ last_message_id: thread.id });
  });

  it('refuses unknown tags, moderated tags for non-moderators, REQUIRE_TAG without a tag, and empty messages', async () => {
    const start = (body: unknown, token = room.member.token, channel = room.forumId) =>
      call(hearth, `/channels/${channel}/threads`, { method: 'POST', auth: token, body });
    const message = { content: 'm' };
    expect(await start({ name: 'n', message, applied_tags: ['1234567890123456789'] })).toEqual({
      status: 400,
      body: invalidForm({
        applied_tags: { '0': { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
      }),
    });
    expect(await start({ name: 'n', message, applied_tags: [room.tags.staff] })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(
      (await start({ name: 'n', message, applied_tags: [room.tags.staff] }, room.moderator.token)).status,
    ).toBe(201);
    const six = Array.from({ length: 6 }, () => room.tags.open);
    expect((await start({ name: 'n', message, applied_tags: six })).body).toMatchObject({
      code: 50035,
      errors: { applied_tags: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
    });
    expect((await start({ name: 'n' })).body).toMatchObject({
      code: 50035,
      errors: { message: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } },
    });
    expect(await start({ name: 'n', message: {} })).toEqual({
      status: 400,
      body: { code: 50006, message: 'Cannot send an empty message' },
    });
    // The first message's own checks report under `message`, as the request nests it.
    expect((await start({ name: 'n', message: { components: [{ type: 1, components: [] }] } })).body).toEqual(
      invalidForm({
        message: {
          components: {
            '0': {
              components: {
                _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 5 in length.' }],
              },
            },
          },
        },
      }),
    );
    expect((await start({ name: 'n', message: { content: 'm', flags: 1 } })).body).toEqual(
      invalidForm({
        message: { flags: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
      }),
    );
    const strict = await seedTestChannel(hearth, room.guild.id, { type: 16, name: 'media' });
    await call(hearth, `/channels/${strict}`, {
      method: 'PATCH',
      auth: room.owner.token,
      body: { flags: 16, available_tags: [{ name: 'clip' }] },
    });
    expect(await start({ name: 'n', message }, room.member.token, strict)).toEqual({
      status: 400,
      body: TAG_REQUIRED,
    });
    // No thread was left behind by the refusals.
    const active = await call<{ threads: Json[] }>(hearth, `/guilds/${room.guild.id}/threads/active`, {
      auth: room.member.token,
    });
    expect(active.body.threads.filter((t) => t['parent_id'] === strict)).toEqual([]);
  });

  it('the forum’s rate_limit_per_user limits how often a member starts posts (429, 20016); bots are exempt', async () => {
    const forum = await seedTestChannel(hearth, room.guild.id, { type: 15, name: 'slow' });
    await call(hearth, `/channels/${forum}`, {
      method: 'PATCH',
      auth: room.owner.token,
      body: { rate_limit_per_user: 60 },
    });
    const body = { name: 'n', message: { content: 'm' } };
    const start = (token: string) =>
      call(hearth, `/channels/${forum}/threads`, { method: 'POST', auth: token, body });
    expect((await start(room.member.token)).status).toBe(201);
    expect(await start(room.member.token)).toEqual({
      status: 429,
      body: expect.objectContaining({ code: 20016, retry_after: 60 }),
    });
    clock.advance(60_000);
    expect((await start(room.member.token)).status).toBe(201);
    await api.channels.createForumThread(forum, { name: 'bot 1', message: { content: 'm' } });
    await api.channels.createForumThread(forum, { name: 'bot 2', message: { content: 'm' } });
  });

  it('needs SEND_MESSAGES in the forum, not CREATE_PUBLIC_THREADS', async () => {
    const forum = await seedTestChannel(hearth, room.guild.id, {
      type: 15,
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.CreatePublicThreads }],
    });
    const body = { name: 'n', message: { content: 'm' } };
    const made = await call(hearth, `/channels/${forum}/threads`, {
      method: 'POST',
      auth: room.member.token,
      body,
    });
    expect(made.status).toBe(201);
    const mute = await seedTestChannel(hearth, room.guild.id, {
      type: 15,
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.SendMessages }],
    });
    expect(
      await call(hearth, `/channels/${mute}/threads`, { method: 'POST', auth: room.member.token, body }),
    ).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });
});

describe('Messages in threads', () => {
  it('counts messages: message_count follows deletions, total_message_sent never decreases', async () => {
    const thread = await startThread(hearth, room.textId, room.member.token);
    const first = await post(hearth, thread, room.member.token, { content: 'one' });
    const second = await api.channels.createMessage(thread, { content: 'two' });
    expect(second.channel_id).toBe(thread);
    expect(await api.channels.get(thread)).toMatchObject({
      message_count: 2,
      total_message_sent: 2,
      last_message_id: second.id,
    });
    await call(hearth, `/channels/${thread}/messages/${first.body.id}`, {
      method: 'DELETE',
      auth: room.member.token,
    });
    expect(await api.channels.get(thread)).toMatchObject({ message_count: 1, total_message_sent: 2 });
  });

  it('the thread’s own slowmode applies to its messages; bulk delete lowers message_count', async () => {
    const thread = await startThread(hearth, room.textId, room.member.token, { rate_limit_per_user: 30 });
    expect((await post(hearth, thread, room.member.token, { content: 'one' })).status).toBe(200);
    expect(await post(hearth, thread, room.member.token, { content: 'two' })).toEqual({
      status: 429,
      body: expect.objectContaining({ code: 20016, retry_after: 30 }),
    });
    const ids: string[] = [];
    for (const content of ['a', 'b', 'c'])
      ids.push((await post(hearth, thread, room.owner.token, { content })).body.id);
    const bulk = await call(hearth, `/channels/${thread}/messages/bulk-delete`, {
      method: 'POST',
      auth: room.owner.token,
      body: { messages: ids.slice(0, 2) },
    });
    expect(bulk.status).toBe(204);
    expect((await call(hearth, `/channels/${thread}`, { auth: room.member.token })).body).toMatchObject({
      message_count: 2,
      total_message_sent: 4,
    });
  });

  it('sending needs SEND_MESSAGES_IN_THREADS, not SEND_MESSAGES', async () => {
    const parent = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.SendMessagesInThreads }],
    });
    const thread = await startThread(hearth, parent, room.member.token);
    expect(await post(hearth, thread, room.member.token, { content: 'x' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const quiet = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.SendMessages }],
    });
    const talk = await startThread(hearth, quiet, room.member.token);
    expect((await post(hearth, talk, room.member.token, { content: 'x' })).status).toBe(200);
    expect(await post(hearth, quiet, room.member.token, { content: 'x' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });

  it('a private thread is seen only by its members and MANAGE_THREADS holders', async () => {
    const thread = await startThread(hearth, room.textId, room.member.token, { type: 12 });
    await post(hearth, thread, room.member.token, { content: 'psst' });
    for (const path of [
      `/channels/${thread}`,
      `/channels/${thread}/messages`,
      `/channels/${thread}/thread-members`,
    ])
      expect(await call(hearth, path, { auth: room.other.token })).toEqual({
        status: 403,
        body: MISSING_ACCESS,
      });
    expect(await post(hearth, thread, room.other.token, { content: 'hi' })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect((await call(hearth, `/channels/${thread}`, { auth: room.moderator.token })).status).toBe(200);
    const active = await call<{ threads: Json[] }>(hearth, `/guilds/${room.guild.id}/threads/active`, {
      auth: room.other.token,
    });
    expect(active.body.threads.map((t) => t['id'])).not.toContain(thread);
    await call(hearth, `/channels/${thread}/thread-members/${room.other.id}`, {
      method: 'PUT',
      auth: room.member.token,
    });
    expect((await post(hearth, thread, room.other.token, { content: 'hi' })).status).toBe(200);
  });
});

describe("A guild's deletion", () => {
  it('takes its threads, their members and their messages with it', async () => {
    const doomed = await createThreadRoom(hearth);
    const thread = await startThread(hearth, doomed.textId, doomed.member.token, { type: 11, name: 'going' });
    expect((await post(hearth, thread, doomed.member.token, { content: 'soon gone' })).status).toBe(200);
    const deleted = await call(hearth, `/guilds/${doomed.guild.id}`, {
      method: 'DELETE',
      auth: doomed.guild.owner.token,
    });
    expect(deleted.status).toBe(204);
    const db = hearth.storage.db;
    const left = async (table: 'threads' | 'thread_members' | 'messages', column: string) =>
      (
        await db
          .selectFrom(table)
          .select(column as never)
          .where(column as never, '=', thread as never)
          .execute()
      ).length;
    expect([
      await left('threads', 'id'),
      await left('thread_members', 'thread_id'),
      await left('messages', 'channel_id'),
    ]).toEqual([0, 0, 0]);
  });
});

describe('Modify and delete a thread (PATCH / DELETE /channels/{id})', () => {
  it('the creator renames and archives; MANAGE_THREADS locks, sets slowmode and deletes (@discordjs/core)', async () => {
    const thread = await api.channels.createThread(room.textId, { name: 'mine', type: 11 });
    clock.advance(MINUTE);
    const renamed = await api.channels.edit(thread.id, { name: 'still mine', auto_archive_duration: 60 });
    expect(renamed).toMatchObject({
      name: 'still mine',
      thread_metadata: { auto_archive_duration: 60, archive_timestamp: new Date(clock.now()).toISOString() },
    });
    const archived = await api.channels.edit(thread.id, { archived: true });
    expect(archived).toMatchObject({ thread_metadata: { archived: true } });
    expect(await patchThread(hearth, thread.id, room.member.token, { name: 'x' })).toEqual({
      status: 400,
      body: THREAD_ARCHIVED,
    });
    await api.channels.edit(thread.id, { archived: false });
    for (const body of [{ locked: true }, { rate_limit_per_user: 10 }])
      await expect(api.channels.edit(thread.id, body)).rejects.toMatchObject({ status: 403, code: 50013 });
    expect(await patchThread(hearth, thread.id, room.member.token, { name: 'not mine' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const locked = await patchThread(hearth, thread.id, room.moderator.token, {
      locked: true,
      rate_limit_per_user: 10,
    });
    expect(locked.body).toMatchObject({ rate_limit_per_user: 10, thread_metadata: { locked: true } });
    expect(await patchThread(hearth, thread.id, room.moderator.token, { invitable: 'yes' })).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { invitable: {} } },
    });

    await expect(api.channels.delete(thread.id)).rejects.toMatchObject({ status: 403, code: 50013 });
    const deleted = await call<Json>(hearth, `/channels/${thread.id}`, {
      method: 'DELETE',
      auth: room.moderator.token,
    });
    expect(deleted).toMatchObject({ status: 200, body: { id: thread.id, name: 'still mine', type: 11 } });
    expect(await call(hearth, `/channels/${thread.id}`, { auth: room.moderator.token })).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
    expect(await call(hearth, `/channels/${thread.id}/messages`, { auth: room.moderator.token })).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
  });

  it('deleting the parent channel deletes its threads and their messages', async () => {
    const parent = await seedTestChannel(hearth, room.guild.id, { name: 'doomed' });
    const thread = await startThread(hearth, parent, room.member.token);
    await post(hearth, thread, room.member.token, { content: 'gone soon' });
    expect(
      (await call(hearth, `/channels/${parent}`, { method: 'DELETE', auth: room.owner.token })).status,
    ).toBe(200);
    expect(await call(hearth, `/channels/${thread}`, { auth: room.owner.token })).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
    expect(await call(hearth, `/channels/${thread}/messages`, { auth: room.owner.token })).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
  });

  it('records THREAD_CREATE (110), THREAD_UPDATE (111) and THREAD_DELETE (112) in the audit log', async () => {
    const thread = await startThread(hearth, room.textId, room.moderator.token, { name: 'audited' });
    await patchThread(hearth, thread, room.moderator.token, { name: 'audited twice' });
    await call(hearth, `/channels/${thread}`, { method: 'DELETE', auth: room.moderator.token });
    const log = await call<{ audit_log_entries: Json[] }>(hearth, `/guilds/${room.guild.id}/audit-logs`, {
      auth: room.owner.token,
    });
    const entries = log.body.audit_log_entries.filter((entry) => entry['target_id'] === thread);
    expect(entries.map((entry) => entry['action_type'])).toEqual([112, 111, 110]);
    expect(entries[1]).toMatchObject({
      user_id: room.moderator.id,
      changes: [{ key: 'name', old_value: 'audited', new_value: 'audited twice' }],
    });
  });

  it('tags of a forum post change only among the forum’s tags; pinning needs MANAGE_THREADS', async () => {
    const post = await call<{ id: string }>(hearth, `/channels/${room.forumId}/threads`, {
      method: 'POST',
      auth: room.member.token,
      body: { name: 'tagged', message: { content: 'm' } },
    });
    const id = post.body.id;
    expect(
      (await patchThread(hearth, id, room.member.token, { applied_tags: [room.tags.open] })).body,
    ).toMatchObject({
      applied_tags: [room.tags.open],
    });
    expect(await patchThread(hearth, id, room.member.token, { applied_tags: [room.tags.staff] })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    // One refused field refuses the whole request: the name stays.
    expect(
      (
        await patchThread(hearth, id, room.member.token, {
          name: 'renamed',
          applied_tags: ['1234567890123456789'],
        })
      ).body,
    ).toMatchObject({ code: 50035, errors: { applied_tags: { '0': {} } } });
    expect((await call(hearth, `/channels/${id}`, { auth: room.member.token })).body).toMatchObject({
      name: 'tagged',
    });
    expect(await patchThread(hearth, id, room.member.token, { flags: 2 })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect((await patchThread(hearth, id, room.moderator.token, { flags: 2 })).body).toMatchObject({
      flags: 2,
    });
    // Archiving unpins.
    expect((await patchThread(hearth, id, room.moderator.token, { archived: true })).body).toMatchObject({
      flags: 0,
    });
  });
});

describe('Thread members', () => {
  it('join, add, get (with_member), list (after, limit), remove and leave (@discordjs/core)', async () => {
    const thread = await startThread(hearth, room.textId, room.member.token);
    await api.threads.join(thread);
    await call(hearth, `/channels/${thread}/thread-members/${room.other.id}`, {
      method: 'PUT',
      auth: room.member.token,
    });
    const me = await api.threads.getMember(thread, botId);
    expect(me).toMatchObject({
      id: thread,
      user_id: botId,
      flags: 0,
      join_timestamp: new Date(clock.now()).toISOString(),
    });
    const withMember = await call<Json>(
      hearth,
      `/channels/${thread}/thread-members/${room.other.id}?with_member=true`,
      {
        auth: room.member.token,
      },
    );
    expect(withMember.body).toMatchObject({
      user_id: room.other.id,
      member: { user: { id: room.other.id } },
    });
    // Listing is restricted by the GUILD_MEMBERS privileged intent: an unapproved bot gets 50001.
    await expect(api.threads.getAllMembers(thread)).rejects.toMatchObject({ status: 403, code: 50001 });
    await hearth.services.applications.adminUpdate(botApplicationId, {
      grant_flags: ['GatewayGuildMembersLimited'],
    });
    const all = await api.threads.getAllMembers(thread);
    const ids = [room.member.id, botId, room.other.id].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    expect(all.map((m) => m.user_id)).toEqual(ids);
    const page = await call<Json[]>(hearth, `/channels/${thread}/thread-members?after=${ids[0]}&limit=1`, {
      auth: room.member.token,
    });
    expect(page.body.map((m) => m['user_id'])).toEqual([ids[1]]);
    expect(await api.channels.get(thread)).toMatchObject({ member_count: 3 });

    await expect(api.threads.removeMember(thread, room.other.id)).rejects.toMatchObject({
      status: 403,
      code: 50013,
    });
    expect(
      (
        await call(hearth, `/channels/${thread}/thread-members/${room.other.id}`, {
          method: 'DELETE',
          auth: room.moderator.token,
        })
      ).status,
    ).toBe(204);
    await api.threads.leave(thread);
    expect(
      await call(hearth, `/channels/${thread}/thread-members/${botId}`, { auth: room.member.token }),
    ).toEqual({
      status: 404,
      body: UNKNOWN_MEMBER,
    });
    expect((await api.threads.getAllMembers(thread)).map((m) => m.user_id)).toEqual([room.member.id]);
  });

  it('refuses non-members of the guild, archived threads, and additions to a non-invitable private thread', async () => {
    const thread = await startThread(hearth, room.textId, room.member.token);
    const foreign = await createTestGuild(hearth);
    expect(
      await call(hearth, `/channels/${thread}/thread-members/${foreign.owner.id}`, {
        method: 'PUT',
        auth: room.member.token,
      }),
    ).toEqual({ status: 404, body: UNKNOWN_MEMBER });
    expect(
      await call(hearth, `/channels/${thread}/thread-members/@me`, {
        method: 'PUT',
        auth: foreign.owner.token,
      }),
    ).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    await patchThread(hearth, thread, room.member.token, { archived: true });
    for (const method of ['PUT', 'DELETE'])
      expect(
        await call(hearth, `/channels/${thread}/thread-members/@me`, { method, auth: room.other.token }),
      ).toEqual({
        status: 400,
        body: THREAD_ARCHIVED,
      });
    const closed = await startThread(hearth, room.textId, room.member.token, { type: 12, invitable: false });
    // Not invitable: only MANAGE_THREADS adds members, not even the creator.
    expect(
      await call(hearth, `/channels/${closed}/thread-members/${room.other.id}`, {
        method: 'PUT',
        auth: room.member.token,
      }),
    ).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    const added = await call(hearth, `/channels/${closed}/thread-members/${room.other.id}`, {
      method: 'PUT',
      auth: room.moderator.token,
    });
    expect(added.status).toBe(204);
    // The creator of a private thread may remove its members.
    expect(
      (
        await call(hearth, `/channels/${closed}/thread-members/${room.other.id}`, {
          method: 'DELETE',
          auth: room.member.token,
        })
      ).status,
    ).toBe(204);
    expect(
      await call(hearth, `/channels/${thread}/thread-members?limit=101`, { auth: room.member.token }),
    ).toMatchObject({
      status: 400,
      body: { code: 50035 },
    });
  });
});

describe('Listing threads and auto-archive (the injected clock)', () => {
  it('archives a thread once its auto_archive_duration of inactivity ran out; a message brings it back', async () => {
    const guild = await createThreadRoom(hearth);
    const thread = await startThread(hearth, guild.textId, guild.member.token, { auto_archive_duration: 60 });
    const message = await post(hearth, thread, guild.member.token, { content: 'hi' });
    const start = clock.now();
    clock.advance(59 * MINUTE);
    const active = await call<{ threads: Json[]; members: Json[] }>(
      hearth,
      `/guilds/${guild.guild.id}/threads/active`,
      {
        auth: guild.member.token,
      },
    );
    expect(active.body.threads.map((t) => t['id'])).toEqual([thread]);
    expect(active.body.members).toMatchObject([{ id: thread, user_id: guild.member.id }]);
    clock.advance(MINUTE);
    // Due but not yet swept: writes are refused as in an archived thread.
    expect(
      await call(hearth, `/channels/${thread}/messages/${message.body.id}`, {
        method: 'PATCH',
        auth: guild.member.token,
        body: { content: 'edit' },
      }),
    ).toEqual({ status: 400, body: THREAD_ARCHIVED });
    const got = await call<Json>(hearth, `/channels/${thread}`, { auth: guild.member.token });
    expect(got.body['thread_metadata']).toMatchObject({
      archived: true,
      archive_timestamp: new Date(start + 60 * MINUTE).toISOString(),
    });
    const after = await call<{ threads: Json[] }>(hearth, `/guilds/${guild.guild.id}/threads/active`, {
      auth: guild.member.token,
    });
    expect(after.body.threads).toEqual([]);
    const archived = await api.channels.getArchivedThreads(guild.textId, 'public').catch(() => undefined);
    expect(archived).toBeUndefined(); // the bot is not in this guild
    const listed = await call<{ threads: Json[]; has_more: boolean }>(
      hearth,
      `/channels/${guild.textId}/threads/archived/public`,
      { auth: guild.member.token },
    );
    expect(listed.body).toMatchObject({ threads: [{ id: thread }], has_more: false });

    expect((await post(hearth, thread, guild.member.token, { content: 'back' })).status).toBe(200);
    const back = await call<Json>(hearth, `/channels/${thread}`, { auth: guild.member.token });
    expect(back.body['thread_metadata']).toMatchObject({
      archived: false,
      archive_timestamp: new Date(clock.now()).toISOString(),
    });
  });

  it('lists archived public, private and joined private threads with before, limit and has_more', async () => {
    const guild = await createThreadRoom(hearth);
    const archive = async (type: number, token: string) => {
      const id = await startThread(hearth, guild.textId, token, { type });
      clock.advance(MINUTE);
      await patchThread(hearth, id, guild.moderator.token, { archived: true });
      return id;
    };
    const p1 = await archive(11, guild.member.token);
    const p2 = await archive(11, guild.member.token);
    const p3 = await archive(11, guild.member.token);
    const s1 = await archive(12, guild.member.token);
    const s2 = await archive(12, guild.other.token);
    const list = (path: string, token = guild.member.token) =>
      call<{ threads: Json[]; members: Json[]; has_more: boolean }>(hearth, path, { auth: token });
    const base = `/channels/${guild.textId}`;
    const first = await list(`${base}/threads/archived/public?limit=2`);
    expect(first.body.threads.map((t) => t['id'])).toEqual([p3, p2]);
    expect(first.body.has_more).toBe(true);
    expect(first.body.members.map((m) => m['id'])).toEqual([p3, p2]);
    const before = (first.body.threads[1]!['thread_metadata'] as Json)['archive_timestamp'] as string;
    const next = await list(`${base}/threads/archived/public?limit=2&before=${encodeURIComponent(before)}`);
    expect(next.body).toMatchObject({ threads: [{ id: p1 }], has_more: false });
    expect(await list(`${base}/threads/archived/private`)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const moderated = await list(`${base}/threads/archived/private`, guild.moderator.token);
    expect(moderated.body.threads.map((t) => t['id'])).toEqual([s2, s1]);
    expect(moderated.body.members).toEqual([]);
    const joined = await list(`${base}/users/@me/threads/archived/private`);
    expect(joined.body.threads.map((t) => t['id'])).toEqual([s1]);
    const joinedBefore = await list(`${base}/users/@me/threads/archived/private?before=${s1}`);
    expect(joinedBefore.body.threads).toEqual([]);
    expect((await list(`${base}/threads/archived/public?limit=1`)).body).toMatchObject({
      code: 50035,
      errors: { limit: {} },
    });
    expect((await list(`${base}/threads/archived/public?before=yesterday`)).body).toMatchObject({
      code: 50035,
      errors: { before: {} },
    });
    expect(await list(`/channels/${p1}/threads/archived/public`)).toEqual({
      status: 400,
      body: WRONG_CHANNEL_TYPE,
    });
  });

  it('GET /guilds/{id}/threads/active through @discordjs/core: threads and the bot’s memberships', async () => {
    const thread = await api.channels.createThread(room.textId, { name: 'listed', type: 11 });
    const list = await api.guilds.getActiveThreads(room.guild.id);
    expect(list.threads.map((t) => t.id)).toContain(thread.id);
    expect(list.members).toContainEqual(expect.objectContaining({ id: thread.id, user_id: botId }));
    const ids = list.threads.map((t) => BigInt(t.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : 1)));
  });
});
