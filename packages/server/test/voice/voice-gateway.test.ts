import { ChannelTypes, GatewayOpcodes, VoiceEncryptionModes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import {
  identifyVoice,
  joinVoice,
  startVoiceHearth,
  type VoiceJoin,
  VoiceWire,
} from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

const BEFORE_E2EE_ONLY = '2026-02-28T23:59:59Z';
const E2EE_ONLY = '2026-03-01T00:00:00Z';
const MODES = [VoiceEncryptionModes.AeadAes256GcmRtpSize, VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize];

let hearth: TestHearth;
let clock: ManualClock;
let guild: TestGuild;
let channel: string;

const join = async (channelId = channel): Promise<VoiceJoin> =>
  joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channelId);
/** A call of its own, so that members of other tests are not in it. */
const newChannel = () => seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });

beforeAll(async () => {
  clock = new ManualClock(BEFORE_E2EE_ONLY);
  hearth = await startVoiceHearth(clock);
  guild = await createTestGuild(hearth);
  channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
});

afterAll(() => hearth.close());

describe('signalling: op 4 answers VOICE_SERVER_UPDATE (PROTOCOL.md §G.1)', () => {
  it('gives the joining session a token and the endpoint of the node hosting the call', async () => {
    const joined = await join();
    const port = new URL(`wss://${joined.server.endpoint}`).port;
    expect(joined.server).toStrictEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
      guild_id: guild.id,
      endpoint: `127.0.0.1:${port}`,
    });
    expect(Number(port)).toBeGreaterThan(0);
  });
});

describe('voice gateway v8: identify, select protocol, speaking, heartbeat (PROTOCOL.md §G.2)', () => {
  it('answers Hello, Ready with the server order of modes, Session Description, op 11/13 and relayed op 5', async () => {
    const call = await newChannel();
    const a = await join(call);
    const wire = await VoiceWire.open(a.server.endpoint);
    expect(await wire.next(8)).toStrictEqual({ op: 8, d: { heartbeat_interval: 13_750, v: 8 } });
    wire.send({
      op: 0,
      d: {
        server_id: guild.id,
        user_id: a.game.botUserId,
        session_id: a.sessionId,
        token: a.server.token,
        max_dave_protocol_version: 0,
      },
    });
    const ready = await wire.next(2);
    expect(ready).toStrictEqual({
      op: 2,
      seq: 1,
      d: {
        ssrc: expect.any(Number),
        ip: '127.0.0.1',
        port: expect.any(Number),
        modes: MODES,
        experiments: [],
      },
    });
    wire.send({ op: 1, d: { protocol: 'udp', data: { address: '127.0.0.1', port: 5000, mode: MODES[1] } } });
    const description = await wire.next(4);
    expect(description).toStrictEqual({
      op: 4,
      seq: 2,
      d: {
        mode: MODES[1],
        secret_key: expect.any(Array),
        dave_protocol_version: 0,
        audio_codec: 'opus',
        video_codec: null,
      },
    });
    const key = (description.d as { secret_key: number[] }).secret_key;
    expect(key).toHaveLength(32);
    expect(key.every((byte) => Number.isInteger(byte) && byte >= 0 && byte <= 255)).toBe(true);
    wire.send({ op: 3, d: { t: 1234, seq_ack: 2 } });
    expect(await wire.next(6)).toStrictEqual({ op: 6, d: { t: 1234 } });

    // B joins: each learns of the other (op 11); A's speaking is relayed with its SSRC and user id.
    const aSsrc = (ready.d as { ssrc: number }).ssrc;
    wire.send({ op: 5, d: { speaking: 1 | 4, delay: 0, ssrc: aSsrc } });
    const b = await join(call);
    const other = await identifyVoice(b, guild.id);
    expect(await other.wire.next(11)).toStrictEqual({ op: 11, seq: 2, d: { user_ids: [a.game.botUserId] } });
    expect(await wire.next(11)).toStrictEqual({ op: 11, seq: 3, d: { user_ids: [b.game.botUserId] } });
    other.wire.send({
      op: 1,
      d: { protocol: 'udp', data: { address: '127.0.0.1', port: 5001, mode: MODES[0] } },
    });
    await other.wire.next(4);
    // Without PRIORITY_SPEAKER the priority bit (4) is not relayed (@everyone has no such permission here).
    expect(await other.wire.next(5)).toStrictEqual({
      op: 5,
      seq: 4,
      d: { user_id: a.game.botUserId, ssrc: aSsrc, speaking: 1 },
    });
    other.wire.send({ op: 18, d: { flags: 2 } });
    expect(await wire.next(18)).toStrictEqual({ op: 18, seq: 4, d: { user_id: b.game.botUserId, flags: 2 } });
    other.wire.send({ op: 20, d: { platform: 1 } });
    expect(await wire.next(20)).toStrictEqual({
      op: 20,
      seq: 5,
      d: { user_id: b.game.botUserId, platform: 1 },
    });

    // B leaves voice on the main gateway: its voice session ends (4014) and A gets op 13.
    b.gateway.send({
      op: GatewayOpcodes.VoiceStateUpdate,
      d: { guild_id: guild.id, channel_id: null, self_mute: false, self_deaf: false },
    });
    expect(await other.wire.closeCode()).toBe(4014);
    expect(await wire.next(13)).toStrictEqual({ op: 13, seq: 6, d: { user_id: b.game.botUserId } });
    wire.socket.close();
  });

  it('answers heartbeats below v8 with the bare nonce and numbers nothing', async () => {
    const a = await join();
    const wire = await VoiceWire.open(a.server.endpoint, '?v=4');
    expect(await wire.next(8)).toStrictEqual({ op: 8, d: { heartbeat_interval: 13_750, v: 4 } });
    wire.send({ op: 3, d: 987654 });
    expect(await wire.next(6)).toStrictEqual({ op: 6, d: 987654 });
    wire.send({
      op: 0,
      d: { server_id: guild.id, user_id: a.game.botUserId, session_id: a.sessionId, token: a.server.token },
    });
    expect((await wire.next(2)).seq).toBeUndefined();
    wire.socket.close();
  });
});

