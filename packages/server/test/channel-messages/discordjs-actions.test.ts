import { ChannelTypes, PermissionFlags } from '@hearth/protocol';
import {
  type Client,
  Events,
  GatewayIntentBits,
  type Message,
  MessageFlags,
  type MessageReaction,
  type NewsChannel,
  type TextChannel,
  type Typing,
  type User,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call } from '../guilds/core-helpers.js';
import { discordjsBot, send } from './actions-support.js';

/**
 * Unmodified discord.js 14 reacts, reads and removes reactions, forwards, crossposts, bulk-deletes and
 * types against Hearth, changing only its base URL, and reads the matching gateway events.
 */

const { ViewChannel, SendMessages, ReadMessageHistory, AddReactions, ManageMessages } = PermissionFlags;
const BOT_PERMISSIONS = ViewChannel | SendMessages | ReadMessageHistory | AddReactions | ManageMessages;

let hearth: TestHearth;
let guild: TestGuild;
let member: { id: string; token: string };
let chatId: string;
let otherId: string;
let newsId: string;
let client: Client;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  guild = await createTestGuild(hearth, 'Reaction Hall');
  member = await addTestMember(hearth, guild);
  chatId = await seedTestChannel(hearth, guild.id, { name: 'chat' });
  otherId = await seedTestChannel(hearth, guild.id, { name: 'elsewhere' });
  newsId = await seedTestChannel(hearth, guild.id, { name: 'news', type: ChannelTypes.GuildAnnouncement });
  client = await discordjsBot(hearth, guild, {
    name: 'reaction bot',
    permissions: BOT_PERMISSIONS,
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.GuildMessageReactions,
      GatewayIntentBits.GuildMessageTyping,
      GatewayIntentBits.MessageContent,
    ],
  });
});

afterAll(async () => {
  await client.destroy();
  await hearth.close();
});

/** A member's message as the bot's client received it. */
async function memberMessage(channelId: string, content: string): Promise<Message> {
  const received = new Promise<Message>((resolve) =>
    client.on(Events.MessageCreate, (message) => {
      if (message.content === content) resolve(message);
    }),
  );
  await send(hearth, member.token, channelId, { content });
  return received;
}

describe('discord.js 14 Client: reactions, forwards, crossposts, bulk delete and typing', () => {
  it('reacts, sees a member react, lists who reacted, removes a member’s reaction and then all', async () => {
    const message = await memberMessage(chatId, 'react to me');
    await message.react('👍');
    await message.react('hearth:112233445566778899');
    const added = new Promise<[MessageReaction, User]>((resolve) =>
      client.once(Events.MessageReactionAdd, (reaction, user) =>
        resolve([reaction as MessageReaction, user as User]),
      ),
    );
    const path = `/channels/${chatId}/messages/${message.id}/reactions/${encodeURIComponent('👍')}/@me`;
    expect((await call(hearth, path, { method: 'PUT', auth: member.token })).status).toBe(204);
    const [reaction, user] = await added;
    expect(user.id).toBe(member.id);
    expect(reaction.emoji.name).toBe('👍');
    expect(reaction.count).toBe(2);

    const users = await reaction.users.fetch();
    expect([...users.keys()].sort()).toEqual([client.user!.id, member.id].sort());
    await reaction.users.remove(member.id);
    const fetched = await message.fetch(true);
    expect(fetched.reactions.cache.get('👍')?.count).toBe(1);
    expect(fetched.reactions.cache.get('112233445566778899')?.emoji.name).toBe('hearth');

    await fetched.reactions.removeAll();
    expect((await message.fetch(true)).reactions.cache.size).toBe(0);
  });

  it('forwards a message into another channel with its snapshot', async () => {
    const message = await memberMessage(chatId, 'worth sharing');
    const other = client.channels.cache.get(otherId) as TextChannel;
    const forwarded = await message.forward(other);
    expect(forwarded.channelId).toBe(otherId);
    expect(forwarded.flags.has(MessageFlags.HasSnapshot)).toBe(true);
    expect(forwarded.reference?.messageId).toBe(message.id);
    expect(forwarded.messageSnapshots.first()?.content).toBe('worth sharing');
  });

  it('crossposts an announcement', async () => {
    const news = client.channels.cache.get(newsId) as NewsChannel;
    expect(news.type).toBe(ChannelTypes.GuildAnnouncement);
    const message = await news.send('release day');
    const crossposted = await message.crosspost();
    expect(crossposted.flags.has(MessageFlags.Crossposted)).toBe(true);
  });

  it('bulk-deletes messages and hears MESSAGE_DELETE_BULK', async () => {
    const channel = client.channels.cache.get(chatId) as TextChannel;
    const first = await channel.send('one');
    const second = await channel.send('two');
    const heard = new Promise<string[]>((resolve) =>
      client.once(Events.MessageBulkDelete, (messages) => resolve([...messages.keys()])),
    );
    const deleted = await channel.bulkDelete([first.id, second.id]);
    expect([...deleted.keys()].sort()).toEqual([first.id, second.id].sort());
    expect((await heard).sort()).toEqual([first.id, second.id].sort());
    const left = await channel.messages.fetch({ limit: 100, cache: false });
    expect(left.has(first.id) || left.has(second.id)).toBe(false);
  });

  it('sends typing, and hears a member typing', async () => {
    const channel = client.channels.cache.get(chatId) as TextChannel;
    await channel.sendTyping();
    // The bot's own TYPING_START reaches it too; the member's is the one awaited.
    const typing = new Promise<Typing>((resolve) =>
      client.on(Events.TypingStart, (event) => {
        if (event.user.id === member.id) resolve(event);
      }),
    );
    expect(
      (await call(hearth, `/channels/${chatId}/typing`, { method: 'POST', auth: member.token })).status,
    ).toBe(204);
    const heard = await typing;
    expect(heard.user.id).toBe(member.id);
    expect(heard.channel.id).toBe(chatId);
    expect(heard.member?.id).toBe(member.id);
  });
});
