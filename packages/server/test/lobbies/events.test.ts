import { GatewayOpcodes, IDENTIFY_WINDOW_MS, LobbyLimits, SocialMessageFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  call,
  type LobbyPlayer,
  lobbyGame,
  lobbyPlayer,
  lobbyPlayers,
  type PlayerSession,
  playerSession,
} from '../../../../test-support/lobbies.js';

/**
 * The lobby dispatches of PROTOCOL.md §A.6 as raw gateway clients of players receive them: who gets
 * which event, in which order and shape, and who gets nothing (proved by the next event they do get,
 * never by waiting). Then the idle sweeper, driven by a ManualClock.
 */

const T0 = Date.parse('2026-03-02T12:00:00Z');
type Json = Record<string, unknown>;
type Lobby = Json & { id: string };

/** One server for the file; its clock only moves where a test says so. */
let hearth: TestHearth;
const clock = new ManualClock(T0);
beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
});
afterAll(() => hearth.close());

const sessions: PlayerSession[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.client.close()));
});

async function connect(hearth: TestHearth, player: LobbyPlayer): Promise<PlayerSession> {
  const session = await playerSession(hearth.url, player);
  sessions.push(session);
  return session;
}

/** A lobby member as the gateway sends it inside a lobby (§A.6: members carry `connected`). */
const gatewayMember = (id: string, extra: Json = {}) => ({
  id,
  metadata: null,
  flags: 0,
  connected: false,
  ...extra,
});

