/**
 * A small discord.js bot, unmodified but for its API base URL: it answers `!ping` and the `/ping` slash
 * command (with a button that edits the answer when clicked), remembers every message
 * it saw (so its tests can prove none was missed across reconnects), and keeps each player's subscription
 * as the platform last told it.
 *
 *   HEARTH_URL=http://127.0.0.1:8080 BOT_TOKEN=… npx tsx examples/discordjs-bot/bot.ts
 */
import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  Client,
  Events,
  GatewayIntentBits,
  type Message,
  type Subscription,
} from 'discord.js';

export interface Bot {
  client: Client;
  /** Ids of the messages the bot received, in order, repeats included. */
  seen: string[];
  /** The latest state of each subscription the bot was told of, by id. */
  subscriptions: Map<string, { status: number; currentPeriodEnd: number | null }>;
}

/** Builds and logs in the bot against the platform at `baseUrl` (Hearth, or any compatible server). */
export async function startBot(baseUrl: string, token: string): Promise<Bot> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: `${baseUrl.replace(/\/+$/, '')}/api` },
  });
  const bot: Bot = { client, seen: [], subscriptions: new Map() };
  client.on(Events.MessageCreate, (message: Message) => {
    bot.seen.push(message.id);
    if (message.content === '!ping' && !message.author.bot) void message.reply('pong');
  });
  client.on(Events.InteractionCreate, (interaction) => {
    if (interaction.isChatInputCommand() && interaction.commandName === 'ping') {
      const again = new ButtonBuilder().setCustomId('again').setLabel('Again').setStyle(ButtonStyle.Primary);
      void interaction.reply({
        content: 'pong',
        components: [new ActionRowBuilder<ButtonBuilder>().addComponents(again)],
      });
    } else if (interaction.isButton() && interaction.customId === 'again') {
      void interaction.update({ content: `pong again, for ${interaction.user.username}`, components: [] });
    }
  });
  const remember = (subscription: Subscription) =>
    bot.subscriptions.set(subscription.id, {
      status: subscription.status,
      currentPeriodEnd: subscription.currentPeriodEndTimestamp,
    });
  client.on(Events.SubscriptionCreate, remember);
  client.on(Events.SubscriptionUpdate, (_old, subscription) => remember(subscription));
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(token);
  await ready;
  return bot;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ''))) {
  const bot = await startBot(
    process.env['HEARTH_URL'] ?? 'http://127.0.0.1:8080',
    process.env['BOT_TOKEN'] ?? '',
  );
  console.log(`logged in as ${bot.client.user?.tag}`);
}
