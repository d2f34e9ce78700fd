import { ChannelTypes, IpDiscovery, VOICE_SDP_MAX_LENGTH, VoiceEncryptionModes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RTCDataChannel, RTCPeerConnection, RTCSessionDescription } from 'werift';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { identifyVoice, joinVoice, startVoiceHearth } from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

/**
 * Op 1 `webrtc_datachannel` (Hearth's browser transport, README "Voice"): the SDP offer of one unreliable,
 * unordered data channel is answered in op 4, and the channel carries the UDP path's datagrams for its
 * own session only; a bad offer closes 4020 and the node goes on.
 */

const MODE = VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize;

let hearth: TestHearth;
let guild: TestGuild;
const peers: RTCPeerConnection[] = [];

beforeAll(async () => {
  hearth = await startVoiceHearth(new ManualClock('2026-02-01T00:00:00Z'));
  guild = await createTestGuild(hearth);
});

afterAll(async () => {
  await Promise.all(peers.map((peer) => peer.close()));
  await hearth.close();
});

async function member(channelId: string) {
  const joined = await joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channelId);
  return identifyVoice(joined, guild.id);
}

/** A browser stand-in: one unreliable, unordered data channel and the whole offer once gathered. */
async function offerer(): Promise<{ peer: RTCPeerConnection; channel: RTCDataChannel; sdp: string }> {
  const peer = new RTCPeerConnection({ iceAdditionalHostAddresses: ['127.0.0.1'], iceUseIpv6: false });
  peers.push(peer);
  const channel = peer.createDataChannel('voice', { ordered: false, maxRetransmits: 0 });
  await peer.setLocalDescription(await peer.createOffer());
  while (peer.iceGatheringState !== 'complete') await peer.iceGatheringStateChange.asPromise();
  return { peer, channel, sdp: peer.localDescription!.sdp };
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function discoveryRequest(ssrc: number): Buffer {
  const packet = Buffer.alloc(IpDiscovery.PacketBytes);
  packet.writeUInt16BE(IpDiscovery.Request, 0);
  packet.writeUInt16BE(IpDiscovery.Length, 2);
  packet.writeUInt32BE(ssrc, 4);
  return packet;
}

describe('op 1 webrtc_datachannel: a browser’s data channel as the media endpoint', () => {
  it('answers op 4 with the key, the mode and an SDP answer on the voice host; IP discovery runs over the channel', async () => {
    const { wire, ready } = await member(
      await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice }),
    );
    const { peer, channel, sdp } = await offerer();
    wire.send({ op: 1, d: { protocol: 'webrtc_datachannel', data: { mode: MODE, sdp } } });
    const description = (await wire.next(4)).d as Record<string, unknown>;
    expect(description).toStrictEqual({
      mode: MODE,
      secret_key: expect.any(Array),
      dave_protocol_version: 0,
      audio_codec: 'opus',
      video_codec: null,
      sdp: expect.stringMatching(/^v=0\r\n/),
    });
    expect(description.secret_key).toHaveLength(32);
    // Host candidates on --voice-host only (127.0.0.1 in tests), as werift answers a data channel.
    const candidates = String(description.sdp).match(/^a=candidate:.*$/gm) ?? [];
    expect(candidates.length).toBeGreaterThan(0);
    for (const line of candidates) expect(line).toMatch(/ udp \d+ 127\.0\.0\.1 \d+ typ host/);
    expect(description.sdp).toMatch(/^m=application \d+ UDP\/DTLS\/SCTP webrtc-datachannel/m);

    await peer.setRemoteDescription(new RTCSessionDescription(String(description.sdp), 'answer'));
    while (channel.readyState !== 'open') await channel.stateChanged.asPromise();
    const answers: Buffer[] = [];
    channel.onMessage.subscribe((message) => {
      if (typeof message !== 'string') answers.push(message);
    });

    // Another session's SSRC over this channel: dropped, never answered.
    const dropped = hearth.voice.mediaStats.dropped;
    channel.send(discoveryRequest((ready.ssrc + 1) >>> 0));
    channel.send(discoveryRequest(ready.ssrc));
    while (answers.length === 0) await channel.onMessage.asPromise();
    expect(answers).toHaveLength(1);
    const answer = answers[0]!;
    expect(answer.length).toBe(IpDiscovery.PacketBytes);
    expect(answer.readUInt16BE(0)).toBe(IpDiscovery.Response);
    expect(answer.readUInt32BE(4)).toBe(ready.ssrc);
    expect(answer.subarray(8, 8 + 9).toString()).toBe('127.0.0.1');
    // The channel is unordered: the refused datagram may land after the answered one.
    await until(() => hearth.voice.mediaStats.dropped === dropped + 1);
    expect(answers).toHaveLength(1);
    wire.socket.close();
  });

  it.each([
    ['an SDP that is not one', 'hello'],
    [
      'an SDP offering audio only, no data channel',
      'v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n',
    ],
    [
      'a data channel section without ICE credentials or fingerprint',
      'v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\na=sctp-port:5000\r\n',
    ],
    ['an SDP that is not a string', 42],
    ['no SDP', undefined],
    [`an SDP of VOICE_SDP_MAX_LENGTH + 1 characters`, `v=0\r\n${'a'.repeat(VOICE_SDP_MAX_LENGTH - 4)}`],
  ])('refuses %s: 4020, and the node goes on serving', async (_what, sdp) => {
    const channelId = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    const { wire } = await member(channelId);
    wire.send({ op: 1, d: { protocol: 'webrtc_datachannel', data: { mode: MODE, sdp } } });
    expect(await wire.closeCode()).toBe(4020);
    expect(wire.frames.some((frame) => frame.op === 4)).toBe(false);
    // The next member of the same call is served as usual.
    const next = await member(channelId);
    next.wire.send({ op: 1, d: { protocol: 'udp', data: { address: '127.0.0.1', port: 5000, mode: MODE } } });
    expect(((await next.wire.next(4)).d as { mode: string }).mode).toBe(MODE);
    next.wire.socket.close();
  });

  it('refuses Discord’s own `webrtc` (audio-track media, which this node does not serve): 4012', async () => {
    const { wire } = await member(await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice }));
    const { sdp } = await offerer();
    wire.send({ op: 1, d: { protocol: 'webrtc', data: sdp, sdp, codecs: [], rtc_connection_id: 'x' } });
    expect(await wire.closeCode()).toBe(4012);
  });
});