describe('lobby dispatches to member sessions (PROTOCOL.md §A.6)', () => {
  it('create, join, update, messages, leave and delete reach the members in order; outsiders see nothing', async () => {
    const game = await lobbyGame(hearth);
    const otherGame = await lobbyGame(hearth);
    const [alice, bob, carol] = await lobbyPlayers(hearth, game, 3);
    // Alice's own account, playing another game: nothing of this game's lobbies reaches that session.
    const aliceElsewhere = await lobbyPlayer(hearth, otherGame, alice.account);
    const [a, b, c] = [
      await connect(hearth, alice),
      await connect(hearth, bob),
      await connect(hearth, carol),
    ];
    // One identify per account per 5 s (§D.3): the clock moves on instead of the test waiting.
    clock.advance(IDENTIFY_WINDOW_MS);
    const elsewhere = await connect(hearth, aliceElsewhere);

    // Alice creates by secret: LOBBY_CREATE with the gateway lobby.
    const secret = 'events';
    const created = await call<Lobby>(hearth, 'PUT', '/lobbies', alice.bearer, {
      secret,
      lobby_metadata: { map: 'dust' },
    });
    const lobbyId = created.body.id;
    const gatewayLobby = (members: Json[], extra: Json = {}) => ({
      id: lobbyId,
      application_id: game.id,
      metadata: { map: 'dust' },
      members,
      flags: 0,
      override_event_webhooks_url: null,
      voice_states: [],
      ...extra,
    });
    expect(await a.dispatch()).toEqual({ t: 'LOBBY_CREATE', d: gatewayLobby([gatewayMember(alice.id)]) });

    // Bob joins: he learns the lobby; both see the new member.
    await call(hearth, 'PUT', '/lobbies', bob.bearer, { secret, member_metadata: { team: 'blue' } });
    const bobMember = { id: bob.id, metadata: { team: 'blue' }, flags: 0 };
    const memberAdd = {
      t: 'LOBBY_MEMBER_ADD',
      d: { member: bobMember, lobby_id: lobbyId, application_id: game.id },
    };
    expect(await b.dispatch()).toEqual({
      t: 'LOBBY_CREATE',
      d: gatewayLobby([gatewayMember(alice.id), gatewayMember(bob.id, { metadata: { team: 'blue' } })]),
    });
    expect(await b.dispatch()).toEqual(memberAdd);
    expect(await a.dispatch()).toEqual(memberAdd);

    // Alice calls again with new metadata: LOBBY_UPDATE, then LOBBY_MEMBER_UPDATE, to both.
    await call(hearth, 'PUT', '/lobbies', alice.bearer, {
      secret,
      lobby_metadata: { map: 'nuke' },
      member_metadata: { role: 'host' },
    });
    const update = {
      t: 'LOBBY_UPDATE',
      d: gatewayLobby([gatewayMember(alice.id), gatewayMember(bob.id, { metadata: { team: 'blue' } })], {
        metadata: { map: 'nuke' },
      }),
    };
    const memberUpdate = {
      t: 'LOBBY_MEMBER_UPDATE',
      d: {
        member: { id: alice.id, metadata: { role: 'host' }, flags: 0 },
        lobby_id: lobbyId,
        application_id: game.id,
      },
    };
    for (const session of [a, b]) {
      expect(await session.dispatch()).toEqual(update);
      expect(await session.dispatch()).toEqual(memberUpdate);
    }

    // Messages: create, edit, moderation verdict (a realtime update without a webhook), delete.
    const sent = await call<Json & { id: string }>(
      hearth,
      'POST',
      `/lobbies/${lobbyId}/messages`,
      bob.bearer,
      {
        content: 'hello',
      },
    );
    expect(sent.body).toMatchObject({ flags: SocialMessageFlags.SentBySocialLayerIntegration });
    const messagePath = `/lobbies/${lobbyId}/messages/${sent.body.id}`;
    const edited = await call<Json>(hearth, 'PATCH', messagePath, bob.bearer, { content: 'hello, world' });
    await call(hearth, 'PUT', `${messagePath}/moderation-metadata`, game.bot, { verdict: 'clean' });
    await call(hearth, 'DELETE', messagePath, bob.bearer);
    for (const session of [a, b]) {
      expect(await session.dispatch()).toEqual({ t: 'LOBBY_MESSAGE_CREATE', d: sent.body });
      expect(await session.dispatch()).toEqual({ t: 'LOBBY_MESSAGE_UPDATE', d: edited.body });
      expect(await session.dispatch()).toEqual({
        t: 'LOBBY_MESSAGE_UPDATE',
        d: { ...edited.body, moderation_metadata: { verdict: 'clean' } },
      });
      expect(await session.dispatch()).toEqual({
        t: 'LOBBY_MESSAGE_DELETE',
        d: { id: sent.body.id, lobby_id: lobbyId },
      });
    }

    // Bob leaves: everyone (Bob too) sees the removal; Bob alone loses the lobby (reason removed).
    await call(hearth, 'DELETE', `/lobbies/${lobbyId}/members/@me`, bob.bearer);
    const memberRemove = {
      t: 'LOBBY_MEMBER_REMOVE',
      d: { member: bobMember, lobby_id: lobbyId, application_id: game.id },
    };
    expect(await a.dispatch()).toEqual(memberRemove);
    expect(await b.dispatch()).toEqual(memberRemove);
    expect(await b.dispatch()).toEqual({ t: 'LOBBY_DELETE', d: { id: lobbyId, reason: 'removed' } });

    // The backend deletes the lobby: the remaining member sees it gone (reason deleted).
    expect((await call(hearth, 'DELETE', `/lobbies/${lobbyId}`, game.bot)).status).toBe(204);
    expect(await a.dispatch()).toEqual({ t: 'LOBBY_DELETE', d: { id: lobbyId, reason: 'deleted' } });

    // Carol (same game, never a member) and Alice in the other game saw none of it: the first dispatch
    // each of them gets is about a lobby of their own.
    const carols = await call<Lobby>(hearth, 'PUT', '/lobbies', carol.bearer, { secret: 'carol' });
    expect(await c.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: carols.body.id } });
    const elsewhereLobby = await call<Lobby>(hearth, 'PUT', '/lobbies', aliceElsewhere.bearer, { secret });
    expect(elsewhereLobby.body.id).not.toBe(lobbyId);
    expect(await elsewhere.dispatch()).toEqual({
      t: 'LOBBY_CREATE',
      d: {
        id: elsewhereLobby.body.id,
        application_id: otherGame.id,
        metadata: null,
        members: [gatewayMember(alice.id)],
        flags: 0,
        override_event_webhooks_url: null,
        voice_states: [],
      },
    });
    // And Bob, who left, heard nothing after his LOBBY_DELETE: his next dispatch is his own new lobby.
    const bobs = await call<Lobby>(hearth, 'PUT', '/lobbies', bob.bearer, { secret: 'bob' });
    expect(await b.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: bobs.body.id } });
  });

  it('the backend adding, updating, replacing and removing members dispatches to the members it concerns', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob, carol] = await lobbyPlayers(hearth, game, 3);
    const [a, b, c] = [
      await connect(hearth, alice),
      await connect(hearth, bob),
      await connect(hearth, carol),
    ];
    const lobby = await call<Lobby>(hearth, 'POST', '/lobbies', game.bot, { members: [{ id: alice.id }] });
    const lobbyId = lobby.body.id;
    const base = {
      id: lobbyId,
      application_id: game.id,
      metadata: null,
      flags: 0,
      override_event_webhooks_url: null,
    };
    expect(await a.dispatch()).toEqual({
      t: 'LOBBY_CREATE',
      d: { ...base, members: [gatewayMember(alice.id)], voice_states: [] },
    });
    const event = (t: string, member: Json) => ({
      t,
      d: { member, lobby_id: lobbyId, application_id: game.id },
    });

    // Add Member, then update it.
    await call(hearth, 'PUT', `/lobbies/${lobbyId}/members/${bob.id}`, game.bot, {
      additional_name: 'Bobby',
    });
    const bobAdded = { id: bob.id, metadata: null, flags: 0, additional_name: 'Bobby' };
    expect(await b.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: lobbyId } });
    expect(await b.dispatch()).toEqual(event('LOBBY_MEMBER_ADD', bobAdded));
    expect(await a.dispatch()).toEqual(event('LOBBY_MEMBER_ADD', bobAdded));
    await call(hearth, 'PUT', `/lobbies/${lobbyId}/members/${bob.id}`, game.bot, { flags: 1 });
    const bobUpdated = { ...bobAdded, flags: 1 };
    expect(await a.dispatch()).toEqual(event('LOBBY_MEMBER_UPDATE', bobUpdated));
    expect(await b.dispatch()).toEqual(event('LOBBY_MEMBER_UPDATE', bobUpdated));

    // PATCH replaces the members with Carol's: Alice and Bob are removed, Carol added, then the update.
    await call(hearth, 'PATCH', `/lobbies/${lobbyId}`, game.bot, {
      metadata: { round: '2' },
      members: [{ id: carol.id }],
    });
    const aliceRemoved = event('LOBBY_MEMBER_REMOVE', { id: alice.id, metadata: null, flags: 0 });
    const bobRemoved = event('LOBBY_MEMBER_REMOVE', bobUpdated);
    expect(await a.dispatch()).toEqual(aliceRemoved);
    expect(await a.dispatch()).toEqual({ t: 'LOBBY_DELETE', d: { id: lobbyId, reason: 'removed' } });
    expect(await b.dispatch()).toEqual(aliceRemoved);
    expect(await b.dispatch()).toEqual(bobRemoved);
    expect(await b.dispatch()).toEqual({ t: 'LOBBY_DELETE', d: { id: lobbyId, reason: 'removed' } });
    expect(await c.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: lobbyId } });
    expect(await c.dispatch()).toEqual(event('LOBBY_MEMBER_ADD', { id: carol.id, metadata: null, flags: 0 }));
    expect(await c.dispatch()).toEqual({
      t: 'LOBBY_UPDATE',
      d: { ...base, metadata: { round: '2' }, members: [gatewayMember(carol.id)], voice_states: [] },
    });

    // Remove Member: Carol is told she was removed. Alice and Bob, outside now, get nothing.
    await call(hearth, 'DELETE', `/lobbies/${lobbyId}/members/${carol.id}`, game.bot);
    expect(await c.dispatch()).toEqual(
      event('LOBBY_MEMBER_REMOVE', { id: carol.id, metadata: null, flags: 0 }),
    );
    expect(await c.dispatch()).toEqual({ t: 'LOBBY_DELETE', d: { id: lobbyId, reason: 'removed' } });
    const next = await call<Lobby>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: alice.id }, { id: bob.id }],
    });
    for (const session of [a, b]) {
      expect(await session.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: next.body.id } });
    }
  });
});

