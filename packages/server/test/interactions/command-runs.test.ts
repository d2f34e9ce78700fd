import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { addTestMember } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame, grantTokens } from '../../../../test-support/oauth.js';
import { connect, type Scene, scene } from './support.js';

/**
 * Running commands through the user-side route (DOCS receiving-and-responding, application-commands): an
 * ATTACHMENT option's upload stored and resolved, autocomplete choices reaching the user who typed, a
 * commands-only guild install, and a user-installed app's command in DMs.
 */

type Interaction = Record<string, unknown> & { id: string; token: string; application_id: string };
type Command = { id: string; name: string; type: number };

let hearth: TestHearth;
let s: Scene;
let bot: GatewayClient;
let user: GatewayClient;
let upload: Command;
let search: Command;

async function createCommand(path: string, token: string, body: unknown): Promise<Command> {
  const response = await hearth.api(path, { method: 'POST', auth: `Bot ${token}`, body });
  expect(response.status).toBe(201);
  return (await response.json()) as Command;
}

/** POST /interactions as the member's client sends it: JSON, or multipart with `files[n]`. */
function invoke(body: Record<string, unknown>, files: Blob[] = [], token = s.member.token) {
  const payload = { application_id: s.game.id, channel_id: s.channelId, ...body };
  if (files.length === 0) return hearth.api('/interactions', { method: 'POST', auth: token, body: payload });
  const form = new FormData();
  form.set('payload_json', JSON.stringify(payload));
  for (const [index, file] of files.entries()) form.set(`files[${index}]`, file, `notes${index}.txt`);
  return hearth.api('/interactions', { method: 'POST', auth: token, body: form });
}

function callback(i: Interaction, body: unknown) {
  return hearth.api(`/interactions/${i.id}/${i.token}/callback`, { method: 'POST', body });
}

beforeAll(async () => {
  hearth = await startHearth();
  s = await scene(hearth, 'Command runs');
  const guildPath = `/applications/${s.game.id}/guilds/${s.guild.id}/commands`;
  upload = await createCommand(guildPath, s.game.botToken, {
    name: 'upload',
    description: 'Send a file',
    options: [{ type: 11, name: 'file', description: 'The file', required: true }],
  });
  search = await createCommand(guildPath, s.game.botToken, {
    name: 'search',
    description: 'Search',
    options: [{ type: 3, name: 'query', description: 'What', autocomplete: true }],
  });
  bot = await connect(hearth, s.game.botToken);
  user = await connect(hearth, s.member.token);
});

afterAll(async () => {
  for (const client of [bot, user]) await client.close();
  await hearth.close();
});

describe('ATTACHMENT options', () => {
  it('the upload is stored and resolved with id, filename, size, url, proxy_url and content_type', async () => {
    const bytes = 'line one\nline two\n';
    const response = await invoke(
      {
        type: 2,
        guild_id: s.guild.id,
        data: { ...upload, options: [{ type: 11, name: 'file', value: '0' }] },
      },
      [new Blob([bytes], { type: 'text/plain' })],
    );
    expect(response.status).toBe(204);
    const i = (await bot.nextDispatch('INTERACTION_CREATE')).d as Interaction;
    const data = i['data'] as {
      options: { value: string }[];
      resolved: { attachments: Record<string, Record<string, unknown>> };
    };
    const id = data.options[0]!.value;
    expect(id).toMatch(/^\d{17,20}$/);
    const attachment = data.resolved.attachments[id]!;
    expect(attachment).toMatchObject({
      id,
      filename: 'notes0.txt',
      size: bytes.length,
      content_type: 'text/plain',
    });
    expect(attachment['proxy_url']).toBe(attachment['url']);
    const served = await fetch(attachment['url'] as string);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(bytes);
    expect((await callback(i, { type: 4, data: { content: 'Got it' } })).status).toBe(204);
  });

  it('a file one byte past attachment_size_limit (10 MiB) is refused with 40005', async () => {
    const response = await invoke(
      {
        type: 2,
        guild_id: s.guild.id,
        data: { ...upload, options: [{ type: 11, name: 'file', value: '0' }] },
      },
      [new Blob([new Uint8Array(10 * 1024 * 1024 + 1)])],
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ code: 40005, message: 'Request entity too large' });
  });

  it('an option naming no file of the request is refused at its path', async () => {
    const response = await invoke({
      type: 2,
      guild_id: s.guild.id,
      data: { ...upload, options: [{ type: 11, name: 'file', value: '0' }] },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: 50035,
      errors: { data: { options: { 0: { value: { _errors: [{ code: 'BASE_TYPE_INVALID' }] } } } } },
    });
  });
});

describe('Autocomplete', () => {
  it('the choices reach the user who typed; 26 choices, or a name or value of 101 characters, are refused', async () => {
    const typed = await invoke({
      type: 4,
      guild_id: s.guild.id,
      nonce: 'typing-1',
      data: { ...search, options: [{ type: 3, name: 'query', value: 'oa', focused: true }] },
    });
    expect(typed.status).toBe(204);
    const i = (await bot.nextDispatch('INTERACTION_CREATE')).d as Interaction;
    expect(i).toMatchObject({ type: 4, data: { options: [{ name: 'query', value: 'oa', focused: true }] } });
    const choice = (n: number) => ({ name: `Oak ${n}`, value: `oak-${n}` });
    const tooMany = await callback(i, {
      type: 8,
      data: { choices: Array.from({ length: 26 }, (_, n) => choice(n)) },
    });
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toMatchObject({ code: 50035, errors: { choices: {} } });
    const longName = await callback(i, {
      type: 8,
      data: { choices: [{ name: 'x'.repeat(101), value: 'x' }] },
    });
    expect(longName.status).toBe(400);
    expect(await longName.json()).toMatchObject({ code: 50035, errors: { choices: { 0: { name: {} } } } });
    const longValue = await callback(i, {
      type: 8,
      data: { choices: [{ name: 'x', value: 'v'.repeat(101) }] },
    });
    expect(longValue.status).toBe(400);
    expect(await longValue.json()).toMatchObject({ code: 50035, errors: { choices: { 0: { value: {} } } } });
    const choices = Array.from({ length: 25 }, (_, n) => choice(n));
    expect((await callback(i, { type: 8, data: { choices } })).status).toBe(204);
    const offered = await user.nextDispatch('APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE');
    expect(offered.d).toEqual({ id: i.id, application_id: s.game.id, nonce: 'typing-1', choices });
  });
});

