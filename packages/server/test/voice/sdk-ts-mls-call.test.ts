import {
  type VoiceConnection as DiscordJsConnection,
  EndBehaviorType,
  VoiceConnectionStatus,
} from '@discordjs/voice';
import { ChannelTypes } from '@hearth/protocol';
import OpusScript from 'opusscript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import {
  daveOf,
  identifyBot,
  joinWithDiscordJs,
  requestVoiceServer,
  startVoiceHearth,
} from '../../../../test-support/voice.js';
import { pause, until } from '../../../../test-support/wait.js';
import { PushAudioSource } from '../../../sdk/src/voice/audio.js';
import { Call } from '../../../sdk/src/voice/call.js';
import { CallStatus } from '../../../sdk/src/voice/call-status.js';
import { nodeVoiceNetwork } from '../../../sdk/src/voice/node-voice.js';
import { connectCall } from '../../../sdk/src/voice/voice.js';
import { rms, sineFrame, steadyRms } from '../../../sdk/test/voice/signal.js';
import { ManualClock } from '../../src/kernel/clock.js';

/**
 * A call after 1 March 2026 (DAVE required) where the SDK's member runs DAVE on ts-mls, in plain TypeScript,
 * and unmodified @discordjs/voice 0.19.2 clients run it on @snazzah/davey (openmls): one MLS group, audio
 * both ways with its decoded energy matching the sine sent, through a third member joining (a new epoch)
 * and leaving (another one).
 */

const PEAK = 8000;

function expectSine(frames: Int16Array[]): void {
  const sent = rms(sineFrame(0, PEAK));
  expect(Math.abs(steadyRms(frames) - sent) / sent).toBeLessThan(0.1);
}

/** A bot in the call through @discordjs/voice with DAVE, and the decoded frames it heard from the SDK. */
interface Peer {
  game: TestGame;
  gateway: GatewayClient;
  connection: DiscordJsConnection;
  /** The Opus packets heard from the SDK (decoded when checked: two live opusscript decoders upset each other). */
  heard: Buffer[];
  /** Off once the peer leaves: a destroyed connection hands its stream frames it no longer decrypts. */
  listening: boolean;
}

function daveyOf(peer: Peer) {
  return daveOf(peer.connection)?.session;
}

/**
 * Whether the peers are past `epoch` and executed its transition: the gateway executes it (op 22) once every
 * member, the SDK too, has processed the commit and answered op 23, so senders use the new keys.
 */
function transitioned(peers: Peer[], epoch: bigint): boolean {
  const first = daveyOf(peers[0] as Peer)?.epoch ?? 0n;
  return (
    first > epoch &&
    peers.every((peer) => daveyOf(peer)?.ready === true && daveyOf(peer)?.epoch === first) &&
    peers.every((peer) => daveOf(peer.connection)?.pendingTransitions.size === 0)
  );
}

