import { REST } from '@discordjs/rest';
import { IDENTIFY_WINDOW_MS } from '@hearth/protocol';
import { AuthorizationTokenType, ErrorType, sdkpp } from '@hearth/sdk';
import type { Clock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { until } from '../../../test-support/wait.js';

/**
 * Lobbies through the library (issue 6; seed: CreateOrJoinLobby, GetLobbyMessagesWithLimit, MessageHandle):
 * two players' clients against a live server, and the game's backend driving the bot routes with a
 * third-party client, @discordjs/rest, pointed at Hearth by its base URL alone.
 */

const { Status } = sdkpp.Client;
const SCOPES = 'openid sdk.social_layer';

/** What one client's callbacks reported, in order. */
type Seen = string[];

describe('lobbies through the library', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let rest: REST;
  const clients: sdkpp.Client[] = [];
  /** The server's clock, moved past the identify window (one Identify per user per 5 s) to reconnect. */
  let skew = 0;
  const clock: Clock = { now: () => Date.now() + skew };

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await createGame(hearth, { publicClient: true });
    rest = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(game.botToken);
  });
  afterAll(async () => {
    for (const client of clients) client.Disconnect();
    await until(() => clients.every((c) => c.GetStatus() === Status.Disconnected), 'the disconnects');
    await hearth.close();
  });

  /** A player whose client is Ready, with every lobby and message callback recording into `seen`. */
  async function player(): Promise<{ client: sdkpp.Client; id: bigint; seen: Seen }> {
    const account = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, account.token, SCOPES);
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url);
    clients.push(client);
    const seen: Seen = [];
    client.SetLobbyCreatedCallback((lobby) => seen.push(`created ${lobby}`));
    client.SetLobbyUpdatedCallback((lobby) => seen.push(`updated ${lobby}`));
    client.SetLobbyDeletedCallback((lobby) => seen.push(`deleted ${lobby}`));
    client.SetLobbyMemberAddedCallback((lobby, member) => seen.push(`member added ${lobby} ${member}`));
    client.SetLobbyMemberUpdatedCallback((lobby, member) => seen.push(`member updated ${lobby} ${member}`));
    client.SetLobbyMemberRemovedCallback((lobby, member) => seen.push(`member removed ${lobby} ${member}`));
    client.SetMessageCreatedCallback((message) => seen.push(`message ${message}`));
    client.SetMessageUpdatedCallback((message) => seen.push(`message updated ${message}`));
    client.SetMessageDeletedCallback((message, channel) =>
      seen.push(`message deleted ${message} ${channel}`),
    );
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await until(() => client.GetStatus() === Status.Ready, 'Ready');
    return { client, id: BigInt(account.user.id), seen };
  }

  it('two players join one lobby by its secret, see each other arrive, chat, and read the history', async () => {
    const alice = await player();
    const bob = await player();

    const created = await alice.client.CreateOrJoinLobbyWithMetadata(
      'table-7',
      { mode: 'duel' },
      { deck: 'red' },
    );
    expect(created.result.Successful()).toBe(true);
    const lobbyId = created.lobbyId;
    await until(() => alice.seen.includes(`created ${lobbyId}`), "alice's LOBBY_CREATE");

    let reported: [boolean, bigint] | undefined;
    const joined = await bob.client.CreateOrJoinLobby('table-7', (result, id) => {
      reported = [result.Successful(), id];
    });
    expect(joined.lobbyId).toBe(lobbyId);
    expect(reported).toEqual([true, lobbyId]);
    await until(() => alice.seen.includes(`member added ${lobbyId} ${bob.id}`), "bob's arrival at alice's");
    await until(() => bob.seen.includes(`created ${lobbyId}`), "bob's LOBBY_CREATE");

    const lobby = alice.client.GetLobbyHandle(lobbyId);
    expect(lobby?.LobbyMemberIds()).toEqual([alice.id, bob.id]);
    expect(lobby?.Metadata()).toEqual({ mode: 'duel' });
    expect(lobby?.GetLobbyMemberHandle(alice.id)?.Metadata()).toEqual({ deck: 'red' });
    expect(bob.client.GetLobbyIds()).toEqual([lobbyId]);

    const hello = await alice.client.SendLobbyMessage(lobbyId, 'hello bob');
    expect(hello.result.Successful()).toBe(true);
    await until(() => bob.seen.includes(`message ${hello.messageId}`), 'the message at bob');
    const received = bob.client.GetMessageHandle(hello.messageId);
    expect(received?.Content()).toBe('hello bob');
    expect(received?.AuthorId()).toBe(alice.id);
    expect(received?.ChannelId()).toBe(lobbyId);
    expect(received?.ApplicationId()).toBe(BigInt(game.id));
    expect(received?.ModerationMetadata()).toEqual({});

    const reply = await bob.client.SendLobbyMessageWithMetadata(lobbyId, 'hi alice', { emote: 'wave' });
    await until(() => alice.seen.includes(`message ${reply.messageId}`), 'the reply at alice');
    expect(alice.client.GetMessageHandle(reply.messageId)?.Metadata()).toEqual({ emote: 'wave' });

    const history = await bob.client.GetLobbyMessagesWithLimit(lobbyId, 10);
    expect(history.result.Successful()).toBe(true);
    expect(history.messages.map((m) => m.Content())).toEqual(['hi alice', 'hello bob']);

    // The game's backend moderates a message; members see the verdict as an update.
    await rest.put(`/lobbies/${lobbyId}/messages/${hello.messageId}/moderation-metadata`, {
      body: { action: 'hide', reason: 'spoiler' },
    });
    await until(() => bob.seen.includes(`message updated ${hello.messageId}`), 'the moderation update');
    expect(bob.client.GetMessageHandle(hello.messageId)?.ModerationMetadata()).toEqual({
      action: 'hide',
      reason: 'spoiler',
    });

    const left = await bob.client.LeaveLobby(lobbyId);
    expect(left.Successful()).toBe(true);
    await until(() => alice.seen.includes(`member removed ${lobbyId} ${bob.id}`), "bob's departure");
    await until(() => bob.seen.includes(`deleted ${lobbyId}`), "bob's LOBBY_DELETE");
    expect(bob.client.GetLobbyHandle(lobbyId)).toBeUndefined();
    expect(alice.client.GetLobbyHandle(lobbyId)?.LobbyMemberIds()).toEqual([alice.id]);
  });

  it('the game backend drives the bot routes with @discordjs/rest; members follow every change', async () => {
    const carol = await player();
    const dave = await player();
    const lobby = (await rest.post('/lobbies', {
      body: { metadata: { map: 'harbor' }, members: [{ id: String(carol.id) }] },
    })) as { id: string; metadata: unknown; members: unknown[]; flags: number };
    expect(lobby).toMatchObject({ metadata: { map: 'harbor' }, flags: 0 });
    const lobbyId = BigInt(lobby.id);
    await until(() => carol.seen.includes(`created ${lobbyId}`), "carol's LOBBY_CREATE");

    const member = await rest.put(`/lobbies/${lobby.id}/members/${dave.id}`, {
      body: { metadata: { role: 'healer' }, flags: 1 },
    });
    expect(member).toEqual({ id: String(dave.id), metadata: { role: 'healer' }, flags: 1 });
    await until(() => carol.seen.includes(`member added ${lobbyId} ${dave.id}`), "dave's arrival");
    expect(dave.client.GetLobbyHandle(lobbyId)?.GetLobbyMemberHandle(dave.id)?.CanLinkLobby()).toBe(true);

    await rest.patch(`/lobbies/${lobby.id}`, { body: { metadata: { map: 'castle' } } });
    await until(() => dave.seen.includes(`updated ${lobbyId}`), 'the LOBBY_UPDATE');
    expect(dave.client.GetLobbyHandle(lobbyId)?.Metadata()).toEqual({ map: 'castle' });

    // An API-created lobby cannot be left from the game: the library reports the refusal.
    const refused = await dave.client.LeaveLobby(lobbyId);
    expect([refused.Type(), refused.Status(), refused.ErrorCode()]).toEqual([
      ErrorType.HTTPError,
      403,
      50001,
    ]);

    await rest.delete(`/lobbies/${lobby.id}`);
    await until(() => carol.seen.includes(`deleted ${lobbyId}`), "carol's LOBBY_DELETE");
    await until(() => dave.seen.includes(`deleted ${lobbyId}`), "dave's LOBBY_DELETE");
    expect(carol.client.GetLobbyIds()).toEqual([]);
  });

  it('a reconnecting client learns its lobbies from READY', async () => {
    const erin = await player();
    const { lobbyId } = await erin.client.CreateOrJoinLobby('erins-room');
    erin.client.Disconnect();
    await until(() => erin.client.GetStatus() === Status.Disconnected, 'the disconnect');
    skew += IDENTIFY_WINDOW_MS;
    erin.client.Connect();
    await until(() => erin.client.GetStatus() === Status.Ready, 'Ready again');
    expect(erin.client.GetLobbyHandle(lobbyId)?.LobbyMemberIds()).toEqual([erin.id]);
  });

  it('reports refusals as results: a non-member, bad ids and limits', async () => {
    const frank = await player();
    const { lobbyId } = await (await player()).client.CreateOrJoinLobby('private-table');

    const outsider = await frank.client.SendLobbyMessage(lobbyId, 'let me in');
    expect([outsider.result.Status(), outsider.result.ErrorCode(), outsider.messageId]).toEqual([
      403,
      50001,
      0n,
    ]);
    const history = await frank.client.GetLobbyMessagesWithLimit(lobbyId, 5);
    expect([history.result.ErrorCode(), history.messages]).toEqual([50001, []]);

    const badId = await frank.client.SendLobbyMessage('not-an-id', 'hi');
    expect(badId.result.Type()).toBe(ErrorType.ValidationError);
    const badLimit = await frank.client.GetLobbyMessagesWithLimit(lobbyId, 0);
    expect(badLimit.result.Type()).toBe(ErrorType.ValidationError);
    const longSecret = await frank.client.CreateOrJoinLobby('s'.repeat(251));
    expect([longSecret.result.Status(), longSecret.result.ErrorCode()]).toEqual([400, 50035]);
  });
});
