import { ChannelTypes, GatewayOpcodes, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { identifyBot, joinWithDiscordJs, startVoiceHearth } from '../../../../test-support/voice.js';
import { type Peer, receive, speak, until } from '../../../../test-support/voice-audio.js';
import { ManualClock } from '../../src/kernel/clock.js';

const P = PermissionFlags;
const MEMBER = P.ViewChannel | P.Connect | P.Speak | P.UseVAD;

let hearth: TestHearth;
let guild: TestGuild;
const opened: Peer[] = [];

async function peer(channelId: string): Promise<Peer> {
  const game = await addTestBot(hearth, guild);
  const gateway = await identifyBot(hearth, game);
  const connection = await joinWithDiscordJs(gateway, game, guild.id, channelId);
  const joined = { game, gateway, connection };
  opened.push(joined);
  return joined;
}

/** Op 4 to `channelId`, then a heartbeat: frames are handled in order, so its ACK closes the window. */
async function refusedJoin(gateway: GatewayClient, channelId: string): Promise<string[]> {
  gateway.send({
    op: GatewayOpcodes.VoiceStateUpdate,
    d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false },
  });
  gateway.send({ op: GatewayOpcodes.Heartbeat, d: null });
  await gateway.nextOp(GatewayOpcodes.HeartbeatAck);
  return gateway.frames.filter((frame) => frame.op === 0).map((frame) => frame.t as string);
}

const patchMember = (userId: string, body: object) =>
  hearth.api(`/guilds/${guild.id}/members/${userId}`, { method: 'PATCH', auth: guild.owner.token, body });

beforeAll(async () => {
  hearth = await startVoiceHearth(new ManualClock('2026-02-01T00:00:00Z'));
  guild = await createTestGuild(hearth);
  await setEveryonePermissions(hearth, guild, MEMBER);
});

afterAll(async () => {
  for (const { connection, gateway } of opened) {
    connection.destroy();
    await gateway.close();
  }
  await hearth.close();
});

describe('who may join a call (CONNECT, user_limit; GUILDS.md §7.4)', () => {
  it('gives no VOICE_SERVER_UPDATE to a member without CONNECT', async () => {
    const channel = await seedTestChannel(hearth, guild.id, {
      type: ChannelTypes.GuildVoice,
      overwrites: [{ id: guild.id, type: 0, allow: 0n, deny: P.Connect }],
    });
    const game = await addTestBot(hearth, guild);
    const gateway = await identifyBot(hearth, game);
    const seen = await refusedJoin(gateway, channel);
    expect(seen).not.toContain('VOICE_SERVER_UPDATE');
    expect(seen).not.toContain('VOICE_STATE_UPDATE');
    await gateway.close();
  });

  it('gives no VOICE_SERVER_UPDATE once user_limit is reached, and one at the limit', async () => {
    const channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice, userLimit: 1 });
    await peer(channel);
    const game = await addTestBot(hearth, guild);
    const gateway = await identifyBot(hearth, game);
    expect(await refusedJoin(gateway, channel)).not.toContain('VOICE_SERVER_UPDATE');
    await gateway.close();
  });
});

describe('what the media path forwards (SPEAK, server deafen and mute)', () => {
  it('forwards nothing to a server-deafened member, and again once undeafened', async () => {
    const channel = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    const [a, b] = [await peer(channel), await peer(channel)];
    const atB = receive(b, a, 7);
    const stats = hearth.voice.mediaStats;
    expect((await patchMember(b.game.botUserId, { deaf: true })).status).toBe(200);
    await until(() => rights(b)?.receive === false);
    const forwarded = stats.forwarded;
    const received = stats.received;
    await speak(a, b, 7, 0, 50);
    await until(() => stats.received >= received + 50);
    expect(stats.forwarded).toBe(forwarded);
    expect((await patchMember(b.game.botUserId, { deaf: false })).status).toBe(200);
    await until(() => rights(b)?.receive === true);
    await speak(a, b, 7, 50, 50);
    await until(() => atB.size >= 50);
    // The later frames arrived and none of the earlier ones: they were dropped, not late.
    expect([...atB].sort((x, y) => x - y)).toStrictEqual(Array.from({ length: 50 }, (_, i) => 50 + i));
  });

  it('forwards nothing from a member without SPEAK (its rights say so)', async () => {
    const channel = await seedTestChannel(hearth, guild.id, {
      type: ChannelTypes.GuildVoice,
      overwrites: [{ id: guild.id, type: 0, allow: 0n, deny: P.Speak }],
    });
    const [a, b] = [await peer(channel), await peer(channel)];
    const atB = receive(b, a, 8);
    const stats = hearth.voice.mediaStats;
    const { forwarded, dropped } = stats;
    await speak(a, b, 8, 0, 50);
    // Every frame reached the server and was dropped there; B heard nothing.
    await until(() => stats.dropped >= dropped + 50);
    expect(stats.dropped).toBe(dropped + 50);
    expect(stats.forwarded).toBe(forwarded);
    expect(atB.size).toBe(0);
    expect(rights(a)).toStrictEqual({ send: false, receive: true, priority: false });
  });
});

/** What the voice node lets the peer's session do now (server deafen and mute apply asynchronously). */
const rights = (peer: Peer) => hearth.voice.rightsOf(guild.id, peer.game.botUserId);
