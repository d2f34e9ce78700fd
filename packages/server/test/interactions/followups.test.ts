import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { grantTokens } from '../../../../test-support/oauth.js';
import { click, connect, postComponents, type Scene, scene } from './support.js';

/**
 * Follow-ups (DOCS Create Followup Message; seed: Limits): an app that is only user-installed where the
 * interaction happened (`authorizing_integration_owners` holds USER_INSTALL alone) gets 5 follow-ups per
 * interaction; the 6th answers 40094. A guild-installed app has no such cap.
 */

let hearth: TestHearth;
let s: Scene;
let bot: GatewayClient;
let messageId: string;

type Interaction = Record<string, unknown> & { id: string; token: string; application_id: string };

async function interaction(): Promise<Interaction> {
  expect((await click(hearth, s, messageId)).status).toBe(204);
  return (await bot.nextDispatch('INTERACTION_CREATE')).d as Interaction;
}

async function respondAndFollow(i: Interaction, count: number): Promise<Response[]> {
  const answered = await hearth.api(`/interactions/${i.id}/${i.token}/callback`, {
    method: 'POST',
    body: { type: 4, data: { content: 'first' } },
  });
  expect(answered.status).toBe(204);
  const responses: Response[] = [];
  for (let n = 1; n <= count; n++) {
    responses.push(
      await hearth.api(`/webhooks/${i.application_id}/${i.token}`, {
        method: 'POST',
        body: { content: `follow-up ${n}` },
      }),
    );
  }
  return responses;
}

beforeAll(async () => {
  hearth = await startHearth();
  s = await scene(hearth, 'Followups');
  messageId = await postComponents(hearth, s);
  bot = await connect(hearth, s.game.botToken);
});

afterAll(async () => {
  await bot.close();
  await hearth.close();
});

describe('Follow-up messages', () => {
  it('a guild-installed app sends a 6th follow-up', async () => {
    const responses = await respondAndFollow(await interaction(), 6);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('a user-installed app (not in the guild) gets 5; the 6th answers 40094', async () => {
    await grantTokens(hearth, s.game, s.member.token, 'identify applications.commands');
    const kicked = await hearth.api(`/guilds/${s.guild.id}/members/${s.game.botUserId}`, {
      method: 'DELETE',
      auth: s.guild.owner.token,
    });
    expect(kicked.status).toBe(204);
    const i = await interaction();
    expect(i['authorizing_integration_owners']).toEqual({ '1': s.member.id });
    expect(i['context']).toBe(0);
    const responses = await respondAndFollow(i, 6);
    expect(responses.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = responses[5]!;
    expect(sixth.status).toBe(400);
    expect(await sixth.json()).toEqual({
      code: 40094,
      message: 'This interaction has hit the maximum number of follow up messages',
    });
    const fifth = (await responses[4]!.json()) as { interaction_metadata: Record<string, unknown> };
    expect(fifth.interaction_metadata).toMatchObject({
      authorizing_integration_owners: { '1': s.member.id },
    });
  });
});
