import { PermissionFlags } from '@hearth/protocol';
import { Client, Events, GatewayIntentBits, type Message, Partials, type TextChannel } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame } from '../../../../test-support/oauth.js';
import { post } from './support.js';

/** Unmodified discord.js 14 sends, replies to, edits, reads and deletes messages, changing only its base URL. */

const { ViewChannel, SendMessages, ReadMessageHistory, EmbedLinks, ManageMessages } = PermissionFlags;
const BOT_PERMISSIONS = ViewChannel | SendMessages | ReadMessageHistory | EmbedLinks | ManageMessages;

let hearth: TestHearth;
let guild: TestGuild;
let member: { id: string; token: string };
let channelId: string;
let client: Client;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  guild = await createTestGuild(hearth, 'Message Hall');
  member = await addTestMember(hearth, guild);
  channelId = await seedTestChannel(hearth, guild.id, { id: String(BigInt(guild.id) + 9n), name: 'chat' });
  const game = await createGame(hearth, { name: 'chat bot' });
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['GatewayMessageContentLimited'] });
  const installed = await consent(hearth, guild.owner.token, {
    client_id: game.id,
    scope: 'bot',
    permissions: BOT_PERMISSIONS.toString(),
    guild_id: guild.id,
  });
  expect(installed.status).toBe(200);
  client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    partials: [Partials.Channel],
    rest: { api: `${hearth.url}/api` },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(game.botToken);
  await ready;
});

afterAll(async () => {
  await client.destroy();
  await hearth.close();
});

describe('discord.js 14 Client and channel messages', () => {
  it('receives a member message, replies, edits the reply, reads history and deletes', async () => {
    const channel = client.channels.cache.get(channelId) as TextChannel;
    expect(channel.name).toBe('chat');
    const received = new Promise<Message>((resolve) => client.once(Events.MessageCreate, resolve));
    const sent = await post(hearth, channelId, member.token, { content: 'hello bot' });
    const message = await received;
    expect(message.id).toBe(sent.body.id);
    expect(message.content).toBe('hello bot');
    expect(message.author.id).toBe(member.id);
    expect(message.member?.id).toBe(member.id);

    const reply = await message.reply({ content: 'hello human', embeds: [{ title: 'greeting' }] });
    expect(reply.reference?.messageId).toBe(message.id);
    expect(reply.embeds[0]?.title).toBe('greeting');
    const edited = await reply.edit('hello again');
    expect(edited.content).toBe('hello again');
    expect(edited.editedTimestamp).not.toBeNull();

    const history = await channel.messages.fetch({ limit: 10 });
    expect([...history.values()].map((m) => m.content)).toEqual(['hello again', 'hello bot']);
    const fetched = await channel.messages.fetch(message.id);
    expect(fetched.content).toBe('hello bot');

    await message.delete();
    const after = await channel.messages.fetch({ limit: 10, cache: false });
    expect([...after.keys()]).toEqual([reply.id]);
  });

  it('opens a DM with a member and sends into it', async () => {
    const user = await client.users.fetch(member.id);
    const dm = await user.send('a direct word');
    expect(dm.content).toBe('a direct word');
    expect(dm.channel.isDMBased()).toBe(true);
    expect(dm.guildId).toBeNull();
  });
});
