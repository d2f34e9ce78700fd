import { GatewayOpcodes } from '@hearth/protocol';
import { Client, type ClientOptions, Events } from 'discord.js';
import { expect } from 'vitest';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import type { TestGuild } from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame } from '../../../../test-support/oauth.js';
import { call, post } from './support.js';

/** Fixtures of the reaction, forwarding, bulk delete and typing suites. */

export interface SentMessage {
  id: string;
  channel_id: string;
  author: { id: string };
  flags: number;
  [key: string]: unknown;
}

/** Sends a message through POST /channels/{id}/messages; fails the test unless it is created. */
export async function send(
  hearth: TestHearth,
  auth: string,
  channelId: string,
  body: Record<string, unknown> = { content: 'hello' },
): Promise<SentMessage> {
  const { status, body: message } = await post(hearth, channelId, auth, body);
  expect(status, JSON.stringify(message)).toBe(200);
  return message as unknown as SentMessage;
}

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

/** A gateway session past READY (and, for a bot with GUILDS, its GUILD_CREATEs). */
export async function identify(
  hearth: TestHearth,
  token: string,
  intents?: number,
  guildCount = 0,
): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({
    op: GatewayOpcodes.Identify,
    d: { token, properties: PROPERTIES, ...(intents === undefined ? {} : { intents }) },
  });
  await client.nextDispatch('READY');
  for (let i = 0; i < guildCount; i++) await client.nextDispatch('GUILD_CREATE');
  return client;
}

/**
 * Published last to a guild: once a session has it, every earlier event of the guild was delivered to
 * it or withheld from it.
 */
export async function barrier(hearth: TestHearth, guild: TestGuild): Promise<void> {
  await hearth.bus.publish({ type: 'BARRIER', data: { id: guild.id }, audience: { guildId: guild.id } });
}

/** The dispatches a session got up to the barrier, in order (the barrier itself left out). */
export async function dispatchesUntilBarrier(client: GatewayClient): Promise<GatewayFrame[]> {
  const frames: GatewayFrame[] = [];
  for (;;) {
    const frame = await client.next((candidate) => candidate.op === 0);
    if (frame.t === 'BARRIER') return frames;
    frames.push(frame);
  }
}

/** Opens (or finds) the DM channel of the caller and `recipientId`; answers its id. */
export async function openDm(hearth: TestHearth, auth: string, recipientId: string): Promise<string> {
  const { status, body } = await call<{ id: string }>(hearth, '/users/@me/channels', {
    method: 'POST',
    auth,
    body: { recipient_id: recipientId },
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body.id;
}

/**
 * An unmodified discord.js 14 Client logged in as the bot of a new application (message content
 * approved) installed in `guild` with `permissions`; only its base URL points at Hearth.
 */
export async function discordjsBot(
  hearth: TestHearth,
  guild: TestGuild,
  options: { name: string; permissions: bigint } & Pick<ClientOptions, 'intents' | 'partials'>,
): Promise<Client> {
  const game = await createGame(hearth, { name: options.name });
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['GatewayMessageContentLimited'] });
  const installed = await consent(hearth, guild.owner.token, {
    client_id: game.id,
    scope: 'bot',
    permissions: options.permissions.toString(),
    guild_id: guild.id,
  });
  expect(installed.status).toBe(200);
  const client = new Client({
    intents: options.intents,
    ...(options.partials ? { partials: options.partials } : {}),
    rest: { api: `${hearth.url}/api` },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(game.botToken);
  await ready;
  return client;
}
