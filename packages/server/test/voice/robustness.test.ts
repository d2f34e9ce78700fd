import { createSocket } from 'node:dgram';
import { ChannelTypes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { identifyVoice, joinVoice, startVoiceHearth, VoiceWire } from '../../../../test-support/voice.js';
import { ManualClock } from '../../src/kernel/clock.js';

let hearth: TestHearth;
let guild: TestGuild;
let channel: string;
let endpoint: string;

beforeAll(async () => {
  hearth = await startVoiceHearth(new ManualClock('2026-02-01T00:00:00Z'));
  guild = await createTestGuild(hearth);
  channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
  endpoint = (await joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channel)).server.endpoint;
});

afterAll(() => hearth.close());

async function closeCodeOf(frames: Array<string | Buffer | object>): Promise<number> {
  const wire = await VoiceWire.open(endpoint);
  await wire.next(8);
  for (const frame of frames) wire.send(frame);
  return wire.closeCode();
}

describe('voice gateway robustness: malformed frames get the documented close code, never a crash', () => {
  it.each([
    ['text that is not JSON', ['{op:0'], 4002],
    ['JSON that is not an object', ['[1,2]'], 4002],
    ['an object without op', [{ d: {} }], 4002],
    ['a non-integer op', [{ op: '0', d: {} }], 4002],
    ['an unknown op', [{ op: 99, d: {} }], 4001],
    ['an op only the server sends (2 Ready)', [{ op: 2, d: {} }], 4001],
    ['Select Protocol before Identify', [{ op: 1, d: { protocol: 'udp', data: {} } }], 4003],
    ['Speaking before Identify', [{ op: 5, d: { speaking: 1 } }], 4003],
    ['a binary frame before Identify', [Buffer.from([26, 1, 2, 3])], 4003],
    ['Identify without fields', [{ op: 0, d: {} }], 4020],
    ['Identify with d null', [{ op: 0, d: null }], 4020],
    [
      'Identify with a numeric server_id',
      [{ op: 0, d: { server_id: 1, user_id: '1', session_id: 'a', token: 'b' } }],
      4020,
    ],
    [
      'Identify with a negative max_dave_protocol_version',
      [
        {
          op: 0,
          d: { server_id: '1', user_id: '1', session_id: 'a', token: 'b', max_dave_protocol_version: -1 },
        },
      ],
      4020,
    ],
    [
      'Identify with an unknown token',
      [{ op: 0, d: { server_id: '1', user_id: '1', session_id: 'a', token: 'b' } }],
      4004,
    ],
    ['Resume with no token', [{ op: 7, d: { server_id: '1', session_id: 'a' } }], 4020],
  ] as const)('%s: closes %i', async (_name, frames, code) => {
    expect(await closeCodeOf([...frames])).toBe(code);
  });

  it('closes 4005 on a second Identify, 4020 on bad op 5/18/20 fields, 4001 on an unknown binary op', async () => {
    const cases: Array<[object | Buffer, number]> = [
      [{ op: 0, d: {} }, 4005],
      [{ op: 5, d: { speaking: 'yes' } }, 4020],
      [{ op: 18, d: { flags: -1 } }, 4020],
      [{ op: 20, d: {} }, 4020],
      [{ op: 1, d: { protocol: 'udp', data: 'x' } }, 4020],
      [Buffer.from([99, 0]), 4001],
      [Buffer.from([26, 0, 1]), 4020],
    ];
    for (const [frame, code] of cases) {
      const join = await joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channel);
      const { wire } = await identifyVoice(join, guild.id);
      wire.send(frame);
      expect(await wire.closeCode()).toBe(code);
      await join.gateway.close();
    }
  });

  it('refuses a frame over 64 KiB (1009) and survives garbage on the UDP port; a call still works after', async () => {
    const big = await VoiceWire.open(endpoint);
    await big.next(8);
    big.send(JSON.stringify({ op: 3, d: 'x'.repeat(70_000) }));
    expect(await big.closeCode()).toBe(1009);

    const join = await joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channel);
    const { wire, ready } = await identifyVoice(join, guild.id);
    const udp = createSocket('udp4');
    const stats = hearth.voice.mediaStats;
    const before = stats.received;
    const garbage = [
      Buffer.alloc(0),
      Buffer.from([1]),
      Buffer.alloc(74, 0xff),
      Buffer.concat([Buffer.from([0x80, 0x78]), Buffer.alloc(40, 7)]),
      Buffer.concat([Buffer.from([0x90, 0x78]), Buffer.alloc(12, 1)]),
      Buffer.concat([Buffer.from([0x80, 0xc8]), Buffer.alloc(30)]),
    ];
    for (const packet of garbage) udp.send(packet, ready.port, '127.0.0.1');
    // An IP discovery for the SSRC Ready gave is still answered: the media path lives on.
    const discovery = Buffer.alloc(74);
    discovery.writeUInt16BE(1, 0);
    discovery.writeUInt16BE(70, 2);
    discovery.writeUInt32BE(ready.ssrc, 4);
    const answer = new Promise<Buffer>((resolve) => udp.once('message', resolve));
    udp.send(discovery, ready.port, '127.0.0.1');
    const response = await answer;
    expect(response.readUInt16BE(0)).toBe(2);
    expect(response.readUInt16BE(2)).toBe(70);
    expect(response.readUInt32BE(4)).toBe(ready.ssrc);
    expect(response.toString('utf8', 8, response.indexOf(0, 8))).toBe('127.0.0.1');
    expect(response.readUInt16BE(72)).toBe(udp.address().port);
    expect(stats.received).toBeGreaterThanOrEqual(before + garbage.length);
    wire.send({ op: 3, d: { t: 5, seq_ack: 1 } });
    expect(await wire.next(6)).toStrictEqual({ op: 6, d: { t: 5 } });
    udp.close();
    wire.socket.close();
  });
});
