import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { click, connect, postComponents, type Scene, scene } from './support.js';

/**
 * DOCS receiving-and-responding: the callback route's types, the 3-second rule, the 15-minute token, the
 * original response and follow-ups, the ephemeral flag; the clock is moved, never waited for.
 */

const clock = new ManualClock('2026-03-01T00:00:00Z');
let hearth: TestHearth;
let s: Scene;
let bot: GatewayClient;
let user: GatewayClient;
let owner: GatewayClient;
let messageId: string;

type Interaction = { id: string; token: string; application_id: string };

/** The member clicks; the bot's session receives the interaction. */
async function interaction(customId = 'go', nonce?: string): Promise<Interaction> {
  const response = await click(hearth, s, messageId, customId, nonce);
  expect(response.status).toBe(204);
  const frame = await bot.nextDispatch('INTERACTION_CREATE');
  await user.nextDispatch('INTERACTION_CREATE');
  return frame.d as Interaction;
}

function callback(i: Interaction, body: unknown, query = '') {
  return hearth.api(`/interactions/${i.id}/${i.token}/callback${query}`, { method: 'POST', body });
}

function webhook(i: Interaction, path = '', init: { method?: string; body?: unknown } = {}) {
  return hearth.api(`/webhooks/${i.application_id}/${i.token}${path}`, init);
}

beforeAll(async () => {
  hearth = await startHearth({}, clock);
  s = await scene(hearth, 'Responses');
  messageId = await postComponents(hearth, s);
  bot = await connect(hearth, s.game.botToken);
  user = await connect(hearth, s.member.token);
  owner = await connect(hearth, s.guild.owner.token);
});

afterAll(async () => {
  for (const client of [bot, user, owner]) await client.close();
  await hearth.close();
});

describe('Interaction over the gateway (no endpoint)', () => {
  it('reaches the bot with the full object, and the user with {id, nonce}', async () => {
    const response = await click(hearth, s, messageId, 'go', 'abc');
    expect(response.status).toBe(204);
    const frame = await bot.nextDispatch('INTERACTION_CREATE');
    const created = await user.nextDispatch('INTERACTION_CREATE');
    const d = frame.d as Interaction & Record<string, unknown>;
    expect(created.d).toEqual({ id: d.id, nonce: 'abc' });
    expect(d).toMatchObject({
      type: 3,
      guild_id: s.guild.id,
      channel: { id: s.channelId, type: 0 },
      version: 1,
    });
    expect(await callback(d, { type: 6 })).toHaveProperty('status', 204);
    expect((await user.nextDispatch('INTERACTION_SUCCESS')).d).toEqual({ id: d.id, nonce: 'abc' });
  });
});

