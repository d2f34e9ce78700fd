import { AuthorizationTokenType, sdkpp } from '@hearth/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import { startVoiceHearth } from '../../../../test-support/voice.js';
import { pause, until } from '../../../../test-support/wait.js';
import { rms, sineFrame, steadyRms } from '../../../sdk/test/voice/signal.js';
import { ManualClock } from '../../src/kernel/clock.js';

/**
 * Lobby calls through the library's public surface (seed: StartCallWithAudioCallbacks; issue 18): two
 * players' Clients in one lobby start its call, build one DAVE group (after 1 March 2026 lobby calls are end-to-end
 * encrypted only), hear each other frame for frame, see each other as participants, and one leaves.
 */

const { Status } = sdkpp.Client;
const CallStatus = sdkpp.Call.Status;
const SCOPES = 'openid sdk.social_layer';
const PEAK = 8000;

interface Player {
  client: sdkpp.Client;
  id: bigint;
  /** Frames the received callback got, by sender. */
  heard: Map<bigint, Int16Array[]>;
  captured: number;
  participants: string[];
  source: sdkpp.PushAudioSource;
  call?: sdkpp.Call;
}

describe('a lobby call between two players’ Clients (after 1 March 2026: DAVE)', () => {
  let hearth: TestHearth;
  let game: TestGame;
  const players: Player[] = [];

  beforeAll(async () => {
    hearth = await startVoiceHearth(new ManualClock('2026-03-02T00:00:00Z'));
    game = await createGame(hearth, { publicClient: true });
  }, 60_000); // a server and real clients start slowly on a loaded machine
  afterAll(async () => {
    for (const player of players) {
      player.client.EndCalls();
      player.client.Disconnect();
    }
    await until(() => players.every((p) => p.client.GetStatus() === Status.Disconnected), 'the disconnects');
    await hearth.close();
  });

  async function player(options: sdkpp.ClientOptions = {}): Promise<Player> {
    const account = await createPlayer(hearth);
    const tokens = await grantTokens(hearth, game, account.token, SCOPES);
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, options);
    await client.UpdateToken(AuthorizationTokenType.Bearer, tokens.access_token);
    client.Connect();
    await until(() => client.GetStatus() === Status.Ready, 'Ready');
    const created: Player = {
      client,
      id: BigInt(account.user.id),
      heard: new Map(),
      captured: 0,
      participants: [],
      source: new sdkpp.PushAudioSource(),
    };
    players.push(created);
    return created;
  }

  function startCall(who: Player, lobbyId: bigint): sdkpp.Call {
    const call = who.client.StartCallWithAudioCallbacks(
      lobbyId,
      (userId, data, samplesPerChannel, sampleRate, channels) => {
        expect([samplesPerChannel, sampleRate, channels]).toEqual([960, 48_000, 2]);
        who.heard.set(userId, [...(who.heard.get(userId) ?? []), data.slice()]);
      },
      () => {
        who.captured += 1;
      },
    );
    if (!call) throw new Error('StartCall answered no call');
    call.SetParticipantChangedCallback((userId, added) => who.participants.push(`${userId} ${added}`));
    call.SetAudioSource(who.source);
    who.call = call;
    return call;
  }

  it('both join the lobby call, Connected and end-to-end encrypted; each hears the other’s sine', async () => {
    const alice = await player();
    const bob = await player();
    const lobby = await alice.client.CreateOrJoinLobby('voice-table');
    expect(lobby.result.Successful()).toBe(true);
    expect((await bob.client.CreateOrJoinLobby('voice-table')).lobbyId).toBe(lobby.lobbyId);

    const aliceCall = startCall(alice, lobby.lobbyId);
    expect(aliceCall.GetStatus()).toBe(CallStatus.Joining);
    expect(alice.client.GetCall(lobby.lobbyId)).toBe(aliceCall);
    const bobCall = startCall(bob, lobby.lobbyId);
    await until(
      () => aliceCall.GetStatus() === CallStatus.Connected && bobCall.GetStatus() === CallStatus.Connected,
      'both calls Connected',
    );
    await until(
      () => aliceCall.GetParticipants().length === 2 && bobCall.GetParticipants().length === 2,
      'both participants',
    );
    expect(aliceCall.GetParticipants().sort()).toEqual([alice.id, bob.id].sort());
    expect(aliceCall.GetChannelId()).toBe(lobby.lobbyId);

    // Lobby calls are end-to-end encrypted only from 1 March 2026: both ends in one DAVE group first.
    await until(
      () => aliceCall.connection?.e2ee === true && bobCall.connection?.e2ee === true,
      'the DAVE group',
    );
    for (let i = 0; i < 30; i++) {
      alice.source.push(sineFrame(i, PEAK));
      bob.source.push(sineFrame(i, PEAK / 2));
      await pause(5);
    }
    await until(() => bob.heard.get(alice.id)?.length === 30, 'alice at bob');
    await until(() => alice.heard.get(bob.id)?.length === 30, 'bob at alice');
    const sent = rms(sineFrame(0, PEAK));
    expect(Math.abs(steadyRms(bob.heard.get(alice.id) ?? []) - sent) / sent).toBeLessThan(0.1);
    expect(Math.abs(steadyRms(alice.heard.get(bob.id) ?? []) - sent / 2) / (sent / 2)).toBeLessThan(0.1);
    expect(alice.captured).toBe(30);
  });

  it('a player who ends the call leaves the other’s participants; EndCall reports once Disconnected', async () => {
    const [alice, bob] = players as [Player, Player];
    const lobbyId = alice.call?.GetChannelId() as bigint;
    let ended = false;
    alice.client.EndCall(lobbyId, () => {
      ended = true;
    });
    expect(ended).toBe(true);
    expect(alice.client.GetCalls()).toEqual([]);
    await until(() => bob.participants.includes(`${alice.id} false`), 'alice leaving at bob');
    expect(bob.call?.GetParticipants()).toEqual([bob.id]);
  });

  it('a client without DAVE is refused from 1 March 2026: Disconnected, Forbidden, close code 4017', async () => {
    const carol = await player({ voiceNetwork: sdkpp.nodeVoiceNetwork({ dave: false }) });
    const lobby = await carol.client.CreateOrJoinLobby('voice-table');
    expect(lobby.result.Successful()).toBe(true);
    const call = startCall(carol, lobby.lobbyId);
    const reports: number[][] = [];
    call.SetStatusChangedCallback((status, error, detail) => reports.push([status, error, detail]));
    await until(() => call.GetStatus() === CallStatus.Disconnected, 'the refusal');
    expect(reports.at(-1)).toEqual([CallStatus.Disconnected, sdkpp.Call.Error.Forbidden, 4017]);
  });
});
