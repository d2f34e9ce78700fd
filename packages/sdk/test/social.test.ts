import { IDENTIFY_WINDOW_MS, PRE_APPROVAL_LIMIT, PRESENCE_UPDATES_LIMIT } from '@hearth/protocol';
import {
  Activity,
  ActivityActionTypes,
  ActivityAssets,
  ActivityGamePlatforms,
  type ActivityInvite,
  ActivityParty,
  ActivityPartyPrivacy,
  ActivitySecrets,
  AuthorizationTokenType,
  ErrorType,
  RelationshipType,
  StatusType,
  sdkpp,
} from '@hearth/sdk';
import type { Clock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { provisionalPlayer } from '../../../test-support/provisional.js';

/**
 * The social layer through the library (seed: Rich presence activity, ActivityInvite, MessageHandle,
 * UpdateRichPresence, SetActivityInviteCreatedCallback, GetUserMessagesWithLimit; PROTOCOL.md §B.5–B.9),
 * two and three clients against a live server. Each scenario has a provisional account in it, minted by
 * the game's server through POST /partner-sdk/token/bot (PROTOCOL.md §B.2).
 */

/** Real time plus a skew, moved past the identify window when a player's second device connects. */
class SkewClock implements Clock {
  skew = 0;
  now(): number {
    return Date.now() + this.skew;
  }
}

/** Callback arguments as they arrive; `next` awaits the first (after those taken) that matches. */
class Calls<T> {
  readonly seen: T[] = [];
  #cursor = 0;
  #waiters: Array<{ match: (value: T) => boolean; resolve: (value: T) => void }> = [];
  readonly push = (value: T): void => {
    this.seen.push(value);
    this.#settle();
  };
  next(match: (value: T) => boolean = () => true, timeoutMs = 5_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no matching callback; saw ${this.seen.length}`)),
        timeoutMs,
      );
      this.#waiters.push({
        match,
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
      });
      this.#settle();
    });
  }
  #settle(): void {
    for (const waiter of [...this.#waiters]) {
      const index = this.seen.findIndex((value, i) => i >= this.#cursor && waiter.match(value));
      if (index === -1) continue;
      this.#cursor = index + 1;
      this.#waiters = this.#waiters.filter((w) => w !== waiter);
      waiter.resolve(this.seen[index] as T);
    }
  }
}

const SCOPES = 'openid sdk.social_layer';

describe('the social layer through sdkpp.Client', () => {
  const clock = new SkewClock();
  const clients: sdkpp.Client[] = [];
  let hearth: TestHearth;
  let game: TestGame;

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await createGame(hearth);
    await hearth.services.applications.adminUpdate(game.id, {
      grant_flags: ['CommunicationFeaturesApproved', 'ProvisionalAccountsEnabled'],
    });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.Disconnect();
  });
  afterAll(() => hearth.close());

  interface Player {
    id: bigint;
    username: string;
    /** A full account's session (it consents to other games); a provisional account has none. */
    sessionToken?: string;
    accessToken: string;
    client: sdkpp.Client;
    relationshipsCreated: Calls<[bigint, boolean]>;
    relationshipsDeleted: Calls<[bigint, boolean]>;
    usersUpdated: Calls<bigint>;
    invites: Calls<ActivityInvite>;
    joins: Calls<string>;
    messagesCreated: Calls<bigint>;
    messagesUpdated: Calls<bigint>;
    requests: string[];
  }

  /** A player (a provisional account when asked) with a Ready client of the game. */
  async function player(options: { provisional?: boolean } = {}): Promise<Player> {
    const name = `sdk${Math.random().toString(36).slice(2, 10)}`;
    let who: Pick<Player, 'id' | 'username' | 'sessionToken' | 'accessToken'>;
    if (options.provisional) {
      const minted = await provisionalPlayer(hearth, game, `ext-${name}`);
      who = { id: BigInt(minted.id), username: minted.username, accessToken: minted.accessToken };
    } else {
      const created = await createPlayer(hearth, name);
      const tokens = await grantTokens(hearth, game, created.token, SCOPES);
      who = {
        id: BigInt(created.user.id),
        username: name,
        sessionToken: created.token,
        accessToken: tokens.access_token,
      };
    }
    const ready = await device(who);
    expect(ready.client.GetCurrentUserV2()?.IsProvisional()).toBe(options.provisional === true);
    return ready;
  }

  /** Another device of the same player: a second client with the same token. */
  async function device(
    who: Pick<Player, 'id' | 'username' | 'sessionToken' | 'accessToken'>,
  ): Promise<Player> {
    const requests: string[] = [];
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, {
      fetch: (input, init) => {
        requests.push(`${init.method} ${new URL(input).pathname}`);
        return fetch(input, init);
      },
    });
    clients.push(client);
    client.SetApplicationId(game.id);
    const p: Player = {
      ...who,
      client,
      relationshipsCreated: new Calls(),
      relationshipsDeleted: new Calls(),
      usersUpdated: new Calls(),
      invites: new Calls(),
      joins: new Calls(),
      messagesCreated: new Calls(),
      messagesUpdated: new Calls(),
      requests,
    };
    client.SetRelationshipCreatedCallback((id, discord) => p.relationshipsCreated.push([id, discord]));
    client.SetRelationshipDeletedCallback((id, discord) => p.relationshipsDeleted.push([id, discord]));
    client.SetUserUpdatedCallback(p.usersUpdated.push);
    client.SetActivityInviteCreatedCallback(p.invites.push);
    client.SetActivityJoinCallback(p.joins.push);
    client.SetMessageCreatedCallback(p.messagesCreated.push);
    client.SetMessageUpdatedCallback(p.messagesUpdated.push);
    const ready = new Promise<void>((resolve) =>
      client.SetStatusChangedCallback((status) => {
        if (status === sdkpp.Client.Status.Ready) resolve();
      }),
    );
    clock.skew += IDENTIFY_WINDOW_MS;
    await client.UpdateToken(AuthorizationTokenType.Bearer, who.accessToken);
    client.Connect();
    await ready;
    return p;
  }

  async function befriend(a: Player, b: Player): Promise<void> {
    expect((await a.client.SendFriendRequest(b.username)).Successful()).toBe(true);
    await b.relationshipsCreated.next(([id]) => id === a.id);
    expect((await b.client.AcceptFriendRequest(a.id)).Successful()).toBe(true);
    await a.relationshipsCreated.next(
      ([id]) =>
        id === b.id &&
        a.client.GetRelationshipHandle(b.id).DiscordRelationshipType() === RelationshipType.Friend,
    );
  }

  /** A party of the player's game with every field of the seed's rich presence activity. */
  function partyActivity(partyId = 'party-1'): Activity {
    const activity = new Activity();
    activity.SetName('Hearth Quest');
    activity.SetState('In a party');
    activity.SetStateUrl('https://example.com/state');
    activity.SetDetails('Ranked');
    activity.SetDetailsUrl('https://example.com/details');
    const assets = new ActivityAssets();
    assets.SetLargeImage('map');
    assets.SetLargeUrl('https://example.com/large');
    assets.SetSmallUrl('https://example.com/small');
    assets.SetInviteCoverImage('https://example.com/cover.png');
    activity.SetAssets(assets);
    const party = new ActivityParty();
    party.SetId(partyId);
    party.SetCurrentSize(1);
    party.SetMaxSize(4);
    party.SetPrivacy(ActivityPartyPrivacy.Public);
    activity.SetParty(party);
    const secrets = new ActivitySecrets();
    secrets.SetJoin(`join-${partyId}`);
    activity.SetSecrets(secrets);
    activity.SetSupportedPlatforms(ActivityGamePlatforms.Desktop | ActivityGamePlatforms.IOS);
    return activity;
  }

  it('befriend, reject, remove, block and unblock; a provisional account takes part', async () => {
    const alice = await player();
    const bob = await player({ provisional: true });
    const carol = await player();
    await befriend(alice, bob);
    const relationships = await alice.client.GetRelationships();
    expect(relationships.map((r) => [r.Id(), r.DiscordRelationshipType(), r.GameRelationshipType()])).toEqual(
      [[bob.id, RelationshipType.Friend, RelationshipType.None]],
    );
    expect([relationships[0]?.User()?.Username(), relationships[0]?.User()?.IsProvisional()]).toEqual([
      bob.username,
      true,
    ]);

    // Game friends, by id, in this game.
    expect((await carol.client.SendGameFriendRequestById(alice.id)).Successful()).toBe(true);
    await alice.relationshipsCreated.next(([id, discord]) => id === carol.id && !discord);
    expect(alice.client.GetRelationshipHandle(carol.id).GameRelationshipType()).toBe(
      RelationshipType.PendingIncoming,
    );
    expect((await alice.client.RejectFriendRequest(carol.id)).Successful()).toBe(true);
    await carol.relationshipsDeleted.next(([id]) => id === alice.id);

    // Blocking ends the friendship; the blocked one's requests are refused with the server's error.
    expect((await alice.client.BlockUser(bob.id)).Successful()).toBe(true);
    await bob.relationshipsDeleted.next(([id]) => id === alice.id);
    expect(alice.client.GetRelationshipHandle(bob.id).DiscordRelationshipType()).toBe(
      RelationshipType.Blocked,
    );
    const refused = await bob.client.SendFriendRequestById(alice.id);
    expect([refused.Type(), refused.Status(), refused.ErrorCode()]).toEqual([
      ErrorType.HTTPError,
      400,
      80000,
    ]);
    expect((await alice.client.UnblockUser(bob.id)).Successful()).toBe(true);
    await alice.relationshipsDeleted.next(([id]) => id === bob.id);
    expect(await alice.client.GetRelationships()).toEqual([]);

    const badId = await alice.client.RemoveFriend('not-a-number');
    expect(badId.Type()).toBe(ErrorType.ValidationError);
  });

  it('presence: a friend sees the activity and status change; invisible is offline; a blocked user sees nothing', async () => {
    const alice = await player({ provisional: true });
    const bob = await player();
    const mallory = await player();
    await befriend(alice, bob);
    await befriend(alice, mallory);
    await alice.client.BlockUser(mallory.id);
    await mallory.usersUpdated.next(
      (id) => id === alice.id && mallory.client.GetUser(alice.id)?.Status() !== StatusType.Online,
    );
    const malloryBefore = mallory.usersUpdated.seen.length;

    expect((await alice.client.UpdateRichPresence(partyActivity())).Successful()).toBe(true);
    await bob.usersUpdated.next(
      (id) => id === alice.id && bob.client.GetUser(alice.id)?.GameActivity() !== undefined,
    );
    const seen = bob.client.GetUser(alice.id)!;
    expect([seen.Status(), seen.IsProvisional()]).toEqual([StatusType.Online, true]);
    const activity = seen.GameActivity()!;
    expect([
      activity.Name(),
      activity.State(),
      activity.StateUrl(),
      activity.Details(),
      activity.DetailsUrl(),
      activity.Assets()?.LargeUrl(),
      activity.Assets()?.SmallUrl(),
      activity.Assets()?.InviteCoverImage(),
      activity.Party()?.Id(),
      activity.Party()?.MaxSize(),
      activity.Party()?.Privacy(),
      activity.SupportedPlatforms(),
      activity.Secrets(),
      activity.ApplicationId(),
    ]).toEqual([
      'Hearth Quest',
      'In a party',
      'https://example.com/state',
      'Ranked',
      'https://example.com/details',
      'https://example.com/large',
      'https://example.com/small',
      'https://example.com/cover.png',
      'party-1',
      4,
      ActivityPartyPrivacy.Public,
      ActivityGamePlatforms.Desktop | ActivityGamePlatforms.IOS,
      undefined,
      BigInt(game.id),
    ]);

    expect((await alice.client.SetOnlineStatus(StatusType.Invisible)).Successful()).toBe(true);
    await bob.usersUpdated.next(
      (id) => id === alice.id && bob.client.GetUser(alice.id)?.Status() === StatusType.Offline,
    );
    expect(bob.client.GetUser(alice.id)?.GameActivity()).toBeUndefined();
    // Each update went to Alice's friends in one event: Mallory, blocked, was in none of them.
    expect(mallory.usersUpdated.seen.length).toBe(malloryBefore);
    expect(mallory.client.GetUser(alice.id)?.Status()).not.toBe(StatusType.Online);
  });

  it('UpdateRichPresence refuses what the server would (field limits) and the 6th update in 20 s', async () => {
    const alice = await player();
    const long = new Activity();
    long.SetName('n'.repeat(129));
    const tooLong = await alice.client.UpdateRichPresence(long);
    expect([tooLong.Type(), tooLong.Error()]).toEqual([
      ErrorType.ValidationError,
      'Name must be 1 to 128 characters',
    ]);
    const url = partyActivity();
    url.SetStateUrl('u'.repeat(257));
    expect((await alice.client.UpdateRichPresence(url)).Error()).toBe('StateUrl is longer than 256');
    for (let i = 0; i < PRESENCE_UPDATES_LIMIT.limit; i++) {
      expect((await alice.client.UpdateRichPresence(partyActivity(`p${i}`))).Successful()).toBe(true);
    }
    const sixth = await alice.client.ClearRichPresence();
    expect([sixth.Status(), sixth.Retryable(), sixth.RetryAfter() > 0]).toEqual([429, true, true]);
  });

  it('invite and join through the join secret: three clients, one player on two devices', async () => {
    const host = await player();
    const guest = await player({ provisional: true });
    await befriend(host, guest);
    const phone = await device(guest);
    expect((await host.client.UpdateRichPresence(partyActivity())).Successful()).toBe(true);
    await guest.usersUpdated.next(
      (id) => id === host.id && guest.client.GetUser(host.id)?.GameActivity() !== undefined,
    );

    expect((await host.client.SendActivityInvite(guest.id, 'come play')).Successful()).toBe(true);
    const invite = await guest.invites.next();
    const onPhone = await phone.invites.next();
    expect([
      invite.SenderId(),
      invite.Type(),
      invite.ApplicationId(),
      invite.PartyId(),
      invite.IsValid(),
    ]).toEqual([host.id, ActivityActionTypes.Join, BigInt(game.id), 'party-1', true]);
    expect(onPhone.MessageId()).toBe(invite.MessageId());
    // The invite's text travels with it (seed: SendActivityInvite(userId, content)).
    expect(guest.client.GetMessageHandle(invite.MessageId())?.Content()).toBe('come play');

    const accepted = await guest.client.AcceptActivityInvite(invite);
    expect([accepted.result.Successful(), accepted.joinSecret]).toEqual([true, 'join-party-1']);
    expect(await guest.joins.next()).toBe('join-party-1');
    // The invite-created callback fires on the other device too, the invite no longer open there.
    const again = await phone.invites.next();
    expect([again.MessageId(), again.IsValid()]).toEqual([invite.MessageId(), false]);

    // Join request and reply; the host never receives its own invite.
    expect((await guest.client.SendActivityJoinRequest(host.id)).Successful()).toBe(true);
    const request = await host.invites.next();
    expect([request.Type(), request.SenderId()]).toEqual([ActivityActionTypes.JoinRequest, guest.id]);
    expect((await host.client.SendActivityJoinRequestReply(request)).Successful()).toBe(true);
    const reply = await guest.invites.next((i) => i.MessageId() !== invite.MessageId());
    expect((await guest.client.AcceptActivityInvite(reply)).joinSecret).toBe('join-party-1');
    expect(host.invites.seen.map((i) => i.Type())).toEqual([ActivityActionTypes.JoinRequest]);
  });

  it('direct messages: send, receive, history cached locally, summaries, moderation updates', async () => {
    const alice = await player();
    const bob = await player({ provisional: true });
    await befriend(alice, bob);

    const sent = await alice.client.SendUserMessage(bob.id, 'hello bob');
    expect(sent.result.Successful()).toBe(true);
    expect(await bob.messagesCreated.next()).toBe(sent.messageId);
    const received = bob.client.GetMessageHandle(sent.messageId)!;
    expect([
      received.Content(),
      received.AuthorId(),
      received.RecipientId(),
      received.ApplicationId(),
    ]).toEqual(['hello bob', alice.id, bob.id, BigInt(game.id)]);
    await bob.client.SendUserMessage(alice.id, 'hi alice');

    const first = await alice.client.GetUserMessagesWithLimit(bob.id, 50);
    expect(first.messages.map((m) => m.Content())).toEqual(['hi alice', 'hello bob']);
    const reads = alice.requests.filter(
      (r) => r.endsWith(`/users/${bob.id}/messages`) && r.startsWith('GET'),
    ).length;
    const second = await alice.client.GetUserMessagesWithLimit(bob.id, 10);
    expect(second.messages.map((m) => m.Content())).toEqual(['hi alice', 'hello bob']);
    expect(
      alice.requests.filter((r) => r.endsWith(`/users/${bob.id}/messages`) && r.startsWith('GET')).length,
    ).toBe(reads);

    const { summaries } = await alice.client.GetUserMessageSummaries();
    expect(summaries.map((s) => s.UserId())).toEqual([bob.id]);

    const moderated = await hearth.api(
      `/partner-sdk/dms/${alice.id}/${bob.id}/messages/${sent.messageId}/moderation-metadata`,
      { method: 'PUT', auth: `Bot ${game.botToken}`, body: { action: 'blur' } },
    );
    expect(moderated.status).toBe(204);
    await bob.messagesUpdated.next((id) => id === sent.messageId);
    expect(bob.client.GetMessageHandle(sent.messageId)?.ModerationMetadata()).toEqual({ action: 'blur' });

    const empty = await alice.client.SendUserMessage(bob.id, '  ');
    expect(empty.result.Type()).toBe(ErrorType.ValidationError);
    const badLimit = await alice.client.GetUserMessagesWithLimit(bob.id, 201);
    expect(badLimit.result.Error()).toBe('limit must be 1 to 200');
  });

  it('an unapproved game’s 101st DM in 2 h resolves at once, retryable with RetryAfter (PROTOCOL.md §A.3)', async () => {
    const unapproved = await createGame(hearth);
    const tokensFor = async (p: Player) => {
      if (p.sessionToken === undefined)
        throw new Error('a provisional account has no session to consent with');
      return (await grantTokens(hearth, unapproved, p.sessionToken, SCOPES)).access_token;
    };
    const alice = await player();
    const bob = await player({ provisional: true });
    await befriend(alice, bob);
    const aliceThere = await device({ ...alice, accessToken: await tokensFor(alice) });
    aliceThere.client.SetApplicationId(unapproved.id);
    for (let i = 0; i < PRE_APPROVAL_LIMIT.limit; i++) {
      expect((await aliceThere.client.SendUserMessage(bob.id, `m${i}`)).result.Successful()).toBe(true);
    }
    const over = (await aliceThere.client.SendUserMessage(bob.id, 'one too many')).result;
    expect([over.Status(), over.Retryable(), over.ErrorCode()]).toEqual([429, true, 0]);
    expect(over.RetryAfter()).toBeGreaterThan(0);
    expect(over.RetryAfter()).toBeLessThanOrEqual(PRE_APPROVAL_LIMIT.windowMs / 1000);
  });

  it('two provisional accounts exchange ephemeral messages: the channel is the recipient, no history', async () => {
    const p1 = await player({ provisional: true });
    const p2 = await player({ provisional: true });
    await befriend(p1, p2);
    const sent = await p1.client.SendUserMessage(p2.id, 'only in game');
    await p2.messagesCreated.next((id) => id === sent.messageId);
    expect(p2.client.GetMessageHandle(sent.messageId)?.ChannelId()).toBe(p2.id);
    expect(p2.client.GetUser(p1.id)?.IsProvisional()).toBe(true);
    const fresh = await device(p2);
    expect((await fresh.client.GetUserMessagesWithLimit(p1.id, 10)).messages).toEqual([]);
  });
});
