import { GatewayOpcodes } from '@hearth/protocol';
import { expect } from 'vitest';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import type { TestGuild } from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { post } from './support.js';

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
