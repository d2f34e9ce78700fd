import { MessageLimits, OverwriteTypes, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, grantTestRole, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, createRoom, invalidForm, post } from './support.js';

const { ReadMessageHistory, MentionEveryone } = PermissionFlags;

describe('nonce and enforce_nonce (seed: Message; GUILDS.md §4.5)', () => {
  let hearth: TestHearth;
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  });
  afterAll(() => hearth.close());

  const count = async (channelId: string, token: string) =>
    (await call<APIMessage[]>(hearth, `/channels/${channelId}/messages`, { auth: token })).body.length;

  it('a repeat with enforce_nonce within the window answers the first message and creates nothing', async () => {
    const room = await createRoom(hearth);
    const first = await post(hearth, room.channelId, room.member.token, {
      content: 'once',
      nonce: 'k1',
      enforce_nonce: true,
    });
    clock.advance(MessageLimits.enforceNonceWindowMs - 1000);
    const again = await post(hearth, room.channelId, room.member.token, {
      content: 'twice',
      nonce: 'k1',
      enforce_nonce: true,
    });
    expect(again).toEqual({ status: 200, body: first.body });
    expect(await count(room.channelId, room.member.token)).toBe(1);
  });

  it('after the window, without enforce_nonce, or from another author, a new message is created', async () => {
    const room = await createRoom(hearth);
    const other = await addTestMember(hearth, room.guild);
    const first = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      nonce: 77,
      enforce_nonce: true,
    });
    const plain = await post(hearth, room.channelId, room.member.token, { content: 'b', nonce: 77 });
    expect(plain.body.id).not.toBe(first.body.id);
    expect(plain.body.nonce).toBe(77);
    const theirs = await post(hearth, room.channelId, other.token, {
      content: 'c',
      nonce: 77,
      enforce_nonce: true,
    });
    expect(theirs.body.id).not.toBe(first.body.id);
    clock.advance(MessageLimits.enforceNonceWindowMs + 1);
    const late = await post(hearth, room.channelId, room.member.token, {
      content: 'd',
      nonce: 77,
      enforce_nonce: true,
    });
    expect(late.body).toMatchObject({ content: 'd' });
    expect(await count(room.channelId, room.member.token)).toBe(4);
  });
});

describe('Replies (message_reference, GUILDS.md §4.4)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it('a reply is type 19 with message_reference and referenced_message, and mentions the replied-to author', async () => {
    const room = await createRoom(hearth);
    const original = await post(hearth, room.channelId, room.owner.token, { content: 'question' });
    const reply = await post(hearth, room.channelId, room.member.token, {
      content: 'answer',
      message_reference: { message_id: original.body.id },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      type: 19,
      message_reference: {
        type: 0,
        message_id: original.body.id,
        channel_id: room.channelId,
        guild_id: room.guild.id,
      },
      referenced_message: { id: original.body.id, content: 'question', author: { id: room.owner.id } },
      mentions: [expect.objectContaining({ id: room.owner.id })],
    });
    expect(reply.body.referenced_message).not.toHaveProperty('referenced_message');
  });

  it('with allowed_mentions, the replied-to author is mentioned only with replied_user: true', async () => {
    const room = await createRoom(hearth);
    const original = await post(hearth, room.channelId, room.owner.token, { content: 'q' });
    const reference = { message_id: original.body.id };
    const quiet = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: reference,
      allowed_mentions: { parse: [] },
    });
    expect(quiet.body.mentions).toEqual([]);
    const loud = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: reference,
      allowed_mentions: { parse: [], replied_user: true },
    });
    expect(loud.body.mentions.map((user) => user.id)).toEqual([room.owner.id]);
  });

  it('an unknown message is 50035 on message_reference; fail_if_not_exists false sends a plain message', async () => {
    const room = await createRoom(hearth);
    const missing = { message_id: '123456789012345678' };
    expect(
      await post(hearth, room.channelId, room.member.token, { content: 'a', message_reference: missing }),
    ).toEqual({
      status: 400,
      body: invalidForm({
        message_reference: {
          _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }],
        },
      }),
    });
    const plain = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: { ...missing, fail_if_not_exists: false },
    });
    expect(plain.body.type).toBe(0);
    expect(plain.body).not.toHaveProperty('message_reference');
  });

  it('a message of another channel cannot be replied to here', async () => {
    const room = await createRoom(hearth);
    const elsewhere = await seedTestChannel(hearth, room.guild.id);
    const original = await post(hearth, elsewhere, room.owner.token, { content: 'there' });
    const reply = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: { message_id: original.body.id, channel_id: elsewhere },
    });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 50035, errors: { message_reference: expect.anything() } });
  });

  it('without READ_MESSAGE_HISTORY a reply is 160002', async () => {
    const room = await createRoom(hearth);
    const channelId = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.member.id, type: OverwriteTypes.Member, allow: 0n, deny: ReadMessageHistory }],
    });
    const original = await post(hearth, channelId, room.owner.token, { content: 'q' });
    expect(
      await post(hearth, channelId, room.member.token, {
        content: 'a',
        message_reference: { message_id: original.body.id },
      }),
    ).toEqual({
      status: 403,
      body: { code: 160002, message: 'Cannot reply without permission to read message history' },
    });
  });

  it('message_reference without message_id is 50035; a forward type is not a reply', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: {},
    });
    expect(sent).toEqual({
      status: 400,
      body: invalidForm({
        message_reference: {
          message_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
        },
      }),
    });
    const typed = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: { type: 7 },
    });
    expect(typed.status).toBe(400);
  });

  it('a reply whose original is deleted reads back with referenced_message null', async () => {
    const room = await createRoom(hearth);
    const original = await post(hearth, room.channelId, room.owner.token, { content: 'q' });
    const reply = await post(hearth, room.channelId, room.member.token, {
      content: 'a',
      message_reference: { message_id: original.body.id },
    });
    await call(hearth, `/channels/${room.channelId}/messages/${original.body.id}`, {
      method: 'DELETE',
      auth: room.owner.token,
    });
    const got = await call(hearth, `/channels/${room.channelId}/messages/${reply.body.id}`, {
      auth: room.member.token,
    });
    expect(got.body.referenced_message).toBeNull();
    expect(got.body.type).toBe(19);
  });
});

