import { ChannelTypes, GatewayIntents, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  seedTestChannel,
  setEveryonePermissions,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, MISSING_ACCESS, MISSING_PERMISSIONS } from '../guilds/core-helpers.js';
import { barrier, dispatchesUntilBarrier, identify, openDm } from './actions-support.js';

const { ViewChannel, SendMessages, ReadMessageHistory } = PermissionFlags;
const NOW = Date.parse('2026-04-02T10:20:30.999Z');

describe('Trigger Typing Indicator (POST /channels/{id}/typing) and TYPING_START', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({}, new ManualClock(NOW));
  });
  afterAll(() => hearth.close());

  async function setup() {
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, guild, ViewChannel | SendMessages | ReadMessageHistory);
    const channelId = await seedTestChannel(hearth, guild.id);
    const member = await addTestMember(hearth, guild);
    return { guild, channelId, member };
  }

  const typing = (channelId: string, auth: string) =>
    call(hearth, `/channels/${channelId}/typing`, { method: 'POST', auth });

  it('answers 204; a bot with GUILD_MESSAGE_TYPING gets TYPING_START with the time in seconds and the member', async () => {
    const { guild, channelId, member } = await setup();
    const game = await addTestBot(hearth, guild);
    const client = await identify(
      hearth,
      game.botToken,
      GatewayIntents.Guilds | GatewayIntents.GuildMessageTyping,
      1,
    );
    expect(await typing(channelId, member.token)).toEqual({ status: 204, body: undefined });
    await barrier(hearth, guild);
    const frames = await dispatchesUntilBarrier(client);
    expect(frames.map((frame) => frame.t)).toEqual(['TYPING_START']);
    expect(frames[0]!.d).toEqual({
      channel_id: channelId,
      guild_id: guild.id,
      user_id: member.id,
      timestamp: Math.floor(NOW / 1000),
      member: expect.objectContaining({
        user: expect.objectContaining({ id: member.id }),
        roles: [],
        joined_at: expect.any(String),
        deaf: false,
        mute: false,
      }),
    });
    await client.close();
  });

  it('no TYPING_START reaches a bot without the intent, nor one that cannot view the channel', async () => {
    const { guild, member } = await setup();
    const without = await addTestBot(hearth, guild);
    const blind = await addTestBot(hearth, guild);
    const hidden = await seedTestChannel(hearth, guild.id, {
      overwrites: [{ id: blind.botUserId, type: 1, allow: 0n, deny: ViewChannel }],
    });
    const clients = [
      await identify(hearth, without.botToken, GatewayIntents.Guilds | GatewayIntents.GuildMessages, 1),
      await identify(hearth, blind.botToken, GatewayIntents.Guilds | GatewayIntents.GuildMessageTyping, 1),
    ];
    expect((await typing(hidden, member.token)).status).toBe(204);
    await barrier(hearth, guild);
    for (const client of clients) {
      expect(await dispatchesUntilBarrier(client)).toEqual([]);
      await client.close();
    }
  });

  it('SEND_MESSAGES is needed (50013); VIEW_CHANNEL (50001); membership (50001)', async () => {
    const { guild, channelId, member } = await setup();
    await setEveryonePermissions(hearth, guild, ViewChannel | ReadMessageHistory);
    expect(await typing(channelId, member.token)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    await setEveryonePermissions(hearth, guild, SendMessages);
    expect(await typing(channelId, member.token)).toEqual({ status: 403, body: MISSING_ACCESS });
    const stranger = await createTestGuild(hearth);
    expect(await typing(channelId, stranger.owner.token)).toEqual({ status: 403, body: MISSING_ACCESS });
  });

  it('an unknown channel is 10003; a category (no messages) is 50008; a bad id is 50035', async () => {
    const { guild } = await setup();
    expect(await typing('123456789012345678', guild.owner.token)).toEqual({
      status: 404,
      body: { code: 10003, message: 'Unknown Channel' },
    });
    const category = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildCategory });
    expect(await typing(category, guild.owner.token)).toEqual({
      status: 400,
      body: { code: 50008, message: 'Cannot send messages in a non-text channel' },
    });
    const { status, body } = await typing('nope', guild.owner.token);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 50035 });
  });

  it('in a DM, the other participant’s bot session gets TYPING_START with DIRECT_MESSAGE_TYPING, without guild or member', async () => {
    const { guild, member } = await setup();
    const game = await addTestBot(hearth, guild);
    const dmId = await openDm(hearth, `Bot ${game.botToken}`, member.id);
    const client = await identify(hearth, game.botToken, GatewayIntents.DirectMessageTyping);
    expect((await typing(dmId, member.token)).status).toBe(204);
    const frame = await client.nextDispatch('TYPING_START');
    expect(frame.d).toEqual({ channel_id: dmId, user_id: member.id, timestamp: Math.floor(NOW / 1000) });
    await client.close();
  });
});
