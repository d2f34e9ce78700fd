import { type VoiceConnection as DiscordJsConnection, EndBehaviorType } from '@discordjs/voice';
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
import { TcpProxy } from '../../../../test-support/tcp-proxy.js';
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
import { AudioModeType } from '../../../sdk/src/voice/gate.js';
import { nodeVoiceNetwork } from '../../../sdk/src/voice/node-voice.js';
import { connectCall } from '../../../sdk/src/voice/voice.js';
import { rms, sineFrame, steadyRms } from '../../../sdk/test/voice/signal.js';
import { ManualClock } from '../../src/kernel/clock.js';

/**
 * The SDK's Call and an unmodified @discordjs/voice 0.19.2 client in one call through Hearth hear each other
 * (issue 18): frames counted on both sides, the decoded energy of a sine matching what was sent; PTT gating,
 * self mute and deafen; a dropped connection reaches Disconnected, and a new call connects again.
 */

const PEAK = 8000;
const SILENCE = Buffer.from([0xf8, 0xff, 0xfe]);

/** What the @discordjs/voice side heard from one user: audio frames decoded, silence frames counted. */
interface Heard {
  audio: Int16Array[];
  silence: number;
}

function listen(connection: DiscordJsConnection, userId: string): Heard {
  const decoder = new OpusScript(48_000, 2);
  const heard: Heard = { audio: [], silence: 0 };
  const stream = connection.receiver.subscribe(userId, { end: { behavior: EndBehaviorType.Manual } });
  stream.on('data', (packet: Buffer) => {
    if (packet.equals(SILENCE)) {
      heard.silence += 1;
      return;
    }
    const pcm = decoder.decode(packet);
    heard.audio.push(new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength)));
  });
  return heard;
}

