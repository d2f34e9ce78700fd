import {
  ChannelTypes,
  GatewayIntents,
  GatewayOpcodes,
  IDENTIFY_WINDOW_MS,
  PermissionFlags,
  VoiceCloseCodes,
} from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { createTestGuild, seedTestChannel, setEveryonePermissions } from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayers, playerSession } from '../../../../test-support/lobbies.js';
import { startVoiceHearth, VoiceWire } from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

let hearth: TestHearth;
const clock = new ManualClock('2026-02-01T00:00:00Z');

beforeAll(async () => {
  hearth = await startVoiceHearth(clock);
});

afterAll(() => hearth.close());

const lobbyVoice = (channelId: string | null) => ({
  op: GatewayOpcodes.VoiceStateUpdate,
  d: { guild_id: null, channel_id: channelId, self_mute: false, self_deaf: false },
});

describe('lobby calls: op 4 with guild_id null and the lobby as channel_id', () => {
  it('answers LOBBY_VOICE_STATE_UPDATE to the members and LOBBY_VOICE_SERVER_UPDATE to the session', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob, outsider] = await lobbyPlayers(hearth, game, 3);
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: alice.id }, { id: bob.id }],
    });
    expect(lobby.status).toBe(201);
    const lobbyId = lobby.body.id;
    const [a, b] = [await playerSession(hearth.url, alice), await playerSession(hearth.url, bob)];

    a.client.send(lobbyVoice(lobbyId));
    const state = {
      lobby_id: lobbyId,
      channel_id: lobbyId,
      user_id: alice.id,
      session_id: a.sessionId,
      self_mute: false,
      self_deaf: false,
      mute: false,
      deaf: false,
      suppress: false,
    };
    expect((await b.client.nextDispatch('LOBBY_VOICE_STATE_UPDATE')).d).toStrictEqual(state);
    const server = (await a.client.nextDispatch('LOBBY_VOICE_SERVER_UPDATE')).d as {
      endpoint: string;
      token: string;
    };
    expect(server).toStrictEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
      lobby_id: lobbyId,
      endpoint: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });

    // The voice gateway takes the lobby as server_id.
    const wire = await VoiceWire.open(server.endpoint);
    await wire.next(8);
    wire.send({
      op: 0,
      d: { server_id: lobbyId, user_id: alice.id, session_id: a.sessionId, token: server.token },
    });
    expect((await wire.next(2)).d).toMatchObject({ ip: '127.0.0.1' });

    // Leaving (channel_id null) ends the voice session and tells the members.
    a.client.send(lobbyVoice(null));
    expect((await b.client.nextDispatch('LOBBY_VOICE_STATE_UPDATE')).d).toStrictEqual({
      ...state,
      channel_id: null,
    });
    expect(await wire.closeCode()).toBe(4014);

    // Someone outside the lobby gets nothing.
    const o = await playerSession(hearth.url, outsider);
    o.client.send(lobbyVoice(lobbyId));
    o.client.send({ op: GatewayOpcodes.Heartbeat, d: null });
    await o.client.nextOp(GatewayOpcodes.HeartbeatAck);
    expect(o.client.frames.filter((frame) => frame.t === 'LOBBY_VOICE_SERVER_UPDATE')).toStrictEqual([]);
    for (const session of [a, b, o]) await session.client.close();
  });
});

