import { GatewayIntents, GatewayOpcodes, MessageTypes, VoiceCloseCodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../../test-support/oauth.js';
import { startVoiceHearth, VoiceWire } from '../../../../test-support/voice-wire.js';
import { ManualClock } from '../../src/kernel/clock.js';

/*
 * Calls in DMs: op 4 with guild_id null and a DM as channel_id, the voice gateway with the DM as server_id,
 * CALL_CREATE / CALL_UPDATE / CALL_DELETE and the CALL message, and DAVE required from 1 March 2026.
 */

const clock = new ManualClock('2026-02-01T00:00:00Z');
let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startVoiceHearth(clock);
});

afterAll(() => hearth.close());

type Data = Record<string, unknown>;
type Player = Awaited<ReturnType<typeof createPlayer>>;

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const INTENTS = GatewayIntents.GuildVoiceStates | GatewayIntents.DirectMessages;

async function session(player: Player): Promise<{ client: GatewayClient; sessionId: string }> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: player.token, intents: INTENTS, properties: PROPERTIES } });
  const ready = await client.nextDispatch('READY');
  return { client, sessionId: (ready.d as { session_id: string }).session_id };
}

async function openDm(from: Player | string, to: Player): Promise<string> {
  const response = await hearth.api('/users/@me/channels', {
    method: 'POST',
    auth: typeof from === 'string' ? from : from.token,
    body: { recipient_id: to.user.id },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

const op4 = (channelId: string | null, extra: Data = {}) => ({
  op: GatewayOpcodes.VoiceStateUpdate,
  d: { guild_id: null, channel_id: channelId, self_mute: false, self_deaf: false, ...extra },
});

/** The next `count` dispatches, in the order they came. */
async function dispatches(client: GatewayClient, count: number): Promise<GatewayFrame[]> {
  const frames: GatewayFrame[] = [];
  while (frames.length < count) frames.push(await client.next((frame) => frame.op === 0));
  return frames;
}

/** The first dispatch of each type, whatever their order (a session's own dispatch races the bus). */
async function collect(client: GatewayClient, types: string[]): Promise<Record<string, Data>> {
  const found: Record<string, Data> = {};
  while (Object.keys(found).length < types.length) {
    const frame = await client.next(
      (f) => f.op === 0 && types.includes(String(f.t)) && !(String(f.t) in found),
    );
    found[String(frame.t)] = frame.d as Data;
  }
  return found;
}

/** A heartbeat answered: every dispatch due to this session before it has been received. */
async function settled(client: GatewayClient): Promise<void> {
  client.send({ op: GatewayOpcodes.Heartbeat, d: null });
  await client.nextOp(GatewayOpcodes.HeartbeatAck);
}

function voiceState(userId: string, sessionId: string, channelId: string | null, extra: Data = {}) {
  return {
    channel_id: channelId,
    user_id: userId,
    session_id: sessionId,
    deaf: false,
    mute: false,
    self_deaf: false,
    self_mute: false,
    self_stream: false,
    self_video: false,
    suppress: false,
    request_to_speak_timestamp: null,
    ...extra,
  };
}

async function identifyVoice(
  server: { endpoint: string; token: string },
  channelId: string,
  userId: string,
  sessionId: string,
  maxDave: number,
): Promise<VoiceWire> {
  const wire = await VoiceWire.open(server.endpoint);
  await wire.next(8);
  wire.send({
    op: 0,
    d: {
      server_id: channelId,
      user_id: userId,
      session_id: sessionId,
      token: server.token,
      max_dave_protocol_version: maxDave,
    },
  });
  return wire;
}

describe('DM calls: op 4 with guild_id null and a DM as channel_id', () => {
  it('starts a call with its message and ringing, updates it as recipients join and leave, ends it with the last', async () => {
    const [alice, bob, carol] = [
      await createPlayer(hearth),
      await createPlayer(hearth),
      await createPlayer(hearth),
    ];
    const dm = await openDm(alice, bob);
    const [a, b, c] = [await session(alice), await session(bob), await session(carol)];

    // Alice calls: the recipients get CALL_CREATE, the CALL message, then her voice state (no guild_id).
    a.client.send(op4(dm, { self_mute: true }));
    const aliceState = voiceState(alice.user.id, a.sessionId, dm, { self_mute: true });
    const [created, message, state] = await dispatches(b.client, 3);
    expect(created!.t).toBe('CALL_CREATE');
    const messageId = (created!.d as { message_id: string }).message_id;
    expect(created!.d).toStrictEqual({
      channel_id: dm,
      message_id: expect.stringMatching(/^\d+$/),
      region: 'hearth',
      ringing: [bob.user.id],
      voice_states: [aliceState],
    });
    expect(message!.t).toBe('MESSAGE_CREATE');
    expect(message!.d).toMatchObject({
      id: messageId,
      channel_id: dm,
      type: MessageTypes.Call,
      author: { id: alice.user.id },
      content: '',
      call: { participants: [alice.user.id], ended_timestamp: null },
    });
    expect(message!.d).not.toHaveProperty('guild_id');
    expect(state!.t).toBe('VOICE_STATE_UPDATE');
    expect(state!.d).toStrictEqual(aliceState);

    // Alice alone learns where to connect: guild_id null, the DM as channel_id.
    const aliceGot = await collect(a.client, ['VOICE_SERVER_UPDATE', 'VOICE_STATE_UPDATE']);
    const aliceServer = aliceGot['VOICE_SERVER_UPDATE'] as { token: string; endpoint: string };
    expect(aliceServer).toStrictEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/),
      guild_id: null,
      channel_id: dm,
      endpoint: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
    await settled(b.client);
    expect(b.client.frames.filter((frame) => frame.t === 'VOICE_SERVER_UPDATE')).toStrictEqual([]);

    // The voice gateway takes the DM as server_id; before 1 March 2026 a client without DAVE may join.
    const aliceWire = await identifyVoice(aliceServer, dm, alice.user.id, a.sessionId, 0);
    expect((await aliceWire.next(2)).d).toMatchObject({ ip: '127.0.0.1' });

    // Bob answers: no longer rung; both are in the call.
    b.client.send(op4(dm));
    const bobState = voiceState(bob.user.id, b.sessionId, dm);
    const [update, bobJoined] = await dispatches(a.client, 2);
    expect(update!.t).toBe('CALL_UPDATE');
    const byUser = (states: Data[]) =>
      [...states].sort((x, y) => String(x['user_id']).localeCompare(String(y['user_id'])));
    const updated = update!.d as { ringing: string[]; voice_states: Data[] };
    expect({ ...updated, voice_states: byUser(updated.voice_states) }).toStrictEqual({
      channel_id: dm,
      message_id: messageId,
      region: 'hearth',
      ringing: [],
      voice_states: byUser([aliceState, bobState]),
    });
    expect(bobJoined).toMatchObject({ t: 'VOICE_STATE_UPDATE', d: bobState });
    const bobServer = (await b.client.nextDispatch('VOICE_SERVER_UPDATE')).d as {
      token: string;
      endpoint: string;
    };
    const bobWire = await identifyVoice(bobServer, dm, bob.user.id, b.sessionId, 0);
    await bobWire.next(2);
    expect((await aliceWire.next(11)).d).toStrictEqual({ user_ids: [bob.user.id] });

    // Carol is no recipient: her op 4 for the DM is ignored, and nobody hears of it.
    c.client.send(op4(dm));
    await settled(c.client);
    await settled(a.client);
    expect(c.client.frames.filter((frame) => frame.op === 0 && frame.t !== 'READY')).toStrictEqual([]);
    const aboutCarol = (frame: GatewayFrame) => (frame.d as Data | null)?.['user_id'] === carol.user.id;
    expect(a.client.frames.filter(aboutCarol)).toStrictEqual([]);

    // Bob hangs up: his voice session ends (4014) and the call goes on with Alice.
    b.client.send(op4(null));
    const [bobLeft, stillOn] = await dispatches(a.client, 2);
    expect(bobLeft).toMatchObject({ t: 'VOICE_STATE_UPDATE', d: voiceState(bob.user.id, b.sessionId, null) });
    expect(stillOn).toMatchObject({ t: 'CALL_UPDATE', d: { ringing: [], voice_states: [aliceState] } });
    expect(await bobWire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    expect((await aliceWire.next(13)).d).toStrictEqual({ user_id: bob.user.id });

    // Alice hangs up last: the call ends, its message records who took part and when it ended.
    await b.client.next(
      (frame) =>
        frame.t === 'CALL_UPDATE' && (frame.d as { voice_states: unknown[] }).voice_states.length === 1,
    );
    clock.advance(60_000);
    a.client.send(op4(null));
    const [aliceLeft, ended, deleted] = await dispatches(b.client, 3);
    expect(aliceLeft).toMatchObject({
      t: 'VOICE_STATE_UPDATE',
      d: voiceState(alice.user.id, a.sessionId, null, { self_mute: true }),
    });
    const endedAt = new Date(clock.now()).toISOString();
    const call = { participants: [alice.user.id, bob.user.id], ended_timestamp: endedAt };
    expect(ended).toMatchObject({ t: 'MESSAGE_UPDATE', d: { id: messageId, type: MessageTypes.Call, call } });
    expect(deleted).toStrictEqual(expect.objectContaining({ t: 'CALL_DELETE', d: { channel_id: dm } }));
    expect(await aliceWire.closeCode()).toBe(VoiceCloseCodes.Disconnected);

    const history = await hearth.api(`/channels/${dm}/messages`, { auth: bob.token });
    expect((await history.json()) as Data[]).toContainEqual(
      expect.objectContaining({ id: messageId, type: MessageTypes.Call, call }),
    );
    for (const s of [a, b, c]) await s.client.close();
  });

  it('a move to another DM ends the first call; a new session learns of a call after READY; a session that ends leaves its call; a DM with a bot has no calls', async () => {
    const [alice, bob, dave] = [
      await createPlayer(hearth),
      await createPlayer(hearth),
      await createPlayer(hearth),
    ];
    const [withBob, withDave] = [await openDm(alice, bob), await openDm(dave, alice)];
    const game = await createGame(hearth);
    const withBot = await openDm(`Bot ${game.botToken}`, alice);
    const [a, b] = [await session(alice), await session(bob)];

    // The platform's bots make no calls outside guilds: Alice's op 4 for her DM with a bot is ignored.
    a.client.send(op4(withBot));
    await settled(a.client);
    expect(a.client.frames.filter((frame) => frame.op === 0 && frame.t !== 'READY')).toStrictEqual([]);

    a.client.send(op4(withBob));
    const first = (await b.client.nextDispatch('CALL_CREATE')).d as { message_id: string };
    a.client.send(op4(withDave));
    const [left, ended, deleted] = await dispatches(b.client, 5).then((frames) => frames.slice(2));
    expect(left).toMatchObject({ t: 'VOICE_STATE_UPDATE', d: { user_id: alice.user.id, channel_id: null } });
    expect(ended).toMatchObject({
      t: 'MESSAGE_UPDATE',
      d: {
        id: first.message_id,
        call: { participants: [alice.user.id], ended_timestamp: expect.any(String) },
      },
    });
    expect(deleted).toMatchObject({ t: 'CALL_DELETE', d: { channel_id: withBob } });

    // Dave's first session starts during the call: it learns of it right after READY.
    const d = await session(dave);
    expect(await d.client.next((frame) => frame.op === 0)).toMatchObject({
      t: 'CALL_CREATE',
      d: {
        channel_id: withDave,
        message_id: expect.stringMatching(/^\d+$/),
        region: 'hearth',
        ringing: [dave.user.id],
        voice_states: [expect.objectContaining({ user_id: alice.user.id, channel_id: withDave })],
      },
    });

    // Alice's client closes its gateway session (1000): she leaves the call, which ends.
    await a.client.close();
    expect((await d.client.nextDispatch('VOICE_STATE_UPDATE')).d).toMatchObject({
      user_id: alice.user.id,
      channel_id: null,
    });
    expect((await d.client.nextDispatch('CALL_DELETE')).d).toStrictEqual({ channel_id: withDave });
    for (const s of [b, d]) await s.client.close();
  });

  it('from 1 March 2026 a DM call is end-to-end encrypted only: a client without DAVE is refused 4017', async () => {
    const [alice, bob] = [await createPlayer(hearth), await createPlayer(hearth)];
    const dm = await openDm(bob, alice);
    clock.set('2026-03-01T00:00:00Z');
    const a = await session(alice);
    a.client.send(op4(dm));
    const server = (await a.client.nextDispatch('VOICE_SERVER_UPDATE')).d as {
      token: string;
      endpoint: string;
    };
    const plain = await identifyVoice(server, dm, alice.user.id, a.sessionId, 0);
    expect(await plain.closeCode()).toBe(VoiceCloseCodes.E2EERequired);
    const dave = await identifyVoice(server, dm, alice.user.id, a.sessionId, 1);
    expect((await dave.next(2)).d).toMatchObject({ ip: '127.0.0.1' });
    dave.socket.close();
    await a.client.close();
  });
});