describe.each([
  { when: 'before 1 March 2026, without DAVE', clock: '2026-02-01T00:00:00Z', dave: false },
  { when: 'after 1 March 2026, end-to-end encrypted with DAVE', clock: '2026-03-02T00:00:00Z', dave: true },
])('an SDK Call and @discordjs/voice 0.19.2 in one call, $when', ({ clock, dave }) => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let channel: string;
  let peer: { game: TestGame; gateway: GatewayClient; connection: DiscordJsConnection };
  let player: { game: TestGame; gateway: GatewayClient };
  let proxy: TcpProxy;
  const network = nodeVoiceNetwork({ dave });

  beforeAll(async () => {
    hearth = await startVoiceHearth(new ManualClock(clock));
    guild = await createTestGuild(hearth);
    channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    const game = await addTestBot(hearth, guild);
    const gateway = await identifyBot(hearth, game);
    const connection = await joinWithDiscordJs(gateway, game, guild.id, channel, { dave });
    peer = { game, gateway, connection };
    const playerGame = await addTestBot(hearth, guild);
    player = { game: playerGame, gateway: await identifyBot(hearth, playerGame) };
  }, 60_000); // a server and real clients start slowly on a loaded machine

  afterAll(async () => {
    peer.connection.destroy();
    await peer.gateway.close();
    await player.gateway.close();
    await proxy?.close();
    await hearth.close();
  });

  interface SdkSide {
    call: Call;
    source: PushAudioSource;
    received: Int16Array[];
    captured: number;
    /** The test's extra work in the captured and received callbacks (their return value is the mute). */
    onCaptured?: ((data: Int16Array) => unknown) | undefined;
    onReceived?: ((data: Int16Array) => unknown) | undefined;
    statuses: number[];
    closes: number[];
  }

  /** A Call of the SDK connected through the proxy in front of the voice gateway. */
  async function startSdkCall(): Promise<SdkSide> {
    const { sessionId, token, endpoint } = await requestVoiceServer(
      player.gateway,
      player.game.botUserId,
      guild.id,
      channel,
    );
    const [host, port] = [
      endpoint.slice(0, endpoint.lastIndexOf(':')),
      Number(endpoint.slice(endpoint.lastIndexOf(':') + 1)),
    ];
    proxy ??= await TcpProxy.start({ host, port });
    const side: SdkSide = {
      call: undefined as unknown as Call,
      source: new PushAudioSource(),
      received: [],
      captured: 0,
      statuses: [],
      closes: [],
    };
    side.call = new Call({
      channelId: channel,
      network,
      owner: {
        updateVoiceState: () => undefined,
        log: () => undefined,
        currentUserId: () => player.game.botUserId,
      },
      received: (userId, data, samplesPerChannel, sampleRate, channels) => {
        expect([String(userId), samplesPerChannel, sampleRate, channels]).toEqual([
          peer.game.botUserId,
          960,
          48_000,
          2,
        ]);
        side.received.push(data.slice());
        return side.onReceived?.(data);
      },
      captured: (data) => {
        side.captured += 1;
        return side.onCaptured?.(data);
      },
    });
    side.call.SetStatusChangedCallback((status) => side.statuses.push(status));
    side.call.SetAudioSource(side.source);
    connectCall(
      side.call,
      {
        endpoint: `127.0.0.1:${proxy.port}`,
        token,
        sessionId,
        userId: player.game.botUserId,
        serverId: guild.id,
        channelId: channel,
        network,
      },
      {
        log: () => undefined,
        closed: (code) => {
          side.closes.push(code);
          side.call.connection = undefined;
          side.call.setStatus(CallStatus.Disconnected, 2, code);
        },
      },
    );
    await until(() => side.call.GetStatus() === CallStatus.Connected, 'the SDK call Connected');
    // The SDK announces its SSRC on connecting (op 5, speaking 0): the peer maps it before any audio.
    const ssrc = side.call.connection?.ssrc;
    await until(
      () => peer.connection.receiver.ssrcMap.get(player.game.botUserId)?.audioSSRC === ssrc,
      'the peer mapping the SDK SSRC',
    );
    if (dave) {
      // One MLS group: both ends encrypt end to end before any audio flows.
      await until(
        () => side.call.connection?.e2ee === true && daveOf(peer.connection)?.session?.ready === true,
        'the DAVE group',
      );
    }
    return side;
  }

  /** Pushes `count` sine frames into the SDK's source, paced a little so loopback UDP keeps up. */
  async function pushFrames(side: SdkSide, count: number, from = 0): Promise<void> {
    for (let i = 0; i < count; i++) {
      side.source.push(sineFrame(from + i, PEAK));
      await pause(2);
    }
  }

  let sdk: SdkSide;
  let heard: Heard;

  /** What a wait for frames at the peer names when it times out: where the SDK's frames got to. */
  const heardSoFar = (what: string) => () => {
    const decryption = dave
      ? daveOf(peer.connection)?.session?.getDecryptionStats(player.game.botUserId, 0)
      : null;
    return (
      `${what}: heard ${heard.audio.length} audio and ${heard.silence} silence frames; ` +
      `relay ${JSON.stringify(hearth.voice.mediaStats)}; peer decryption ${JSON.stringify(decryption)}, ` +
      `pending transitions ${daveOf(peer.connection)?.pendingTransitions.size ?? 'none'}`
    );
  };

  it('connects through Joining… Connecting, SignalingConnected and Connected', async () => {
    sdk = await startSdkCall();
    expect(sdk.statuses).toEqual([
      CallStatus.Connecting,
      CallStatus.SignalingConnected,
      CallStatus.Connected,
    ]);
    heard = listen(peer.connection, player.game.botUserId);
  });

  it('@discordjs/voice hears the SDK: 50 frames, and their decoded RMS matches the sine sent (±10 %)', async () => {
    await pushFrames(sdk, 50);
    expect(sdk.captured).toBe(50);
    await until(() => heard.audio.length === 50, heardSoFar('the SDK frames at @discordjs/voice'));
    const sent = rms(sineFrame(0, PEAK));
    expect(Math.abs(steadyRms(heard.audio) - sent) / sent).toBeLessThan(0.1);
    if (dave) {
      // Every frame was end-to-end encrypted by the SDK and decrypted by the peer's MLS session.
      const stats = daveOf(peer.connection)?.session?.getDecryptionStats(player.game.botUserId, 0);
      expect(stats?.successes).toBeGreaterThanOrEqual(50);
      expect(stats?.passthroughs).toBe(0);
    }
  });

  it('the SDK hears @discordjs/voice: 50 frames to the received callback, RMS matching (±10 %)', async () => {
    const encoder = new OpusScript(48_000, 2, OpusScript.Application.VOIP);
    // The SDK maps the peer's SSRC from its relayed op 5 (the speaking callback): frames before it are dropped.
    let speaking = false;
    sdk.call.SetSpeakingStatusChangedCallback((userId, isSpeaking) => {
      if (String(userId) === peer.game.botUserId && isSpeaking) speaking = true;
    });
    peer.connection.setSpeaking(true);
    await until(() => speaking, 'the peer speaking at the SDK');
    for (let i = 0; i < 50; i++) {
      const frame = sineFrame(i, PEAK);
      peer.connection.playOpusPacket(encoder.encode(Buffer.from(frame.buffer), 960));
      await pause(2);
    }
    await until(() => sdk.received.length === 50, 'the @discordjs/voice frames at the SDK');
    const sent = rms(sineFrame(0, PEAK));
    expect(Math.abs(steadyRms(sdk.received) - sent) / sent).toBeLessThan(0.1);
  });

  it('PTT: nothing while inactive, every frame while pressed, the release delay, then five silence frames', async () => {
    await pushFrames(sdk, 10); // VAD still: these are sent; the stream is then closed by silence
    sdk.call.SetAudioMode(AudioModeType.MODE_PTT);
    await until(() => heard.audio.length === 60, heardSoFar('the VAD frames'));
    await pushFrames(sdk, 6); // PTT inactive: silence ×5 closes the open stream, then nothing
    await until(() => heard.silence >= 5, heardSoFar('the closing silence'));
    const silenceBefore = heard.silence;
    await pushFrames(sdk, 10);
    await pause(100);
    expect(heard.audio.length).toBe(60);
    expect(heard.silence).toBe(silenceBefore);

    sdk.call.SetPTTActive(true);
    await pushFrames(sdk, 10);
    await until(() => heard.audio.length === 70, heardSoFar('the PTT frames'));
    sdk.call.SetPTTReleaseDelay(40);
    expect(sdk.call.GetPTTReleaseDelay()).toBe(40);
    sdk.call.SetPTTActive(false);
    await pushFrames(sdk, 10);
    await until(() => heard.silence === silenceBefore + 5, heardSoFar('the silence after the release delay'));
    await pause(100);
    expect(heard.audio.length).toBe(72); // 40 ms of release delay: two more frames
  });

  it('self-mute sends nothing; unmuted PTT sends again', async () => {
    sdk.call.SetSelfMute(true);
    sdk.call.SetPTTActive(true);
    await pushFrames(sdk, 10);
    await pause(150);
    expect(heard.audio.length).toBe(72);
    sdk.call.SetSelfMute(false);
    await pushFrames(sdk, 5);
    await until(() => heard.audio.length === 77, heardSoFar('the unmuted frames'));
    sdk.call.SetPTTActive(false);
  });

  it('self-deaf receives nothing; undeafened it hears again', async () => {
    const encoder = new OpusScript(48_000, 2, OpusScript.Application.VOIP);
    const before = sdk.received.length;
    sdk.call.SetSelfDeaf(true);
    for (let i = 0; i < 10; i++) {
      peer.connection.playOpusPacket(encoder.encode(Buffer.from(sineFrame(i, PEAK).buffer), 960));
      await pause(2);
    }
    await pause(150);
    expect(sdk.received.length).toBe(before);
    sdk.call.SetSelfDeaf(false);
    for (let i = 0; i < 10; i++) {
      peer.connection.playOpusPacket(encoder.encode(Buffer.from(sineFrame(i, PEAK).buffer), 960));
      await pause(2);
    }
    await until(() => sdk.received.length === before + 10, 'the frames after undeafening');
  });

  it('the captured callback changes what is sent in place (half the samples: half the RMS), or mutes it', async () => {
    sdk.call.SetAudioMode(AudioModeType.MODE_VAD);
    sdk.onCaptured = (data) => {
      for (let i = 0; i < data.length; i++) data[i] = Math.round((data[i] as number) / 2);
    };
    const before = heard.audio.length;
    await pushFrames(sdk, 30);
    await until(() => heard.audio.length === before + 30, heardSoFar('the halved frames'));
    const sent = rms(sineFrame(0, PEAK));
    expect(Math.abs(steadyRms(heard.audio.slice(before)) - sent / 2) / (sent / 2)).toBeLessThan(0.1);
    sdk.onCaptured = () => true;
    const silenceBefore = heard.silence;
    await pushFrames(sdk, 10);
    await until(() => heard.silence === silenceBefore + 5, heardSoFar('the stream closing'));
    expect(heard.audio.length).toBe(before + 30);
    sdk.onCaptured = undefined;
  });

  it('playback: the sink gets the mix at the participant volume; a received frame muted by the callback stays out', async () => {
    const encoder = new OpusScript(48_000, 2, OpusScript.Application.VOIP);
    const played: Int16Array[] = [];
    sdk.call.SetAudioSink({ write: (frame) => played.push(frame) });
    sdk.call.SetParticipantVolume(peer.game.botUserId, 50);
    const send = async (count: number) => {
      for (let i = 0; i < count; i++) {
        peer.connection.playOpusPacket(encoder.encode(Buffer.from(sineFrame(i, PEAK).buffer), 960));
        await pause(20);
      }
    };
    await send(30);
    await until(() => played.length >= 25, 'the mixed playback');
    const sent = rms(sineFrame(0, PEAK));
    expect(Math.abs(steadyRms(played) - sent / 2) / (sent / 2)).toBeLessThan(0.1);
    await pause(200); // the last frames arrive and the mixer's queue (at most five frames) plays out
    sdk.onReceived = () => true;
    const receivedBefore = sdk.received.length;
    const playedBefore = played.length;
    await send(10);
    await until(() => sdk.received.length === receivedBefore + 10, 'the muted frames at the callback');
    await pause(100);
    expect(played.length).toBe(playedBefore);
    sdk.onReceived = undefined;
    sdk.call.SetAudioSink(undefined);
  });

  it('a dropped connection reaches Disconnected; a new call (end and start again) connects and is heard', async () => {
    proxy.cut();
    await until(() => sdk.call.GetStatus() === CallStatus.Disconnected, 'Disconnected');
    expect(sdk.closes).toHaveLength(1);
    sdk.call.dispose();
    proxy.restore();
    const again = await startSdkCall();
    const audioBefore = heard.audio.length;
    await pushFrames(again, 20);
    await until(() => heard.audio.length === audioBefore + 20, heardSoFar('the new call heard'));
    again.call.connection?.close();
    again.call.dispose();
  });
});
