import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayIntents, GatewayOpcodes, OverwriteTypes, PermissionFlags } from '@hearth/protocol';
import { MemoryBus } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  grantTestRole,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import { call, createRoom, MEMBER_PERMISSIONS, post, type Room } from './support.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const { Guilds, GuildMessages, DirectMessages, MessageContent } = GatewayIntents;
type Data = Record<string, unknown>;

async function identify(hearth: TestHearth, token: string, intents?: number) {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, properties: PROPERTIES, ...(intents === undefined ? {} : { intents }) } });
  await client.nextDispatch('READY');
  return client;
}

/** Published last: a frame that proves every earlier event was delivered or dropped. */
function barrier(hearth: TestHearth, guild: TestGuild) {
  return hearth.bus.publish({
    type: 'GUILD_UPDATE',
    data: { id: guild.id, barrier: true },
    audience: { guildId: guild.id },
  });
}

/** The MESSAGE_* dispatches a client got before the barrier. */
async function messagesBefore(client: GatewayClient): Promise<Array<{ t: string; d: Data }>> {
  await client.next((frame) => frame.t === 'GUILD_UPDATE' && (frame.d as Data)['barrier'] === true);
  return client.frames
    .filter((frame) => frame.op === 0 && String(frame.t).startsWith('MESSAGE_'))
    .map((frame) => ({ t: String(frame.t), d: frame.d as Data }));
}

async function messageBot(hearth: TestHearth, room: Room, content: boolean): Promise<TestGame> {
  const bot = await addTestBot(hearth, room.guild);
  await grantTestRole(hearth, room.guild, MEMBER_PERMISSIONS, [bot.botUserId]);
  if (content)
    await hearth.services.applications.adminUpdate(bot.id, { grant_flags: ['GatewayMessageContentLimited'] });
  return bot;
}

describe('MESSAGE_CREATE / UPDATE / DELETE (gateway; GUILDS.md §7.1)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it('a member session gets MESSAGE_CREATE with guild_id and the author member; UPDATE the full object; DELETE ids', async () => {
    const room = await createRoom(hearth);
    const client = await identify(hearth, room.member.token);
    const sent = await post(hearth, room.channelId, room.owner.token, { content: 'hello all' });
    const created = (await client.nextDispatch('MESSAGE_CREATE')).d as Data;
    const { reactions: _none, ...rest } = sent.body as unknown as Data;
    expect(created).toMatchObject({ ...rest, guild_id: room.guild.id });
    expect(created['member']).toMatchObject({ roles: [], joined_at: expect.any(String) });
    expect(created['member']).not.toHaveProperty('user');
    await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      method: 'PATCH',
      auth: room.owner.token,
      body: { content: 'hello again' },
    });
    const updated = (await client.nextDispatch('MESSAGE_UPDATE')).d as Data;
    expect(updated).toMatchObject({ id: sent.body.id, content: 'hello again', guild_id: room.guild.id });
    expect(typeof updated['edited_timestamp']).toBe('string');
    await call(hearth, `/channels/${room.channelId}/messages/${sent.body.id}`, {
      method: 'DELETE',
      auth: room.owner.token,
    });
    expect((await client.nextDispatch('MESSAGE_DELETE')).d).toEqual({
      id: sent.body.id,
      channel_id: room.channelId,
      guild_id: room.guild.id,
    });
    await client.close();
  });

  it('a member who cannot view the channel gets nothing of it', async () => {
    const room = await createRoom(hearth);
    const hidden = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [
        { id: room.member.id, type: OverwriteTypes.Member, allow: 0n, deny: PermissionFlags.ViewChannel },
      ],
    });
    const client = await identify(hearth, room.member.token);
    await post(hearth, hidden, room.owner.token, { content: 'secret' });
    await post(hearth, room.channelId, room.owner.token, { content: 'public' });
    await barrier(hearth, room.guild);
    const got = await messagesBefore(client);
    expect(got.map((event) => event.d['content'])).toEqual(['public']);
    await client.close();
  });

  it('a bot without MESSAGE_CONTENT gets content, embeds and components emptied, except its own and mentioning it', async () => {
    const room = await createRoom(hearth);
    const bot = await messageBot(hearth, room, false);
    const client = await identify(hearth, bot.botToken, Guilds | GuildMessages);
    const row = { type: 1, components: [{ type: 2, style: 1, label: 'b', custom_id: 'b' }] };
    await post(hearth, room.channelId, room.owner.token, {
      content: 'plain',
      embeds: [{ title: 't' }],
      components: [row],
    });
    await post(hearth, room.channelId, room.owner.token, { content: `hey <@${bot.botUserId}>` });
    await post(hearth, room.channelId, `Bot ${bot.botToken}`, { content: 'from the bot' });
    await barrier(hearth, room.guild);
    const got = (await messagesBefore(client)).map((event) => event.d);
    expect(got).toHaveLength(3);
    expect(got[0]).toMatchObject({
      content: '',
      embeds: [],
      components: [],
      attachments: [],
      author: { id: room.owner.id },
    });
    expect(got[1]).toMatchObject({
      content: `hey <@${bot.botUserId}>`,
      mentions: [{ id: bot.botUserId, member: { roles: expect.any(Array), joined_at: expect.any(String) } }],
    });
    expect(got[2]).toMatchObject({ content: 'from the bot' });
    await client.close();
  });

  it('a bot with MESSAGE_CONTENT reads everything; one without GUILD_MESSAGES gets no message events', async () => {
    const room = await createRoom(hearth);
    const reader = await messageBot(hearth, room, true);
    const deaf = await messageBot(hearth, room, false);
    const reading = await identify(hearth, reader.botToken, Guilds | GuildMessages | MessageContent);
    const notListening = await identify(hearth, deaf.botToken, Guilds);
    await post(hearth, room.channelId, room.owner.token, { content: 'plain', embeds: [{ title: 't' }] });
    await barrier(hearth, room.guild);
    const read = await messagesBefore(reading);
    expect(read.map((event) => event.d)).toEqual([
      expect.objectContaining({ content: 'plain', embeds: [expect.objectContaining({ title: 't' })] }),
    ]);
    expect(await messagesBefore(notListening)).toEqual([]);
    await reading.close();
    await notListening.close();
  });
});

