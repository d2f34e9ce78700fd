import { REST } from '@discordjs/rest';
import { ChannelTypes, PermissionFlags } from '@hearth/protocol';
import { AuthorizationTokenType, ErrorType, sdkpp } from '@hearth/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot } from '../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { until } from '../../../test-support/wait.js';

/**
 * Linked channels through the library (issue 16; seed: GetUserGuilds, GetGuildChannels, LinkedChannel;
 * PROTOCOL.md §A.5): a player links the lobby to a channel of their guild from the game, the lobby's chat
 * and the channel's meet, and the guild's bot (discord.js's @discordjs/rest) sees the game's side.
 */

const { Status } = sdkpp.Client;
const { ViewChannel, SendMessages, ReadMessageHistory } = PermissionFlags;
const SCOPES = 'openid sdk.social_layer';

interface Player {
  client: sdkpp.Client;
  id: bigint;
  /** The session token of the account (to act in the guild as that person). */
  token: string;
  messages: bigint[];
  updated: bigint[];
}

describe('linked channels through the library', () => {
  let hearth: TestHearth;
  let game: TestGame;
  /** The game's backend (Bot token of the game). */
  let backend: REST;
  /** A bot in the guild, reading the channel as any guild bot would. */
  let guildBot: REST;
  let guildId: string;
  let guildBotUserId: string;
  let alice: Player;
  let bob: Player;
  const clients: sdkpp.Client[] = [];
  /** The URLs the clients were asked to open (guild invites). */
  const opened: string[] = [];
  /** The server's clock: real time moved by `skew` (the invite's hour runs out). */
  let skew = 0;

  async function player(account?: Awaited<ReturnType<typeof createPlayer>>): Promise<Player> {
    const person = account ?? (await createPlayer(hearth));
    const tokens = await grantTokens(hearth, game, person.token, SCOPES);
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, {
      opener: (url) => void opened.push(url),
    });
    clients.push(client);
    const seen: Player = {
      client,
      id: BigInt(person.user.id),
      token: person.token,
      messages: [],
      updated: [],
    };
    client.SetMessageCreatedCallback((message) => seen.messages.push(message));
    client.SetLobbyUpdatedCallback((lobby) => seen.updated.push(lobby));
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await until(() => client.GetStatus() === Status.Ready, 'Ready');
    return seen;
  }

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, { now: () => Date.now() + skew });
    game = await createGame(hearth, { publicClient: true });
    await hearth.services.applications.adminUpdate(game.id, {
      grant_flags: ['CommunicationFeaturesApproved'],
    });
    backend = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(game.botToken);
    const owner = await createPlayer(hearth);
    guildId = (await hearth.services.guilds.createGuild(owner.user.id, { name: 'Guild of the game' })).id;
    const bot = await addTestBot(hearth, { id: guildId, owner: { id: owner.user.id, token: owner.token } });
    await hearth.services.applications.adminUpdate(bot.id, { grant_flags: ['GatewayMessageContentLimited'] });
    guildBotUserId = bot.botUserId;
    guildBot = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(bot.botToken);
    alice = await player(owner);
    bob = await player();
  });
  afterAll(async () => {
    for (const client of clients) client.Disconnect();
    await until(() => clients.every((c) => c.GetStatus() === Status.Disconnected), 'the disconnects');
    await hearth.close();
  });

  it('a player links the lobby to a channel of their guild; messages cross both ways', async () => {
    const channel = (await hearth
      .api(`/guilds/${guildId}/channels`, {
        method: 'POST',
        auth: alice.token,
        body: {
          name: 'game-chat',
          // Private on the guild's side: bob, no member at all, still reads and writes it through the lobby.
          permission_overwrites: [
            { id: guildId, type: 0, allow: '0', deny: String(ViewChannel) },
            {
              id: guildBotUserId,
              type: 1,
              allow: String(ViewChannel | SendMessages | ReadMessageHistory),
              deny: '0',
            },
          ],
        },
      })
      .then((r) => r.json())) as { id: string };
    const lobby = (await backend.post('/lobbies', {
      body: { members: [{ id: String(alice.id), flags: 1 }, { id: String(bob.id) }] },
    })) as { id: string };
    const lobbyId = BigInt(lobby.id);
    await until(() => alice.client.GetLobbyHandle(lobbyId) !== undefined, "alice's LOBBY_CREATE");
    await until(() => bob.client.GetLobbyHandle(lobbyId) !== undefined, "bob's LOBBY_CREATE");
    expect(alice.client.GetLobbyHandle(lobbyId)?.LinkedChannel()).toBeUndefined();

    // Alice picks her guild and a channel in the game's own interface.
    const guilds = await alice.client.GetUserGuilds();
    expect(guilds.guilds.map((g) => [g.Id(), g.Name()])).toContainEqual([
      BigInt(guildId),
      'Guild of the game',
    ]);
    let reported: sdkpp.GuildChannel[] = [];
    const listed = await alice.client.GetGuildChannels(BigInt(guildId), (result, channels) => {
      expect(result.Successful()).toBe(true);
      reported = channels;
    });
    const picked = listed.channels.find((c) => c.Id() === BigInt(channel.id));
    expect(reported).toHaveLength(listed.channels.length);
    expect(picked?.Name()).toBe('game-chat');
    expect(picked?.Type()).toBe(ChannelTypes.GuildText);
    expect(picked?.ParentId()).toBeUndefined();
    expect(picked?.IsLinkable()).toBe(true);
    expect(picked?.IsViewableAndWriteableByAllMembers()).toBe(false);
    expect(picked?.LinkedLobby()).toBeUndefined();

    // Bob holds no CanLinkLobby: the library reports the platform's refusal.
    const refused = await bob.client.LinkChannelToLobby(lobbyId, BigInt(channel.id));
    expect([refused.Type(), refused.Status(), refused.ErrorCode()]).toEqual([
      ErrorType.HTTPError,
      403,
      50013,
    ]);
    const invalid = await alice.client.LinkChannelToLobby(lobbyId, 'not-a-channel');
    expect(invalid.Type()).toBe(ErrorType.ValidationError);

    const linked = await alice.client.LinkChannelToLobby(lobbyId, BigInt(channel.id));
    expect(linked.Successful()).toBe(true);
    const mine = alice.client.GetLobbyHandle(lobbyId)?.LinkedChannel();
    expect([mine?.Id(), mine?.Name(), mine?.GuildId()]).toEqual([
      BigInt(channel.id),
      'game-chat',
      BigInt(guildId),
    ]);
    await until(() => bob.updated.includes(lobbyId), "bob's LOBBY_UPDATE");
    expect(bob.client.GetLobbyHandle(lobbyId)?.LinkedChannel()?.Id()).toBe(BigInt(channel.id));
    const again = await alice.client.GetGuildChannels(guildId);
    const now = again.channels.find((c) => c.Id() === BigInt(channel.id));
    expect([now?.IsLinkable(), now?.LinkedLobby()?.LobbyId(), now?.LinkedLobby()?.ApplicationId()]).toEqual([
      false,
      lobbyId,
      BigInt(game.id),
    ]);

    // The game's side reaches the guild: the bot reads bob's message in the channel.
    const sent = await bob.client.SendLobbyMessageWithMetadata(lobbyId, 'gg from the game', { team: 'blue' });
    expect(sent.result.Successful()).toBe(true);
    const inChannel = (await guildBot.get(`/channels/${channel.id}/messages`)) as Array<{
      id: string;
      content: string;
      author: { id: string };
    }>;
    expect(inChannel.map((m) => [m.id, m.content, m.author.id])).toEqual([
      [String(sent.messageId), 'gg from the game', String(bob.id)],
    ]);
    expect(bob.client.GetMessageHandle(sent.messageId)?.ChannelId()).toBe(BigInt(channel.id));

    // The guild's side reaches the game: the bot answers in the channel, bob's client receives it.
    const answer = (await guildBot.post(`/channels/${channel.id}/messages`, {
      body: { content: 'well played' },
    })) as { id: string };
    await until(() => bob.messages.includes(BigInt(answer.id)), 'the channel message at bob');
    const received = bob.client.GetMessageHandle(BigInt(answer.id));
    expect([received?.Content(), received?.ChannelId()]).toEqual(['well played', BigInt(channel.id)]);
    const history = await bob.client.GetLobbyMessagesWithLimit(lobbyId, 10);
    expect(history.messages.map((m) => m.Content())).toEqual(['well played', 'gg from the game']);

    // Bob joins the guild from the game: a single-use invite for him, valid one hour.
    const joining = await bob.client.JoinLinkedLobbyGuild(
      lobbyId,
      () => expect.unreachable('bob has a full account'),
      (result, url) =>
        expect([result.Successful(), url]).toEqual([true, expect.stringContaining('/invite/')]),
    );
    expect(opened).toEqual([joining.inviteUrl]);
    const code = joining.inviteUrl.slice(joining.inviteUrl.lastIndexOf('/') + 1);
    const accept = (invite: string) => hearth.api(`/invites/${invite}`, { method: 'POST', auth: bob.token });
    expect((await accept(code)).status).toBe(200);
    await guildBot.get(`/guilds/${guildId}/members/${bob.id}`);
    expect((await accept(code)).status).toBe(404);
    const later = await bob.client.JoinLinkedLobbyGuild(lobbyId);
    expect(later.result.Successful()).toBe(true);
    skew += 60 * 60 * 1000 + 1_000;
    expect((await accept(later.inviteUrl.slice(later.inviteUrl.lastIndexOf('/') + 1))).status).toBe(404);

    const unlinked = await alice.client.UnlinkChannelFromLobby(lobbyId);
    expect(unlinked.Successful()).toBe(true);
    expect(alice.client.GetLobbyHandle(lobbyId)?.LinkedChannel()).toBeUndefined();
    // Without a linked channel there is no guild to join.
    const none = await bob.client.JoinLinkedLobbyGuild(lobbyId);
    expect([none.result.Status(), none.result.ErrorCode(), none.inviteUrl]).toEqual([400, 30105, '']);
  });
});