describe('an SDK Call with DAVE on ts-mls and @discordjs/voice 0.19.2 (davey) peers, after 1 March 2026', () => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let channel: string;
  let player: { game: TestGame; gateway: GatewayClient };
  const peers: Peer[] = [];
  let call: Call;
  const source = new PushAudioSource();
  const received = new Map<string, Int16Array[]>();
  const network = nodeVoiceNetwork({ dave: 'ts-mls' });
  const encoder = new OpusScript(48_000, 2, OpusScript.Application.VOIP);

  async function joinPeer(): Promise<Peer> {
    const game = await addTestBot(hearth, guild);
    const gateway = await identifyBot(hearth, game);
    const connection = await joinWithDiscordJs(gateway, game, guild.id, channel, { dave: true });
    const peer: Peer = { game, gateway, connection, heard: [], listening: true };
    const stream = connection.receiver.subscribe(player.game.botUserId, {
      end: { behavior: EndBehaviorType.Manual },
    });
    stream.on('data', (packet: Buffer) => {
      if (!peer.listening || packet.length <= 3) return; // silence frames are 3 bytes
      peer.heard.push(Buffer.from(packet));
    });
    peers.push(peer);
    return peer;
  }

  beforeAll(async () => {
    hearth = await startVoiceHearth(new ManualClock('2026-03-02T00:00:00Z'));
    guild = await createTestGuild(hearth);
    channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    const playerGame = await addTestBot(hearth, guild);
    player = { game: playerGame, gateway: await identifyBot(hearth, playerGame) };
  }, 60_000); // a server and real clients start slowly on a loaded machine

  afterAll(async () => {
    call?.connection?.close();
    for (const peer of peers) {
      if (peer.connection.state.status !== VoiceConnectionStatus.Destroyed) peer.connection.destroy();
      await peer.gateway.close();
    }
    await player.gateway.close();
    await hearth.close();
  });

  /** The SDK's frames reach every listed peer: `count` decoded frames more at each, all decrypted by davey. */
  async function sdkTo(listeners: Peer[], count: number): Promise<void> {
    const before = listeners.map((peer) => peer.heard.length);
    for (let i = 0; i < count; i++) {
      source.push(sineFrame(i, PEAK));
      await pause(2);
    }
    for (const [index, peer] of listeners.entries()) {
      const from = before[index] as number;
      await until(() => peer.heard.length >= from + count, `the SDK frames at ${peer.game.botUserId}`);
      const decoder = new OpusScript(48_000, 2);
      expectSine(
        peer.heard.slice(from).map((packet) => {
          const pcm = decoder.decode(packet);
          return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
        }),
      );
      decoder.delete();
      expect(daveyOf(peer)?.getDecryptionStats(player.game.botUserId, 0)?.passthroughs).toBe(0);
    }
  }

  /** A peer's frames reach the SDK's received callback, decrypted by the ts-mls session. */
  async function peerToSdk(peer: Peer, count: number): Promise<void> {
    const frames = received.get(peer.game.botUserId) ?? [];
    received.set(peer.game.botUserId, frames);
    const from = frames.length;
    for (let i = 0; i < count; i++) {
      peer.connection.playOpusPacket(encoder.encode(Buffer.from(sineFrame(i, PEAK).buffer), 960));
      await pause(2);
    }
    await until(() => frames.length >= from + count, `frames of ${peer.game.botUserId} at the SDK`);
    expectSine(frames.slice(from));
  }

  it('builds one end-to-end encrypted group with the first peer; audio flows both ways', async () => {
    const first = await joinPeer();
    const { sessionId, token, endpoint } = await requestVoiceServer(
      player.gateway,
      player.game.botUserId,
      guild.id,
      channel,
    );
    call = new Call({
      channelId: channel,
      network,
      owner: {
        updateVoiceState: () => undefined,
        log: () => undefined,
        currentUserId: () => player.game.botUserId,
      },
      received: (userId, data) => {
        received.get(String(userId))?.push(data.slice());
      },
      captured: () => undefined,
    });
    call.SetAudioSource(source);
    connectCall(
      call,
      {
        endpoint,
        token,
        sessionId,
        userId: player.game.botUserId,
        serverId: guild.id,
        channelId: channel,
        network,
      },
      { log: () => undefined, closed: () => undefined },
    );
    await until(() => call.GetStatus() === CallStatus.Connected, 'the SDK call Connected');
    await until(() => call.connection?.e2ee === true && daveyOf(first)?.ready === true, 'the DAVE group');
    // Each peer's SSRC reaches the SDK with its op 5; frames before it cannot be attributed.
    let speaking = false;
    call.SetSpeakingStatusChangedCallback((userId, isSpeaking) => {
      if (isSpeaking && String(userId) === first.game.botUserId) speaking = true;
    });
    first.connection.setSpeaking(true);
    await until(() => speaking, 'the first peer speaking at the SDK');

    await sdkTo([first], 50);
    await peerToSdk(first, 50);
  });

  it('a third member joins: a new epoch, and audio reaches everyone', async () => {
    const [first] = peers as [Peer];
    const epoch = daveyOf(first)?.epoch ?? 0n;
    const third = await joinPeer();
    await until(() => transitioned([first, third], epoch), 'the epoch with the third member');
    let speaking = false;
    call.SetSpeakingStatusChangedCallback((userId, isSpeaking) => {
      if (isSpeaking && String(userId) === third.game.botUserId) speaking = true;
    });
    third.connection.setSpeaking(true);
    await until(() => speaking, 'the third member speaking at the SDK');

    await sdkTo([first, third], 50);
    await peerToSdk(first, 50);
    await peerToSdk(third, 50);
  });

  it('the third member leaves: another epoch, and audio still flows both ways', async () => {
    const [first, third] = peers as [Peer, Peer];
    const epoch = daveyOf(first)?.epoch ?? 0n;
    third.listening = false;
    third.connection.destroy();
    await until(() => transitioned([first], epoch), 'the epoch without the third member');

    await sdkTo([first], 50);
    await peerToSdk(first, 50);
  });
});
