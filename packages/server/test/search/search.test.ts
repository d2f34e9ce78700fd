import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { PermissionFlags } from '@hearth/protocol';
import type { APIMessage } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer, type TestGame } from '../../../../test-support/oauth.js';
import {
  call,
  createRoom,
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  post,
  type Room,
} from '../channel-messages/support.js';
import { idsOf, type SearchBody, searchGuild } from './support.js';

/**
 * Search Guild Messages (GUILDS.md §4.11): every filter against messages written over HTTP, the caller's
 * readable channels, the message-content rule for bots, and the 50035 of each bad parameter.
 */

const { ViewChannel, ReadMessageHistory } = PermissionFlags;

let hearth: TestHearth;
let room: Room;
let general: string;
let second: string;
let secret: string;
let noHistory: string;
let nsfw: string;
let reader: TestGame;
let blindBot: TestGame;
let other: Room;
let outsider: { token: string };
const m: Record<string, APIMessage> = {};

async function send(key: string, channelId: string, token: string, body: unknown): Promise<APIMessage> {
  const { status, body: message } = await post(hearth, channelId, token, body);
  expect(status).toBe(200);
  m[key] = message;
  return message;
}

const member = () => room.member.token;
const owner = () => room.owner.token;
const bot = (game: TestGame) => `Bot ${game.botToken}`;
const search = (auth: string, query: Parameters<typeof searchGuild>[3] = {}) =>
  searchGuild(hearth, room.guild.id, auth, query);

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
  room = await createRoom(hearth, { name: 'general' });
  general = room.channelId;
  const guildId = room.guild.id;
  second = await seedTestChannel(hearth, guildId, { name: 'second' });
  const everyone = (deny: bigint) => [{ id: guildId, type: 0, allow: 0n, deny }];
  secret = await seedTestChannel(hearth, guildId, { name: 'secret', overwrites: everyone(ViewChannel) });
  noHistory = await seedTestChannel(hearth, guildId, {
    name: 'no-history',
    overwrites: everyone(ReadMessageHistory),
  });
  nsfw = await seedTestChannel(hearth, guildId, { name: 'nsfw' });
  await hearth.storage.db.updateTable('channels').set({ nsfw: 1 }).where('id', '=', nsfw).execute();
  reader = await addTestBot(hearth, room.guild);
  await hearth.services.applications.adminUpdate(reader.id, {
    grant_flags: ['GatewayMessageContentLimited'],
  });
  blindBot = await addTestBot(hearth, room.guild);
  other = await createRoom(hearth, { name: 'elsewhere' });
  outsider = await createPlayer(hearth);

  await send('sleeps', general, member(), { content: 'The dragon sleeps under the mountain' });
  await send('link', second, member(), { content: 'A dragon appeared near https://Example.com/lair' });
  await send('hoard', general, owner(), { content: 'dragon dragon dragon hoard' });
  await send('botReport', general, bot(reader), { content: 'dragon report from the bot' });
  await send('secret', secret, owner(), { content: 'dragon in the secret room' });
  await send('nsfw', nsfw, owner(), { content: 'dragon behind the curtain' });
  await send('hidden', noHistory, owner(), { content: 'dragon without history' });
  await send('mention', general, member(), { content: `<@${room.owner.id}> look at this Café` });
  await send('reply', general, member(), {
    content: 'an answer',
    message_reference: { message_id: m['hoard']!.id },
  });
  await send('embed', general, member(), {
    content: 'see the docs',
    embeds: [{ title: 'Docs', url: 'https://docs.example.org/page' }],
  });
  await send('everyone', general, owner(), { content: '@everyone gather' });
  await send('mentionsBlind', general, member(), { content: `<@${blindBot.botUserId}> dragon for you` });
  await send('elsewhere', other.channelId, other.owner.token, { content: 'dragon of another guild' });
  const form = new FormData();
  form.set('payload_json', JSON.stringify({ content: 'treasure map' }));
  form.append('files[0]', new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' }), 'Map.PNG');
  const upload = await call(hearth, `/channels/${general}/messages`, {
    method: 'POST',
    auth: member(),
    body: form,
  });
  expect(upload.status).toBe(200);
  m['file'] = upload.body;
});

