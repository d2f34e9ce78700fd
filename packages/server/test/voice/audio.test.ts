import { ChannelTypes, Rtp, type VoiceEncryptionMode, VoiceEncryptionModes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { identifyBot, joinWithDiscordJs, startVoiceHearth } from '../../../../test-support/voice.js';
import { type Peer, receive, speak, until } from '../../../../test-support/voice-audio.js';
import { ManualClock } from '../../src/kernel/clock.js';

/** Before 1 March 2026 a client without DAVE may join unencrypted end to end (seed: Versioning). */
const BEFORE_E2EE_ONLY = '2026-02-01T00:00:00Z';
const FRAMES = 100;

describe.each([
  [VoiceEncryptionModes.AeadAes256GcmRtpSize],
  [VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize],
])('two unmodified @discordjs/voice 0.19.2 clients in a voice channel, %s first in Ready', (mode) => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let channel: string;
  const peers: Peer[] = [];

  beforeAll(async () => {
    const modes: VoiceEncryptionMode[] = [mode];
    for (const other of Object.values(VoiceEncryptionModes)) if (other !== mode) modes.push(other);
    hearth = await startVoiceHearth(new ManualClock(BEFORE_E2EE_ONLY), { voice: { modes } });
    guild = await createTestGuild(hearth);
    channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    for (let i = 0; i < 2; i += 1) {
      const game = await addTestBot(hearth, guild);
      const gateway = await identifyBot(hearth, game);
      const connection = await joinWithDiscordJs(gateway, game, guild.id, channel);
      peers.push({ game, gateway, connection });
    }
  });

  afterAll(async () => {
    for (const peer of peers) {
      peer.connection.destroy();
      await peer.gateway.close();
    }
    await hearth.close();
  });

  it(`negotiates ${mode} and exchanges ${FRAMES} frames each way with 0 % loss`, async () => {
    const [a, b] = peers as [Peer, Peer];
    for (const peer of peers) {
      const networking = (
        peer.connection.state as { networking: { state: { connectionData: { encryptionMode: string } } } }
      ).networking;
      expect(networking.state.connectionData.encryptionMode).toBe(mode);
    }
    const atB = receive(b, a, 1);
    const atA = receive(a, b, 2);
    const preambles = new Set<string>();
    const rtpAtB = (packet: Buffer) => {
      if (packet.length > 16 && packet[1] === Rtp.OpusPayloadType) {
        preambles.add(`${packet[0]!.toString(16)} ${packet.toString('hex', 12, 16)}`);
      }
    };
    const udpOfB = (b.connection.state as unknown as { networking: { state: { udp: UdpOf } } }).networking
      .state.udp.socket;
    udpOfB.on('message', rtpAtB);
    await Promise.all([speak(a, b, 1, 0, FRAMES), speak(b, a, 2, 0, FRAMES)]);
    await until(() => atA.size === FRAMES && atB.size === FRAMES);
    udpOfB.off('message', rtpAtB);
    expect(atB.size).toBe(FRAMES);
    expect(atA.size).toBe(FRAMES);
    // @discordjs/voice sends 0x80 without an extension; every packet forwarded carries X and an empty preamble.
    expect([...preambles]).toStrictEqual(['90 bede0000']);
  });

  it('resumes (op 7 → op 9) after its socket drops with 4015, and audio goes on with 0 % loss', async () => {
    const [a, b] = peers as [Peer, Peer];
    const networking = (a.connection.state as unknown as { networking: ResumableNetworking }).networking;
    const resumed = new Promise<number[]>((resolve) => {
      const codes: number[] = [];
      const listener = (_old: { code: number }, next: { code: number }) => {
        codes.push(next.code);
        if (next.code === NETWORKING_READY) {
          networking.off('stateChange', listener);
          resolve(codes);
        }
      };
      networking.on('stateChange', listener);
    });
    networking.state.ws.ws.close(4015);
    // Resuming (5), then Ready (4) again: no new Identify, no new UDP handshake.
    expect(await resumed).toStrictEqual([NETWORKING_RESUMING, NETWORKING_READY]);
    const atB = receive(b, a, 3);
    const atA = receive(a, b, 4);
    await Promise.all([speak(a, b, 3, 0, FRAMES), speak(b, a, 4, 0, FRAMES)]);
    await until(() => atA.size === FRAMES && atB.size === FRAMES);
    expect([atB.size, atA.size]).toStrictEqual([FRAMES, FRAMES]);
  });
});

interface UdpOf {
  socket: {
    on(event: 'message', listener: (packet: Buffer) => void): void;
    off(event: 'message', listener: (packet: Buffer) => void): void;
  };
}

/** @discordjs/voice's Networking states (NetworkingStatusCode): Ready 4, Resuming 5. */
const NETWORKING_READY = 4;
const NETWORKING_RESUMING = 5;

interface ResumableNetworking {
  state: { code: number; ws: { ws: { close(code: number): void } } };
  on(event: 'stateChange', listener: (old: { code: number }, next: { code: number }) => void): void;
  off(event: 'stateChange', listener: (old: { code: number }, next: { code: number }) => void): void;
}
