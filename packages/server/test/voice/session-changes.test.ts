/**
 * What ends or changes an open voice session from outside it (issue 18): a lobby member removed (4014) or
 * the lobby deleted (4022), a voice channel deleted (4022), roles and overwrites applied at once, CONNECT
 * lost (4014 and the voice state gone), a flood of frames (4021), and the voice metrics in /metrics.
 * Bare voice gateway clients only: nothing here loads @discordjs/voice.
 */
import { createSocket } from 'node:dgram';
import {
  ChannelTypes,
  GatewayOpcodes,
  IpDiscovery,
  PermissionFlags,
  VOICE_CLIENT_FRAMES_LIMIT,
  VoiceCloseCodes,
} from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayers, playerSession } from '../../../../test-support/lobbies.js';
import {
  joinVoice,
  startVoiceHearth,
  type VoiceJoin,
  VoiceWire,
} from '../../../../test-support/voice-wire.js';
import { ManualClock } from '../../src/kernel/clock.js';

const P = PermissionFlags;
const MEMBER = P.ViewChannel | P.Connect | P.Speak | P.UseVAD;
const AES = 'aead_aes256_gcm_rtpsize';

let hearth: TestHearth;
let guild: TestGuild;

beforeAll(async () => {
  hearth = await startVoiceHearth(new ManualClock('2026-02-01T00:00:00Z'), {}, { metrics: true });
  guild = await createTestGuild(hearth);
  await setEveryonePermissions(hearth, guild, MEMBER);
});

afterAll(() => hearth.close());

const newChannel = () => seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
const join = async (channelId: string): Promise<VoiceJoin> =>
  joinVoice(hearth, await addTestBot(hearth, guild), guild.id, channelId);

/** Who identifies on the voice gateway: a user, its main gateway session, and the voice server it was given. */
interface Caller {
  userId: string;
  sessionId: string;
  server: { token: string; endpoint: string };
}

const callerOf = (joined: VoiceJoin): Caller => ({
  userId: joined.game.botUserId,
  sessionId: joined.sessionId,
  server: joined.server,
});

/** Identify (op 0) on the voice gateway of `serverId` (a guild or a lobby), up to Ready. */
async function identified(caller: Caller, serverId: string) {
  const wire = await VoiceWire.open(caller.server.endpoint);
  await wire.next(8);
  wire.send({
    op: 0,
    d: {
      server_id: serverId,
      user_id: caller.userId,
      session_id: caller.sessionId,
      token: caller.server.token,
    },
  });
  const ready = (await wire.next(2)).d as { ssrc: number; port: number };
  return { wire, ssrc: ready.ssrc, port: ready.port };
}

/** A member identified and described (op 1 → op 4), as a client is before it sends audio. */
async function inCall(caller: VoiceJoin | Caller, serverId = guild.id) {
  const member = await identified('game' in caller ? callerOf(caller) : caller, serverId);
  member.wire.send({ op: 1, d: { protocol: 'udp', data: { address: '127.0.0.1', port: 5000, mode: AES } } });
  await member.wire.next(4);
  return member;
}

