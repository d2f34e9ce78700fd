import {
  ChannelTypes,
  GatewayIntents,
  GatewayOpcodes,
  PermissionFlags,
  VoiceCloseCodes,
} from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import {
  addTestMember,
  createTestGuild,
  seedTestChannel,
  setEveryonePermissions,
} from '../../../../test-support/guilds.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../../test-support/oauth.js';
import { startVoiceHearth, VoiceWire } from '../../../../test-support/voice-wire.js';
import { ManualClock } from '../../src/kernel/clock.js';

/*
 * Ringing in DM calls: POST /channels/{id}/call/ring and /call/stop-ringing, the ring timeout, and one voice
 * connection per person (a DM call and a guild voice channel exclude each other).
 */

const clock = new ManualClock('2026-02-01T00:00:00Z');
let hearth: TestHearth;
const RING_TIMEOUT_MS = 60_000;

beforeAll(async () => {
  hearth = await startVoiceHearth(clock);
});

afterAll(() => hearth.close());

type Data = Record<string, unknown>;
type Player = Awaited<ReturnType<typeof createPlayer>>;
type Session = { client: GatewayClient; sessionId: string };

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const INTENTS = GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates | GatewayIntents.DirectMessages;

async function session(token: string): Promise<Session> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, intents: INTENTS, properties: PROPERTIES } });
  const ready = await client.nextDispatch('READY');
  return { client, sessionId: (ready.d as { session_id: string }).session_id };
}