describe('v8 buffered resume (PROTOCOL.md §G.3)', () => {
  it('replays, after op 9, every message the client had not acknowledged', async () => {
    const call = await newChannel();
    const a = await join(call);
    const { wire } = await identifyVoice(a, guild.id);
    wire.send({ op: 3, d: { t: 1, seq_ack: 1 } });
    await wire.next(6);
    wire.socket.close(4000);
    await wire.closed;
    // While A is away, B joins (op 11) and sets its flags (op 18): both are kept for A.
    const b = await join(call);
    const other = await identifyVoice(b, guild.id);
    other.wire.send({ op: 18, d: { flags: 1 } });
    await other.wire.next(11);

    const back = await VoiceWire.open(a.server.endpoint);
    await back.next(8);
    back.send({
      op: 7,
      d: { server_id: guild.id, session_id: a.sessionId, token: a.server.token, seq_ack: 1 },
    });
    expect(await back.next(9)).toStrictEqual({ op: 9, d: null });
    expect(await back.next(11)).toStrictEqual({ op: 11, seq: 2, d: { user_ids: [b.game.botUserId] } });
    expect(await back.next(18)).toStrictEqual({ op: 18, seq: 3, d: { user_id: b.game.botUserId, flags: 1 } });

    // A resume that acknowledges the replayed messages gets nothing more.
    back.socket.close(4000);
    await back.closed;
    const again = await VoiceWire.open(a.server.endpoint);
    await again.next(8);
    again.send({
      op: 7,
      d: { server_id: guild.id, session_id: a.sessionId, token: a.server.token, seq_ack: 3 },
    });
    await again.next(9);
    again.send({ op: 3, d: { t: 2, seq_ack: 3 } });
    await again.next(6);
    expect(again.frames.map((frame) => frame.op)).toStrictEqual([8, 9, 6]);
    again.socket.close();
    other.wire.socket.close();
  });

  it('closes 4006 when the session cannot resume (unknown session, wrong token)', async () => {
    const a = await join();
    const wire = await VoiceWire.open(a.server.endpoint);
    await wire.next(8);
    wire.send({
      op: 7,
      d: { server_id: guild.id, session_id: a.sessionId, token: a.server.token, seq_ack: 0 },
    });
    expect(await wire.closeCode()).toBe(4006);
    const forged = await VoiceWire.open(a.server.endpoint);
    await forged.next(8);
    forged.send({ op: 7, d: { server_id: guild.id, session_id: a.sessionId, token: 'nope', seq_ack: 0 } });
    expect(await forged.closeCode()).toBe(4004);
  });
});

