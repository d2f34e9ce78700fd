import { GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { type EmulatorHearth, startEmulator } from './support.js';

/** GUILDS | GUILD_VOICE_STATES | GUILD_MESSAGES | GUILD_MESSAGE_REACTIONS. */
const INTENTS = 1 | (1 << 7) | (1 << 9) | (1 << 10);
let hearth: EmulatorHearth;
let bot: GatewayClient;
let seeded: {
  applications: { game: { id: string; bot_token: string } };
  users: Record<'alice' | 'bob' | 'carol', { id: string; token: string }>;
  guilds: { home: { id: string; channels: { general: string; voice: string } } };
};

beforeAll(async () => {
  hearth = await startEmulator();
  seeded = await hearth.adminJson('POST', '/seed', {
    applications: { game: { name: 'Watching Bot' } },
    users: { alice: { username: 'alice' }, bob: { username: 'bob' }, carol: { username: 'carol' } },
    guilds: {
      home: {
        name: 'Home',
        owner: 'alice',
        members: ['bob'],
        channels: { general: { name: 'general' }, voice: { name: 'Voice', type: 2 } },
        bots: [{ application: 'game' }],
      },
    },
  });
  bot = await GatewayClient.connect(hearth.url);
  await bot.nextOp(GatewayOpcodes.Hello);
  bot.send({
    op: 2,
    d: {
      token: seeded.applications.game.bot_token,
      intents: INTENTS,
      properties: { os: 'l', browser: 'b', device: 'd' },
    },
  });
  await bot.nextDispatch('GUILD_CREATE');
});
afterAll(async () => {
  await bot.close();
  await hearth.close();
});

const act = <T = Record<string, unknown>>(action: string, body: Record<string, unknown>) =>
  hearth.adminJson<{ result: T }>('POST', `/act/${action}`, body);

describe('README, Scripted test users: the bot sees what a real user causes', () => {
  it('lists the registered actions', async () => {
    const actions = await hearth.adminJson<{ name: string }[]>('GET', '/act');
    expect(actions.map((a) => a.name)).toEqual([
      'send_message',
      'add_reaction',
      'join_voice',
      'accept_invite',
      'send_friend_request',
      'set_presence',
      'run_slash_command',
      'autocomplete',
      'autocomplete_choices',
      'click_component',
      'submit_modal',
    ]);
  });

  it('send_message and add_reaction: MESSAGE_CREATE and MESSAGE_REACTION_ADD', async () => {
    const { result } = await act<{ id: string; author: { id: string } }>('send_message', {
      user_id: seeded.users.alice.id,
      channel_id: seeded.guilds.home.channels.general,
      content: 'react to me',
    });
    expect(result.author.id).toBe(seeded.users.alice.id);
    expect((await bot.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({ id: result.id });
    await act('add_reaction', {
      user_id: seeded.users.bob.id,
      channel_id: seeded.guilds.home.channels.general,
      message_id: result.id,
      emoji: '👍',
    });
    expect((await bot.nextDispatch('MESSAGE_REACTION_ADD')).d).toMatchObject({
      user_id: seeded.users.bob.id,
      message_id: result.id,
      emoji: { id: null, name: '👍' },
    });
  });

  it('join_voice: VOICE_STATE_UPDATE as op 4 causes it', async () => {
    await act('join_voice', {
      user_id: seeded.users.bob.id,
      guild_id: seeded.guilds.home.id,
      channel_id: seeded.guilds.home.channels.voice,
    });
    expect((await bot.nextDispatch('VOICE_STATE_UPDATE')).d).toMatchObject({
      user_id: seeded.users.bob.id,
      channel_id: seeded.guilds.home.channels.voice,
    });
  });

  it('accept_invite and send_friend_request reach the same rules as the user’s requests', async () => {
    const created = await hearth.api(`/channels/${seeded.guilds.home.channels.general}/invites`, {
      method: 'POST',
      auth: seeded.users.alice.token,
      body: {},
    });
    const { code } = (await created.json()) as { code: string };
    await act('accept_invite', { user_id: seeded.users.carol.id, code });
    const guilds = await hearth.api('/users/@me/guilds', { auth: seeded.users.carol.token });
    expect(((await guilds.json()) as { id: string }[]).map((g) => g.id)).toEqual([seeded.guilds.home.id]);

    await act('send_friend_request', { user_id: seeded.users.carol.id, target_id: seeded.users.alice.id });
    const incoming = await hearth.api('/users/@me/relationships', { auth: seeded.users.alice.token });
    expect(await incoming.json()).toEqual([expect.objectContaining({ id: seeded.users.carol.id, type: 3 })]);
  });

  it('set_presence takes op 3’s shape, and refuses another', async () => {
    expect((await act('set_presence', { user_id: seeded.users.bob.id, status: 'dnd' })).result).toBeNull();
    const bad = await hearth.admin('POST', '/act/set_presence', {
      user_id: seeded.users.bob.id,
      status: 'asleep',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: number }).code).toBe(50035);
  });

  it('refuses an unknown action (404), a bad body (50035), and what the user may not do', async () => {
    expect((await hearth.admin('POST', '/act/click_button', { user_id: seeded.users.bob.id })).status).toBe(
      404,
    );
    const missing = await hearth.admin('POST', '/act/send_message', { content: 'who am I' });
    expect(await missing.json()).toMatchObject({
      code: 50035,
      errors: { user_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
    });
    // A channel the user cannot reach is refused as the user's own request would be.
    const unknown = await hearth.admin('POST', '/act/send_message', {
      user_id: seeded.users.bob.id,
      channel_id: '1',
      content: 'nowhere',
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: number }).code).toBe(10003);
  });

  it('autocomplete: the app sees the focused option; the user reads back the choices it answered', async () => {
    const { game } = seeded.applications;
    const home = seeded.guilds.home;
    const created = await hearth.api(`/applications/${game.id}/guilds/${home.id}/commands`, {
      method: 'POST',
      auth: `Bot ${game.bot_token}`,
      body: {
        name: 'find',
        description: 'Find',
        options: [{ type: 3, name: 'what', description: 'What', autocomplete: true }],
      },
    });
    expect(created.status).toBe(201);
    const at = { user_id: seeded.users.bob.id, application_id: game.id, channel_id: home.channels.general };
    const { result } = await act<{ interaction_id: string }>('autocomplete', {
      ...at,
      name: 'find',
      options: [{ type: 3, name: 'what', value: 'ro', focused: true }],
    });
    const i = (await bot.nextDispatch('INTERACTION_CREATE')).d as { id: string; token: string };
    expect(i).toMatchObject({ id: result.interaction_id, type: 4 });
    const read = { user_id: at.user_id, interaction_id: i.id };
    expect((await act('autocomplete_choices', read)).result).toEqual({ choices: null });
    const choices = [{ name: 'Rowan', value: 'rowan' }];
    const answered = await hearth.api(`/interactions/${i.id}/${i.token}/callback`, {
      method: 'POST',
      body: { type: 8, data: { choices } },
    });
    expect(answered.status).toBe(204);
    expect((await act('autocomplete_choices', read)).result).toEqual({ choices });
    // Another user's interaction is not theirs to read.
    const other = await hearth.admin('POST', '/act/autocomplete_choices', {
      ...read,
      user_id: seeded.users.carol.id,
    });
    expect(other.status).toBe(404);
  });

  it('refuses a command the user cannot run (10063) and a modal never shown (10062)', async () => {
    const at = {
      user_id: seeded.users.bob.id,
      application_id: seeded.applications.game.id,
      channel_id: seeded.guilds.home.channels.general,
    };
    const command = await hearth.admin('POST', '/act/run_slash_command', { ...at, name: 'nothing' });
    expect(command.status).toBe(404);
    expect(await command.json()).toEqual({ code: 10063, message: 'Unknown application command' });
    const modal = await hearth.admin('POST', '/act/submit_modal', {
      ...at,
      custom_id: 'survey',
      components: [],
    });
    expect(modal.status).toBe(404);
    expect(await modal.json()).toEqual({ code: 10062, message: 'Unknown interaction' });
  });
});
