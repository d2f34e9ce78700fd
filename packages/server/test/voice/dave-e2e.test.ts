/**
 * DAVE end to end (protocol.md; reference/VOICE-RPC.md §3): unmodified @discordjs/voice 0.19.2 clients with
 * DAVE on, after 1 March 2026 (calls are end-to-end encrypted only), build their MLS group through Hearth's
 * external sender and exchange audio; the forwarder only ever carries DAVE frames.
 */
import { VoiceConnectionStatus } from '@discordjs/voice';
import { ChannelTypes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import {
  daveOf as daveOfConnection,
  identifyBot,
  joinWithDiscordJs,
  startVoiceHearth,
} from '../../../../test-support/voice.js';
import { type Peer, receive, speak } from '../../../../test-support/voice-audio.js';
import { until } from '../../../../test-support/wait.js';
import { ManualClock } from '../../src/kernel/clock.js';

const E2EE_ONLY = '2026-03-02T00:00:00Z';
const BEFORE_E2EE_ONLY = '2026-02-01T00:00:00Z';
const FRAMES = 100;

const daveOf = (peer: Peer) => daveOfConnection(peer.connection);

function versionOf(peer: Peer): number | undefined {
  return daveOf(peer)?.protocolVersion;
}

/** Every peer's session is in `epoch`, with no transition left to execute. */
function inEpoch(peers: readonly Peer[], epoch: bigint): boolean {
  return peers.every((peer) => {
    const dave = daveOf(peer);
    return (
      dave?.session?.ready === true && dave.session.epoch === epoch && dave.pendingTransitions.size === 0
    );
  });
}

/** The speaker waits until every listener maps its SSRC (op 5), then sends its frames. */
async function speakTo(speaker: Peer, listeners: readonly Peer[], tag: number): Promise<void> {
  speaker.connection.setSpeaking(true);
  await until(
    () => listeners.every((l) => l.connection.receiver.ssrcMap.get(speaker.game.botUserId) !== undefined),
    'the speaker SSRC at every listener',
  );
  await speak(speaker, listeners[0] as Peer, tag, 0, FRAMES);
}

/** Every peer speaks to every other at once; returns the frames each direction delivered. */
async function exchangeAll(peers: readonly Peer[], firstTag: number): Promise<number[]> {
  const received: Set<number>[] = [];
  let tag = firstTag;
  const talks: Promise<void>[] = [];
  for (const speaker of peers) {
    const listeners = peers.filter((p) => p !== speaker);
    for (const listener of listeners) received.push(receive(listener, speaker, tag));
    talks.push(speakTo(speaker, listeners, tag));
    tag += 1;
  }
  await Promise.all(talks);
  await until(() => received.every((seen) => seen.size === FRAMES), 'every frame', 5_000).catch(() => {});
  return received.map((seen) => seen.size);
}

/**
 * `directions` each delivered their frames, byte for byte. UDP may drop a datagram while the shared 2-core
 * machine stalls this process (its sockets' buffers hold about 270 small datagrams), so a few may be missing;
 * a key or an encryption mode out of step loses them all.
 */
function expectDelivered(counts: readonly number[], directions: number): void {
  expect(counts).toHaveLength(directions);
  for (const count of counts) expect(count).toBeGreaterThanOrEqual(FRAMES - 5);
}

describe('DAVE with unmodified @discordjs/voice 0.19.2 clients in a voice channel, after 1 March 2026', () => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let channel: string;
  const peers: Peer[] = [];

  async function join(): Promise<Peer> {
    const game = await addTestBot(hearth, guild);
    const gateway = await identifyBot(hearth, game);
    const connection = await joinWithDiscordJs(gateway, game, guild.id, channel, { dave: true });
    const peer = { game, gateway, connection };
    peers.push(peer);
    return peer;
  }

  beforeAll(async () => {
    hearth = await startVoiceHearth(new ManualClock(E2EE_ONLY));
    guild = await createTestGuild(hearth);
    channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
  });

  afterAll(async () => {
    for (const peer of peers) {
      if (peer.connection.state.status !== VoiceConnectionStatus.Destroyed) peer.connection.destroy();
      await peer.gateway.close();
    }
    await hearth.close();
  });

  it('builds the group, adds a third member (epoch 2), removes a leaver (epoch 3), resets a sole member, audio at 0 % loss each time', async () => {
    const a = await join();
    const b = await join();
    await until(() => inEpoch([a, b], 1n), 'the first group (epoch 1)');
    expect(hearth.dave.call(channel)?.leaves.length).toBe(2);
    const code = a.connection.voicePrivacyCode;
    expect(code).toMatch(/^\d{30}$/);
    expect(b.connection.voicePrivacyCode).toBe(code);
    expectDelivered(await exchangeAll([a, b], 1), 2);

    const c = await join();
    await until(() => inEpoch([a, b, c], 2n), 'the third member (epoch 2)');
    expect(hearth.dave.call(channel)?.epoch).toBe(2n);
    const codes = new Set([a, b, c].map((p) => p.connection.voicePrivacyCode));
    expect(codes.size).toBe(1);
    expect(codes.has(code)).toBe(false);
    expectDelivered(await exchangeAll([a, b, c], 10), 6);

    b.connection.destroy();
    await until(() => inEpoch([a, c], 3n), 'the leaver removed (epoch 3)');
    expect(hearth.dave.call(channel)?.leaves).toEqual([a.game.botUserId, undefined, c.game.botUserId]);
    expect(a.connection.voicePrivacyCode).toBe(c.connection.voicePrivacyCode);
    expectDelivered(await exchangeAll([a, c], 20), 2);

    // The forwarder carried only end-to-end encrypted frames (0xFAFA) and silence: it never saw audio.
    const stats = hearth.voice.mediaStats;
    expect(stats.plainFrames).toBe(0);
    expect(stats.daveFrames).toBeGreaterThanOrEqual(FRAMES * 7);
    expect(hearth.dave.call(channel)?.rejections.filter((r) => r !== 'commit_wrong_epoch')).toEqual([]);

    // The sole remaining member is reset (op 24 epoch 1, op 21 transition 0); the next joiner forms a new group.
    c.connection.destroy();
    await until(() => hearth.dave.call(channel)?.epoch === 0n, 'the sole-member reset');
    const d = await join();
    await until(() => inEpoch([a, d], 1n), 'a new group (epoch 1)');
    expect(a.connection.voicePrivacyCode).toBe(d.connection.voicePrivacyCode);
    expectDelivered(await exchangeAll([a, d], 30), 2);
    expect(hearth.voice.mediaStats.plainFrames).toBe(0);
  });
});