describe('versions, encryption modes and end-to-end encryption (seed: Versioning)', () => {
  it.each([
    ['no v', ''],
    ['v=3', '?v=3'],
    ['v=abc', '?v=abc'],
    ['v=9', '?v=9'],
  ])('refuses a connection with %s: 4006', async (_name, query) => {
    const a = await join();
    const wire = await VoiceWire.open(a.server.endpoint, query);
    expect(await wire.closeCode()).toBe(4006);
    expect(wire.frames).toStrictEqual([]);
  });

  it.each([
    'xsalsa20_poly1305',
    'xsalsa20_poly1305_suffix',
    'xsalsa20_poly1305_lite',
    'xsalsa20_poly1305_lite_rtpsize',
    'aead_aes256_gcm',
    'nonsense',
  ])('refuses Select Protocol with the discontinued or unknown mode %s: 4016', async (mode) => {
    const { wire } = await identifyVoice(await join(), guild.id);
    wire.send({ op: 1, d: { protocol: 'udp', data: { address: '127.0.0.1', port: 5000, mode } } });
    expect(await wire.closeCode()).toBe(4016);
  });

  it('refuses a protocol other than udp: 4012', async () => {
    const { wire } = await identifyVoice(await join(), guild.id);
    wire.send({ op: 1, d: { protocol: 'webrtc', data: { mode: MODES[0] } } });
    expect(await wire.closeCode()).toBe(4012);
  });

  it('before 1 March 2026 a client without DAVE joins a voice channel transport-encrypted only', async () => {
    clock.set(BEFORE_E2EE_ONLY);
    const { ready } = await identifyVoice(await join(), guild.id, 0);
    expect(ready.modes).toStrictEqual(MODES);
  });

  it('from 1 March 2026 a client without DAVE is refused with 4017', async () => {
    clock.set(E2EE_ONLY);
    try {
      const a = await join();
      const wire = await VoiceWire.open(a.server.endpoint);
      await wire.next(8);
      wire.send({
        op: 0,
        d: {
          server_id: guild.id,
          user_id: a.game.botUserId,
          session_id: a.sessionId,
          token: a.server.token,
          max_dave_protocol_version: 0,
        },
      });
      expect(await wire.closeCode()).toBe(4017);
      expect(wire.frames.map((frame) => frame.op)).toStrictEqual([8]);
    } finally {
      clock.set(BEFORE_E2EE_ONLY);
    }
  });
});

describe('identify checks the token from VOICE_SERVER_UPDATE (4004, 4011)', () => {
  it.each([
    ['another token', 4004, (j: VoiceJoin) => ({ token: `${j.server.token}x` })],
    ['another user', 4004, () => ({ user_id: '1234567890' })],
    ['another gateway session', 4004, () => ({ session_id: 'f'.repeat(32) })],
    ['another server', 4011, () => ({ server_id: '1234567890' })],
  ] as const)('with %s: closes %i', async (_name, code, change) => {
    const a = await join();
    const wire = await VoiceWire.open(a.server.endpoint);
    await wire.next(8);
    wire.send({
      op: 0,
      d: {
        server_id: guild.id,
        user_id: a.game.botUserId,
        session_id: a.sessionId,
        token: a.server.token,
        ...change(a),
      },
    });
    expect(await wire.closeCode()).toBe(code);
  });

  it('refuses a token that expired (10 minutes) with 4004', async () => {
    const a = await join();
    clock.advance(10 * 60 * 1000);
    try {
      const wire = await VoiceWire.open(a.server.endpoint);
      await wire.next(8);
      wire.send({
        op: 0,
        d: { server_id: guild.id, user_id: a.game.botUserId, session_id: a.sessionId, token: a.server.token },
      });
      expect(await wire.closeCode()).toBe(4004);
    } finally {
      clock.set(BEFORE_E2EE_ONLY);
    }
  });
});

describe('moves by moderators: the voice session follows', () => {
  it('leaves the old call (op 13) and joins the new one (op 11) without reconnecting', async () => {
    const [from, to] = [await newChannel(), await newChannel()];
    const a = await join(from);
    const b = await join(from);
    const c = await join(to);
    const wa = (await identifyVoice(a, guild.id)).wire;
    const wb = (await identifyVoice(b, guild.id)).wire;
    const wc = (await identifyVoice(c, guild.id)).wire;
    expect(await wa.next(11)).toMatchObject({ d: { user_ids: [b.game.botUserId] } });
    expect(await wb.next(11)).toMatchObject({ d: { user_ids: [a.game.botUserId] } });
    const moved = await hearth.api(`/guilds/${guild.id}/members/${b.game.botUserId}`, {
      method: 'PATCH',
      auth: guild.owner.token,
      body: { channel_id: to },
    });
    expect(moved.status).toBe(200);
    expect(await wa.next(13)).toMatchObject({ op: 13, d: { user_id: b.game.botUserId } });
    expect(await wc.next(11)).toMatchObject({ op: 11, d: { user_ids: [b.game.botUserId] } });
    expect(await wb.next(11)).toMatchObject({ op: 11, d: { user_ids: [c.game.botUserId] } });
    expect(wb.socket.readyState).toBe(wb.socket.OPEN);
    for (const wire of [wa, wb, wc]) wire.socket.close();
  });
});
