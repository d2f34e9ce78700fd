import { PermissionFlags } from '@hearth/protocol';
import {
  ActionRowBuilder,
  AttachmentBuilder,
  ButtonBuilder,
  ButtonStyle,
  Client,
  EmbedBuilder,
  Events,
  GatewayIntentBits,
  type Message,
  MessageFlags,
  MessageReferenceType,
  MessageType,
  type TextChannel,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild, seedTestChannel, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame, type TestGame } from '../../../../test-support/oauth.js';

/**
 * Issue 15 "Done when": the unmodified discord.js 14 Client sends a message with an embed, a file and an
 * action row, edits it, reacts, replies, forwards, and reads history — changing only its API base URL.
 */

const { ViewChannel, SendMessages, ReadMessageHistory, AddReactions, AttachFiles, EmbedLinks } =
  PermissionFlags;
const BOT_PERMISSIONS =
  ViewChannel | SendMessages | ReadMessageHistory | AddReactions | AttachFiles | EmbedLinks;

let hearth: TestHearth;
let guild: TestGuild;
let generalId: string;
let archiveId: string;
let client: Client | undefined;

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth, 'discord.js Messages');
  generalId = await seedTestChannel(hearth, guild.id, { name: 'general' });
  archiveId = await seedTestChannel(hearth, guild.id, { name: 'archive' });
});

afterAll(async () => {
  await client?.destroy();
  await hearth.close();
});

/** A bot installed through the `bot` scope, with the message-content intent its developer switched on. */
async function installedBot(): Promise<TestGame> {
  const game = await createGame(hearth, { name: 'chat bot' });
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['GatewayMessageContentLimited'] });
  const response = await consent(hearth, guild.owner.token, {
    client_id: game.id,
    scope: 'bot',
    permissions: BOT_PERMISSIONS.toString(),
    guild_id: guild.id,
  });
  expect(response.status).toBe(200);
  return game;
}

/** The next MESSAGE_CREATE the client sees that `match` accepts. */
function nextMessage(match: (message: Message) => boolean): Promise<Message> {
  return new Promise((resolve) => {
    const listener = (message: Message) => {
      if (!match(message)) return;
      client?.off(Events.MessageCreate, listener);
      resolve(message);
    };
    client?.on(Events.MessageCreate, listener);
  });
}

describe('discord.js 14 Client: guild channel messages', () => {
  it('sends an embed, a file and an action row; edits, reacts, replies, forwards and reads history', async () => {
    const game = await installedBot();
    client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.GuildMessageReactions,
        GatewayIntentBits.MessageContent,
      ],
      rest: { api: `${hearth.url}/api` },
    });
    const ready = new Promise<void>((resolve) => client?.once(Events.ClientReady, () => resolve()));
    await client.login(game.botToken);
    await ready;
    const general = client.channels.cache.get(generalId) as TextChannel;
    const archive = client.channels.cache.get(archiveId) as TextChannel;
    expect(general.name).toBe('general');

    // Send: content, an embed, a file and a row of buttons in one multipart request.
    const echoed = nextMessage((m) => m.content === 'Match over');
    const sent = await general.send({
      content: 'Match over',
      embeds: [
        new EmbedBuilder()
          .setTitle('Result')
          .setDescription('Blue wins')
          .setColor(0x3366ff)
          .addFields({ name: 'Score', value: '3-1', inline: true })
          .setFooter({ text: 'Season 4' }),
      ],
      files: [new AttachmentBuilder(Buffer.from('replay bytes'), { name: 'replay.txt' })],
      components: [
        new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId('rematch').setLabel('Rematch').setStyle(ButtonStyle.Primary),
          new ButtonBuilder()
            .setURL('https://example.com/stats')
            .setLabel('Stats')
            .setStyle(ButtonStyle.Link),
        ),
      ],
    });
    expect(sent.embeds[0]?.title).toBe('Result');
    expect(sent.embeds[0]?.fields).toEqual([{ name: 'Score', value: '3-1', inline: true }]);
    expect(sent.embeds[0]?.footer?.text).toBe('Season 4');
    const file = sent.attachments.first();
    expect(file?.name).toBe('replay.txt');
    expect(file?.size).toBe(12);
    expect(await (await fetch(file?.url ?? '')).text()).toBe('replay bytes');
    const row = sent.components[0]?.toJSON() as { components: { custom_id?: string; url?: string }[] };
    expect(row.components.map((c) => c.custom_id ?? c.url)).toEqual(['rematch', 'https://example.com/stats']);
    // The gateway delivered the same message, with its content (the bot has the message-content intent).
    const delivered = await echoed;
    expect(delivered.id).toBe(sent.id);
    expect(delivered.embeds[0]?.title).toBe('Result');

    // Edit: new content and embed; the file and the row stay.
    const edited = await sent.edit({
      content: 'Match over (final)',
      embeds: [new EmbedBuilder().setTitle('Result').setDescription('Blue wins 3-1')],
    });
    expect(edited.content).toBe('Match over (final)');
    expect(edited.editedTimestamp).not.toBeNull();
    expect(edited.embeds[0]?.description).toBe('Blue wins 3-1');
    expect(edited.attachments.first()?.name).toBe('replay.txt');
    expect(edited.components).toHaveLength(1);

    // React: the reaction is counted with `me` set.
    await edited.react('🔥');
    const reacted = await general.messages.fetch({ message: sent.id, force: true });
    const fire = reacted.reactions.cache.get('🔥');
    expect(fire?.count).toBe(1);
    expect(fire?.me).toBe(true);

    // Reply: type REPLY, pointing at the message, carrying it as referenced_message.
    const reply = await edited.reply('GG');
    expect(reply.type).toBe(MessageType.Reply);
    expect(reply.reference?.messageId).toBe(sent.id);
    expect((await reply.fetchReference()).id).toBe(sent.id);

    // Forward: a new message in another channel whose snapshot carries the original.
    const forwarded = await edited.forward(archive);
    expect(forwarded.channelId).toBe(archiveId);
    expect(forwarded.reference?.type).toBe(MessageReferenceType.Forward);
    expect(forwarded.flags.has(MessageFlags.HasSnapshot)).toBe(true);
    const snapshot = forwarded.messageSnapshots.first();
    expect(snapshot?.content).toBe('Match over (final)');
    expect(snapshot?.attachments.first()?.name).toBe('replay.txt');

    // History: newest first, both messages of #general.
    const history = await general.messages.fetch({ limit: 10 });
    expect([...history.keys()]).toEqual([reply.id, sent.id]);
    expect(history.get(sent.id)?.content).toBe('Match over (final)');
    const archived = await archive.messages.fetch({ limit: 10 });
    expect([...archived.keys()]).toEqual([forwarded.id]);
  }, 15_000);
});
