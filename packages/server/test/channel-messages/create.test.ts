import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, createRoom, post } from './support.js';

describe('Create Message (POST /channels/{id}/messages)', () => {
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
    const got = await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      auth: room.owner.token,
    });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(sent.body);
    const list = await call(hearth, `/channels/${room.channelId}/messages`, { auth: room.owner.token });
    expect(list.body).toEqual([sent.body]);
  });
});