async function openDm(from: Player, to: Player | string): Promise<string> {
  const response = await hearth.api('/users/@me/channels', {
    method: 'POST',
    auth: from.token,
    body: { recipient_id: typeof to === 'string' ? to : to.user.id },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

const op4 = (guildId: string | null, channelId: string | null) => ({
  op: GatewayOpcodes.VoiceStateUpdate,
  d: { guild_id: guildId, channel_id: channelId, self_mute: false, self_deaf: false },
});

async function post(path: string, auth: string, body?: unknown) {
  const response = await hearth.api(path, { method: 'POST', auth, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Data) };
}

const ring = (channelId: string, auth: string, body?: unknown) =>
  post(`/channels/${channelId}/call/ring`, auth, body);
const stopRinging = (channelId: string, auth: string, body?: unknown) =>
  post(`/channels/${channelId}/call/stop-ringing`, auth, body);

/** The next CALL_UPDATE's `ringing`. */
async function nextRinging(client: GatewayClient): Promise<string[]> {
  const frame = await client.nextDispatch('CALL_UPDATE');
  return (frame.d as { ringing: string[] }).ringing;
}

/** A heartbeat answered: every dispatch due to this session before it has been received. */
async function settled(client: GatewayClient): Promise<void> {
  client.send({ op: GatewayOpcodes.Heartbeat, d: null });
  await client.nextOp(GatewayOpcodes.HeartbeatAck);
}

/** Every dispatch of this type the session has received so far. */
const dispatchesOf = (client: GatewayClient, t: string) =>
  client.frames.filter((frame: GatewayFrame) => frame.op === 0 && frame.t === t);

describe('POST /channels/{id}/call/ring and /call/stop-ringing', () => {
  it('a recipient declines, the caller rings again (all, or named), and cancels the ring; CALL_UPDATE each time', async () => {
    const [alice, bob] = [await createPlayer(hearth), await createPlayer(hearth)];
    const dm = await openDm(alice, bob);
    const [a, b] = [await session(alice.token), await session(bob.token)];

    a.client.send(op4(null, dm));
    const created = await b.client.nextDispatch('CALL_CREATE');
    expect((created.d as { ringing: string[] }).ringing).toStrictEqual([bob.user.id]);

    // Bob declines: he is no longer rung; both learn of it.
    expect(await stopRinging(dm, bob.token, { recipients: [bob.user.id] })).toStrictEqual({
      status: 204,
      body: undefined,
    });
    expect(await nextRinging(a.client)).toStrictEqual([]);
    expect(await nextRinging(b.client)).toStrictEqual([]);
    // Declining again changes nothing and tells nobody.
    expect((await stopRinging(dm, bob.token, { recipients: [bob.user.id] })).status).toBe(204);

    // No recipients (absent, then null): every recipient not in the call is rung again.
    expect((await ring(dm, alice.token)).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([bob.user.id]);
    expect((await ring(dm, alice.token, { recipients: null })).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([bob.user.id]);
    // Alice is in the call: naming herself rings nobody more.
    expect((await ring(dm, alice.token, { recipients: [alice.user.id, bob.user.id] })).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([bob.user.id]);

    // The caller (in the call) stops ringing Bob.
    expect((await stopRinging(dm, alice.token, { recipients: [bob.user.id] })).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([]);

    // Bob, not in the call, may not stop ringing someone else; ringing one who is in the call rings nobody.
    expect(await stopRinging(dm, bob.token, { recipients: [alice.user.id] })).toStrictEqual({
      status: 403,
      body: { code: 50001, message: 'Missing Access' },
    });
    expect((await ring(dm, bob.token, { recipients: [alice.user.id] })).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([]);

    // Bob answers while rung: his ring ends with his join.
    expect((await ring(dm, alice.token)).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([bob.user.id]);
    b.client.send(op4(null, dm));
    const answered = await a.client.next(
      (f) => f.t === 'CALL_UPDATE' && (f.d as { voice_states: unknown[] }).voice_states.length === 2,
    );
    expect((answered.d as { ringing: string[] }).ringing).toStrictEqual([]);
    for (const s of [a, b]) await s.client.close();
  });

  it('refuses bots (20001), strangers (50001), unknown channels (10003), guild channels (50024), a DM without a call (404) and bad bodies (50035)', async () => {
    const [alice, bob, carol] = [
      await createPlayer(hearth),
      await createPlayer(hearth),
      await createPlayer(hearth),
    ];
    const dm = await openDm(alice, bob);
    const quiet = await openDm(alice, carol);
    const a = await session(alice.token);
    const b = await session(bob.token);
    a.client.send(op4(null, dm));
    await b.client.nextDispatch('CALL_CREATE');

    // A call going on: bodies are checked first by shape, then against the channel's recipients.
    const invalid = (errors: Data) => ({
      status: 400,
      body: { code: 50035, message: 'Invalid Form Body', errors },
    });
    expect(await ring(dm, alice.token, { recipients: 'everyone' })).toMatchObject(
      invalid({ recipients: expect.anything() }),
    );
    expect(await ring(dm, alice.token, { recipients: ['not-an-id'] })).toMatchObject(
      invalid({ recipients: { 0: expect.anything() } }),
    );
    expect(await ring(dm, alice.token, { recipients: [carol.user.id] })).toStrictEqual(
      invalid({ recipients: { 0: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } } }),
    );
    const eleven = Array.from({ length: 11 }, () => bob.user.id);
    expect(await ring(dm, alice.token, { recipients: eleven })).toMatchObject(
      invalid({ recipients: expect.anything() }),
    );
    expect((await ring(dm, alice.token, { recipients: eleven.slice(1) })).status).toBe(204);
    expect(await stopRinging(dm, bob.token)).toMatchObject({ status: 400, body: { code: 50035 } });
    expect(await stopRinging(dm, bob.token, {})).toMatchObject(invalid({ recipients: expect.anything() }));
    expect(await stopRinging(dm, bob.token, { recipients: [] })).toMatchObject(
      invalid({ recipients: expect.anything() }),
    );
    expect(await stopRinging(dm, bob.token, { recipients: [42] })).toMatchObject(
      invalid({ recipients: { 0: expect.anything() } }),
    );

    // Whose channel: not Carol's (50001); an id nobody has (10003).
    const missingAccess = { status: 403, body: { code: 50001, message: 'Missing Access' } };
    expect(await ring(dm, carol.token)).toStrictEqual(missingAccess);
    expect(await stopRinging(dm, carol.token, { recipients: [carol.user.id] })).toStrictEqual(missingAccess);
    const unknown = { status: 404, body: { code: 10003, message: 'Unknown Channel' } };
    expect(await ring('4242424242424242', alice.token)).toStrictEqual(unknown);
    expect(await stopRinging('4242424242424242', alice.token, { recipients: [alice.user.id] })).toStrictEqual(
      unknown,
    );

    // A DM without a call: nothing to ring (404, the plain Not Found: the platform lists no unknown-call code).
    const noCall = { status: 404, body: { code: 0, message: '404: Not Found' } };
    expect(await ring(quiet, alice.token)).toStrictEqual(noCall);
    expect(await stopRinging(quiet, carol.token, { recipients: [carol.user.id] })).toStrictEqual(noCall);

    // A guild channel the caller sees: calls ring in private channels only; one it does not see is 50001.
    const guild = await createTestGuild(hearth);
    const text = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildText });
    expect(await ring(text, guild.owner.token)).toStrictEqual({
      status: 400,
      body: { code: 50024, message: 'Cannot execute action on this channel type' },
    });
    expect(await ring(text, alice.token)).toStrictEqual(missingAccess);

    // Bots: these are the official client's routes (20001), whatever the channel.
    const game = await createGame(hearth);
    const botDm = await openDm(alice, game.botUserId);
    const bots = { status: 403, body: { code: 20001, message: 'Bots cannot use this endpoint' } };
    expect(await ring(botDm, `Bot ${game.botToken}`)).toStrictEqual(bots);
    expect(await stopRinging(dm, `Bot ${game.botToken}`, { recipients: [bob.user.id] })).toStrictEqual(bots);
    // A person's DM with a bot has no calls: nothing to ring.
    expect(await ring(botDm, alice.token)).toStrictEqual(noCall);

    // None of the refusals told anyone anything.
    await settled(b.client);
    expect(dispatchesOf(b.client, 'CALL_UPDATE').length).toBe(1);
    for (const s of [a, b]) await s.client.close();
  });
});

describe('the ring timeout', () => {
  it('a recipient who neither joins nor declines stops being rung after 60 s (CALL_UPDATE); ringing again starts over', async () => {
    const [alice, bob] = [await createPlayer(hearth), await createPlayer(hearth)];
    const dm = await openDm(alice, bob);
    const [a, b] = [await session(alice.token), await session(bob.token)];
    a.client.send(op4(null, dm));
    await b.client.nextDispatch('CALL_CREATE');

    // Just before the timeout the ring goes on.
    clock.advance(RING_TIMEOUT_MS - 1);
    await hearth.services.dmCalls.expireRings();
    await settled(b.client);
    expect(dispatchesOf(b.client, 'CALL_UPDATE')).toStrictEqual([]);

    clock.advance(1);
    await hearth.services.dmCalls.expireRings();
    const expired = await b.client.nextDispatch('CALL_UPDATE');
    expect(expired.d).toMatchObject({
      channel_id: dm,
      ringing: [],
      voice_states: [expect.objectContaining({ user_id: alice.user.id })],
    });
    // The call goes on with Alice in it.
    expect(await nextRinging(a.client)).toStrictEqual([]);

    // Rung again, the time starts over from then.
    expect((await ring(dm, alice.token)).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([bob.user.id]);
    clock.advance(RING_TIMEOUT_MS / 2);
    expect((await ring(dm, alice.token)).status).toBe(204);
    expect(await nextRinging(b.client)).toStrictEqual([bob.user.id]);
    clock.advance(RING_TIMEOUT_MS / 2);
    await hearth.services.dmCalls.expireRings();
    await settled(b.client);
    expect(dispatchesOf(b.client, 'CALL_UPDATE').length).toBe(3);
    clock.advance(RING_TIMEOUT_MS / 2);
    await hearth.services.dmCalls.expireRings();
    expect(await nextRinging(b.client)).toStrictEqual([]);

    // Once the caller hangs up the call ends, as before.
    a.client.send(op4(null, null));
    expect((await b.client.nextDispatch('CALL_DELETE')).d).toStrictEqual({ channel_id: dm });
    for (const s of [a, b]) await s.client.close();
  });
});

describe('one voice connection per person', () => {
  it('joining a DM call leaves the guild voice channel (and its voice session); joining a guild voice channel leaves the DM call', async () => {
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(
      hearth,
      guild,
      PermissionFlags.ViewChannel | PermissionFlags.Connect | PermissionFlags.Speak,
    );
    const voice = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
    const member = await addTestMember(hearth, guild);
    const alice = { user: { id: member.id }, token: member.token } as Player;
    const bob = await createPlayer(hearth);
    const dm = await openDm(alice, bob);
    const owner = await session(guild.owner.token);
    const a = await session(alice.token);
    const b = await session(bob.token);

    // Alice is in the guild's voice channel, connected to its voice server.
    a.client.send(op4(guild.id, voice));
    const server = (await a.client.nextDispatch('VOICE_SERVER_UPDATE')).d as {
      token: string;
      endpoint: string;
    };
    const wire = await VoiceWire.open(server.endpoint);
    await wire.next(8);
    wire.send({
      op: 0,
      d: { server_id: guild.id, user_id: alice.user.id, session_id: a.sessionId, token: server.token },
    });
    await wire.next(2);
    await owner.client.next((f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as Data)['channel_id'] === voice);

    // She calls Bob: the guild sees her leave its voice, her voice session there ends (4014).
    a.client.send(op4(null, dm));
    const left = await owner.client.nextDispatch('VOICE_STATE_UPDATE');
    expect(left.d).toMatchObject({ guild_id: guild.id, user_id: alice.user.id, channel_id: null });
    expect(await wire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    const created = await b.client.nextDispatch('CALL_CREATE');
    expect(created.d).toMatchObject({
      channel_id: dm,
      voice_states: [expect.objectContaining({ user_id: alice.user.id, channel_id: dm })],
    });
    const dmServer = (
      await a.client.next((f) => f.t === 'VOICE_SERVER_UPDATE' && (f.d as Data)['channel_id'] === dm)
    ).d as { token: string };
    // The guild's voice token went with the guild voice state.
    const stale = await VoiceWire.open(server.endpoint);
    await stale.next(8);
    stale.send({
      op: 0,
      d: { server_id: guild.id, user_id: alice.user.id, session_id: a.sessionId, token: server.token },
    });
    expect(await stale.closeCode()).toBe(VoiceCloseCodes.AuthenticationFailed);

    // Back to the guild's voice channel: she leaves the DM call, which ends (she was alone in it).
    const dmWire = await VoiceWire.open(server.endpoint);
    await dmWire.next(8);
    dmWire.send({
      op: 0,
      d: { server_id: dm, user_id: alice.user.id, session_id: a.sessionId, token: dmServer.token },
    });
    await dmWire.next(2);
    a.client.send(op4(guild.id, voice));
    const bobSaw = await b.client.next(
      (f) => f.t === 'VOICE_STATE_UPDATE' && (f.d as Data)['channel_id'] === null,
    );
    expect(bobSaw.d).toMatchObject({ user_id: alice.user.id, channel_id: null });
    expect(bobSaw.d).not.toHaveProperty('guild_id');
    expect((await b.client.nextDispatch('CALL_DELETE')).d).toStrictEqual({ channel_id: dm });
    expect(await dmWire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    const rejoined = await owner.client.nextDispatch('VOICE_STATE_UPDATE');
    expect(rejoined.d).toMatchObject({ guild_id: guild.id, user_id: alice.user.id, channel_id: voice });
    for (const s of [owner, a, b]) await s.client.close();
  });
});
