import { MessageFlags, MessageTypes, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, grantTestRole } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  call,
  createRoom,
  EMPTY_MESSAGE,
  invalidForm,
  MISSING_PERMISSIONS,
  post,
  type Room,
  UNKNOWN_MESSAGE,
} from './support.js';

const { ManageMessages, ManageChannels } = PermissionFlags;
const OTHERS_MESSAGE = { code: 50005, message: 'Cannot edit a message authored by another user' };
const SYSTEM_MESSAGE = { code: 50021, message: 'Cannot execute action on a system message' };

describe('Edit Message and Delete Message (GUILDS.md §4.5)', () => {
  let hearth: TestHearth;
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  });
  afterAll(() => hearth.close());

  const edit = (room: Room, id: string, token: string, body: unknown) =>
    call(hearth, `/channels/${room.channelId}/messages/${id}`, { method: 'PATCH', auth: token, body });
  const remove = (room: Room, id: string, token: string) =>
    call(hearth, `/channels/${room.channelId}/messages/${id}`, { method: 'DELETE', auth: token });

  it('the author edits content: edited_timestamp is set, the rest stays', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'first', nonce: 'x' });
    clock.advance(60_000);
    const edited = await edit(room, sent.body.id, room.member.token, { content: 'second' });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      id: sent.body.id,
      content: 'second',
      timestamp: sent.body.timestamp,
    });
    expect(edited.body.edited_timestamp).toBe(new Date(clock.now()).toISOString());
    const got = await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      auth: room.owner.token,
    });
    expect(got.body.content).toBe('second');
  });

  it('an edit keeps the 2000-character limit and may not leave the message empty', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'a' });
    expect((await edit(room, sent.body.id, room.member.token, { content: 'y'.repeat(2000) })).status).toBe(
      200,
    );
    expect(await edit(room, sent.body.id, room.member.token, { content: 'y'.repeat(2001) })).toEqual({
      status: 400,
      body: invalidForm({
        content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
      }),
    });
    expect(await edit(room, sent.body.id, room.member.token, { content: '' })).toEqual({
      status: 400,
      body: EMPTY_MESSAGE,
    });
    expect(await edit(room, sent.body.id, room.member.token, { content: 3 })).toMatchObject({ status: 400 });
  });

  it("another member's content is 50005 even with MANAGE_MESSAGES; MANAGE_MESSAGES may suppress embeds", async () => {
    const room = await createRoom(hearth);
    const moderator = await addTestMember(hearth, room.guild);
    await grantTestRole(hearth, room.guild, ManageMessages, [moderator.id]);
    const sent = await post(hearth, room.channelId, room.member.token, {
      content: 'mine',
      embeds: [{ title: 'e' }],
    });
    expect(await edit(room, sent.body.id, moderator.token, { content: 'theirs' })).toEqual({
      status: 403,
      body: OTHERS_MESSAGE,
    });
    const suppressed = await edit(room, sent.body.id, moderator.token, {
      flags: MessageFlags.SuppressEmbeds,
    });
    expect(suppressed.status).toBe(200);
    expect(suppressed.body).toMatchObject({
      flags: MessageFlags.SuppressEmbeds,
      content: 'mine',
      edited_timestamp: null,
    });
  });

  it('flags of another member without MANAGE_MESSAGES: 50013', async () => {
    const room = await createRoom(hearth);
    const other = await addTestMember(hearth, room.guild);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'mine' });
    expect(await edit(room, sent.body.id, other.token, { flags: MessageFlags.SuppressEmbeds })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });

  it('an edit cannot clear IS_COMPONENTS_V2 nor set a flag that is not editable', async () => {
    const room = await createRoom(hearth);
    const v2 = await post(hearth, room.channelId, room.member.token, {
      flags: MessageFlags.IsComponentsV2,
      components: [{ type: 10, content: 'text display' }],
    });
    expect(v2.status).toBe(200);
    const cleared = await edit(room, v2.body.id, room.member.token, { flags: 0 });
    expect(cleared.body.flags).toBe(MessageFlags.IsComponentsV2);
    const bad = await edit(room, v2.body.id, room.member.token, { flags: MessageFlags.Crossposted });
    expect(bad).toEqual({
      status: 400,
      body: invalidForm({ flags: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } }),
    });
  });

  it('the author deletes: 204, then 10008', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'bye' });
    expect(await remove(room, sent.body.id, room.member.token)).toEqual({ status: 204, body: undefined });
    expect(
      await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, { auth: room.member.token }),
    ).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    expect(await remove(room, sent.body.id, room.member.token)).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    expect(await edit(room, sent.body.id, room.member.token, { content: 'x' })).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
  });

  it("another member's message: 50013 without MANAGE_MESSAGES, 204 with it (MANAGE_CHANNELS is not enough)", async () => {
    const room = await createRoom(hearth);
    const other = await addTestMember(hearth, room.guild);
    await grantTestRole(hearth, room.guild, ManageChannels, [other.id]);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'stay' });
    expect(await remove(room, sent.body.id, other.token)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    await grantTestRole(hearth, room.guild, ManageMessages, [other.id]);
    expect((await remove(room, sent.body.id, other.token)).status).toBe(204);
  });

  it('a system message can be neither deleted nor edited: 50021', async () => {
    const room = await createRoom(hearth);
    const id = '1300000000000000001';
    await hearth.storage.db
      .insertInto('messages')
      .values({
        id,
        channel_id: room.channelId,
        guild_id: room.guild.id,
        author_id: room.owner.id,
        type: MessageTypes.RecipientAdd,
        created_at: clock.now(),
        edited_at: null,
        message_reference: null,
        message_snapshots: null,
        interaction_metadata: null,
        nonce: null,
        pinned_at: null,
        webhook_id: null,
        application_id: null,
      })
      .execute();
    expect(await remove(room, id, room.owner.token)).toEqual({ status: 400, body: SYSTEM_MESSAGE });
    expect(await edit(room, id, room.owner.token, { content: 'x' })).toEqual({
      status: 400,
      body: SYSTEM_MESSAGE,
    });
  });

  it('deleting a guild channel removes its messages', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'gone with it' });
    const deleted = await call(hearth, `/channels/${room.channelId}`, {
      method: 'DELETE',
      auth: room.owner.token,
    });
    expect(deleted.status).toBe(200);
    const rows = await hearth.storage.db
      .selectFrom('messages')
      .select('id')
      .where('id', '=', sent.body.id)
      .execute();
    expect(rows).toEqual([]);
  });
});
