import { PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, addTestMember, grantTestRole } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, createRoom, post, type Room } from './support.js';

const { ManageMessages, ManageChannels, BypassSlowmode, SendMessages, ViewChannel } = PermissionFlags;
const SLOWMODE = 'This action cannot be performed due to slowmode rate limit';

/** A room whose channel has `seconds` of slowmode, set by its owner through the channel route. */
async function slowRoom(hearth: TestHearth, seconds: number): Promise<Room> {
  const room = await createRoom(hearth);
  const patched = await call(hearth, `/channels/${room.channelId}`, {
    method: 'PATCH',
    auth: room.owner.token,
    body: { rate_limit_per_user: seconds },
  });
  expect(patched.status).toBe(200);
  return room;
}

describe('Slowmode (rate_limit_per_user; GUILDS.md §1.1, §2.2)', () => {
  describe('on 1 March 2026 (after the 23 February 2026 permission change)', () => {
    let hearth: TestHearth;
    const clock = new ManualClock('2026-03-01T12:00:00Z');
    beforeAll(async () => {
      hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    });
    afterAll(() => hearth.close());

    it('a second message within the period is 429 with 20016 and retry_after; at the end of it, sent', async () => {
      const room = await slowRoom(hearth, 10);
      expect((await post(hearth, room.channelId, room.member.token, { content: '1' })).status).toBe(200);
      clock.advance(4_000);
      expect(await post(hearth, room.channelId, room.member.token, { content: '2' })).toEqual({
        status: 429,
        body: { code: 20016, message: SLOWMODE, retry_after: 6, global: false },
      });
      const raw = await hearth.api(`/channels/${room.channelId}/messages`, {
        method: 'POST',
        auth: room.member.token,
        body: { content: '2' },
      });
      expect(raw.headers.get('retry-after')).toBe('6');
      clock.advance(5_999);
      const edge = await post(hearth, room.channelId, room.member.token, { content: '2' });
      expect(edge).toEqual({
        status: 429,
        body: { code: 20016, message: SLOWMODE, retry_after: 0.001, global: false },
      });
      clock.advance(1);
      expect((await post(hearth, room.channelId, room.member.token, { content: '2' })).status).toBe(200);
    });

    it('the period is per member and per channel; a refused message stores nothing', async () => {
      const room = await slowRoom(hearth, 60);
      const other = await addTestMember(hearth, room.guild);
      await post(hearth, room.channelId, room.member.token, { content: 'mine' });
      expect((await post(hearth, room.channelId, other.token, { content: 'theirs' })).status).toBe(200);
      expect((await post(hearth, room.channelId, room.member.token, { content: 'again' })).status).toBe(429);
      const history = await call<unknown[]>(hearth, `/channels/${room.channelId}/messages`, {
        auth: room.owner.token,
      });
      expect(history.body).toHaveLength(2);
    });

    it('MANAGE_MESSAGES and MANAGE_CHANNELS no longer exempt; BYPASS_SLOWMODE does; bots are never limited', async () => {
      const room = await slowRoom(hearth, 60);
      await grantTestRole(hearth, room.guild, ManageMessages | ManageChannels, [room.member.id]);
      await post(hearth, room.channelId, room.member.token, { content: '1' });
      expect((await post(hearth, room.channelId, room.member.token, { content: '2' })).status).toBe(429);
      const bypassing = await addTestMember(hearth, room.guild);
      await grantTestRole(hearth, room.guild, BypassSlowmode, [bypassing.id]);
      for (const content of ['1', '2', '3'])
        expect((await post(hearth, room.channelId, bypassing.token, { content })).status).toBe(200);
      const bot = await addTestBot(hearth, room.guild);
      await grantTestRole(hearth, room.guild, ViewChannel | SendMessages, [bot.botUserId]);
      for (const content of ['1', '2'])
        expect((await post(hearth, room.channelId, `Bot ${bot.botToken}`, { content })).status).toBe(200);
    });
  });

  describe('on 10 January 2026 (before the change)', () => {
    let hearth: TestHearth;
    const clock = new ManualClock('2026-01-10T12:00:00Z');
    beforeAll(async () => {
      hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    });
    afterAll(() => hearth.close());

    it('MANAGE_MESSAGES or MANAGE_CHANNELS still exempt; a plain member is limited', async () => {
      const room = await slowRoom(hearth, 60);
      const moderator = await addTestMember(hearth, room.guild);
      await grantTestRole(hearth, room.guild, ManageMessages, [moderator.id]);
      const manager = await addTestMember(hearth, room.guild);
      await grantTestRole(hearth, room.guild, ManageChannels, [manager.id]);
      for (const user of [moderator, manager])
        for (const content of ['1', '2'])
          expect((await post(hearth, room.channelId, user.token, { content })).status).toBe(200);
      await post(hearth, room.channelId, room.member.token, { content: '1' });
      expect((await post(hearth, room.channelId, room.member.token, { content: '2' })).status).toBe(429);
    });
  });
});
