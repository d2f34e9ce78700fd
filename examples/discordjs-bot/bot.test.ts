import { startHearth, type TestingHearth } from '@hearth/testing';
import { Events, type Message, type RateLimitData, RESTEvents, type TextChannel } from 'discord.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Bot, startBot } from './bot.js';

/**
 * Issue 24 "Done when", through the unmodified discord.js client against Hearth's emulator: a slash command
 * answered and a button click handled (run by a scripted user); an injected 429
 * retried after `retry_after`; a forced RECONNECT and an INVALID_SESSION survived with no MESSAGE_CREATE
 * missed; a subscription renewed by advancing the clock 30 days, with its event.
 */

const FIXTURE = {
  applications: { game: { name: 'Example Bot', flags: ['GatewayMessageContentLimited'] } },
  users: { alice: { username: 'alice' } },
  guilds: {
    home: {
      name: 'Example Guild',
      owner: 'alice',
      channels: { general: { name: 'general' } },
      // VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY
      bots: [{ application: 'game', permissions: String((1 << 10) | (1 << 11) | (1 << 16)) }],
    },
  },
  skus: { premium: { application: 'game', name: 'Premium', type: 'subscription' } },
  entitlements: { alice_premium: { sku: 'premium', user: 'alice' } },
};

let hearth: TestingHearth;
let bot: Bot;

beforeAll(async () => {
  hearth = await startHearth({ fixture: FIXTURE });
  bot = await startBot(hearth.url, hearth.seeded.applications['game']?.bot_token ?? '');
  // Starting a server and logging a client in takes longer on a loaded CI machine than the default hook time.
}, 120_000);
afterAll(async () => {
  await bot?.client.destroy();
  await hearth?.close();
});
afterEach(async () => {
  await hearth.clearFaults();
});

const alice = () => hearth.seeded.users['alice'] ?? { id: '', token: '' };
const general = () => hearth.seeded.guilds['home']?.channels['general'] ?? '';
const botUserId = () => hearth.seeded.applications['game']?.bot_user_id ?? '';

/** Alice (a scripted user) says something; answers the message id. */
async function aliceSays(content: string): Promise<string> {
  const message = await hearth.act<{ id: string }>('send_message', {
    user_id: alice().id,
    channel_id: general(),
    content,
  });
  return message.id;
}

/** Resolves once the bot has seen every id in `ids`. */
async function botSaw(ids: string[]): Promise<void> {
  for (let i = 0; i < 200 && !ids.every((id) => bot.seen.includes(id)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(bot.seen.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
}

describe('examples/discordjs-bot against the Hearth emulator', () => {
  it('answers !ping', async () => {
    const ping = await aliceSays('!ping');
    await botSaw([ping]);
    const reply = await new Promise<string>((resolve) =>
      bot.client.on(Events.MessageCreate, (m) => {
        if (m.author.id === botUserId() && m.reference?.messageId === ping) resolve(m.content);
      }),
    );
    expect(reply).toBe('pong');
  });

  it('answers the /ping slash command a scripted user runs, and handles the click on its button', async () => {
    const game = hearth.seeded.applications['game']?.id ?? '';
    const guildId = hearth.seeded.guilds['home']?.id ?? '';
    await bot.client.application?.commands.create({ name: 'ping', description: 'Answers pong' }, guildId);
    const answered = new Promise<Message>((resolve) =>
      bot.client.on(Events.MessageCreate, (m) => {
        if (m.interactionMetadata?.user.id === alice().id) resolve(m);
      }),
    );
    await hearth.act('run_slash_command', {
      user_id: alice().id,
      application_id: game,
      channel_id: general(),
      name: 'ping',
    });
    const answer = await answered;
    expect(answer.content).toBe('pong');
    expect(answer.author.id).toBe(botUserId());
    expect(answer.components).toHaveLength(1);

    const edited = new Promise<Message>((resolve) =>
      bot.client.on(Events.MessageUpdate, (_old, m) => {
        if (m.id === answer.id) resolve(m as Message);
      }),
    );
    await hearth.act('click_component', {
      user_id: alice().id,
      application_id: game,
      channel_id: general(),
      message_id: answer.id,
      custom_id: 'again',
    });
    expect((await edited).content).toBe('pong again, for alice');
    const channel = (await bot.client.channels.fetch(general())) as TextChannel;
    const stored = await channel.messages.fetch(answer.id);
    expect(stored.content).toBe('pong again, for alice');
    expect(stored.components).toHaveLength(0);
  });

  it('retries a request the platform answered 429, after retry_after', async () => {
    const limited: RateLimitData[] = [];
    bot.client.rest.on(RESTEvents.RateLimited, (info) => limited.push(info));
    await hearth.injectFault({
      target: 'http',
      method: 'POST',
      path: '/channels/*/messages',
      application_id: hearth.seeded.applications['game']?.id,
      action: 'rate_limit',
      retry_after: 1,
    });
    const channel = (await bot.client.channels.fetch(general())) as TextChannel;
    const sent = await channel.send('sent after a 429');
    expect(sent.content).toBe('sent after a 429');
    expect(limited).toHaveLength(1);
    expect(limited[0]).toMatchObject({ global: false, method: 'POST', scope: 'user' });
    // The client waited the Retry-After the platform gave (1 s), plus its own offset.
    expect(limited[0]?.retryAfter).toBeGreaterThanOrEqual(1000);
    // Sent once: the 429 created nothing.
    const history = await channel.messages.fetch({ limit: 10 });
    expect(history.filter((m) => m.content === 'sent after a 429').size).toBe(1);
  });

  it('survives a forced RECONNECT (op 7) with no MESSAGE_CREATE missed', async () => {
    const resumed = new Promise<void>((resolve) => bot.client.once(Events.ShardResume, () => resolve()));
    await hearth.injectFault({
      target: 'gateway',
      user_id: botUserId(),
      event: 'MESSAGE_CREATE',
      action: 'reconnect',
    });
    const first = await aliceSays('said while the bot is told to reconnect');
    await resumed;
    const second = await aliceSays('said after the resume');
    await botSaw([first, second]);
  });

  it('survives an INVALID_SESSION (op 9, resumable) with no MESSAGE_CREATE missed', async () => {
    const resumed = new Promise<void>((resolve) => bot.client.once(Events.ShardResume, () => resolve()));
    await hearth.injectFault({
      target: 'gateway',
      user_id: botUserId(),
      event: 'MESSAGE_CREATE',
      action: 'invalid_session',
      resumable: true,
    });
    const first = await aliceSays('said while the session is invalidated');
    await resumed;
    const second = await aliceSays('said after the invalid session');
    await botSaw([first, second]);
  });

  it('sees a subscription renewed when the clock moves 30 days, with SUBSCRIPTION_UPDATE', async () => {
    const subscriptionId = hearth.seeded.entitlements['alice_premium']?.subscription_id ?? '';
    const before = await hearth.clock();
    const updated = new Promise<{ status: number; end: number }>((resolve) =>
      bot.client.once(Events.SubscriptionUpdate, (_old, subscription) =>
        resolve({ status: subscription.status, end: subscription.currentPeriodEndTimestamp ?? 0 }),
      ),
    );
    await hearth.advanceClock('30d');
    const renewed = await updated;
    // Still active (1 is INACTIVE, 2 ENDING: the seed's values), and the period now ends 60 days after it began.
    expect(renewed.status).toBe(0);
    const day = 24 * 60 * 60 * 1000;
    expect(Math.round((renewed.end - before.now_ms) / day)).toBe(60);
    expect(bot.subscriptions.get(subscriptionId)?.currentPeriodEnd).toBe(renewed.end);
  });
});
