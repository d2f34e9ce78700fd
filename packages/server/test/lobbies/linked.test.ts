import { GatewayIntents, GatewayOpcodes, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  call,
  type LobbyPlayer,
  lobbyGame,
  lobbyPlayer,
  type PlayerSession,
  playerSession,
} from '../../../../test-support/lobbies.js';
import { createPlayer, type TestGame } from '../../../../test-support/oauth.js';

/**
 * Linked channels (issue 16; PROTOCOL.md §A.3 row 10, §A.5): PATCH /lobbies/{id}/channel-linking, the
 * messages that cross the link both ways, what removes a link, and the channel list the library shows.
 */

const { ManageChannels, ViewChannel, SendMessages, ReadMessageHistory } = PermissionFlags;
const { Guilds, GuildMessages, MessageContent } = GatewayIntents;
const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const UNKNOWN = '1234567890123456789';

const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
const MISSING_PERMISSIONS = { code: 50013, message: 'Missing Permissions' };
const UNKNOWN_CHANNEL = { code: 10003, message: 'Unknown Channel' };
const UNKNOWN_LOBBY = { code: 10031, message: 'Unknown Lobby' };
const WRONG_TYPE = { code: 50024, message: 'Cannot execute action on this channel type' };
const AGE_RESTRICTED = { code: 30103, message: 'Age-restricted channels cannot be linked to a lobby' };
const ALREADY_LINKED = { code: 30104, message: 'Channel is already linked to another lobby' };
const NOT_LINKABLE = { code: 30102, message: 'Lobbies created with a secret cannot be linked to a channel' };

type Json = Record<string, unknown>;
type Game = TestGame & { bot: string };

let hearth: TestHearth;
let game: Game;
let guild: TestGuild;
/** Owns the guild (every permission) and may link the lobby (CanLinkLobby). */
let linker: LobbyPlayer;
/** A lobby member without CanLinkLobby, in no guild at all. */
let friend: LobbyPlayer;
let bot: TestGame;
let botGateway: GatewayClient;
let friendGateway: PlayerSession;
/** The server's clock: real time moved by `skew` (the invite tests move it past an hour). */
let skew = 0;

async function identifyBot(token: string): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({
    op: 2,
    d: { token, properties: PROPERTIES, intents: Guilds | GuildMessages | MessageContent },
  });
  await client.nextDispatch('READY');
  return client;
}

/** A server-created lobby whose members are the linker (CanLinkLobby) and the friend. */
async function newLobby(): Promise<string> {
  const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
    members: [{ id: linker.id, flags: 1 }, { id: friend.id }],
  });
  expect(lobby.status).toBe(201);
  return lobby.body.id;
}

/** A text channel of the guild created over HTTP by its owner. */
async function newChannel(body: Json = {}): Promise<string> {
  const created = await call<{ id: string }>(
    hearth,
    'POST',
    `/guilds/${guild.id}/channels`,
    linker.account.token,
    {
      name: `room-${Math.random().toString(36).slice(2, 8)}`,
      ...body,
    },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

/** The friend's next dispatch of this type about this lobby (`id` or `lobby_id`). */
async function friendSees(type: string, lobbyId: string): Promise<Json> {
  const frame = await friendGateway.client.next((f) => {
    const d = f.d as Json;
    return f.op === 0 && f.t === type && (d['id'] === lobbyId || d['lobby_id'] === lobbyId);
  });
  return frame.d as Json;
}

/** The bot's next dispatch of this type about this channel (`id` or `channel_id`). */
async function botSees(
  type: string,
  channelId: string,
  also: (d: Json) => boolean = () => true,
): Promise<Json> {
  const frame = await botGateway.next((f) => {
    const d = f.d as Json;
    return f.op === 0 && f.t === type && (d['id'] === channelId || d['channel_id'] === channelId) && also(d);
  });
  return frame.d as Json;
}

function link(lobbyId: string, auth: string, body?: unknown) {
  return call<Json>(hearth, 'PATCH', `/lobbies/${lobbyId}/channel-linking`, auth, body);
}

function shape(answer: { status: number; body: unknown }) {
  const body = answer.body as { code?: number; message?: string };
  return { status: answer.status, code: body?.code, message: body?.message };
}

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, { now: () => Date.now() + skew });
  game = await lobbyGame(hearth);
  const owner = await createPlayer(hearth);
  const created = await hearth.services.guilds.createGuild(owner.user.id, { name: 'Linked guild' });
  guild = { id: created.id, owner: { id: owner.user.id, token: owner.token } };
  linker = await lobbyPlayer(hearth, game, owner);
  friend = await lobbyPlayer(hearth, game);
  bot = await addTestBot(hearth, guild);
  await hearth.services.applications.adminUpdate(bot.id, { grant_flags: ['GatewayMessageContentLimited'] });
  botGateway = await identifyBot(bot.botToken);
  friendGateway = await playerSession(hearth.url, friend);
});