afterAll(async () => {
  await hearth.close();
});

describe('Search Guild Messages with @discordjs/core (GUILDS.md §4.11)', () => {
  it('a bot with message content searches content, author and channel together and reads the hit', async () => {
    const rest = new REST({ api: `${hearth.url}/api`, retries: 0 }).setToken(reader.botToken);
    const api = new API(rest);
    const answer = await api.guilds.searchForMessages(room.guild.id, {
      content: 'dragon',
      author_id: [room.member.id],
      channel_id: [general],
    });
    // The result type also covers the 202 of an index being built (110000), which this guild's is not.
    if (!('messages' in answer)) throw new Error(`index not ready: ${JSON.stringify(answer)}`);
    const result = answer;
    // Each filter rules out messages the other two keep: the owner's and the bot's, the second channel's.
    expect(result.total_results).toBe(2);
    expect(result.messages.map(([message]) => message!.id)).toEqual([
      m['mentionsBlind']!.id,
      m['sleeps']!.id,
    ]);
    const [hit] = result.messages[1]!;
    expect(hit).toMatchObject({
      id: m['sleeps']!.id,
      channel_id: general,
      content: 'The dragon sleeps under the mountain',
      author: { id: room.member.id },
      hit: true,
    });
    expect(hit).not.toHaveProperty('reactions');
  });
});

describe('content (GUILDS.md §4.11: content ≤ 1024)', () => {
  it('finds every word in any order, case and accents aside, in the channels the caller reads', async () => {
    const { status, body } = await search(member(), { content: 'DRAGON' });
    expect(status).toBe(200);
    // Not the secret channel (no VIEW_CHANNEL), the no-history channel, the NSFW channel or another guild.
    expect(new Set(idsOf(body))).toEqual(
      new Set(['sleeps', 'link', 'hoard', 'botReport', 'mentionsBlind'].map((key) => m[key]!.id)),
    );
    expect(body).toMatchObject({ doing_deep_historical_index: false, total_results: 5 });
    expect(idsOf((await search(member(), { content: 'mountain the dragon' })).body)).toEqual([
      m['sleeps']!.id,
    ]);
    expect(idsOf((await search(member(), { content: 'cafe' })).body)).toEqual([m['mention']!.id]);
    expect((await search(member(), { content: 'dragon unicorn' })).body.total_results).toBe(0);
    expect((await search(member(), { content: '!!!' })).body.total_results).toBe(0);
    const all = (await search(member(), {})).body.total_results;
    expect(all).toBeGreaterThan(5);
    expect((await search(member(), { content: ' ' })).body.total_results).toBe(all);
  });

  it('searches word by word, so FTS syntax in the query is only text', async () => {
    const { status, body } = await search(member(), { content: 'dragon" OR "x* NEAR(' });
    expect(status).toBe(200);
    expect(body.total_results).toBe(0);
    expect(idsOf((await search(member(), { content: '"dragon"' })).body)).toContain(m['sleeps']!.id);
  });

  it('sorts newest first by default, oldest first with sort_order=asc, best match first by relevance', async () => {
    const newest = idsOf((await search(member(), { content: 'dragon' })).body);
    expect(newest).toEqual(
      ['mentionsBlind', 'botReport', 'hoard', 'link', 'sleeps'].map((key) => m[key]!.id),
    );
    expect(idsOf((await search(member(), { content: 'dragon', sort_order: 'asc' })).body)).toEqual(
      [...newest].reverse(),
    );
    const relevant = idsOf((await search(member(), { content: 'dragon', sort_by: 'relevance' })).body);
    expect(relevant[0]).toBe(m['hoard']!.id);
  });

  it('pages with limit and offset while total_results counts every match', async () => {
    const first = await search(member(), { content: 'dragon', limit: 2 });
    const next = await search(member(), { content: 'dragon', limit: 2, offset: 2 });
    const last = await search(member(), { content: 'dragon', limit: 2, offset: 4 });
    const beyond = await search(member(), { content: 'dragon', limit: 2, offset: 5 });
    expect([first, next, last, beyond].map(({ body }) => body.total_results)).toEqual([5, 5, 5, 5]);
    expect([...idsOf(first.body), ...idsOf(next.body), ...idsOf(last.body)]).toEqual(
      idsOf((await search(member(), { content: 'dragon' })).body),
    );
    expect(beyond.body.messages).toEqual([]);
  });
});