describe('Callback types', () => {
  it('CHANNEL_MESSAGE_WITH_SOURCE with_response answers the interaction callback response', async () => {
    const i = await interaction();
    const response = await callback(i, { type: 4, data: { content: 'hello' } }, '?with_response=true');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { resource: { message: { id: string } } };
    expect(body).toMatchObject({
      interaction: {
        id: i.id,
        type: 3,
        response_message_id: body.resource.message.id,
        response_message_loading: false,
        response_message_ephemeral: false,
      },
      resource: { type: 4, message: { content: 'hello', webhook_id: s.game.id } },
    });
    const original = await webhook(i, '/messages/@original');
    expect(original.status).toBe(200);
    expect(await original.json()).toMatchObject({ id: body.resource.message.id, content: 'hello' });
  });

  it('a second initial response answers 40060', async () => {
    const i = await interaction();
    expect((await callback(i, { type: 6 })).status).toBe(204);
    const again = await callback(i, { type: 4, data: { content: 'late' } });
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ code: 40060, message: 'Interaction has already been acknowledged' });
  });

  it('an ephemeral reply reaches only its user and stays out of channel history', async () => {
    const i = await interaction();
    expect((await callback(i, { type: 4, data: { content: 'secret', flags: 64 } })).status).toBe(204);
    const seen = await user.nextDispatch('MESSAGE_CREATE');
    expect(seen.d).toMatchObject({ content: 'secret', flags: 64 });
    const id = (seen.d as { id: string }).id;
    const history = await hearth.api(`/channels/${s.channelId}/messages`, { auth: s.guild.owner.token });
    expect(((await history.json()) as { id: string }[]).map((m) => m.id)).not.toContain(id);
    const direct = await hearth.api(`/channels/${s.channelId}/messages/${id}`, { auth: s.member.token });
    expect(direct.status).toBe(404);
    // The owner's session saw no MESSAGE_CREATE for it.
    expect(owner.pending().some((f) => f.t === 'MESSAGE_CREATE' && (f.d as { id: string }).id === id)).toBe(
      false,
    );
  });

  it('UPDATE_MESSAGE edits the message the component is on', async () => {
    const i = await interaction();
    expect((await callback(i, { type: 7, data: { content: 'Picked' } })).status).toBe(204);
    const read = await hearth.api(`/channels/${s.channelId}/messages/${messageId}`, { auth: s.member.token });
    expect(await read.json()).toMatchObject({ id: messageId, content: 'Picked' });
  });

  it('DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE shows a LOADING message that editing @original replaces', async () => {
    const i = await interaction();
    const response = await callback(i, { type: 5 }, '?with_response=true');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { interaction: { response_message_id: string } };
    const loadingId = body.interaction.response_message_id;
    expect(body).toEqual({
      interaction: {
        id: i.id,
        type: 3,
        response_message_id: loadingId,
        response_message_loading: true,
        response_message_ephemeral: false,
      },
    });
    const created = await owner.next(
      (f) => f.t === 'MESSAGE_CREATE' && (f.d as { id: string }).id === loadingId,
    );
    expect(created.d).toMatchObject({
      flags: 128,
      content: '',
      channel_id: s.channelId,
      author: { id: s.game.botUserId, bot: true },
      interaction_metadata: { id: i.id, type: 3, user: { id: s.member.id } },
    });
    const edited = await webhook(i, '/messages/@original', { method: 'PATCH', body: { content: 'ready' } });
    expect(edited.status).toBe(200);
    expect(await edited.json()).toMatchObject({
      id: loadingId,
      content: 'ready',
      flags: 0,
      edited_timestamp: null,
    });
    const updated = await owner.next(
      (f) => f.t === 'MESSAGE_UPDATE' && (f.d as { id: string }).id === loadingId,
    );
    expect(updated.d).toMatchObject({ content: 'ready', flags: 0 });
    const read = await hearth.api(`/channels/${s.channelId}/messages/${loadingId}`, { auth: s.member.token });
    expect(await read.json()).toMatchObject({ content: 'ready', flags: 0 });
  });

  it('an ephemeral deferral shows its LOADING message to the user alone; a follow-up replaces it', async () => {
    const i = await interaction();
    expect((await callback(i, { type: 5, data: { flags: 64 } })).status).toBe(204);
    const loading = await user.nextDispatch('MESSAGE_CREATE');
    const loadingId = (loading.d as { id: string }).id;
    expect(loading.d).toMatchObject({ flags: 64 | 128, interaction_metadata: { id: i.id } });
    const followup = await webhook(i, '', { method: 'POST', body: { content: 'thought it through' } });
    expect(followup.status).toBe(200);
    expect(await followup.json()).toMatchObject({ id: loadingId, content: 'thought it through', flags: 64 });
    const updated = await user.nextDispatch('MESSAGE_UPDATE');
    expect(updated.d).toMatchObject({ id: loadingId, flags: 64 });
    // Neither the placeholder nor its replacement reached anyone else.
    expect(owner.pending().some((f) => (f.d as { id?: string } | null)?.id === loadingId)).toBe(false);
    const second = await webhook(i, '', { method: 'POST', body: { content: 'another' } });
    expect(await second.json()).toMatchObject({
      interaction_metadata: { original_response_message_id: loadingId },
    });
  });

  it('refuses types this interaction does not take, and malformed bodies', async () => {
    const i = await interaction();
    const autocomplete = await callback(i, { type: 8, data: { choices: [] } });
    expect(autocomplete.status).toBe(400);
    expect(await autocomplete.json()).toMatchObject({
      code: 50035,
      errors: { type: { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } },
    });
    expect((await callback(i, { type: 1 })).status).toBe(400);
    expect((await callback(i, { type: 'four' })).status).toBe(400);
    // LAUNCH_ACTIVITY is only for apps with Activities (EMBEDDED).
    expect((await callback(i, { type: 12 })).status).toBe(400);
    // Still unanswered: a good response is taken.
    expect((await callback(i, { type: 6 })).status).toBe(204);
  });

  it('LAUNCH_ACTIVITY is taken from an app with the EMBEDDED flag', async () => {
    await hearth.services.applications.adminUpdate(s.game.id, { grant_flags: ['Embedded'] });
    const i = await interaction();
    const response = await callback(i, { type: 12 }, '?with_response=true');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { interaction: { activity_instance_id: string } };
    expect(body).toMatchObject({
      resource: { type: 12, activity_instance: { id: body.interaction.activity_instance_id } },
    });
    await hearth.services.applications.adminUpdate(s.game.id, { revoke_flags: ['Embedded'] });
  });

  it('PREMIUM_REQUIRED is refused before Premium Apps and taken after its deprecation, which did not end it', async () => {
    const now = clock.now();
    clock.set('2023-09-01T00:00:00Z');
    const before = await interaction();
    expect((await callback(before, { type: 10 })).status).toBe(400);
    clock.set('2024-06-18T00:00:00Z');
    const after = await interaction();
    expect((await callback(after, { type: 10 })).status).toBe(204);
    clock.set(now);
  });

  it('a wrong token or an unknown interaction answers 10062', async () => {
    const i = await interaction();
    const wrong = await callback({ ...i, token: 'not-the-token' }, { type: 6 });
    expect(wrong.status).toBe(404);
    expect(await wrong.json()).toEqual({ code: 10062, message: 'Unknown interaction' });
    const unknown = await callback({ ...i, id: '1234567890123456789' }, { type: 6 });
    expect(unknown.status).toBe(404);
    expect((await callback(i, { type: 6 })).status).toBe(204);
  });
});