afterAll(async () => {
  await botGateway?.close();
  await friendGateway?.client.close();
  await hearth?.close();
});

describe('PATCH /lobbies/{lobby.id}/channel-linking (PROTOCOL.md §A.3 row 10)', () => {
  it('links a private text channel: the lobby carries linked_channel, members get LOBBY_UPDATE, the guild CHANNEL_UPDATE', async () => {
    const lobbyId = await newLobby();
    // Private: @everyone may not see it; the friend is not even in the guild (§A.5: every member still reads it).
    const channelId = await newChannel({
      permission_overwrites: [
        { id: guild.id, type: 0, allow: '0', deny: String(ViewChannel) },
        { id: bot.botUserId, type: 1, allow: String(ViewChannel), deny: '0' },
      ],
    });
    const linked = await link(lobbyId, linker.bearer, { channel_id: channelId });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ id: lobbyId, application_id: game.id });
    expect(linked.body['linked_channel']).toMatchObject({ id: channelId, type: 0, guild_id: guild.id });

    const read = await call<Json>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
    expect((read.body['linked_channel'] as Json)['id']).toBe(channelId);

    const update = await friendSees('LOBBY_UPDATE', lobbyId);
    expect(update).toMatchObject({ id: lobbyId, linked_channel: { id: channelId } });
    const channelUpdate = await botSees('CHANNEL_UPDATE', channelId);
    expect(channelUpdate).toMatchObject({
      id: channelId,
      linked_lobby: { application_id: game.id, lobby_id: lobbyId, linked_by: linker.id },
    });

    // Linking the same channel again changes nothing.
    const again = await link(lobbyId, linker.bearer, { channel_id: channelId });
    expect(again.status).toBe(200);
    expect((again.body['linked_channel'] as Json)['id']).toBe(channelId);
  });

  it('carries messages both ways: a lobby message lands in the channel, a channel message in the lobby', async () => {
    const lobbyId = await newLobby();
    const channelId = await newChannel();
    expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
    await friendSees('LOBBY_UPDATE', lobbyId);

    const sent = await call<Json>(hearth, 'POST', `/lobbies/${lobbyId}/messages`, friend.bearer, {
      content: 'hello from the game',
      metadata: { emote: 'wave' },
    });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({
      lobby_id: lobbyId,
      channel_id: channelId,
      metadata: { emote: 'wave' },
    });
    const messageId = sent.body['id'] as string;

    // The bot in the guild sees it as a channel message: same id, the player as author, no metadata.
    const created = await botSees('MESSAGE_CREATE', channelId);
    expect(created).toMatchObject({
      id: messageId,
      channel_id: channelId,
      guild_id: guild.id,
      content: 'hello from the game',
      author: { id: friend.id },
    });
    expect(created).not.toHaveProperty('metadata');
    const inChannel = await call<Json[]>(
      hearth,
      'GET',
      `/channels/${channelId}/messages`,
      `Bot ${bot.botToken}`,
    );
    expect(inChannel.body.map((m) => [m['id'], m['content']])).toEqual([[messageId, 'hello from the game']]);
    expect(inChannel.body[0]).not.toHaveProperty('metadata');
    const echo = await friendSees('LOBBY_MESSAGE_CREATE', lobbyId);
    expect(echo).toMatchObject({ id: messageId, channel_id: channelId });

    // The other way: the guild's owner writes in the channel; the friend (no guild member) receives it.
    const reply = await call<Json>(hearth, 'POST', `/channels/${channelId}/messages`, linker.account.token, {
      content: 'hello from the guild',
    });
    expect(reply.status).toBe(200);
    const mirrored = await friendSees('LOBBY_MESSAGE_CREATE', lobbyId);
    expect(mirrored).toMatchObject({
      id: reply.body['id'],
      lobby_id: lobbyId,
      channel_id: channelId,
      content: 'hello from the guild',
      author: { id: linker.id },
    });

    const history = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, friend.bearer);
    expect(history.status).toBe(200);
    expect(history.body.map((m) => [m['content'], m['channel_id']])).toEqual([
      ['hello from the guild', channelId],
      ['hello from the game', channelId],
    ]);
    await botSees('MESSAGE_CREATE', channelId);
  });

  it("a message the channel refuses (AutoMod) still reaches the lobby, as the lobby's alone", async () => {
    const lobbyId = await newLobby();
    const channelId = await newChannel();
    expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
    await friendSees('LOBBY_UPDATE', lobbyId);
    const rule = await call(
      hearth,
      'POST',
      `/guilds/${guild.id}/auto-moderation/rules`,
      linker.account.token,
      {
        name: 'no forbidden words',
        enabled: true,
        event_type: 1,
        trigger_type: 1,
        trigger_metadata: { keyword_filter: ['forbidden'] },
        actions: [{ type: 1 }],
        exempt_channels: [],
      },
    );
    expect(rule.status).toBe(200);
    try {
      const sent = await call<Json>(hearth, 'POST', `/lobbies/${lobbyId}/messages`, friend.bearer, {
        content: 'a forbidden word',
      });
      expect(sent.status).toBe(201);
      expect(sent.body['channel_id']).toBe(lobbyId);
      const delivered = await friendSees('LOBBY_MESSAGE_CREATE', lobbyId);
      expect(delivered).toMatchObject({
        id: sent.body['id'],
        content: 'a forbidden word',
        channel_id: lobbyId,
      });
      const inChannel = await call<Json[]>(
        hearth,
        'GET',
        `/channels/${channelId}/messages`,
        linker.account.token,
      );
      expect(inChannel.body).toEqual([]);
    } finally {
      const ruleId = (rule.body as { id: string }).id;
      await call(
        hearth,
        'DELETE',
        `/guilds/${guild.id}/auto-moderation/rules/${ruleId}`,
        linker.account.token,
      );
    }
  });

  it('a message deleted in the channel leaves the lobby too (LOBBY_MESSAGE_DELETE)', async () => {
    const lobbyId = await newLobby();
    const channelId = await newChannel();
    expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
    const fromGame = await call<Json>(hearth, 'POST', `/lobbies/${lobbyId}/messages`, friend.bearer, {
      content: 'delete me',
    });
    const fromGuild = await call<Json>(
      hearth,
      'POST',
      `/channels/${channelId}/messages`,
      linker.account.token,
      {
        content: 'and me',
      },
    );
    const kept = await call<Json>(hearth, 'POST', `/channels/${channelId}/messages`, linker.account.token, {
      content: 'keep me',
    });
    for (const id of [fromGame.body['id'], fromGuild.body['id']]) {
      const deleted = await call(
        hearth,
        'DELETE',
        `/channels/${channelId}/messages/${id}`,
        linker.account.token,
      );
      expect(deleted.status).toBe(204);
      const gone = await friendGateway.client.next(
        (f) => f.t === 'LOBBY_MESSAGE_DELETE' && (f.d as Json)['id'] === id,
      );
      expect(gone.d).toEqual({ id, lobby_id: lobbyId });
    }
    const history = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, friend.bearer);
    expect(history.body.map((m) => m['id'])).toEqual([kept.body['id']]);
  });

  it('a message edited in the channel is edited in the lobby too (LOBBY_MESSAGE_UPDATE)', async () => {
    const lobbyId = await newLobby();
    const channelId = await newChannel();
    expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
    const sent = await call<Json>(hearth, 'POST', `/channels/${channelId}/messages`, linker.account.token, {
      content: 'first draft',
    });
    const id = sent.body['id'];
    const edited = await call(
      hearth,
      'PATCH',
      `/channels/${channelId}/messages/${id}`,
      linker.account.token,
      {
        content: 'final words',
      },
    );
    expect(edited.status).toBe(200);
    const update = await friendGateway.client.next(
      (f) => f.t === 'LOBBY_MESSAGE_UPDATE' && (f.d as Json)['id'] === id,
    );
    expect(update.d).toMatchObject({ id, lobby_id: lobbyId, content: 'final words', tts: false });
    const history = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, friend.bearer);
    expect(history.body.find((m) => m['id'] === id)).toMatchObject({ content: 'final words' });
  });

  it('unlinks with an empty body, a null channel_id or no body at all', async () => {
    const lobbyId = await newLobby();
    const channelId = await newChannel();
    for (const body of [{}, { channel_id: null }, undefined]) {
      expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
      await friendSees('LOBBY_UPDATE', lobbyId);
      const unlinked = await link(lobbyId, linker.bearer, body);
      expect(unlinked.status).toBe(200);
      expect(unlinked.body).not.toHaveProperty('linked_channel');
      const update = await friendSees('LOBBY_UPDATE', lobbyId);
      expect(update).not.toHaveProperty('linked_channel');
      const channelUpdate = await botSees('CHANNEL_UPDATE', channelId, (d) => !('linked_lobby' in d));
      expect(channelUpdate).toMatchObject({ id: channelId });
    }
    // Unlinking what is not linked is no error.
    expect((await link(lobbyId, linker.bearer, {})).status).toBe(200);
    // The unlinked channel may now go to another lobby.
    expect((await link(await newLobby(), linker.bearer, { channel_id: channelId })).status).toBe(200);
  });

  it('relinking the lobby to another channel frees the first one', async () => {
    const lobbyId = await newLobby();
    const first = await newChannel();
    const second = await newChannel();
    expect((await link(lobbyId, linker.bearer, { channel_id: first })).status).toBe(200);
    const moved = await link(lobbyId, linker.bearer, { channel_id: second });
    expect((moved.body['linked_channel'] as Json)['id']).toBe(second);
    expect((await link(await newLobby(), linker.bearer, { channel_id: first })).status).toBe(200);
  });

  describe('refusals (PROTOCOL.md §A.5)', () => {
    it('a non-member of the lobby: 50001; a member without CanLinkLobby: 50013, to link and to unlink', async () => {
      const lobbyId = await newLobby();
      const channelId = await newChannel();
      const stranger = await lobbyPlayer(hearth, game);
      expect(shape(await link(lobbyId, stranger.bearer, { channel_id: channelId }))).toEqual({
        status: 403,
        ...MISSING_ACCESS,
      });
      expect(shape(await link(lobbyId, friend.bearer, { channel_id: channelId }))).toEqual({
        status: 403,
        ...MISSING_PERMISSIONS,
      });
      expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
      expect(shape(await link(lobbyId, friend.bearer, {}))).toEqual({ status: 403, ...MISSING_PERMISSIONS });
      const still = await call<Json>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
      expect((still.body['linked_channel'] as Json)['id']).toBe(channelId);
    });

    it('unlinking needs CanLinkLobby only, no permission in the guild', async () => {
      const lobbyId = await newLobby();
      const channelId = await newChannel();
      expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
      // The friend gets CanLinkLobby; in the guild they hold nothing.
      expect(
        (await call(hearth, 'PUT', `/lobbies/${lobbyId}/members/${friend.id}`, game.bot, { flags: 1 }))
          .status,
      ).toBe(200);
      expect(shape(await link(lobbyId, friend.bearer, { channel_id: channelId }))).toEqual({
        status: 403,
        ...MISSING_ACCESS,
      });
      const unlinked = await link(lobbyId, friend.bearer, {});
      expect(unlinked.status).toBe(200);
      expect(unlinked.body).not.toHaveProperty('linked_channel');
    });

    it('each missing channel permission: MANAGE_CHANNELS, SEND_MESSAGES (50013), VIEW_CHANNEL (50001)', async () => {
      // A guild whose @everyone holds nothing: each member holds exactly their role's bits.
      const bare = await createTestGuild(hearth);
      await setEveryonePermissions(hearth, bare, 0n);
      const channelId = await seedTestChannel(hearth, bare.id);
      const cases: Array<[bigint, object]> = [
        [ViewChannel | SendMessages, { status: 403, ...MISSING_PERMISSIONS }],
        [ManageChannels | ViewChannel, { status: 403, ...MISSING_PERMISSIONS }],
        [ManageChannels | SendMessages, { status: 403, ...MISSING_ACCESS }],
        [ManageChannels | ViewChannel | SendMessages | ReadMessageHistory, { status: 200 }],
      ];
      for (const [permissions, expected] of cases) {
        const member = await lobbyPlayer(hearth, game);
        await hearth.services.guilds.addMember(bare.id, member.id);
        await grantTestRole(hearth, bare, permissions, [member.id]);
        const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
          members: [{ id: member.id, flags: 1 }],
        });
        const answer = shape(await link(lobby.body.id, member.bearer, { channel_id: channelId }));
        expect(answer.status === 200 ? { status: 200 } : answer, String(permissions)).toEqual(expected);
      }
    });

    it('voice (50024), age-restricted (30103), unknown (10003), another guild (50001) and a linked channel (30104)', async () => {
      const lobbyId = await newLobby();
      const voice = await newChannel({ type: 2 });
      const category = await newChannel({ type: 4 });
      const nsfw = await newChannel({ nsfw: true });
      expect(shape(await link(lobbyId, linker.bearer, { channel_id: voice }))).toEqual({
        status: 400,
        ...WRONG_TYPE,
      });
      expect(shape(await link(lobbyId, linker.bearer, { channel_id: category }))).toEqual({
        status: 400,
        ...WRONG_TYPE,
      });
      expect(shape(await link(lobbyId, linker.bearer, { channel_id: nsfw }))).toEqual({
        status: 400,
        ...AGE_RESTRICTED,
      });
      expect(shape(await link(lobbyId, linker.bearer, { channel_id: UNKNOWN }))).toEqual({
        status: 404,
        ...UNKNOWN_CHANNEL,
      });
      const elsewhere = await hearth.services.guilds.createGuild((await createPlayer(hearth)).user.id, {
        name: 'Elsewhere',
      });
      const foreign = await seedTestChannel(hearth, elsewhere.id);
      expect(shape(await link(lobbyId, linker.bearer, { channel_id: foreign }))).toEqual({
        status: 403,
        ...MISSING_ACCESS,
      });
      const taken = await newChannel();
      expect((await link(await newLobby(), linker.bearer, { channel_id: taken })).status).toBe(200);
      expect(shape(await link(lobbyId, linker.bearer, { channel_id: taken }))).toEqual({
        status: 400,
        ...ALREADY_LINKED,
      });
      const read = await call<Json>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
      expect(read.body).not.toHaveProperty('linked_channel');
    });

    it("a lobby created with a secret (30102), another game's lobby (10031), a malformed body (50035)", async () => {
      const channelId = await newChannel();
      const joined = await call<{ id: string }>(hearth, 'PUT', '/lobbies', linker.bearer, {
        secret: 'linked-secret',
      });
      expect(joined.status).toBe(200);
      await call(hearth, 'PUT', `/lobbies/${joined.body.id}/members/${linker.id}`, game.bot, { flags: 1 });
      expect(shape(await link(joined.body.id, linker.bearer, { channel_id: channelId }))).toEqual({
        status: 400,
        ...NOT_LINKABLE,
      });

      const otherGame = await lobbyGame(hearth);
      const otherLobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', otherGame.bot, {});
      expect(shape(await link(otherLobby.body.id, linker.bearer, { channel_id: channelId }))).toEqual({
        status: 404,
        ...UNKNOWN_LOBBY,
      });

      const lobbyId = await newLobby();
      for (const channel_id of ['not-a-snowflake', 5, true, ['1']]) {
        const answer = await link(lobbyId, linker.bearer, { channel_id });
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({ code: 50035, errors: { channel_id: {} } });
      }
      expect((await link(lobbyId, game.bot, { channel_id: channelId })).status).toBe(403);
    });

    it('20 links per 2 hours per application before approval, then 429', async () => {
      const unapproved = await lobbyGame(hearth, { approved: false });
      const owner = await lobbyPlayer(hearth, unapproved, linker.account);
      const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', unapproved.bot, {
        members: [{ id: owner.id, flags: 1 }],
      });
      for (let i = 0; i < 20; i++) expect((await link(lobby.body.id, owner.bearer, {})).status).toBe(200);
      const limited = await link(lobby.body.id, owner.bearer, {});
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).not.toBeNull();
    });
  });

  describe('what removes a link', () => {
    it('deleting the channel: the lobby loses linked_channel and its members get LOBBY_UPDATE', async () => {
      const lobbyId = await newLobby();
      const channelId = await newChannel();
      expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
      await friendSees('LOBBY_UPDATE', lobbyId);
      expect((await call(hearth, 'DELETE', `/channels/${channelId}`, linker.account.token)).status).toBe(200);
      const update = await friendSees('LOBBY_UPDATE', lobbyId);
      expect(update).not.toHaveProperty('linked_channel');
      const read = await call<Json>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
      expect(read.body).not.toHaveProperty('linked_channel');
    });

    it('deleting the guild: the lobby loses linked_channel and its members get LOBBY_UPDATE', async () => {
      const doomed = await hearth.services.guilds.createGuild(linker.account.user.id, { name: 'Doomed' });
      const made = await call<{ id: string }>(
        hearth,
        'POST',
        `/guilds/${doomed.id}/channels`,
        linker.account.token,
        { name: 'last-room' },
      );
      expect(made.status).toBe(201);
      const lobbyId = await newLobby();
      expect((await link(lobbyId, linker.bearer, { channel_id: made.body.id })).status).toBe(200);
      await friendSees('LOBBY_UPDATE', lobbyId);
      expect((await call(hearth, 'DELETE', `/guilds/${doomed.id}`, linker.account.token)).status).toBe(204);
      const update = await friendSees('LOBBY_UPDATE', lobbyId);
      expect(update).not.toHaveProperty('linked_channel');
      const read = await call<Json>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
      expect(read.body).not.toHaveProperty('linked_channel');
    });

    it('deleting the lobby: the channel is free again and its guild gets CHANNEL_UPDATE', async () => {
      const lobbyId = await newLobby();
      const channelId = await newChannel();
      expect((await link(lobbyId, linker.bearer, { channel_id: channelId })).status).toBe(200);
      expect((await call(hearth, 'DELETE', `/lobbies/${lobbyId}`, game.bot)).status).toBe(204);
      const update = await botSees('CHANNEL_UPDATE', channelId, (d) => !('linked_lobby' in d));
      expect(update).toMatchObject({ id: channelId, guild_id: guild.id });
      expect((await link(await newLobby(), linker.bearer, { channel_id: channelId })).status).toBe(200);
    });
  });
});

