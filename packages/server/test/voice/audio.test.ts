import { ChannelTypes, type VoiceEncryptionMode, VoiceEncryptionModes } from '@hearth/protocol';
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
    await Promise.all([speak(a, b, 1, 0, FRAMES), speak(b, a, 2, 0, FRAMES)]);
    await until(() => atA.size === FRAMES && atB.size === FRAMES);
    expect(atB.size).toBe(FRAMES);
    expect(atA.size).toBe(FRAMES);
  });
});
