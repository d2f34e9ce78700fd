import type { APIDMChannel, APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../../test-support/oauth.js';
import { call, invalidForm, MISSING_ACCESS, MISSING_PERMISSIONS, post } from './support.js';

describe('DM channels for bots and users (POST /users/@me/channels, GET /channels/{id})', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  const open = (token: string, body: unknown) =>
    call<APIDMChannel>(hearth, '/users/@me/channels', { method: 'POST', auth: token, body });

  it('a user opens a DM: type 1 with the other user as recipient; again, the same channel; both read it', async () => {
    const alice = await createPlayer(hearth);
    const bob = await createPlayer(hearth);
    const dm = await open(alice.token, { recipient_id: bob.user.id });
    expect(dm.status).toBe(200);
    expect(dm.body).toMatchObject({
      type: 1,
      last_message_id: null,
      flags: 0,
      recipients: [{ id: bob.user.id }],
    });
    expect((await open(alice.token, { recipient_id: bob.user.id })).body.id).toBe(dm.body.id);
    expect((await open(bob.token, { recipient_id: alice.user.id })).body.id).toBe(dm.body.id);
    const seen = await call<APIDMChannel>(hearth, `/channels/${dm.body.id}`, { auth: bob.token });
    expect(seen.body).toMatchObject({ id: dm.body.id, type: 1, recipients: [{ id: alice.user.id }] });
  });

  it('both participants write and read; others get 50001', async () => {
    const alice = await createPlayer(hearth);
    const bob = await createPlayer(hearth);
    const eve = await createPlayer(hearth);
    const channelId = (await open(alice.token, { recipient_id: bob.user.id })).body.id;
    const first = await post(hearth, channelId, alice.token, { content: 'hi bob @everyone', tts: true });
    expect(first.body).toMatchObject({ content: 'hi bob @everyone', tts: true, mention_everyone: false });
    expect(first.body).not.toHaveProperty('guild_id');
    const second = await post(hearth, channelId, bob.token, {
      content: 'hi alice',
      message_reference: { message_id: first.body.id },
    });
    expect(second.body).toMatchObject({
      type: 19,
      message_reference: { channel_id: channelId, message_id: first.body.id },
    });
    expect(second.body.message_reference).not.toHaveProperty('guild_id');
    const history = await call<APIMessage[]>(hearth, `/channels/${channelId}/messages`, {
      auth: alice.token,
    });
    expect(history.body.map((message) => message.content)).toEqual(['hi alice', 'hi bob @everyone']);
    expect(
      (await call<APIDMChannel>(hearth, `/channels/${channelId}`, { auth: alice.token })).body
        .last_message_id,
    ).toBe(second.body.id);
    for (const response of [
      await call(hearth, `/channels/${channelId}`, { auth: eve.token }),
      await post(hearth, channelId, eve.token, { content: 'let me in' }),
      await call(hearth, `/channels/${channelId}/messages`, { auth: eve.token }),
    ])
      expect(response).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(
      await call(hearth, `/channels/${channelId}/messages/${first.body.id}`, {
        method: 'DELETE',
        auth: bob.token,
      }),
    ).toEqual({ status: 403, body: MISSING_PERMISSIONS });
  });

  it('a bot opens a DM with a user and writes in it', async () => {
    const game = await createGame(hearth);
    const player = await createPlayer(hearth);
    const dm = await open(`Bot ${game.botToken}`, { recipient_id: player.user.id });
    expect(dm.body.recipients?.[0]?.id).toBe(player.user.id);
    const sent = await post(hearth, dm.body.id, `Bot ${game.botToken}`, { content: 'welcome' });
    expect(sent.body.author).toMatchObject({ id: game.botUserId, bot: true });
  });

  it('unknown user 10013; oneself or bot to bot 50007; a bad recipient_id 50035', async () => {
    const alice = await createPlayer(hearth);
    expect(await open(alice.token, { recipient_id: '123456789012345678' })).toEqual({
      status: 404,
      body: { code: 10013, message: 'Unknown User' },
    });
    const cannot = { status: 400, body: { code: 50007, message: 'Cannot send messages to this user' } };
    expect(await open(alice.token, { recipient_id: alice.user.id })).toEqual(cannot);
    const one = await createGame(hearth);
    const two = await createGame(hearth);
    expect(await open(`Bot ${one.botToken}`, { recipient_id: two.botUserId })).toEqual(cannot);
    expect(await open(alice.token, {})).toEqual({
      status: 400,
      body: invalidForm({
        recipient_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      }),
    });
    expect((await open(alice.token, { recipient_id: 5 })).status).toBe(400);
  });
});