describe("GET /users/@me/guilds/{guild.id}/channels (the library's GetGuildChannels)", () => {
  it('lists visible channels in client order with isLinkable, isViewableAndWriteableByAllMembers and the linked lobby', async () => {
    const owner = await createPlayer(hearth);
    const created = await hearth.services.guilds.createGuild(owner.user.id, { name: 'Ordered' });
    const player = await lobbyPlayer(hearth, game, owner);
    const post = async (body: Json) => {
      const answer = await call<{ id: string }>(
        hearth,
        'POST',
        `/guilds/${created.id}/channels`,
        owner.token,
        body,
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(201);
      return answer.body.id;
    };
    const listed = await call<Json[]>(hearth, 'GET', `/guilds/${created.id}/channels`, owner.token);
    const defaults = listed.body.map((c) => c['id'] as string);
    for (const id of defaults) await call(hearth, 'DELETE', `/channels/${id}`, owner.token);

    const lobbyChat = await post({ name: 'lobby-chat' });
    const category = await post({ name: 'Games', type: 4 });
    const voice = await post({ name: 'Voice', type: 2, parent_id: category });
    const secret = await post({
      name: 'admins',
      parent_id: category,
      permission_overwrites: [{ id: created.id, type: 0, allow: '0', deny: String(ViewChannel) }],
    });
    const adult = await post({ name: 'adult', parent_id: category, nsfw: true });
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: player.id, flags: 1 }],
    });
    expect((await link(lobby.body.id, player.bearer, { channel_id: lobbyChat })).status).toBe(200);

    const answer = await call<Json[]>(
      hearth,
      'GET',
      `/users/@me/guilds/${created.id}/channels`,
      player.bearer,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      {
        id: lobbyChat,
        name: 'lobby-chat',
        type: 0,
        position: expect.any(Number),
        parent_id: null,
        is_linkable: false,
        is_viewable_and_writeable_by_all_members: true,
        linked_lobby: { application_id: game.id, lobby_id: lobby.body.id },
      },
      expect.objectContaining({ id: category, type: 4, is_linkable: false, linked_lobby: null }),
      expect.objectContaining({
        id: secret,
        parent_id: category,
        is_linkable: true,
        is_viewable_and_writeable_by_all_members: false,
      }),
      expect.objectContaining({
        id: adult,
        is_linkable: false,
        is_viewable_and_writeable_by_all_members: true,
      }),
      expect.objectContaining({ id: voice, type: 2, is_linkable: false }),
    ]);

    // A member who cannot see the private channel does not get it; nothing is linkable without the rights.
    const member = await lobbyPlayer(hearth, game);
    await hearth.services.guilds.addMember(created.id, member.id);
    const theirs = await call<Json[]>(
      hearth,
      'GET',
      `/users/@me/guilds/${created.id}/channels`,
      member.bearer,
    );
    expect(theirs.body.map((c) => c['id'])).not.toContain(secret);
    expect(theirs.body.every((c) => c['is_linkable'] === false)).toBe(true);

    const outsider = await lobbyPlayer(hearth, game);
    expect(
      shape(await call(hearth, 'GET', `/users/@me/guilds/${created.id}/channels`, outsider.bearer)),
    ).toEqual({
      status: 403,
      ...MISSING_ACCESS,
    });
    expect(shape(await call(hearth, 'GET', `/users/@me/guilds/${UNKNOWN}/channels`, member.bearer))).toEqual({
      status: 404,
      code: 10004,
      message: 'Unknown Guild',
    });
  });
});