/** IP discovery for `ssrc` on the media port: the answer, or undefined once the frame after it is answered. */
async function discover(port: number, ssrc: number, control: number): Promise<Buffer | undefined> {
  const socket = createSocket('udp4');
  const request = (id: number) => {
    const packet = Buffer.alloc(IpDiscovery.PacketBytes);
    packet.writeUInt16BE(IpDiscovery.Request, 0);
    packet.writeUInt16BE(IpDiscovery.Length, 2);
    packet.writeUInt32BE(id, 4);
    return packet;
  };
  const answers: Buffer[] = [];
  // The control SSRC is one still in a call: its answer, sent after ours, closes the window.
  const done = new Promise<void>((resolve) => {
    socket.on('message', (packet) => {
      answers.push(packet);
      if (packet.readUInt32BE(4) === control) resolve();
    });
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  socket.send(request(ssrc), port, '127.0.0.1');
  socket.send(request(control), port, '127.0.0.1');
  await done;
  socket.close();
  return answers.find((packet) => packet.readUInt32BE(4) === ssrc);
}

describe('lobby calls follow the lobby (4014 for a removed member, 4022 for a deleted lobby)', () => {
  it('ends a removed member’s session at once: voice state cleared, 4014, media no longer served', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob] = await lobbyPlayers(hearth, game, 2);
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: alice.id }, { id: bob.id }],
    });
    const lobbyId = lobby.body.id;
    const [a, b] = [await playerSession(hearth.url, alice), await playerSession(hearth.url, bob)];
    const joinLobby = async (session: typeof a, userId: string): Promise<Caller> => {
      session.client.send({
        op: GatewayOpcodes.VoiceStateUpdate,
        d: { guild_id: null, channel_id: lobbyId, self_mute: false, self_deaf: false },
      });
      const server = (await session.client.nextDispatch('LOBBY_VOICE_SERVER_UPDATE')).d as Caller['server'];
      return { userId, sessionId: session.sessionId, server };
    };
    const atA = await inCall(await joinLobby(a, alice.id), lobbyId);
    const atB = await inCall(await joinLobby(b, bob.id), lobbyId);
    expect(await discover(atA.port, atA.ssrc, atB.ssrc)).toBeDefined();

    expect((await call(hearth, 'DELETE', `/lobbies/${lobbyId}/members/${alice.id}`, game.bot)).status).toBe(
      204,
    );
    expect(await atA.wire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    // The others see Alice leave the call, and her session on the voice node is gone with its media.
    const left = await b.client.next(
      (f) =>
        f.t === 'LOBBY_VOICE_STATE_UPDATE' &&
        (f.d as { user_id: string }).user_id === alice.id &&
        (f.d as { channel_id: unknown }).channel_id === null,
    );
    expect(left.d).toMatchObject({ lobby_id: lobbyId, user_id: alice.id, channel_id: null });
    expect(hearth.voice.rightsOf(lobbyId, alice.id)).toBeUndefined();
    expect(await discover(atA.port, atA.ssrc, atB.ssrc)).toBeUndefined();
    // Bob stays in the call.
    expect(hearth.voice.rightsOf(lobbyId, bob.id)).toStrictEqual({
      send: true,
      receive: true,
      priority: false,
    });

    // Deleting the lobby terminates the call for everyone still in it.
    expect((await call(hearth, 'DELETE', `/lobbies/${lobbyId}`, game.bot)).status).toBe(204);
    expect(await atB.wire.closeCode()).toBe(VoiceCloseCodes.CallTerminated);
    expect(hearth.voice.rightsOf(lobbyId, bob.id)).toBeUndefined();
    for (const session of [a, b]) await session.client.close();
  });
});

describe('a deleted voice channel terminates its call (4022)', () => {
  it('closes every session in the channel with 4022 and leaves other calls alone', async () => {
    const [doomed, other] = [await newChannel(), await newChannel()];
    const aJoin = await join(doomed);
    const a = await inCall(aJoin);
    const b = await inCall(await join(doomed));
    const bystander = await join(other);
    const c = await inCall(bystander);
    const deleted = await hearth.api(`/channels/${doomed}`, { method: 'DELETE', auth: guild.owner.token });
    expect(deleted.status).toBe(200);
    expect(await a.wire.closeCode()).toBe(VoiceCloseCodes.CallTerminated);
    expect(await b.wire.closeCode()).toBe(VoiceCloseCodes.CallTerminated);
    expect(c.wire.socket.readyState).toBe(c.wire.socket.OPEN);
    expect(hearth.voice.rightsOf(guild.id, bystander.game.botUserId)).toBeDefined();
    // Its members' voice states went with it, and the guild's sessions are told so.
    const left = await aJoin.gateway.next(
      (f) =>
        f.t === 'VOICE_STATE_UPDATE' &&
        (f.d as { user_id: string }).user_id === aJoin.game.botUserId &&
        (f.d as { channel_id: unknown }).channel_id === null,
    );
    expect(left.d).toMatchObject({ guild_id: guild.id, channel_id: null, session_id: aJoin.sessionId });
  });

  it('closes every session of a deleted guild with 4022', async () => {
    const own = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, own, MEMBER);
    const channel = await seedTestChannel(hearth, own.id, { type: ChannelTypes.GuildVoice });
    const member = await inCall(
      await joinVoice(hearth, await addTestBot(hearth, own), own.id, channel),
      own.id,
    );
    expect((await hearth.api(`/guilds/${own.id}`, { method: 'DELETE', auth: own.owner.token })).status).toBe(
      204,
    );
    expect(await member.wire.closeCode()).toBe(VoiceCloseCodes.CallTerminated);
  });
});