describe('filters (GUILDS.md §4.11)', () => {
  it('author_id and author_type (user, bot, webhook and their negations)', async () => {
    const byOwner = await search(member(), { author_id: [room.owner.id], content: 'dragon' });
    expect(idsOf(byOwner.body)).toEqual([m['hoard']!.id]);
    const bots = await search(member(), { author_type: 'bot' });
    expect(idsOf(bots.body)).toEqual([m['botReport']!.id]);
    const notBots = await search(member(), { author_type: '-bot', content: 'dragon' });
    expect(idsOf(notBots.body)).not.toContain(m['botReport']!.id);
    expect(notBots.body.total_results).toBe(4);
    expect((await search(member(), { author_type: 'webhook' })).body.total_results).toBe(0);
    const users = await search(member(), { author_type: ['user', '-webhook'], content: 'dragon' });
    expect(users.body.total_results).toBe(4);
  });

  it('channel_id narrows to the named channels', async () => {
    const { body } = await search(member(), { channel_id: [second] });
    expect(idsOf(body)).toEqual([m['link']!.id]);
    const both = await search(member(), {
      channel_id: [second, general],
      content: 'dragon',
      author_type: 'user',
    });
    expect(both.body.total_results).toBe(4);
  });

  it('mentions, mention_everyone, replied_to_user_id and replied_to_message_id', async () => {
    // A reply mentions the replied-to author (GUILDS.md §4.4).
    expect(idsOf((await search(member(), { mentions: room.owner.id })).body)).toEqual([
      m['reply']!.id,
      m['mention']!.id,
    ]);
    expect(idsOf((await search(member(), { mention_everyone: 'true' })).body)).toEqual([m['everyone']!.id]);
    const notEveryone = await search(member(), { mention_everyone: 'False', author_id: room.owner.id });
    expect(idsOf(notEveryone.body)).not.toContain(m['everyone']!.id);
    expect(idsOf((await search(member(), { replied_to_user_id: room.owner.id })).body)).toEqual([
      m['reply']!.id,
    ]);
    expect(idsOf((await search(member(), { replied_to_message_id: m['hoard']!.id })).body)).toEqual([
      m['reply']!.id,
    ]);
  });

  it('has (link, embed, file, image and negations), link_hostname, embed_type, attachment name and extension', async () => {
    expect(idsOf((await search(member(), { has: 'link' })).body)).toEqual([m['embed']!.id, m['link']!.id]);
    expect(idsOf((await search(member(), { has: 'embed' })).body)).toEqual([m['embed']!.id]);
    expect(idsOf((await search(member(), { has: ['file', 'image'] })).body)).toEqual([m['file']!.id]);
    expect(idsOf((await search(member(), { has: ['image', 'video'] })).body)).toEqual([]);
    const noLink = await search(member(), { has: '-link', content: 'dragon' });
    expect(idsOf(noLink.body)).not.toContain(m['link']!.id);
    expect(noLink.body.total_results).toBe(4);
    expect(idsOf((await search(member(), { link_hostname: 'EXAMPLE.com' })).body)).toEqual([m['link']!.id]);
    expect(idsOf((await search(member(), { link_hostname: 'docs.example.org' })).body)).toEqual([
      m['embed']!.id,
    ]);
    expect(idsOf((await search(member(), { attachment_extension: 'png' })).body)).toEqual([m['file']!.id]);
    expect(idsOf((await search(member(), { attachment_filename: 'map.png' })).body)).toEqual([m['file']!.id]);
    expect((await search(member(), { attachment_extension: 'txt' })).body.total_results).toBe(0);
    expect((await search(member(), { embed_type: 'video' })).body.total_results).toBe(0);
  });

  it('min_id and max_id bound the ids, both exclusive', async () => {
    const { body } = await search(member(), {
      content: 'dragon',
      min_id: m['link']!.id,
      max_id: m['mentionsBlind']!.id,
    });
    expect(idsOf(body)).toEqual([m['botReport']!.id, m['hoard']!.id]);
  });

  it('pinned: true only pinned messages, false the others', async () => {
    // Pinning has routes of its own; here the flag is set as storage keeps it.
    await hearth.storage.db
      .updateTable('messages')
      .set({ pinned: 1 })
      .where('id', '=', m['hoard']!.id)
      .execute();
    expect(idsOf((await search(member(), { pinned: '1', content: 'dragon' })).body)).toEqual([
      m['hoard']!.id,
    ]);
    expect((await search(member(), { pinned: 'false', content: 'dragon' })).body.total_results).toBe(4);
  });

  it('include_nsfw adds age-restricted channels', async () => {
    const { body } = await search(owner(), { content: 'dragon', include_nsfw: 'true' });
    expect(idsOf(body)).toContain(m['nsfw']!.id);
    expect(idsOf((await search(owner(), { content: 'dragon' })).body)).not.toContain(m['nsfw']!.id);
  });
});

