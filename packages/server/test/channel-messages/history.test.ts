import { OverwriteTypes, PermissionFlags } from '@hearth/protocol';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  call,
  createRoom,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  post,
  type Room,
  UNKNOWN_MESSAGE,
} from './support.js';

const { ReadMessageHistory, ViewChannel } = PermissionFlags;

describe('Get Channel Messages and Get Channel Message (GUILDS.md §4.5)', () => {
  let hearth: TestHearth;
  let room: Room;
  /** 120 messages, oldest first. */
  const ids: string[] = [];
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
    room = await createRoom(hearth);
    for (let i = 0; i < 120; i++) {
      const sent = await post(hearth, room.channelId, room.member.token, { content: `m${i}` });
      ids.push(sent.body.id);
    }
  });
  afterAll(() => hearth.close());

  const list = (query: string, token = room.member.token) =>
    call<APIMessage[]>(hearth, `/channels/${room.channelId}/messages${query}`, { auth: token });
  const contents = (messages: APIMessage[]) => messages.map((message) => message.content);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `m${to - i}`);

  it('without a query: the 50 newest, newest first', async () => {
    const page = await list('');
    expect(page.status).toBe(200);
    expect(contents(page.body)).toEqual(range(70, 119));
  });

  it('limit 1 and 100 are served; 0 and 101 are 50035 on limit', async () => {
    expect(contents((await list('?limit=1')).body)).toEqual(['m119']);
    expect((await list('?limit=100')).body).toHaveLength(100);
    for (const [limit, leaf] of [
      [0, { code: 'NUMBER_TYPE_MIN', message: 'int value should be greater than or equal to 1.' }],
      [101, { code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 100.' }],
    ] as const) {
      const page = await list(`?limit=${limit}`);
      expect(page.status).toBe(400);
      expect(page.body).toMatchObject({ code: 50035, errors: { limit: { _errors: [leaf] } } });
    }
    expect((await list('?limit=abc')).status).toBe(400);
  });

  it('before: older than the id, newest first', async () => {
    expect(contents((await list(`?before=${ids[10]}&limit=5`)).body)).toEqual(range(5, 9));
    expect((await list(`?before=${ids[0]}`)).body).toEqual([]);
  });

  it('after: newer than the id, the page nearest to it, newest first', async () => {
    expect(contents((await list(`?after=${ids[10]}&limit=5`)).body)).toEqual(range(11, 15));
    expect((await list(`?after=${ids[119]}`)).body).toEqual([]);
  });

  it('around: the message itself and those on both sides', async () => {
    expect(contents((await list(`?around=${ids[50]}&limit=5`)).body)).toEqual(range(48, 52));
    expect(contents((await list(`?around=${ids[50]}&limit=1`)).body)).toEqual(['m50']);
  });

  it('a malformed id in the query is 50035', async () => {
    const page = await list('?before=abc');
    expect(page.status).toBe(400);
    expect(page.body).toMatchObject({ code: 50035, errors: { before: expect.anything() } });
  });

  it('without READ_MESSAGE_HISTORY the list is empty and one message is 50013', async () => {
    const channelId = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.member.id, type: OverwriteTypes.Member, allow: 0n, deny: ReadMessageHistory }],
    });
    const sent = await post(hearth, channelId, room.owner.token, { content: 'secret past' });
    const page = await call(hearth, `/channels/${channelId}/messages`, { auth: room.member.token });
    expect(page).toEqual({ status: 200, body: [] });
    expect(
      await call(hearth, `/channels/${channelId}/messages/${sent.body.id}`, { auth: room.member.token }),
    ).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    // The member may still write there.
    expect((await post(hearth, channelId, room.member.token, { content: 'hi' })).status).toBe(200);
  });

  it('without VIEW_CHANNEL both are 50001', async () => {
    const channelId = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.member.id, type: OverwriteTypes.Member, allow: 0n, deny: ViewChannel }],
    });
    const sent = await post(hearth, channelId, room.owner.token, { content: 'hidden' });
    expect(await call(hearth, `/channels/${channelId}/messages`, { auth: room.member.token })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(
      await call(hearth, `/channels/${channelId}/messages/${sent.body.id}`, { auth: room.member.token }),
    ).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
  });

  it('an unknown message, or one of another channel, is 10008', async () => {
    expect(
      await call(hearth, `/channels/${room.channelId}/messages/123456789012345678`, {
        auth: room.member.token,
      }),
    ).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    const other = await seedTestChannel(hearth, room.guild.id);
    expect(await call(hearth, `/channels/${other}/messages/${ids[0]}`, { auth: room.member.token })).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
  });
});