describe('The 3-second rule and the 15-minute token', () => {
  it('a first response after 3 s answers 10062; the user is told INTERACTION_FAILURE; the token is invalid', async () => {
    const i = await interaction('go', 'slow');
    clock.advance(3_000);
    // At exactly 3 s the response is still in time; a millisecond later it is not.
    clock.advance(1);
    const late = await callback(i, { type: 4, data: { content: 'too late' } });
    expect(late.status).toBe(404);
    expect(await late.json()).toEqual({ code: 10062, message: 'Unknown interaction' });
    // Earlier tests' unanswered interactions fail on the same clock move: wait for this one's.
    const failure = await user.next(
      (frame) => frame.t === 'INTERACTION_FAILURE' && (frame.d as { id?: string }).id === i.id,
    );
    expect(failure.d).toEqual({ id: i.id, nonce: 'slow' });
    const followup = await webhook(i, '', { method: 'POST', body: { content: 'x' } });
    expect(followup.status).toBe(401);
    expect(await followup.json()).toEqual({ code: 50027, message: 'Invalid Webhook Token' });
  });

  it('a response at exactly 3 s is in time', async () => {
    const i = await interaction();
    clock.advance(3_000);
    expect((await callback(i, { type: 5 })).status).toBe(204);
  });

  it('after a deferral, edits and follow-ups work for 15 minutes, then answer 10015', async () => {
    const i = await interaction();
    expect((await callback(i, { type: 5, data: { flags: 64 } })).status).toBe(204);
    const edited = await webhook(i, '/messages/@original', { method: 'PATCH', body: { content: 'done' } });
    expect(edited.status).toBe(200);
    const original = (await edited.json()) as { id: string };
    clock.advance(15 * 60 * 1000);
    const followup = await webhook(i, '', { method: 'POST', body: { content: 'one more' } });
    expect(followup.status).toBe(200);
    const sent = (await followup.json()) as { id: string; interaction_metadata: Record<string, unknown> };
    expect(sent.interaction_metadata).toMatchObject({
      id: i.id,
      user: { id: s.member.id },
      original_response_message_id: original.id,
    });
    const read = await webhook(i, `/messages/${sent.id}`);
    expect(read.status).toBe(200);
    expect(
      (await webhook(i, `/messages/${sent.id}`, { method: 'PATCH', body: { content: 'edited' } })).status,
    ).toBe(200);
    expect((await webhook(i, `/messages/${sent.id}`, { method: 'DELETE' })).status).toBe(204);
    clock.advance(1);
    const expired = await webhook(i, '', { method: 'POST', body: { content: 'too late' } });
    expect(expired.status).toBe(404);
    expect(await expired.json()).toEqual({ code: 10015, message: 'Unknown Webhook' });
  });

  it('a refused edit of the original response leaves it as it was (issue 21, atomic requests)', async () => {
    const i = await interaction();
    expect((await callback(i, { type: 4, data: { content: 'kept' } })).status).toBe(204);
    const before = await (await webhook(i, '/messages/@original')).json();
    const fields = Array.from({ length: 26 }, (_, n) => ({ name: `f${n}`, value: 'v' }));
    for (const body of [
      { content: 'changed', embeds: [{ title: 'too many fields', fields }] },
      { content: 'changed', components: [{ type: 99 }] },
    ]) {
      const refused = await webhook(i, '/messages/@original', { method: 'PATCH', body });
      expect(refused.status).toBe(400);
      expect(await (await webhook(i, '/messages/@original')).json()).toEqual(before);
    }
  });

  it("another application's id or a wrong token on the webhook routes answers 10015", async () => {
    const i = await interaction();
    expect((await callback(i, { type: 6 })).status).toBe(204);
    const other = await webhook({ ...i, application_id: '1234567890123456789' }, '/messages/@original');
    expect(other.status).toBe(404);
    expect((await webhook({ ...i, token: 'nope' }, '/messages/@original')).status).toBe(404);
  });
});

