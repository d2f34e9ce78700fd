import { ChannelTypes, GatewayIntents, MessageFlags, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  setEveryonePermissions,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, MISSING_PERMISSIONS } from '../guilds/core-helpers.js';
import { barrier, dispatchesUntilBarrier, identify, send } from './actions-support.js';

const { ViewChannel, SendMessages, ReadMessageHistory, ManageMessages } = PermissionFlags;
const ALREADY = { code: 40033, message: 'This message has already been crossposted' };
const WRONG_TYPE = { code: 50024, message: 'Cannot execute action on this channel type' };

describe('Crosspost Message (POST /channels/{id}/messages/{mid}/crosspost)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth();
  });
  afterAll(() => hearth.close());

  async function setup() {
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, guild, ViewChannel | SendMessages | ReadMessageHistory);
    const channelId = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildAnnouncement });
    const member = await addTestMember(hearth, guild);
    return { guild, channelId, member };
  }

  const crosspost = (channelId: string, messageId: string, auth: string) =>
    call(hearth, `/channels/${channelId}/messages/${messageId}/crosspost`, { method: 'POST', auth });

  it('marks an announcement CROSSPOSTED, answers the message and sends MESSAGE_UPDATE; a second time is 40033', async () => {
    const { guild, channelId } = await setup();
    const game = await addTestBot(hearth, guild);
    const message = await send(hearth, guild.owner.token, channelId, { content: 'patch notes' });
    const client = await identify(
      hearth,
      game.botToken,
      GatewayIntents.Guilds | GatewayIntents.GuildMessages,
      1,
    );
    const { status, body } = await crosspost(channelId, message.id, guild.owner.token);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: message.id, channel_id: channelId, flags: MessageFlags.Crossposted });
    await barrier(hearth, guild);
    const frames = await dispatchesUntilBarrier(client);
    expect(frames.map((frame) => [frame.t, (frame.d as { id: string; flags: number }).flags])).toEqual([
      ['MESSAGE_UPDATE', MessageFlags.Crossposted],
    ]);
    await client.close();
    expect(await crosspost(channelId, message.id, guild.owner.token)).toEqual({ status: 400, body: ALREADY });
    const read = await call(hearth, `/channels/${channelId}/messages/${message.id}`, {
      auth: guild.owner.token,
    });
    expect((read.body as { flags: number }).flags).toBe(MessageFlags.Crossposted);
  });

  it('a text channel is 50024; a channel without messages (category) is 50008', async () => {
    const { guild } = await setup();
    const text = await seedTestChannel(hearth, guild.id);
    const message = await send(hearth, guild.owner.token, text);
    expect(await crosspost(text, message.id, guild.owner.token)).toEqual({ status: 400, body: WRONG_TYPE });
    const category = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildCategory });
    expect(await crosspost(category, message.id, guild.owner.token)).toEqual({
      status: 400,
      body: { code: 50008, message: 'Cannot send messages in a non-text channel' },
    });
  });

  it('one’s own message needs SEND_MESSAGES; another’s needs MANAGE_MESSAGES', async () => {
    const { guild, channelId, member } = await setup();
    const own = await send(hearth, member.token, channelId);
    const owners = await send(hearth, guild.owner.token, channelId);
    expect(await crosspost(channelId, owners.id, member.token)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await setEveryonePermissions(hearth, guild, ViewChannel | ReadMessageHistory);
    expect(await crosspost(channelId, own.id, member.token)).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, ManageMessages, [member.id]);
    expect((await crosspost(channelId, owners.id, member.token)).status).toBe(200);
    await setEveryonePermissions(hearth, guild, ViewChannel | ReadMessageHistory | SendMessages);
    expect((await crosspost(channelId, own.id, member.token)).status).toBe(200);
  });

  it('an unknown message is 10008', async () => {
    const { guild, channelId } = await setup();
    expect(await crosspost(channelId, '123456789012345678', guild.owner.token)).toEqual({
      status: 404,
      body: { code: 10008, message: 'Unknown Message' },
    });
  });
});