describe('DAVE in a mixed call before 1 March 2026 (protocol.md, Initial Transitory Phase)', () => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let channel: string;
  const peers: Peer[] = [];

  async function join(dave = true): Promise<Peer> {
    const game = await addTestBot(hearth, guild);
    const gateway = await identifyBot(hearth, game);
    const connection = await joinWithDiscordJs(gateway, game, guild.id, channel, { dave });
    const peer = { game, gateway, connection };
    peers.push(peer);
    return peer;
  }

  beforeAll(async () => {
    hearth = await startVoiceHearth(new ManualClock(BEFORE_E2EE_ONLY));
    guild = await createTestGuild(hearth);
    channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
  });

  afterAll(async () => {
    for (const peer of peers) {
      if (peer.connection.state.status !== VoiceConnectionStatus.Destroyed) peer.connection.destroy();
      await peer.gateway.close();
    }
    await hearth.close();
  });

  it('downgrades to transport encryption while a client without DAVE is in the call, and upgrades when it leaves', async () => {
    const a = await join();
    const b = await join();
    await until(() => inEpoch([a, b], 1n), 'the first group (epoch 1)');
    const firstCode = a.connection.voicePrivacyCode;

    const legacy = await join(false);
    await until(() => hearth.dave.call(channel)?.version === 0, 'the downgrade');
    await until(() => [a, b].every((p) => versionOf(p) === 0), 'both DAVE clients in transport-only mode');
    expect(a.connection.voicePrivacyCode).toBeUndefined();
    expectDelivered(await exchangeAll([a, b, legacy], 40), 6);
    expect(hearth.voice.mediaStats.plainFrames).toBeGreaterThanOrEqual(FRAMES * 3);

    legacy.connection.destroy();
    // A new group: both clients back on version 1, in epoch 1 again, with a new epoch authenticator.
    await until(
      () =>
        [a, b].every((p) => versionOf(p) === 1) &&
        inEpoch([a, b], 1n) &&
        a.connection.voicePrivacyCode !== undefined &&
        a.connection.voicePrivacyCode !== firstCode,
      'the upgrade (new group)',
    );
    expect(a.connection.voicePrivacyCode).toMatch(/^\d{30}$/);
    expect(a.connection.voicePrivacyCode).toBe(b.connection.voicePrivacyCode);
    const plainBefore = hearth.voice.mediaStats.plainFrames;
    expectDelivered(await exchangeAll([a, b], 50), 2);
    expect(hearth.voice.mediaStats.plainFrames).toBe(plainBefore);
  });
});