describe("message content over REST follows the application's approval (GUILDS.md §4.1)", () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it("an unapproved bot reads others' messages empty, except its own, those mentioning it, and DMs", async () => {
    const room = await createRoom(hearth);
    const bot = await messageBot(hearth, room, false);
    const auth = `Bot ${bot.botToken}`;
    const plain = await post(hearth, room.channelId, room.owner.token, {
      content: 'plain',
      embeds: [{ title: 't' }],
    });
    const mention = await post(hearth, room.channelId, room.owner.token, {
      content: `<@${bot.botUserId}> hi`,
    });
    const own = await post(hearth, room.channelId, auth, {
      content: 'mine',
      message_reference: { message_id: plain.body.id },
    });
    expect(own.body).toMatchObject({ content: 'mine', referenced_message: { content: '', embeds: [] } });
    const history = await call<Data[]>(hearth, `/channels/${room.channelId}/messages`, { auth });
    expect(history.body.map((message) => message['content'])).toEqual(['mine', `<@${bot.botUserId}> hi`, '']);
    const one = await call(hearth, `/channels/${room.channelId}/messages/${plain.body.id}`, { auth });
    expect(one.body).toMatchObject({ content: '', embeds: [], components: [], attachments: [] });
    expect(mention.status).toBe(200);
    const dm = await call<Data>(hearth, '/users/@me/channels', {
      method: 'POST',
      auth,
      body: { recipient_id: room.member.id },
    });
    await post(hearth, dm.body['id'] as string, room.member.token, { content: 'private words' });
    const dmHistory = await call<Data[]>(hearth, `/channels/${dm.body['id']}/messages`, { auth });
    expect(dmHistory.body.map((message) => message['content'])).toEqual(['private words']);
  });

  it('an approved bot reads everything', async () => {
    const room = await createRoom(hearth);
    const bot = await messageBot(hearth, room, true);
    const plain = await post(hearth, room.channelId, room.owner.token, { content: 'plain' });
    const one = await call(hearth, `/channels/${room.channelId}/messages/${plain.body.id}`, {
      auth: `Bot ${bot.botToken}`,
    });
    expect(one.body.content).toBe('plain');
  });
});

describe('Bot DMs (POST /users/@me/channels; DIRECT_MESSAGES)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  });
  afterAll(() => hearth.close());

  it('a DM opened by a bot reaches a bot session with DIRECT_MESSAGES, content included, without guild_id', async () => {
    const room = await createRoom(hearth);
    const bot = await messageBot(hearth, room, false);
    const auth = `Bot ${bot.botToken}`;
    const dm = await call<Data>(hearth, '/users/@me/channels', {
      method: 'POST',
      auth,
      body: { recipient_id: room.member.id },
    });
    expect(dm.status).toBe(200);
    const channelId = dm.body['id'] as string;
    const client = await identify(hearth, bot.botToken, DirectMessages);
    const person = await identify(hearth, room.member.token);
    const sent = await post(hearth, channelId, room.member.token, { content: 'hello bot' });
    expect(sent.status).toBe(200);
    const got = (await client.nextDispatch('MESSAGE_CREATE')).d as Data;
    expect(got).toMatchObject({ id: sent.body.id, channel_id: channelId, content: 'hello bot' });
    expect(got).not.toHaveProperty('guild_id');
    expect(((await person.nextDispatch('MESSAGE_CREATE')).d as Data)['id']).toBe(sent.body.id);
    await client.close();
    await person.close();
  });
});

describe('a member session on another node receives MESSAGE_CREATE', () => {
  const directory = mkdtempSync(join(tmpdir(), 'hearth-msg-nodes-'));
  const bus = new MemoryBus();
  const nodes: TestHearth[] = [];
  beforeAll(async () => {
    const databaseUrl = `sqlite:${join(directory, 'nodes.sqlite')}`;
    for (let i = 0; i < 2; i++)
      nodes.push(
        await startHearth({ databaseUrl, rateLimitGlobal: 1_000_000, workerId: i }, undefined, {
          shared: { bus },
        }),
      );
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await bus.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('posted through node 0, delivered to the session held by node 1', async () => {
    const [first, second] = nodes as [TestHearth, TestHearth];
    const room = await createRoom(first);
    const client = await identify(second, room.member.token);
    const sent = await post(first, room.channelId, room.owner.token, { content: 'across nodes' });
    const got = (await client.nextDispatch('MESSAGE_CREATE')).d as Data;
    expect(got).toMatchObject({ id: sent.body.id, content: 'across nodes', guild_id: room.guild.id });
    await client.close();
  });
});
