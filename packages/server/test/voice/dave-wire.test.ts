/**
 * DAVE on the voice gateway's wire (protocol.md, Voice Gateway Opcodes): exact frames a bare client sees
 * and the close codes of malformed DAVE messages.
 */
import { ChannelTypes, VoiceEncryptionModes } from '@hearth/protocol';
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
  type VoiceWire,
} from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

const E2EE_ONLY = '2026-03-01T00:00:00Z';
const MODE = VoiceEncryptionModes.AeadAes256GcmRtpSize;

let hearth: TestHearth;
let clock: ManualClock;
let guild: TestGuild;

beforeAll(async () => {
  clock = new ManualClock(E2EE_ONLY);
  hearth = await startVoiceHearth(clock);
  guild = await createTestGuild(hearth);
});

afterAll(() => hearth.close());

/** A member of a fresh voice channel, identified with `maxDave`, through Select Protocol. */
async function member(
  channel: string,
  maxDave: number,
  port = 5000,
): Promise<{ wire: VoiceWire; userId: string }> {
  const joined = await joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channel);
  const { wire } = await identifyVoice(joined, guild.id, maxDave);
  wire.send({ op: 1, d: { protocol: 'udp', data: { address: '127.0.0.1', port, mode: MODE } } });
  return { wire, userId: joined.game.botUserId };
}

const newChannel = () => seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });

describe('DAVE session setup (protocol.md, select_protocol_ack (4), dave_mls_external_sender_package (25))', () => {
  it('answers op 4 with dave_protocol_version 1, then sends the external sender as binary op 25', async () => {
    const { wire } = await member(await newChannel(), 1);
    expect(await wire.next(4)).toMatchObject({ op: 4, seq: 2, d: { dave_protocol_version: 1 } });
    const sender = await wire.next(25);
    expect(sender.seq).toBe(3);
    expect(Buffer.from(sender.d as Buffer).equals(Buffer.from(hearth.dave.externalSender.package))).toBe(
      true,
    );
    // ExternalSender: signature_key<V> (an uncompressed P-256 point: 2-byte varint 65, then 0x04 ‖ x ‖ y),
    // then Credential{u16 credential_type = 1 (basic), identity<V>}.
    const bytes = sender.d as Buffer;
    expect([...bytes.subarray(0, 3)]).toEqual([0x40, 65, 0x04]);
    expect(bytes.readUInt16BE(67)).toBe(1);
  });

  it('proposes nothing for a key package that is not one (the server only records it)', async () => {
    const channel = await newChannel();
    const { wire } = await member(channel, 1);
    await wire.next(25);
    wire.send(Buffer.from([26, 1, 2, 3]));
    const deadline = Date.now() + 5_000;
    while (hearth.dave.call(channel)?.rejections.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(hearth.dave.call(channel)?.rejections).toEqual(['key_package_invalid']);
    expect(wire.frames.filter((f) => f.op === 27)).toEqual([]);
  });

  it.each([
    ['a string transition_id', { transition_id: '1' }],
    ['a negative transition_id', { transition_id: -1 }],
    ['a transition_id above u16', { transition_id: 65_536 }],
    ['no d', null],
  ])('closes 4020 on op 23 with %s', async (_name, d) => {
    const { wire } = await member(await newChannel(), 1);
    await wire.next(25);
    wire.send({ op: 23, d });
    expect(await wire.closeCode()).toBe(4020);
  });

  it('closes 4020 on op 31 with a malformed transition_id', async () => {
    const { wire } = await member(await newChannel(), 1);
    await wire.next(25);
    wire.send({ op: 31, d: { transition_id: 1.5 } });
    expect(await wire.closeCode()).toBe(4020);
  });
});

describe('DAVE before 1 March 2026 (protocol.md, Initial Transitory Phase)', () => {
  it('describes a DAVE client joining a call with a client without DAVE with version 0 and no op 25', async () => {
    clock.set('2026-02-01T00:00:00Z');
    try {
      const channel = await newChannel();
      const legacy = await member(channel, 0);
      expect(await legacy.wire.next(4)).toMatchObject({ op: 4, d: { dave_protocol_version: 0 } });
      const dave = await member(channel, 1, 5001);
      expect(await dave.wire.next(4)).toMatchObject({ op: 4, d: { dave_protocol_version: 0 } });
      await hearth.dave.idle();
      expect(dave.wire.frames.filter((f) => f.op === 25)).toEqual([]);
      expect(hearth.dave.call(channel)?.version).toBe(0);
    } finally {
      clock.set(E2EE_ONLY);
    }
  });
});