describe('permission changes apply to open sessions at once (not at the next voice state)', () => {
  it('an overwrite denying SPEAK silences a speaking member for the others and stops its media', async () => {
    const channel = await newChannel();
    const speakerJoin = await join(channel);
    const speaker = await inCall(speakerJoin);
    const listener = await inCall(await join(channel));
    speaker.wire.send({ op: 5, d: { speaking: 1, delay: 0, ssrc: speaker.ssrc } });
    expect((await listener.wire.next(5)).d).toMatchObject({ ssrc: speaker.ssrc, speaking: 1 });

    const overwrite = await hearth.api(`/channels/${channel}/permissions/${speakerJoin.game.botUserId}`, {
      method: 'PUT',
      auth: guild.owner.token,
      body: { type: 1, allow: '0', deny: String(P.Speak) },
    });
    expect(overwrite.status).toBe(204);
    expect((await listener.wire.next(5)).d).toMatchObject({ ssrc: speaker.ssrc, speaking: 0 });
    expect(hearth.voice.rightsOf(guild.id, speakerJoin.game.botUserId)).toStrictEqual({
      send: false,
      receive: true,
      priority: false,
    });
  });

  it('@everyone losing SPEAK takes it from an open session at once, and giving it back restores it', async () => {
    const own = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, own, MEMBER);
    const channel = await seedTestChannel(hearth, own.id, { type: ChannelTypes.GuildVoice });
    const joined = await joinVoice(hearth, await addTestBot(hearth, own), own.id, channel);
    await inCall(joined, own.id);
    const rights = () => hearth.voice.rightsOf(own.id, joined.game.botUserId);
    expect(rights()?.send).toBe(true);
    const everyone = (permissions: bigint) =>
      hearth.api(`/guilds/${own.id}/roles/${own.id}`, {
        method: 'PATCH',
        auth: own.owner.token,
        body: { permissions: String(permissions) },
      });
    expect((await everyone(MEMBER & ~P.Speak)).status).toBe(200);
    await waitFor(() => rights()?.send === false);
    expect(rights()?.send).toBe(false);
    expect((await everyone(MEMBER)).status).toBe(200);
    await waitFor(() => rights()?.send === true);
    expect(rights()?.send).toBe(true);
  });

  it('losing CONNECT disconnects the member: VOICE_STATE_UPDATE with no channel, and 4014', async () => {
    const channel = await newChannel();
    const joined = await join(channel);
    const member = await inCall(joined);
    const overwrite = await hearth.api(`/channels/${channel}/permissions/${joined.game.botUserId}`, {
      method: 'PUT',
      auth: guild.owner.token,
      body: { type: 1, allow: '0', deny: String(P.Connect) },
    });
    expect(overwrite.status).toBe(204);
    expect(await member.wire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    const left = await joined.gateway.next(
      (f) =>
        f.t === 'VOICE_STATE_UPDATE' &&
        (f.d as { user_id: string }).user_id === joined.game.botUserId &&
        (f.d as { channel_id: unknown }).channel_id === null,
    );
    expect(left.d).toMatchObject({ guild_id: guild.id, channel_id: null });
    const state = await hearth.api(`/guilds/${guild.id}/voice-states/${joined.game.botUserId}`, {
      auth: guild.owner.token,
    });
    expect(state.status).toBe(404);
  });
});