describe('one voice connection per person: a lobby call excludes a DM call and a guild voice channel', () => {
  type Data = Record<string, unknown>;
  const INTENTS = GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates | GatewayIntents.DirectMessages;

  async function userSession(token: string) {
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({
      op: 2,
      d: { token, intents: INTENTS, properties: { os: 'linux', browser: 't', device: 't' } },
    });
    const ready = await client.nextDispatch('READY');
    return { client, sessionId: (ready.d as { session_id: string }).session_id };
  }

  /** A voice session on `server` for the gateway session that asked for it. */
  async function connect(serverId: string, userId: string, sessionId: string, server: Data) {
    const wire = await VoiceWire.open(server['endpoint'] as string);
    await wire.next(8);
    wire.send({
      op: 0,
      d: { server_id: serverId, user_id: userId, session_id: sessionId, token: server['token'] },
    });
    await wire.next(2);
    return wire;
  }

  /** The voice token of a call left is refused (4004). */
  async function refused(serverId: string, userId: string, sessionId: string, server: Data) {
    const wire = await VoiceWire.open(server['endpoint'] as string);
    await wire.next(8);
    wire.send({
      op: 0,
      d: { server_id: serverId, user_id: userId, session_id: sessionId, token: server['token'] },
    });
    return wire.closeCode();
  }

  it('joining a DM call or a guild voice channel leaves the lobby call, and joining a lobby call leaves them', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob] = await lobbyPlayers(hearth, game, 2);
    const lobbyId = (
      await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
        members: [{ id: alice.id }, { id: bob.id }],
      })
    ).body.id;
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(
      hearth,
      guild,
      PermissionFlags.ViewChannel | PermissionFlags.Connect | PermissionFlags.Speak,
    );
    const voice = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    await hearth.services.guilds.addMember(guild.id, alice.id);
    const dm = await hearth.api('/users/@me/channels', {
      method: 'POST',
      auth: alice.account.token,
      body: { recipient_id: bob.id },
    });
    const dmId = ((await dm.json()) as { id: string }).id;
    const [aSdk, bSdk] = [await playerSession(hearth.url, alice), await playerSession(hearth.url, bob)];
    // A second session of the same person starts after the identify window (one start per 5 s).
    clock.advance(IDENTIFY_WINDOW_MS);
    const [aUser, bUser] = [await userSession(alice.account.token), await userSession(bob.account.token)];
    const owner = await userSession(guild.owner.token);
    const lobbyLeft = () =>
      bSdk.client.next((f) => f.t === 'LOBBY_VOICE_STATE_UPDATE' && (f.d as Data)['channel_id'] === null);
    const joinLobby = async () => {
      aSdk.client.send(lobbyVoice(lobbyId));
      const server = (await aSdk.client.nextDispatch('LOBBY_VOICE_SERVER_UPDATE')).d as Data;
      return { server, wire: await connect(lobbyId, alice.id, aSdk.sessionId, server) };
    };

    // Alice is in the lobby's call; she calls Bob in their DM from her other session: the lobby's
    // members see her leave its call, her lobby voice session ends (4014) and its token goes.
    const first = await joinLobby();
    aUser.client.send(lobbyVoice(dmId));
    expect((await lobbyLeft()).d).toMatchObject({ lobby_id: lobbyId, user_id: alice.id, channel_id: null });
    expect(await first.wire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    expect(await refused(lobbyId, alice.id, aSdk.sessionId, first.server)).toBe(
      VoiceCloseCodes.AuthenticationFailed,
    );
    expect((await bUser.client.nextDispatch('CALL_CREATE')).d).toMatchObject({ channel_id: dmId });
    const dmServer = (
      await aUser.client.next((f) => f.t === 'VOICE_SERVER_UPDATE' && (f.d as Data)['channel_id'] === dmId)
    ).d as Data;
    const dmWire = await connect(dmId, alice.id, aUser.sessionId, dmServer);

    // Back to the lobby's call: she leaves the DM call, which ends (she was alone in it).
    const second = await joinLobby();
    const bobSaw = await bUser.client.next(
      (f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as Data)['channel_id'] === null,
    );
    expect(bobSaw.d).toMatchObject({ user_id: alice.id, channel_id: null });
    expect((await bUser.client.nextDispatch('CALL_DELETE')).d).toStrictEqual({ channel_id: dmId });
    expect(await dmWire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    expect(await refused(dmId, alice.id, aUser.sessionId, dmServer)).toBe(
      VoiceCloseCodes.AuthenticationFailed,
    );

    // A guild's voice channel leaves the lobby call too.
    aUser.client.send({ ...lobbyVoice(voice), d: { ...lobbyVoice(voice).d, guild_id: guild.id } });
    expect((await lobbyLeft()).d).toMatchObject({ lobby_id: lobbyId, user_id: alice.id, channel_id: null });
    expect(await second.wire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    const guildServer = (await aUser.client.nextDispatch('VOICE_SERVER_UPDATE')).d as Data;
    const guildWire = await connect(guild.id, alice.id, aUser.sessionId, guildServer);
    await owner.client.next((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as Data)['channel_id'] === voice);

    // And the lobby's call leaves the guild's voice channel.
    await joinLobby();
    const guildLeft = await owner.client.next(
      (f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as Data)['channel_id'] === null,
    );
    expect(guildLeft.d).toMatchObject({ guild_id: guild.id, user_id: alice.id, channel_id: null });
    expect(await guildWire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    expect(await refused(guild.id, alice.id, aUser.sessionId, guildServer)).toBe(
      VoiceCloseCodes.AuthenticationFailed,
    );
    for (const session of [aSdk, bSdk, aUser, bUser, owner]) await session.client.close();
  });
});
