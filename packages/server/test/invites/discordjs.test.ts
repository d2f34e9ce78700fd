import { API } from '@discordjs/core';
import { DiscordAPIError, REST } from '@discordjs/rest';
import { GatewayIntents, GatewayOpcodes, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';

/** The main invite flows through @discordjs/core, and INVITE_CREATE / INVITE_DELETE on the gateway. */

const { ViewChannel, CreateInstantInvite, ManageChannels, ManageGuild } = PermissionFlags;
const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

let hearth: TestHearth;
let guild: TestGuild;
let channelId: string;
let bot: TestGame;
let otherBot: TestGame;
let api: API;

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth, 'Invite Hall');
  channelId = await seedTestChannel(hearth, guild.id, { name: 'welcome' });
  bot = await addTestBot(hearth, guild);
  otherBot = await addTestBot(hearth, guild);
  await grantTestRole(hearth, guild, ViewChannel | CreateInstantInvite | ManageChannels | ManageGuild, [
    bot.botUserId,
    otherBot.botUserId,
  ]);
  api = new API(new REST({ api: `${hearth.url}/api`, version: '10', retries: 0 }).setToken(bot.botToken));
});
afterAll(() => hearth.close());

async function identify(token: string, intents: number): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, properties: PROPERTIES, intents } });
  await client.nextDispatch('READY');
  await client.nextDispatch('GUILD_CREATE');
  return client;
}

/** Published last: a frame that proves every earlier event was delivered or dropped. */
function barrier() {
  return hearth.bus.publish({
    type: 'GUILD_UPDATE',
    data: { id: guild.id, barrier: true },
    audience: { guildId: guild.id },
  });
}

describe('@discordjs/core against the invite routes', () => {
  it('creates, lists (channel and guild), resolves and deletes an invite', async () => {
    const invite = await api.channels.createInvite(channelId, { max_age: 3600, max_uses: 10, unique: true });
    expect(invite).toMatchObject({
      code: expect.any(String),
      channel: { id: channelId },
      guild: { id: guild.id },
      inviter: { id: bot.botUserId },
      max_age: 3600,
      max_uses: 10,
      uses: 0,
    });
    const inChannel = await api.channels.getInvites(channelId);
    expect(inChannel.map((listed) => listed.code)).toContain(invite.code);
    const inGuild = await api.guilds.getInvites(guild.id);
    expect(inGuild.map((listed) => listed.code)).toContain(invite.code);
    const resolved = await api.invites.get(invite.code, { with_counts: true });
    expect(resolved).toMatchObject({ code: invite.code, approximate_member_count: 3 });
    const deleted = await api.invites.delete(invite.code, { reason: 'tidy' });
    expect(deleted.code).toBe(invite.code);
    const gone = await api.invites.get(invite.code).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(DiscordAPIError);
    expect((gone as DiscordAPIError).code).toBe(10006);
  });

  it('refuses max_uses 101 with a DiscordAPIError 50035', async () => {
    const error = await api.channels.createInvite(channelId, { max_uses: 101 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect((error as DiscordAPIError).code).toBe(50035);
  });
});

describe('INVITE_CREATE and INVITE_DELETE (GUILD_INVITES intent, 1 << 6)', () => {
  it('reach a bot with GUILD_INVITES and MANAGE_CHANNELS, not one without the intent', async () => {
    const withIntent = await identify(bot.botToken, GatewayIntents.Guilds | GatewayIntents.GuildInvites);
    const withoutIntent = await identify(otherBot.botToken, GatewayIntents.Guilds);
    try {
      const invite = await api.channels.createInvite(channelId, { max_age: 0, unique: true });
      const created = await withIntent.nextDispatch('INVITE_CREATE');
      expect(created.d).toEqual({
        channel_id: channelId,
        code: invite.code,
        created_at: expect.any(String),
        guild_id: guild.id,
        inviter: expect.objectContaining({ id: bot.botUserId }),
        max_age: 0,
        max_uses: 0,
        temporary: false,
        uses: 0,
        expires_at: null,
      });
      await api.invites.delete(invite.code);
      const deleted = await withIntent.nextDispatch('INVITE_DELETE');
      expect(deleted.d).toEqual({ channel_id: channelId, guild_id: guild.id, code: invite.code });
      await barrier();
      const next = await withoutIntent.next((frame) => frame.op === 0);
      expect(next.t).toBe('GUILD_UPDATE');
    } finally {
      await withIntent.close();
      await withoutIntent.close();
    }
  });
});
