import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChannelTypes } from '@hearth/protocol';
import { ManualClock, MemoryBus, MemorySessionStore } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, createTestGuild, seedTestChannel } from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { identifyVoice, joinVoice, startVoiceHearth, VoiceWire } from '../../../../test-support/voice.js';

const directory = mkdtempSync(join(tmpdir(), 'hearth-voice-nodes-'));
const nodes: TestHearth[] = [];
const bus = new MemoryBus();

beforeAll(async () => {
  const clock = new ManualClock('2026-02-01T00:00:00Z');
  const sessions = new MemorySessionStore();
  const databaseUrl = `sqlite:${join(directory, 'voice.sqlite')}`;
  for (let i = 0; i < 2; i++) {
    nodes.push(await startVoiceHearth(clock, { shared: { bus, sessions } }, { databaseUrl, workerId: i }));
  }
});

afterAll(async () => {
  for (const node of nodes) await node.close();
  await bus.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('many nodes: a call lives on one node, and VOICE_SERVER_UPDATE names it from any node', () => {
  it('names the node that took the call first to a member joining through the other node', async () => {
    const [a, b] = nodes as [TestHearth, TestHearth];
    const guild = await createTestGuild(a);
    const channel = await seedTestChannel(a, guild.id, { type: ChannelTypes.GuildVoice });
    const first = await joinVoice(a, await addTestBot(a, guild), guild.id, channel);
    const second = await joinVoice(b, await addTestBot(a, guild), guild.id, channel);
    expect(second.server.endpoint).toBe(first.server.endpoint);

    // Both sessions are on node A's voice gateway and see each other.
    const one = await identifyVoice(first, guild.id);
    const two = await identifyVoice(second, guild.id);
    expect((await one.wire.next(11)).d).toStrictEqual({ user_ids: [second.game.botUserId] });
    expect(a.voice.counts).toStrictEqual({ sessions: 2, calls: 1 });

    // Node B's own voice gateway does not host that call: 4011.
    const other = await joinVoice(b, await addTestBot(a, guild), guild.id, channel);
    expect(other.server.endpoint).toBe(a.voice.endpoint);
    expect(b.voice.endpoint).not.toBe(a.voice.endpoint);
    const wrong = await VoiceWire.open(b.voice.endpoint);
    await wrong.next(8);
    wrong.send({
      op: 0,
      d: {
        server_id: guild.id,
        user_id: other.game.botUserId,
        session_id: other.sessionId,
        token: other.server.token,
      },
    });
    expect(await wrong.closeCode()).toBe(4011);
    expect(b.voice.counts).toStrictEqual({ sessions: 0, calls: 0 });
    for (const wire of [one.wire, two.wire]) wire.socket.close();
  });
});