describe('Components', () => {
  it('an unknown component, a component of the wrong type and bad select values are refused', async () => {
    expect((await click(hearth, s, messageId, 'nope')).status).toBe(400);
    const wrongType = await hearth.api('/interactions', {
      method: 'POST',
      auth: s.member.token,
      body: {
        type: 3,
        application_id: s.game.id,
        channel_id: s.channelId,
        message_id: messageId,
        data: { custom_id: 'flavour', component_type: 3, values: ['pine'] },
      },
    });
    expect(wrongType.status).toBe(400);
    expect(await wrongType.json()).toMatchObject({ code: 50035, errors: { data: { values: {} } } });
    const malformed = await hearth.api('/interactions', {
      method: 'POST',
      auth: s.member.token,
      body: { type: 3, application_id: s.game.id },
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: number }).code).toBe(50035);
  });

  it('a select with valid values reaches the bot with them', async () => {
    const response = await hearth.api('/interactions', {
      method: 'POST',
      auth: s.member.token,
      body: {
        type: 3,
        application_id: s.game.id,
        channel_id: s.channelId,
        message_id: messageId,
        data: { custom_id: 'flavour', component_type: 3, values: ['oak'] },
      },
    });
    expect(response.status).toBe(204);
    const frame = await bot.nextDispatch('INTERACTION_CREATE');
    expect(frame.d).toMatchObject({ data: { custom_id: 'flavour', component_type: 3, values: ['oak'] } });
  });

  it('a component in a channel that does not exist answers 10003', async () => {
    const stranger = await hearth.api('/interactions', {
      method: 'POST',
      auth: s.guild.owner.token,
      body: {
        type: 3,
        application_id: s.game.id,
        channel_id: '1234567890123456789',
        message_id: messageId,
        data: { custom_id: 'go', component_type: 2 },
      },
    });
    expect(stranger.status).toBe(404);
  });
});
