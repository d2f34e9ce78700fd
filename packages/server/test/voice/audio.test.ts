import { EndBehaviorType, type VoiceConnection } from '@discordjs/voice';
import { ChannelTypes, type VoiceEncryptionMode, VoiceEncryptionModes } from '@hearth/protocol';
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
import { identifyBot, joinWithDiscordJs, startVoiceHearth } from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

/** Before 1 March 2026 a client without DAVE may join unencrypted end to end (seed: Versioning). */
const BEFORE_E2EE_ONLY = '2026-02-01T00:00:00Z';
const FRAMES = 100;

interface Peer {
  game: TestGame;
  gateway: GatewayClient;
  connection: VoiceConnection;
}

/** An Opus-sized marker frame: sender tag, sequence number, filler. */
function frame(tag: number, seq: number): Buffer {
  const bytes = Buffer.alloc(40, 0x55);
  bytes.write('HRTH', 0);
  bytes.writeUInt8(tag, 4);
  bytes.writeUInt32BE(seq, 5);
  return bytes;
}

/** Starts `listener` receiving `speaker`'s frames: the set of sequence numbers seen, checked byte for byte. */
function receive(listener: Peer, speaker: Peer, tag: number): Set<number> {
  const seen = new Set<number>();
  const stream = listener.connection.receiver.subscribe(speaker.game.botUserId, {
    end: { behavior: EndBehaviorType.Manual },
  });
  stream.on('data', (packet: Buffer) => {
    if (packet.length === 40 && packet.toString('latin1', 0, 4) === 'HRTH' && packet[4] === tag) {
      const seq = packet.readUInt32BE(5);
      if (packet.equals(frame(tag, seq))) seen.add(seq);
    }
  });
  return seen;
}

/** The speaker announces itself (op 5) and waits until the listener maps its SSRC, then sends. */
async function speak(speaker: Peer, listener: Peer, tag: number): Promise<void> {
  speaker.connection.setSpeaking(true);
  const ssrcs = listener.connection.receiver.ssrcMap;
  if (!ssrcs.get(speaker.game.botUserId)) {
    await new Promise<void>((resolve) => {
      const check = () => {
        if (ssrcs.get(speaker.game.botUserId)) {
          ssrcs.off('create', check);
          resolve();
        }
      };
      ssrcs.on('create', check);
    });
  }
  for (let seq = 0; seq < FRAMES; seq += 1) {
    speaker.connection.playOpusPacket(frame(tag, seq));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

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
    await Promise.all([speak(a, b, 1), speak(b, a, 2)]);
    await until(() => atA.size === FRAMES && atB.size === FRAMES);
    expect(atB.size).toBe(FRAMES);
    expect(atA.size).toBe(FRAMES);
  });
});
