import {
  ActionRowBuilder,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ButtonBuilder,
  ButtonStyle,
  Client,
  Events,
  GatewayIntentBits,
  type Interaction,
  LabelBuilder,
  MessageFlags,
  ModalBuilder,
  type TextChannel,
  TextInputBuilder,
  TextInputStyle,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { click, connect, type Scene, scene } from './support.js';

/**
 * The proof: the unmodified discord.js 14 `Client`, changing only its base URL, receives
 * `interactionCreate` when a user acts through Hearth's user-side route, and answers with its own methods:
 * an ephemeral reply, a deferral and a follow-up, a modal whose submission it reads.
 */

let hearth: TestHearth;
let s: Scene;
let client: Client;
let user: GatewayClient;
let messageId: string;
/** What the bot's handlers saw, for the test to check. */
const seen: { modalName?: string; target?: string; errors: unknown[] } = { errors: [] };
const commandIds: { ping?: string; wave?: string; where?: string } = {};

beforeAll(async () => {
  hearth = await startHearth();
  s = await scene(hearth, 'discord.js interactions');
  client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: `${hearth.url}/api` } });
  client.on(Events.InteractionCreate, (interaction) => {
    void handle(interaction).catch((error: unknown) => seen.errors.push(error));
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(s.game.botToken);
  await ready;
  const channel = (await client.channels.fetch(s.channelId)) as TextChannel;
  const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
    new ButtonBuilder().setCustomId('secret').setLabel('Secret').setStyle(ButtonStyle.Primary),
    new ButtonBuilder().setCustomId('slow').setLabel('Slow').setStyle(ButtonStyle.Secondary),
    new ButtonBuilder().setCustomId('form').setLabel('Form').setStyle(ButtonStyle.Success),
  );
  const message = await channel.send({ content: 'Choose', components: [row] });
  messageId = message.id;
  // Registered through discord.js's own command manager (the commands branch's routes).
  commandIds.ping = (await client.application!.commands.create({ name: 'ping', description: 'Ping!' })).id;
  commandIds.wave = (
    await client.application!.commands.create({ name: 'Wave', type: ApplicationCommandType.User })
  ).id;
  commandIds.where = (
    await client.application!.commands.create({
      name: 'where',
      description: 'Point somewhere',
      options: [
        {
          type: ApplicationCommandOptionType.Channel,
          name: 'place',
          description: 'A channel',
          required: true,
        },
        { type: ApplicationCommandOptionType.User, name: 'who', description: 'A user', required: true },
      ],
    })
  ).id;
  user = await connect(hearth, s.member.token);
});

afterAll(async () => {
  await user.close();
  await client.destroy();
  await hearth.close();
});

/** The bot, as an app written for the platform would be. */
async function handle(interaction: Interaction): Promise<void> {
  if (interaction.isChatInputCommand() && interaction.commandName === 'ping') {
    await interaction.reply({ content: `Pong, ${interaction.user.id}` });
    return;
  }
  if (interaction.isChatInputCommand() && interaction.commandName === 'where') {
    const place = interaction.options.getChannel('place', true);
    const who = interaction.options.getMember('who') as { id: string } | null;
    await interaction.reply({ content: `${place.id} ${place.type} ${who?.id}` });
    return;
  }
  if (interaction.isUserContextMenuCommand()) {
    seen.target = interaction.targetUser.id;
    await interaction.reply({ content: `Waving at ${interaction.targetUser.id}` });
    return;
  }
  if (interaction.isButton()) {
    if (interaction.customId === 'secret') {
      await interaction.reply({ content: 'Only you can see this', flags: MessageFlags.Ephemeral });
    } else if (interaction.customId === 'slow') {
      await interaction.deferReply();
      await interaction.followUp({ content: 'Done thinking' });
      await interaction.followUp({ content: 'And one more thing' });
    } else if (interaction.customId === 'form') {
      const modal = new ModalBuilder()
        .setCustomId('profile')
        .setTitle('Profile')
        .addLabelComponents(
          new LabelBuilder()
            .setLabel('Your name')
            .setTextInputComponent(new TextInputBuilder().setCustomId('name').setStyle(TextInputStyle.Short)),
        );
      await interaction.showModal(modal);
      const submitted = await interaction.awaitModalSubmit({ time: 5_000 });
      seen.modalName = submitted.fields.getTextInputValue('name');
      await submitted.reply({ content: `Hello, ${seen.modalName}` });
    }
  }
}

type Dispatch = {
  id: string;
  content: string;
  flags: number;
  interaction_metadata?: Record<string, unknown>;
};

function run(data: Record<string, unknown>) {
  return hearth.api('/interactions', {
    method: 'POST',
    auth: s.member.token,
    body: { type: 2, application_id: s.game.id, guild_id: s.guild.id, channel_id: s.channelId, data },
  });
}