describe('A commands-only guild install (applications.commands without bot)', () => {
  it('makes the app guild-installed: its guild commands are made and run there without its bot', async () => {
    const app = await createGame(hearth, { name: 'Commands only' });
    const path = `/applications/${app.id}/guilds/${s.guild.id}/commands`;
    const body = { name: 'roll', description: 'Roll a die' };
    const before = await hearth.api(path, { method: 'POST', auth: `Bot ${app.botToken}`, body });
    expect(await before.json()).toEqual({ code: 50001, message: 'Missing Access' });
    // A member without MANAGE_GUILD cannot install it to the guild.
    const refused = await consent(hearth, s.member.token, {
      client_id: app.id,
      scope: 'applications.commands',
      guild_id: s.guild.id,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1/callback',
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ code: 50013, message: 'Missing Permissions' });
    const installed = await consent(hearth, s.guild.owner.token, {
      client_id: app.id,
      scope: 'applications.commands',
      guild_id: s.guild.id,
      response_type: 'code',
      redirect_uri: 'http://127.0.0.1/callback',
    });
    expect(installed.status).toBe(200);
    const roll = await createCommand(path, app.botToken, body);
    const members = await hearth.api(`/guilds/${s.guild.id}/members/${app.botUserId}`, {
      auth: s.guild.owner.token,
    });
    expect(members.status).toBe(404);
    const appBot = await connect(hearth, app.botToken);
    try {
      const ran = await invoke({ type: 2, application_id: app.id, guild_id: s.guild.id, data: roll });
      expect(ran.status).toBe(204);
      const i = (await appBot.nextDispatch('INTERACTION_CREATE')).d as Interaction;
      expect(i).toMatchObject({
        type: 2,
        guild_id: s.guild.id,
        context: 0,
        authorizing_integration_owners: { '0': s.guild.id },
        data: { id: roll.id, name: 'roll', guild_id: s.guild.id },
      });
      expect((await callback(i, { type: 4, data: { content: '4' } })).status).toBe(204);
    } finally {
      await appBot.close();
    }
  });
});

describe('A user-installed app in DMs', () => {
  let app: Awaited<ReturnType<typeof createGame>>;
  let runner: { id: string; token: string };
  let anywhere: Command;
  let guildOnly: Command;
  let appBot: GatewayClient;

  beforeAll(async () => {
    app = await createGame(hearth, { name: 'Pocket app' });
    runner = await addTestMember(hearth, s.guild);
    await grantTokens(hearth, app, runner.token, 'identify applications.commands', { integration_type: '1' });
    const path = `/applications/${app.id}/commands`;
    anywhere = await createCommand(path, app.botToken, {
      name: 'note',
      description: 'Take a note',
      integration_types: [1],
      contexts: [0, 1, 2],
    });
    guildOnly = await createCommand(path, app.botToken, {
      name: 'here',
      description: 'Guilds only',
      integration_types: [1],
      contexts: [0],
    });
    appBot = await connect(hearth, app.botToken);
  });

  afterAll(async () => {
    await appBot.close();
  });

  async function dmWith(recipientId: string): Promise<string> {
    const response = await hearth.api('/users/@me/channels', {
      method: 'POST',
      auth: runner.token,
      body: { recipient_id: recipientId },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { id: string }).id;
  }

  const run = (channelId: string, command: Command) =>
    hearth.api('/interactions', {
      method: 'POST',
      auth: runner.token,
      body: { type: 2, application_id: app.id, channel_id: channelId, data: command },
    });

  it('in a DM with another user: PRIVATE_CHANNEL (2), owned by the user install, with the partial channel', async () => {
    const channelId = await dmWith(s.guild.owner.id);
    expect((await run(channelId, anywhere)).status).toBe(204);
    const i = (await appBot.nextDispatch('INTERACTION_CREATE')).d as Interaction;
    expect(i).toMatchObject({
      context: 2,
      authorizing_integration_owners: { '1': runner.id },
      channel: { id: channelId, type: 1 },
      channel_id: channelId,
      user: { id: runner.id },
    });
    expect(i['authorizing_integration_owners']).toEqual({ '1': runner.id });
    expect(i).not.toHaveProperty('guild_id');
    expect(i).not.toHaveProperty('member');
    const refused = await run(channelId, guildOnly);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ code: 10063, message: 'Unknown application command' });
  });

  it("in the DM with the app's bot: BOT_DM (1); a command whose contexts exclude it is refused", async () => {
    const channelId = await dmWith(app.botUserId);
    expect((await run(channelId, anywhere)).status).toBe(204);
    const i = (await appBot.nextDispatch('INTERACTION_CREATE')).d as Interaction;
    expect(i).toMatchObject({ context: 1, channel: { id: channelId, type: 1 } });
    expect(i['authorizing_integration_owners']).toEqual({ '1': runner.id });
    expect((await run(channelId, guildOnly)).status).toBe(404);
  });
});