describe('the idle sweeper (ManualClock)', () => {
  it('deletes a lobby nobody is connected to once idle past its timeout, and keeps one whose member is connected', async () => {
    const game = await lobbyGame(hearth);
    const [alice, carol] = await lobbyPlayers(hearth, game, 2);
    const timeout = LobbyLimits.idleTimeoutMinSeconds;
    const join = (player: LobbyPlayer, secret: string) =>
      call<Lobby>(hearth, 'PUT', '/lobbies', player.bearer, { secret, idle_timeout_seconds: timeout });

    // Alice's session drops (resumably): while away she no longer keeps her lobby alive.
    const a = await connect(hearth, alice);
    const idle = await join(alice, 'idle');
    expect(await a.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: idle.body.id } });
    a.client.socket.close(4000);
    await a.client.closed;
    await expect.poll(() => hearth.gateway.registry.get(a.sessionId)?.attached).toBeUndefined();

    const c = await connect(hearth, carol);
    const kept = await join(carol, 'kept');
    expect(await c.dispatch()).toMatchObject({ t: 'LOBBY_CREATE', d: { id: kept.body.id } });

    // At exactly the timeout both are still there; one millisecond later only Carol's lobby is.
    clock.advance(timeout * 1000);
    await hearth.services.lobbies.sweep();
    expect((await call(hearth, 'GET', `/lobbies/${idle.body.id}`, game.bot)).status).toBe(200);
    clock.advance(1);
    await hearth.services.lobbies.sweep();
    const gone = await call(hearth, 'GET', `/lobbies/${idle.body.id}`, game.bot);
    expect({ status: gone.status, body: gone.body }).toEqual({
      status: 404,
      body: { code: 10031, message: 'Unknown Lobby' },
    });
    expect((await call(hearth, 'GET', `/lobbies/${kept.body.id}`, game.bot)).status).toBe(200);

    // Alice resumes (within the resume window) and is told her lobby was deleted.
    const resumed = await GatewayClient.connect(hearth.url);
    await resumed.nextOp(GatewayOpcodes.Hello);
    resumed.send({ op: 6, d: { token: alice.bearer, session_id: a.sessionId, seq: 2 } });
    expect(await resumed.nextDispatch('LOBBY_DELETE')).toMatchObject({
      d: { id: idle.body.id, reason: 'deleted' },
    });
    await resumed.close();

    // Carol stays connected: an hour on, her lobby is still there.
    clock.advance(60 * 60 * 1000);
    await hearth.services.lobbies.sweep();
    expect((await call(hearth, 'GET', `/lobbies/${kept.body.id}`, game.bot)).status).toBe(200);
  });
});