describe('Create Lobby Channel Invite for Self and for User (PROTOCOL.md §A.3 rows 14, 15)', () => {
  const UNKNOWN_INVITE = { code: 10006, message: 'Unknown Invite' };
  const NOT_LINKED = { code: 30105, message: 'Lobby has no linked channel' };
  const HOUR = 60 * 60 * 1000;

  /** A linked lobby (kept a week without activity) holding the linker and `members`. */
  async function linkedLobby(members: readonly LobbyPlayer[]): Promise<string> {
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      idle_timeout_seconds: 604_800,
      members: [{ id: linker.id, flags: 1 }, ...members.map((m) => ({ id: m.id }))],
    });
    expect((await link(lobby.body.id, linker.bearer, { channel_id: await newChannel() })).status).toBe(200);
    return lobby.body.id;
  }

  function accept(code: string, player: LobbyPlayer) {
    return call<Json>(hearth, 'POST', `/invites/${code}`, player.account.token);
  }

  it('a single-use invite for its user alone: it admits them once within the hour, then never again', async () => {
    const [guest, other] = [await lobbyPlayer(hearth, game), await lobbyPlayer(hearth, game)];
    const lobbyId = await linkedLobby([guest, other]);

    const mine = await call<{ code: string }>(
      hearth,
      'POST',
      `/lobbies/${lobbyId}/members/@me/invites`,
      guest.bearer,
    );
    expect(mine.status).toBe(200);
    expect(Object.keys(mine.body)).toEqual(['code']);
    const resolved = await call<Json>(hearth, 'GET', `/invites/${mine.body.code}?with_expiration=true`);
    expect(resolved.body).toMatchObject({ guild: { id: guild.id } });

    // Only its user may use it.
    expect(shape(await accept(mine.body.code, other))).toEqual({ status: 404, ...UNKNOWN_INVITE });
    skew += HOUR - 60_000;
    const joined = await accept(mine.body.code, guest);
    expect(joined.status).toBe(200);
    expect(joined.body).toMatchObject({ code: mine.body.code, guild: { id: guild.id } });
    const member = await call(
      hearth,
      'GET',
      `/guilds/${guild.id}/members/${guest.id}`,
      `Bot ${bot.botToken}`,
    );
    expect(member.status).toBe(200);
    // Single use: gone once used.
    expect(shape(await accept(mine.body.code, guest))).toEqual({ status: 404, ...UNKNOWN_INVITE });

    // For a user, by the game's backend: expired an hour after its creation.
    const theirs = await call<{ code: string }>(
      hearth,
      'POST',
      `/lobbies/${lobbyId}/members/${other.id}/invites`,
      game.bot,
    );
    expect(theirs.status).toBe(200);
    skew += HOUR + 1_000;
    expect(shape(await accept(theirs.body.code, other))).toEqual({ status: 404, ...UNKNOWN_INVITE });
    const outside = await call(
      hearth,
      'GET',
      `/guilds/${guild.id}/members/${other.id}`,
      `Bot ${bot.botToken}`,
    );
    expect(outside.status).toBe(404);
  });

  it('refused for a non-member (50001), a lobby without a linked channel (30105) and another game (10031)', async () => {
    const [member, stranger] = [await lobbyPlayer(hearth, game), await lobbyPlayer(hearth, game)];
    const lobbyId = await linkedLobby([member]);
    expect(
      shape(await call(hearth, 'POST', `/lobbies/${lobbyId}/members/@me/invites`, stranger.bearer)),
    ).toEqual({
      status: 403,
      ...MISSING_ACCESS,
    });
    expect(
      shape(await call(hearth, 'POST', `/lobbies/${lobbyId}/members/${stranger.id}/invites`, game.bot)),
    ).toEqual({ status: 403, ...MISSING_ACCESS });

    const unlinked = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: member.id }],
    });
    const path = `/lobbies/${unlinked.body.id}/members`;
    expect(shape(await call(hearth, 'POST', `${path}/@me/invites`, member.bearer))).toEqual({
      status: 400,
      ...NOT_LINKED,
    });
    expect(shape(await call(hearth, 'POST', `${path}/${member.id}/invites`, game.bot))).toEqual({
      status: 400,
      ...NOT_LINKED,
    });

    const otherGame = await lobbyGame(hearth);
    expect(
      shape(await call(hearth, 'POST', `/lobbies/${lobbyId}/members/${member.id}/invites`, otherGame.bot)),
    ).toEqual({
      status: 404,
      ...UNKNOWN_LOBBY,
    });
    // Each route admits only its own kind of caller (a bot: 20001; a player's token: 401, as on every bot route).
    const asBot = await call(hearth, 'POST', `/lobbies/${lobbyId}/members/@me/invites`, game.bot);
    expect(shape(asBot)).toEqual({ status: 403, code: 20001, message: 'Bots cannot use this endpoint' });
    const asPlayer = await call(
      hearth,
      'POST',
      `/lobbies/${lobbyId}/members/${member.id}/invites`,
      member.bearer,
    );
    expect(asPlayer.status).toBe(401);
  });
});