describe('allowed_mentions (GUILDS.md §4.6)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it('omitted: users, roles and @everyone are all parsed (with MENTION_EVERYONE)', async () => {
    const room = await createRoom(hearth);
    const roleId = await grantTestRole(hearth, room.guild, 0n, []);
    const sent = await post(hearth, room.channelId, room.owner.token, {
      content: `hi <@${room.member.id}> <@!${room.member.id}> <@&${roleId}> @everyone <@123456789012345678>`,
    });
    expect(sent.body.mentions.map((user) => user.id)).toEqual([room.member.id]);
    expect(sent.body.mention_roles).toEqual([roleId]);
    expect(sent.body.mention_everyone).toBe(true);
  });

  it('without MENTION_EVERYONE: @everyone and roles that are not mentionable do not mention', async () => {
    const room = await createRoom(hearth);
    const roleId = await grantTestRole(hearth, room.guild, 0n, []);
    const sent = await post(hearth, room.channelId, room.member.token, {
      content: `@here <@&${roleId}> <@${room.owner.id}>`,
    });
    expect(sent.body).toMatchObject({ mention_everyone: false, mention_roles: [] });
    expect(sent.body.mentions.map((user) => user.id)).toEqual([room.owner.id]);
    await grantTestRole(hearth, room.guild, MentionEveryone, [room.member.id]);
    const allowed = await post(hearth, room.channelId, room.member.token, { content: `@here <@&${roleId}>` });
    expect(allowed.body).toMatchObject({ mention_everyone: true, mention_roles: [roleId] });
  });

  it('parse: [] mentions nobody; lists name exactly who may be mentioned', async () => {
    const room = await createRoom(hearth);
    const other = await addTestMember(hearth, room.guild);
    const content = `<@${room.member.id}> <@${other.id}> @everyone`;
    const none = await post(hearth, room.channelId, room.owner.token, {
      content,
      allowed_mentions: { parse: [] },
    });
    expect(none.body).toMatchObject({ mentions: [], mention_roles: [], mention_everyone: false });
    const listed = await post(hearth, room.channelId, room.owner.token, {
      content,
      allowed_mentions: { users: [other.id] },
    });
    expect(listed.body.mentions.map((user) => user.id)).toEqual([other.id]);
    expect(listed.body.mention_everyone).toBe(false);
  });

  it('parse users with a users list (or roles with roles) is 50035; an empty list is not', async () => {
    const room = await createRoom(hearth);
    expect(
      await post(hearth, room.channelId, room.owner.token, {
        content: 'a',
        allowed_mentions: { parse: ['users'], users: [room.member.id] },
      }),
    ).toEqual({
      status: 400,
      body: invalidForm({
        allowed_mentions: {
          _errors: [
            {
              code: 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
              message: 'parse:["users"] and users: [ids...] are mutually exclusive.',
            },
          ],
        },
      }),
    });
    const roles = await post(hearth, room.channelId, room.owner.token, {
      content: 'a',
      allowed_mentions: { parse: ['roles'], roles: [room.guild.id] },
    });
    expect(roles.body).toMatchObject({ code: 50035, errors: { allowed_mentions: expect.anything() } });
    const empty = await post(hearth, room.channelId, room.owner.token, {
      content: 'a',
      allowed_mentions: { parse: ['users'], users: [] },
    });
    expect(empty.status).toBe(200);
  });

  it('100 ids per list are accepted; 101 is 50035; an unknown parse kind is 50035', async () => {
    const room = await createRoom(hearth);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => String(100000000000000000n + BigInt(i)));
    const edge = await post(hearth, room.channelId, room.owner.token, {
      content: 'a',
      allowed_mentions: { users: ids(100) },
    });
    expect(edge.status).toBe(200);
    expect(
      await post(hearth, room.channelId, room.owner.token, {
        content: 'a',
        allowed_mentions: { roles: ids(101) },
      }),
    ).toEqual({
      status: 400,
      body: invalidForm({
        allowed_mentions: {
          roles: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 100 or fewer in length.' }] },
        },
      }),
    });
    const kind = await post(hearth, room.channelId, room.owner.token, {
      content: 'a',
      allowed_mentions: { parse: ['all'] },
    });
    expect(kind.status).toBe(400);
    expect(kind.body).toMatchObject({
      code: 50035,
      errors: { allowed_mentions: { parse: expect.anything() } },
    });
  });

  it('an edit recomputes mentions from the new content', async () => {
    const room = await createRoom(hearth);
    const sent = await post(hearth, room.channelId, room.owner.token, { content: 'nobody' });
    const edited = await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      method: 'PATCH',
      auth: room.owner.token,
      body: { content: `now <@${room.member.id}>` },
    });
    expect(edited.body.mentions.map((user) => user.id)).toEqual([room.member.id]);
  });
});
