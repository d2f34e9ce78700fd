import { ChannelTypes, MessageLimits, OverwriteTypes, PermissionFlags } from '@hearth/protocol';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import {
  call,
  createRoom,
  EMPTY_MESSAGE,
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  post,
  UNKNOWN_CHANNEL,
} from './support.js';

const { ViewChannel, SendMessages, SendTTSMessages, EmbedLinks } = PermissionFlags;

describe('Create Message (POST /channels/{id}/messages; GUILDS.md §4.5)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it('a member posts text and reads it back: the full message object', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, { content: 'hello', nonce: 'n1' });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      channel_id: room.channelId,
      content: 'hello',
      author: { id: room.member.id },
      type: 0,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      embeds: [],
      components: [],
      pinned: false,
      flags: 0,
      nonce: 'n1',
      edited_timestamp: null,
    });
    expect(Date.parse(sent.body.timestamp)).not.toBeNaN();
    expect(sent.body).not.toHaveProperty('referenced_message');
    expect(sent.body).not.toHaveProperty('reactions');
    const got = await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      auth: room.owner.token,
    });
    expect(got).toEqual({ status: 200, body: sent.body });
    const list = await call<APIMessage[]>(hearth, `/channels/${room.channelId}/messages`, {
      auth: room.owner.token,
    });
    expect(list.body).toEqual([sent.body]);
  });

  it('content of 2000 characters is sent; 2001 is 50035 on content', async () => {
    const room = await createRoom(hearth);
    const edge = await post(hearth, room.channelId, room.member.token, { content: 'x'.repeat(2000) });
    expect(edge.status).toBe(200);
    expect(edge.body.content).toHaveLength(MessageLimits.contentMax);
    const over = await post(hearth, room.channelId, room.member.token, { content: 'x'.repeat(2001) });
    expect(over).toEqual({
      status: 400,
      body: invalidForm({
        content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
      }),
    });
  });

  it('a nonce of 25 characters is echoed; 26 is 50035 on nonce; an integer nonce comes back an integer', async () => {
    const room = await createRoom(hearth);
    const edge = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      nonce: 'n'.repeat(25),
    });
    expect(edge.body.nonce).toBe('n'.repeat(25));
    const integer = await post(hearth, room.channelId, room.member.token, { content: 'a', nonce: 1234567 });
    expect(integer.body.nonce).toBe(1234567);
    const over = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      nonce: 'n'.repeat(26),
    });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: 50035, errors: { nonce: expect.anything() } });
  });

  it('no content, embeds, components or stickers is 50006; so is an empty string', async () => {
    const room = await createRoom(hearth);
    for (const body of [{}, { content: '' }, { content: null, embeds: [] }]) {
      expect(await post(hearth, room.channelId, room.member.token, body)).toEqual({
        status: 400,
        body: EMPTY_MESSAGE,
      });
    }
  });

  it('wrong types are 50035 naming each field', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, {
      content: 5,
      tts: 'yes',
      embeds: {},
      nonce: { a: 1 },
    });
    expect(sent.status).toBe(400);
    expect(sent.body).toMatchObject({
      code: 50035,
      errors: {
        content: { _errors: [{ code: 'BASE_TYPE_STRING' }] },
        tts: { _errors: [{ code: 'BASE_TYPE_BOOLEAN' }] },
        embeds: { _errors: [{ code: 'LIST_TYPE_CONVERT' }] },
        nonce: expect.anything(),
      },
    });
    const notObject = await call(hearth, `/channels/${room.channelId}/messages`, {
      method: 'POST',
      auth: room.member.token,
      body: [1, 2],
    });
    expect(notObject.status).toBe(400);
  });

  it('10 embeds are sent (as rich embeds); 11 is 50035 on embeds', async () => {
    const room = await createRoom(hearth);
    const ten = Array.from({ length: 10 }, (_, i) => ({ title: `t${i}` }));
    const edge = await post(hearth, room.channelId, room.member.token, { embeds: ten });
    expect(edge.status).toBe(200);
    expect(edge.body.embeds).toHaveLength(10);
    expect(edge.body.embeds[0]).toMatchObject({ title: 't0', type: 'rich' });
    const over = await post(hearth, room.channelId, room.member.token, { embeds: [...ten, { title: 'x' }] });
    expect(over).toEqual({
      status: 400,
      body: invalidForm({
        embeds: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 10 or fewer in length.' }] },
      }),
    });
  });

  it('5 action rows are sent; a 6th is 50035 on components', async () => {
    const room = await createRoom(hearth);
    const row = { type: 1, components: [{ type: 2, style: 1, label: 'ok', custom_id: 'ok' }] };
    const edge = await post(hearth, room.channelId, room.member.token, { components: Array(5).fill(row) });
    expect(edge.status).toBe(200);
    expect(edge.body.components).toHaveLength(5);
    const over = await post(hearth, room.channelId, room.member.token, { components: Array(6).fill(row) });
    expect(over).toEqual({
      status: 400,
      body: invalidForm({
        components: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 5 or fewer in length.' }] },
      }),
    });
  });

  it('flags other than the sendable ones are 50035 on flags', async () => {
    const room = await createRoom(hearth);
    const suppressed = await post(hearth, room.channelId, room.member.token, { content: 'a', flags: 1 << 2 });
    expect(suppressed.body.flags).toBe(4);
    const crossposted = await post(hearth, room.channelId, room.member.token, { content: 'a', flags: 1 });
    expect(crossposted).toEqual({
      status: 400,
      body: invalidForm({ flags: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } }),
    });
  });

  it('sticker_ids holds at most 3', async () => {
    const room = await createRoom(hearth);
    const over = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      sticker_ids: ['1', '2', '3', '4'],
    });
    expect(over).toEqual({
      status: 400,
      body: invalidForm({
        sticker_ids: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 3 or fewer in length.' }],
        },
      }),
    });
  });

  it('a category, forum or unknown channel: 50008, 50008, 10003', async () => {
    const room = await createRoom(hearth);
    for (const type of [ChannelTypes.GuildCategory, ChannelTypes.GuildForum]) {
      const channelId = await seedTestChannel(hearth, room.guild.id, { type });
      expect(await post(hearth, channelId, room.member.token, { content: 'a' })).toEqual({
        status: 400,
        body: { code: 50008, message: 'Cannot send messages in a non-text channel' },
      });
    }
    expect(await post(hearth, '123456789012345678', room.member.token, { content: 'a' })).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
  });

  it('voice and announcement channels hold messages too', async () => {
    const room = await createRoom(hearth);
    for (const type of [ChannelTypes.GuildVoice, ChannelTypes.GuildAnnouncement]) {
      const channelId = await seedTestChannel(hearth, room.guild.id, { type });
      expect((await post(hearth, channelId, room.member.token, { content: 'a' })).status).toBe(200);
    }
  });

  it('a non-member or a member without VIEW_CHANNEL: 50001; without SEND_MESSAGES: 50013', async () => {
    const room = await createRoom(hearth);
    const stranger = await createPlayer(hearth);
    expect(await post(hearth, room.channelId, stranger.token, { content: 'a' })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    const hidden = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: OverwriteTypes.Role, allow: 0n, deny: ViewChannel }],
    });
    expect(await post(hearth, hidden, room.member.token, { content: 'a' })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    const readOnly = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: OverwriteTypes.Role, allow: 0n, deny: SendMessages }],
    });
    expect(await post(hearth, readOnly, room.member.token, { content: 'a' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect((await post(hearth, readOnly, room.owner.token, { content: 'a' })).status).toBe(200);
  });

  it('tts needs SEND_TTS_MESSAGES and embeds need EMBED_LINKS (50013)', async () => {
    const room = await createRoom(hearth);
    expect(await post(hearth, room.channelId, room.member.token, { content: 'a', tts: true })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const granted = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [
        { id: room.member.id, type: OverwriteTypes.Member, allow: SendTTSMessages, deny: EmbedLinks },
      ],
    });
    const tts = await post(hearth, granted, room.member.token, { content: 'a', tts: true });
    expect(tts.body.tts).toBe(true);
    expect(await post(hearth, granted, room.member.token, { embeds: [{ title: 't' }] })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });

  it('without a token: 401; a malformed channel id: 50035', async () => {
    const room = await createRoom(hearth);
    expect((await post(hearth, room.channelId, '', { content: 'a' })).status).toBe(401);
    const bad = await post(hearth, 'not-a-snowflake', room.member.token, { content: 'a' });
    expect(bad.status).toBe(400);
  });

  it('a channel of another guild is not reachable by a member of this one', async () => {
    const room = await createRoom(hearth);
    const other = await createTestGuild(hearth);
    const channelId = await seedTestChannel(hearth, other.id);
    expect(await post(hearth, channelId, room.member.token, { content: 'a' })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
  });
});