describe('discord.js 14 Client answering interactions on Hearth', () => {
  it('registers a command and answers it when the user runs it: a CHAT_INPUT_COMMAND message', async () => {
    expect((await run({ id: commandIds.ping, name: 'ping', type: 1 })).status).toBe(204);
    const reply = (await user.nextDispatch('MESSAGE_CREATE')).d as Dispatch & Record<string, unknown>;
    expect(reply).toMatchObject({
      content: `Pong, ${s.member.id}`,
      type: 20,
      webhook_id: s.game.id,
      application_id: s.game.id,
      interaction_metadata: { type: 2, name: 'ping', command_type: 1, user: { id: s.member.id } },
      interaction: { type: 2, name: 'ping', user: { id: s.member.id } },
    });
    await user.nextDispatch('INTERACTION_SUCCESS');
    expect(seen.errors).toEqual([]);
  });

  it('a user command carries its target resolved: a CONTEXT_MENU_COMMAND message with target_user', async () => {
    const response = await run({ id: commandIds.wave, name: 'Wave', type: 2, target_id: s.guild.owner.id });
    expect(response.status).toBe(204);
    const reply = (await user.nextDispatch('MESSAGE_CREATE')).d as Dispatch & Record<string, unknown>;
    expect(reply).toMatchObject({
      content: `Waving at ${s.guild.owner.id}`,
      type: 23,
      interaction_metadata: { type: 2, command_type: 2, target_user: { id: s.guild.owner.id } },
    });
    expect(seen.target).toBe(s.guild.owner.id);
    await user.nextDispatch('INTERACTION_SUCCESS');
  });

  it('resolves the users, members and channels options name, as discord.js reads them', async () => {
    const response = await run({
      id: commandIds.where,
      name: 'where',
      type: 1,
      options: [
        { type: 7, name: 'place', value: s.channelId },
        { type: 6, name: 'who', value: s.guild.owner.id },
      ],
    });
    expect(response.status).toBe(204);
    const reply = (await user.nextDispatch('MESSAGE_CREATE')).d as Dispatch;
    expect(reply.content).toBe(`${s.channelId} 0 ${s.guild.owner.id}`);
    await user.nextDispatch('INTERACTION_SUCCESS');
    const unknownUser = await run({
      id: commandIds.where,
      name: 'where',
      type: 1,
      options: [{ type: 6, name: 'who', value: '1234567890123456789' }],
    });
    expect(unknownUser.status).toBe(400);
    expect(seen.errors).toEqual([]);
  });

  it("refuses an unknown command, a name that is not the command's, and a malformed body", async () => {
    const unknown = await run({ id: '1234567890123456789', name: 'ping', type: 1 });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 10063, message: 'Unknown application command' });
    expect((await run({ id: commandIds.ping, name: 'pong', type: 1 })).status).toBe(400);
    expect((await run({ id: commandIds.ping })).status).toBe(400);
  });

  it('replies ephemerally to a button: only the user sees it, and it is not in the channel', async () => {
    expect((await click(hearth, s, messageId, 'secret')).status).toBe(204);
    const created = await user.nextDispatch('MESSAGE_CREATE');
    const d = created.d as Dispatch;
    expect(d).toMatchObject({
      content: 'Only you can see this',
      flags: 64,
      author: { id: s.game.botUserId },
    });
    expect(d.interaction_metadata).toMatchObject({
      type: 3,
      user: { id: s.member.id },
      interacted_message_id: messageId,
    });
    await user.nextDispatch('INTERACTION_SUCCESS');
    const history = await hearth.api(`/channels/${s.channelId}/messages`, { auth: s.member.token });
    const contents = ((await history.json()) as Dispatch[]).map((m) => m.content);
    expect(contents).toContain('Choose');
    expect(contents).not.toContain('Only you can see this');
    expect(seen.errors).toEqual([]);
  });

  it('defers, then follows up: the first follow-up replaces the LOADING message, the next is a new message', async () => {
    expect((await click(hearth, s, messageId, 'slow')).status).toBe(204);
    const loading = (await user.nextDispatch('MESSAGE_CREATE')).d as Dispatch;
    expect(loading.flags).toBe(128);
    const first = (await user.nextDispatch('MESSAGE_UPDATE')).d as Dispatch;
    const second = (await user.nextDispatch('MESSAGE_CREATE')).d as Dispatch;
    expect(first).toMatchObject({ id: loading.id, flags: 0 });
    expect(first.content).toBe('Done thinking');
    expect(second.content).toBe('And one more thing');
    expect(second.interaction_metadata).toMatchObject({ original_response_message_id: first.id });
    const history = await hearth.api(`/channels/${s.channelId}/messages`, { auth: s.member.token });
    const contents = ((await history.json()) as Dispatch[]).map((m) => m.content);
    expect(contents.slice(0, 2)).toEqual(['And one more thing', 'Done thinking']);
    expect(seen.errors).toEqual([]);
  });

  it('shows a modal and reads its submission with awaitModalSubmit', async () => {
    expect((await click(hearth, s, messageId, 'form')).status).toBe(204);
    const shown = await user.nextDispatch('INTERACTION_MODAL_CREATE');
    const modal = shown.d as { id: string; custom_id: string; title: string; components: unknown[] };
    expect(modal).toMatchObject({
      custom_id: 'profile',
      title: 'Profile',
      components: [{ type: 18, label: 'Your name', component: { type: 4, custom_id: 'name', style: 1 } }],
    });
    const submitted = await hearth.api('/interactions', {
      method: 'POST',
      auth: s.member.token,
      body: {
        type: 5,
        application_id: s.game.id,
        guild_id: s.guild.id,
        channel_id: s.channelId,
        data: {
          id: modal.id,
          custom_id: 'profile',
          components: [{ type: 18, component: { type: 4, custom_id: 'name', value: 'Ada' } }],
        },
      },
    });
    expect(submitted.status).toBe(204);
    const reply = (await user.nextDispatch('MESSAGE_CREATE')).d as Dispatch;
    expect(reply.content).toBe('Hello, Ada');
    expect(reply.interaction_metadata).toMatchObject({
      type: 5,
      triggering_interaction_metadata: { type: 3 },
    });
    expect(seen.modalName).toBe('Ada');
    expect(seen.errors).toEqual([]);
  });
});
