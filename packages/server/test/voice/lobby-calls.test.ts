import { GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayers, playerSession } from '../../../../test-support/lobbies.js';
import { startVoiceHearth, VoiceWire } from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startVoiceHearth(new ManualClock('2026-02-01T00:00:00Z'));
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
