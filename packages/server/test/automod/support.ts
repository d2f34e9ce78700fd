import { GatewayOpcodes } from '@hearth/protocol';
import { GatewayClient } from '../../../../test-support/gateway.js';
import type { TestGuild } from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { call } from '../guilds/core-helpers.js';

/** The AutoMod suites' shared steps: rule requests and gateway sessions. */

export const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };

export const rulesPath = (guildId: string) => `/guilds/${guildId}/auto-moderation/rules`;

/** A rule body with sensible defaults: a keyword rule that blocks, named after `name`. */
export function ruleBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'rule',
    event_type: 1,
    trigger_type: 1,
    trigger_metadata: { keyword_filter: ['forbidden'] },
    actions: [{ type: 1 }],
    enabled: true,
    ...overrides,
  };
}

/** Creates a rule as the guild's owner; answers the created rule object (expects 200). */
export async function createRule(
  hearth: TestHearth,
  guild: TestGuild,
  overrides: Record<string, unknown> = {},
): Promise<Record<string, unknown> & { id: string }> {
  const { status, body } = await call(hearth, rulesPath(guild.id), {
    method: 'POST',
    auth: guild.owner.token,
    body: ruleBody(overrides),
  });
  if (status !== 200) throw new Error(`rule not created: ${status} ${JSON.stringify(body)}`);
  return body as Record<string, unknown> & { id: string };
}

/** A gateway session identified with `token` (and `intents` for a bot), past READY. */
export async function identify(hearth: TestHearth, token: string, intents?: number): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({
    op: 2,
    d: { token, properties: PROPERTIES, ...(intents === undefined ? {} : { intents }) },
  });
  await client.nextDispatch('READY');
  return client;
}

/**
 * Published last: a frame (of a type no intent or permission holds back) that proves every earlier event
 * of the guild was delivered or dropped.
 */
export async function barrier(hearth: TestHearth, client: GatewayClient, guild: TestGuild): Promise<void> {
  const marker = `barrier-${Math.random()}`;
  await hearth.bus.publish({ type: 'BARRIER', data: { marker }, audience: { guildId: guild.id } });
  await client.next((frame) => frame.t === 'BARRIER' && (frame.d as { marker?: unknown }).marker === marker);
}

/** The dispatch types a client received so far. */
export function dispatchTypes(client: GatewayClient): string[] {
  return client.frames.flatMap((frame) => (frame.op === 0 && frame.t ? [frame.t] : []));
}