describe('moderation applies to open sessions (server mute, timeout)', () => {
  it('a server mute silences a speaking member for the others', async () => {
    const channel = await newChannel();
    const speakerJoin = await join(channel);
    const speaker = await inCall(speakerJoin);
    const listener = await inCall(await join(channel));
    speaker.wire.send({ op: 5, d: { speaking: 1, delay: 0, ssrc: speaker.ssrc } });
    expect((await listener.wire.next(5)).d).toMatchObject({ ssrc: speaker.ssrc, speaking: 1 });
    const muted = await hearth.api(`/guilds/${guild.id}/members/${speakerJoin.game.botUserId}`, {
      method: 'PATCH',
      auth: guild.owner.token,
      body: { mute: true },
    });
    expect(muted.status).toBe(200);
    expect((await listener.wire.next(5)).d).toMatchObject({ ssrc: speaker.ssrc, speaking: 0 });
    expect(hearth.voice.rightsOf(guild.id, speakerJoin.game.botUserId)?.send).toBe(false);
  });

  it('a timeout (which leaves no CONNECT) disconnects the member with 4014, and only that member', async () => {
    const channel = await newChannel();
    const timedOut = await join(channel);
    const member = await inCall(timedOut);
    const other = await inCall(await join(channel));
    const patched = await hearth.api(`/guilds/${guild.id}/members/${timedOut.game.botUserId}`, {
      method: 'PATCH',
      auth: guild.owner.token,
      body: { communication_disabled_until: '2026-02-02T00:00:00.000Z' },
    });
    expect(patched.status).toBe(200);
    expect(await member.wire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    expect(other.wire.socket.readyState).toBe(other.wire.socket.OPEN);
    expect((await other.wire.next(13)).d).toStrictEqual({ user_id: timedOut.game.botUserId });
  });
});

describe('the voice gateway’s frame budget (4021)', () => {
  it(`closes a connection sending more than ${VOICE_CLIENT_FRAMES_LIMIT.limit} frames in a window with 4021, ending its session`, async () => {
    const joined = await join(await newChannel());
    const { wire } = await identified(callerOf(joined), guild.id);
    // Identify was one frame of the window; the heartbeats fill it and one more goes over.
    for (let i = 0; i < VOICE_CLIENT_FRAMES_LIMIT.limit; i += 1)
      wire.send({ op: 3, d: { t: i, seq_ack: -1 } });
    expect(await wire.closeCode()).toBe(VoiceCloseCodes.RateLimited);
    // Every frame within the budget was answered; none after.
    expect(wire.frames.filter((frame) => frame.op === 6)).toHaveLength(VOICE_CLIENT_FRAMES_LIMIT.limit - 1);
    await waitFor(() => hearth.voice.rightsOf(guild.id, joined.game.botUserId) === undefined);
    expect(hearth.voice.rightsOf(guild.id, joined.game.botUserId)).toBeUndefined();
  });
});

describe('voice metrics in /metrics', () => {
  it('reports open sessions and calls, dropped packets, decrypt failures and DAVE epochs', async () => {
    const scrape = async () => {
      const body = await (await fetch(`${hearth.url}/metrics`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1]);
      return {
        sessions: value('hearth_voice_sessions'),
        calls: value('hearth_voice_calls'),
        forwarded: value('hearth_voice_packets_forwarded_total'),
        dropped: value('hearth_voice_packets_dropped_total'),
        decrypt: value('hearth_voice_decrypt_failures_total'),
        epochs: value('hearth_voice_dave_epochs_total'),
      };
    };
    const before = await scrape();
    const channel = await newChannel();
    const member = await inCall(await join(channel));
    const during = await scrape();
    expect(during.sessions).toBe(before.sessions + 1);
    expect(during.calls).toBe(before.calls + 1);
    expect(during.epochs).toBe(before.epochs);

    // An RTP packet under the member's SSRC whose transport encryption does not authenticate.
    const socket = createSocket('udp4');
    const forged = Buffer.alloc(12 + 40 + 16 + 4, 0x42);
    forged[0] = 0x80;
    forged[1] = 0x78;
    forged.writeUInt32BE(member.ssrc, 8);
    socket.send(forged, member.port, '127.0.0.1');
    await waitFor(() => hearth.voice.mediaStats.decryptFailures > before.decrypt);
    socket.close();
    const after = await scrape();
    expect(after.decrypt).toBe(before.decrypt + 1);
    expect(after.dropped).toBe(before.dropped + 1);
    expect(after.forwarded).toBe(before.forwarded);
    member.wire.socket.close();
  });
});

/** Voice sessions follow bus events asynchronously: polls a condition (no fixed sleep), up to 5 s. */
async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}