describe('who reads what (GUILDS.md §4.11: READ_MESSAGE_HISTORY; §4.1 message content)', () => {
  it('the owner reads every channel; a member without VIEW_CHANNEL or READ_MESSAGE_HISTORY does not', async () => {
    const byOwner = idsOf((await search(owner(), { content: 'dragon' })).body);
    expect(byOwner).toEqual(expect.arrayContaining([m['secret']!.id, m['hidden']!.id]));
    expect(byOwner).not.toContain(m['elsewhere']!.id);
  });

  it('channels the caller cannot read are left out; asking only for them is 50001 or 50013', async () => {
    const mixed = await search(member(), { channel_id: [secret, second] });
    expect(idsOf(mixed.body)).toEqual([m['link']!.id]);
    expect(await search(member(), { channel_id: secret })).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(await search(member(), { channel_id: noHistory })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    // A channel of another guild is not a channel the caller reads here.
    expect(await search(member(), { channel_id: other.channelId })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
  });

  it('a bot without message content finds by content only its own messages and those mentioning it', async () => {
    const { body } = await search(bot(blindBot), { content: 'dragon' });
    expect(idsOf(body)).toEqual([m['mentionsBlind']!.id]);
    expect(body.messages[0]![0]!.content).toBe(`<@${blindBot.botUserId}> dragon for you`);
    // Without a content filter it finds the rest, emptied as the message-content rule reads them.
    const listed = await search(bot(blindBot), { channel_id: second });
    expect(idsOf(listed.body)).toEqual([m['link']!.id]);
    expect(listed.body.messages[0]![0]).toMatchObject({ content: '', embeds: [], attachments: [] });
    expect((await search(bot(blindBot), { has: 'link' })).body.total_results).toBe(0);
  });
});

describe('bad requests (GUILDS.md §4.11; PROTOCOL.md §E.2)', () => {
  const choices = (field: string, values: readonly string[]) => ({
    [field]: {
      _errors: [
        {
          code: 'BASE_TYPE_CHOICES',
          message: `Value must be one of (${values.map((v) => `'${v}'`).join(', ')}).`,
        },
      ],
    },
  });

  it('limit 0 and 26, offset over 9975, a bad sort_by and a long content are 50035 naming the field', async () => {
    for (const [query, field] of [
      [{ limit: 0 }, 'limit'],
      [{ limit: 26 }, 'limit'],
      [{ offset: 9976 }, 'offset'],
      [{ offset: -1 }, 'offset'],
      [{ limit: 'many' }, 'limit'],
      [{ content: 'x'.repeat(1025) }, 'content'],
      [{ author_id: 'me' }, 'author_id'],
      [{ min_id: '12a' }, 'min_id'],
      [{ slop: 101 }, 'slop'],
      [{ channel_id: 'general' }, 'channel_id'],
    ] as const) {
      const { status, body } = await search(member(), query);
      expect(status, field).toBe(400);
      expect(body, field).toMatchObject({ code: 50035, message: 'Invalid Form Body' });
      expect(Object.keys((body as unknown as { errors: object }).errors), field).toEqual([field]);
    }
    expect(await search(member(), { sort_by: 'popularity' })).toEqual({
      status: 400,
      body: invalidForm(choices('sort_by', ['timestamp', 'relevance'])),
    });
    expect((await search(member(), { sort_order: 'up' })).body).toMatchObject({ code: 50035 });
    expect((await search(member(), { has: 'gold' })).body).toMatchObject({ code: 50035 });
    expect((await search(member(), { author_type: 'robot' })).body).toMatchObject({ code: 50035 });
    expect((await search(member(), { pinned: 'yes' })).body).toMatchObject({ code: 50035 });
    const tooMany = Array.from({ length: 101 }, (_, n) => String(1000 + n));
    expect((await search(member(), { author_id: tooMany })).body).toMatchObject({
      code: 50035,
      errors: { author_id: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } },
    });
  });

  it('limit 1 and 25, offset 9975 are accepted', async () => {
    expect((await search(member(), { limit: 1, content: 'dragon' })).body.messages).toHaveLength(1);
    expect((await search(member(), { limit: 25 })).status).toBe(200);
    expect((await search(member(), { offset: 9975 })).body).toMatchObject({
      total_results: expect.any(Number),
      messages: [],
    });
  });

  it('an unknown guild is 10004, a guild one is not a member of is 50001, no token is 401', async () => {
    expect(await searchGuild(hearth, '1234567890123456789', member())).toEqual({
      status: 404,
      body: { code: 10004, message: 'Unknown Guild' },
    });
    expect(await searchGuild<SearchBody>(hearth, room.guild.id, outsider.token)).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect((await call(hearth, `/guilds/${room.guild.id}/messages/search`)).status).toBe(401);
  });
});

describe('messages in threads are searched as their parent channel allows', () => {
  it('public threads for every reader of the parent; private threads for their members and MANAGE_THREADS', async () => {
    const place = await createRoom(hearth, { name: 'threads-home' });
    const start = async (type: number) => {
      const { status, body } = await call<{ id: string }>(hearth, `/channels/${place.channelId}/threads`, {
        method: 'POST',
        auth: place.owner.token,
        body: { name: `wyvern ${type}`, type },
      });
      expect(status).toBe(201);
      return body.id;
    };
    const open = await start(11);
    const closed = await start(12);
    const inOpen = await post(hearth, open, place.owner.token, { content: 'a wyvern nests here' });
    const inClosed = await post(hearth, closed, place.owner.token, { content: 'a wyvern hides here' });
    const find = (auth: string, query: Parameters<typeof searchGuild>[3] = {}) =>
      searchGuild(hearth, place.guild.id, auth, { content: 'wyvern', ...query });

    const byMember = await find(place.member.token);
    expect(byMember.status).toBe(200);
    expect(idsOf(byMember.body)).toEqual([inOpen.body.id]);
    const byOwner = await find(place.owner.token);
    expect(idsOf(byOwner.body).sort()).toEqual([inOpen.body.id, inClosed.body.id].sort());
    // The threads of the results come along, with the caller's memberships (the starter joined both).
    const withThreads = byOwner.body as SearchBody & {
      threads?: Array<{ id: string }>;
      members?: Array<{ id: string }>;
    };
    expect(withThreads.threads?.map((thread) => thread.id).sort()).toEqual([open, closed].sort());
    expect(withThreads.members?.map((member) => member.id).sort()).toEqual([open, closed].sort());
    expect(byMember.body).toMatchObject({ threads: [{ id: open, parent_id: place.channelId }], members: [] });
    const plain = await searchGuild(hearth, place.guild.id, place.owner.token, {
      channel_id: place.channelId,
    });
    expect(plain.body).not.toHaveProperty('threads');
    expect(idsOf((await find(place.member.token, { channel_id: open })).body)).toEqual([inOpen.body.id]);
    expect(await find(place.member.token, { channel_id: closed })).toMatchObject({
      status: 403,
      body: MISSING_ACCESS,
    });
  });
});
