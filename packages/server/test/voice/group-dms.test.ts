import { createHash } from 'node:crypto';
import { GatewayIntents, GatewayOpcodes, MessageTypes, VoiceCloseCodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import type { TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../../test-support/oauth.js';
import { startVoiceHearth, VoiceWire } from '../../../../test-support/voice-wire.js';
import { ManualClock } from '../../src/kernel/clock.js';

/*
 * Group DMs (channel type 3): made of a person's friends through POST /users/@me/channels `recipients`,
 * recipients added and removed (CHANNEL_RECIPIENT_ADD / _REMOVE), messages as in DMs, and calls as in DMs
 * (end-to-end encrypted only from 1 March 2026).
 */

const clock = new ManualClock('2026-02-01T00:00:00Z');
let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startVoiceHearth(clock);
});

afterAll(() => hearth.close());

type Data = Record<string, unknown>;
type Player = Awaited<ReturnType<typeof createPlayer>>;
type Session = { client: GatewayClient; sessionId: string };

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const INTENTS = GatewayIntents.GuildVoiceStates | GatewayIntents.DirectMessages;

async function session(player: Player): Promise<Session> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: player.token, intents: INTENTS, properties: PROPERTIES } });
  const ready = await client.nextDispatch('READY');
  return { client, sessionId: (ready.d as { session_id: string }).session_id };
}

async function call(method: string, path: string, auth: string, body?: unknown) {
  const response = await hearth.api(path, { method, auth, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Data) };
}

async function befriend(a: Player, b: Player): Promise<void> {
  expect((await call('PUT', `/users/@me/relationships/${b.user.id}`, a.token, {})).status).toBe(204);
  expect((await call('PUT', `/users/@me/relationships/${a.user.id}`, b.token, {})).status).toBe(204);
}

type Players<N extends number, R extends Player[] = []> = R['length'] extends N
  ? R
  : Players<N, [Player, ...R]>;

async function players<N extends number>(count: N): Promise<Players<N>> {
  const made: Player[] = [];
  for (let i = 0; i < count; i++) made.push(await createPlayer(hearth));
  return made as Players<N>;
}

/** A group DM owned by `owner` with `others`, all of them the owner's friends. */
async function groupDm(owner: Player, others: Player[]): Promise<string> {
  for (const other of others) await befriend(owner, other);
  const created = await call('POST', '/users/@me/channels', owner.token, {
    recipients: others.map((p) => p.user.id),
  });
  expect(created.status).toBe(200);
  return String(created.body!['id']);
}

const ids = (users: unknown) => (users as Array<{ id: string }>).map((user) => user.id).sort();

/** A heartbeat answered: every dispatch due to this session before it has been received. */
async function settled(client: GatewayClient): Promise<void> {
  client.send({ op: GatewayOpcodes.Heartbeat, d: null });
  await client.nextOp(GatewayOpcodes.HeartbeatAck);
}

describe('POST /users/@me/channels with recipients: a group DM', () => {
  it('creates a group DM of friends (CHANNEL_CREATE to each), readable and writable by its recipients only', async () => {
    const [alice, bob, carol, eve] = await players(4);
    await befriend(alice, bob);
    await befriend(alice, carol);
    const b = await session(bob);

    const created = await call('POST', '/users/@me/channels', alice.token, {
      recipients: [bob.user.id, carol.user.id, bob.user.id],
    });
    expect(created.status).toBe(200);
    const channel = created.body!;
    expect(channel).toMatchObject({
      id: expect.stringMatching(/^\d+$/),
      type: 3,
      last_message_id: null,
      flags: 0,
      name: null,
      icon: null,
      owner_id: alice.user.id,
    });
    expect(ids(channel['recipients'])).toStrictEqual([bob.user.id, carol.user.id].sort());
    const id = String(channel['id']);

    // Bob learns of it, with the others as recipients.
    const told = (await b.client.nextDispatch('CHANNEL_CREATE')).d as Data;
    expect(told).toMatchObject({ id, type: 3, owner_id: alice.user.id });
    expect(ids(told['recipients'])).toStrictEqual([alice.user.id, carol.user.id].sort());
    const seen = await call('GET', `/channels/${id}`, bob.token);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id, type: 3, owner_id: alice.user.id });
    expect(await call('GET', `/channels/${id}`, eve.token)).toStrictEqual({
      status: 403,
      body: { code: 50001, message: 'Missing Access' },
    });

    // Messages go through the channel messages path; every recipient gets them, nobody else may write.
    const sent = await call('POST', `/channels/${id}/messages`, carol.token, { content: 'hi all' });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ channel_id: id, content: 'hi all', type: MessageTypes.Default });
    expect(sent.body).not.toHaveProperty('guild_id');
    expect((await b.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({ id: sent.body!['id'] });
    const listed = await call('GET', `/channels/${id}/messages`, alice.token);
    expect(listed.body).toStrictEqual([expect.objectContaining({ id: sent.body!['id'] })]);
    expect((await call('POST', `/channels/${id}/messages`, eve.token, { content: 'me too' })).status).toBe(
      403,
    );
    expect((await call('GET', `/channels/${id}`, alice.token)).body).toMatchObject({
      last_message_id: sent.body!['id'],
    });

    // One recipient opens (or finds) the DM with them.
    const single = await call('POST', '/users/@me/channels', alice.token, { recipients: [bob.user.id] });
    expect(single).toMatchObject({ status: 200, body: { type: 1, recipients: [{ id: bob.user.id }] } });
    await b.client.close();
  });

  it('takes friends only (50007), people only, known users (10013), at most 10 users, no bots as callers (20001)', async () => {
    const [alice, bob, eve] = await players(3);
    await befriend(alice, bob);
    const game = await createGame(hearth);
    const post = (body: unknown, auth = alice.token) => call('POST', '/users/@me/channels', auth, body);
    const cannot = { status: 400, body: { code: 50007, message: 'Cannot send messages to this user' } };
    expect(await post({ recipients: [bob.user.id, eve.user.id] })).toStrictEqual(cannot);
    expect(await post({ recipients: [bob.user.id, game.botUserId] })).toStrictEqual(cannot);
    expect(await post({ recipients: [bob.user.id, '4242424242424242'] })).toStrictEqual({
      status: 404,
      body: { code: 10013, message: 'Unknown User' },
    });
    expect(await post({ recipients: 'everyone' })).toMatchObject({ status: 400, body: { code: 50035 } });
    expect(await post({ recipients: [bob.user.id, 7] })).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { recipients: { 1: expect.anything() } } },
    });
    expect(await post({ recipients: [bob.user.id, eve.user.id] }, `Bot ${game.botToken}`)).toStrictEqual({
      status: 403,
      body: { code: 20001, message: 'Bots cannot use this endpoint' },
    });
    // Nine others and the owner make ten; a tenth other is one too many.
    const friends: Player[] = await players(10);
    for (const friend of friends) await befriend(alice, friend);
    const nine = friends.slice(0, 9).map((p) => p.user.id);
    expect(await post({ recipients: [...nine, friends[9]!.user.id] })).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { recipients: expect.anything() } },
    });
    const full = await post({ recipients: nine });
    expect(full).toMatchObject({ status: 200, body: { type: 3 } });
    // Full: the eleventh user is refused (400).
    expect(
      await call('PUT', `/channels/${full.body!['id']}/recipients/${friends[9]!.user.id}`, alice.token),
    ).toStrictEqual({ status: 400, body: { code: 0, message: '400: Bad Request' } });
    // Without recipients, a DM's recipient_id is required as before.
    expect(await post({})).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { recipient_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } } },
    });
  });
});

describe('PUT and DELETE /channels/{id}/recipients/{user_id}', () => {
  it('adds a friend (CHANNEL_CREATE to them, CHANNEL_RECIPIENT_ADD to the others); the owner removes, anyone leaves; an owner who leaves hands over', async () => {
    const [alice, bob, carol, dave, eve] = await players(5);
    const id = await groupDm(alice, [bob, carol]);
    await befriend(bob, dave);
    const [a, b, c, d] = [
      await session(alice),
      await session(bob),
      await session(carol),
      await session(dave),
    ];
    const path = (user: Player) => `/channels/${id}/recipients/${user.user.id}`;

    // Bob adds his friend Dave.
    expect(await call('PUT', path(dave), bob.token)).toStrictEqual({ status: 204, body: undefined });
    const welcome = (await d.client.nextDispatch('CHANNEL_CREATE')).d as Data;
    expect(welcome).toMatchObject({ id, type: 3, owner_id: alice.user.id });
    expect(ids(welcome['recipients'])).toStrictEqual([alice.user.id, bob.user.id, carol.user.id].sort());
    expect((await a.client.nextDispatch('CHANNEL_RECIPIENT_ADD')).d).toMatchObject({
      channel_id: id,
      user: { id: dave.user.id },
    });
    // And a RECIPIENT_ADD message by Bob, mentioning Dave, to everyone in it now.
    const addedMessage = {
      channel_id: id,
      type: MessageTypes.RecipientAdd,
      author: { id: bob.user.id },
      content: '',
      mentions: [expect.objectContaining({ id: dave.user.id })],
    };
    expect((await a.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject(addedMessage);
    expect((await d.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject(addedMessage);
    // Adding one already in changes nothing; a stranger to the caller is refused; so is one not in it.
    expect((await call('PUT', path(dave), alice.token)).status).toBe(204);
    expect(await call('PUT', path(eve), alice.token)).toMatchObject({ status: 400, body: { code: 50007 } });
    expect(await call('PUT', path(eve), eve.token)).toMatchObject({ status: 403, body: { code: 50001 } });
    expect(
      await call('PUT', `/channels/4242424242424242/recipients/${dave.user.id}`, bob.token),
    ).toMatchObject({ status: 404, body: { code: 10003 } });
    // A bot adds people only with their `gdm.join` access token, and only to a group DM it manages.
    const game = await createGame(hearth);
    expect(await call('PUT', path(dave), `Bot ${game.botToken}`)).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { access_token: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } } },
    });

    // Only the owner removes others; anyone leaves.
    expect(await call('DELETE', path(carol), bob.token)).toMatchObject({
      status: 403,
      body: { code: 50013 },
    });
    expect(await call('DELETE', path(eve), alice.token)).toMatchObject({
      status: 404,
      body: { code: 10013 },
    });
    expect((await call('DELETE', path(carol), alice.token)).status).toBe(204);
    expect((await c.client.nextDispatch('CHANNEL_DELETE')).d).toMatchObject({ id, type: 3 });
    expect((await b.client.nextDispatch('CHANNEL_RECIPIENT_REMOVE')).d).toMatchObject({
      channel_id: id,
      user: { id: carol.user.id },
    });
    const removedMessage = {
      channel_id: id,
      type: MessageTypes.RecipientRemove,
      author: { id: alice.user.id },
      mentions: [expect.objectContaining({ id: carol.user.id })],
    };
    expect((await b.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject(removedMessage);
    const history = await call('GET', `/channels/${id}/messages`, bob.token);
    expect(history.body).toMatchObject([removedMessage, addedMessage]);
    expect(await call('GET', `/channels/${id}`, carol.token)).toMatchObject({ status: 403 });

    // The owner leaves: the longest-standing recipient (Bob) owns it now.
    expect((await call('DELETE', path(alice), alice.token)).status).toBe(204);
    const handed = (await d.client.nextDispatch('CHANNEL_UPDATE')).d as Data;
    expect(handed).toMatchObject({ id, owner_id: bob.user.id });
    expect(ids(handed['recipients'])).toStrictEqual([bob.user.id]);
    expect((await call('DELETE', path(dave), bob.token)).status).toBe(204);
    expect((await call('DELETE', path(bob), bob.token)).status).toBe(204);
    expect(await call('GET', `/channels/${id}`, bob.token)).toMatchObject({
      status: 404,
      body: { code: 10003 },
    });
    for (const s of [a, b, c, d]) await s.client.close();
  });

  it('adding to a DM makes a new group DM of the three (201); removing from a DM is refused (50024)', async () => {
    const [alice, bob, carol] = await players(3);
    await befriend(alice, bob);
    await befriend(alice, carol);
    const dm = await call('POST', '/users/@me/channels', alice.token, { recipient_id: bob.user.id });
    const dmId = String(dm.body!['id']);
    const made = await call('PUT', `/channels/${dmId}/recipients/${carol.user.id}`, alice.token);
    expect(made).toMatchObject({ status: 201, body: { type: 3, owner_id: alice.user.id } });
    expect(made.body!['id']).not.toBe(dmId);
    expect(ids(made.body!['recipients'])).toStrictEqual([bob.user.id, carol.user.id].sort());
    expect(await call('DELETE', `/channels/${dmId}/recipients/${bob.user.id}`, alice.token)).toStrictEqual({
      status: 400,
      body: { code: 50024, message: 'Cannot execute action on this channel type' },
    });
  });
});

describe('calls in group DMs', () => {
  it('rings every other recipient, takes each who joins, drops one removed from the group, and needs DAVE from 1 March 2026', async () => {
    const [alice, bob, carol, dave] = await players(4);
    const id = await groupDm(alice, [bob, carol, dave]);
    const [a, b, c] = [await session(alice), await session(bob), await session(carol)];
    const op4 = (channelId: string | null) => ({
      op: GatewayOpcodes.VoiceStateUpdate,
      d: { guild_id: null, channel_id: channelId, self_mute: false, self_deaf: false },
    });

    a.client.send(op4(id));
    const created = (await c.client.nextDispatch('CALL_CREATE')).d as Data;
    expect(created).toMatchObject({ channel_id: id, region: 'hearth' });
    expect(created['ringing']).toStrictEqual([bob.user.id, carol.user.id, dave.user.id].sort());
    expect((await c.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
      channel_id: id,
      type: MessageTypes.Call,
    });

    // Carol declines; Bob joins.
    expect(
      (await call('POST', `/channels/${id}/call/stop-ringing`, carol.token, { recipients: [carol.user.id] }))
        .status,
    ).toBe(204);
    expect(((await a.client.nextDispatch('CALL_UPDATE')).d as Data)['ringing']).toStrictEqual(
      [bob.user.id, dave.user.id].sort(),
    );
    b.client.send(op4(id));
    const joined = (await a.client.nextDispatch('CALL_UPDATE')).d as {
      ringing: string[];
      voice_states: Data[];
    };
    expect(joined.ringing).toStrictEqual([dave.user.id]);
    expect(joined.voice_states.map((state) => state['user_id']).sort()).toStrictEqual(
      [alice.user.id, bob.user.id].sort(),
    );

    // Dave, still rung, is taken out of the group: he is rung no more.
    expect((await call('DELETE', `/channels/${id}/recipients/${dave.user.id}`, alice.token)).status).toBe(
      204,
    );
    expect(((await a.client.nextDispatch('CALL_UPDATE')).d as Data)['ringing']).toStrictEqual([]);

    // Both are connected to the call's voice server (no DAVE needed before 1 March 2026).
    const connect = async (s: Session, player: Player) => {
      // Alice's came before the CALL_UPDATEs read above.
      const server =
        s.client.frames.find((f) => f.t === 'VOICE_SERVER_UPDATE') ??
        (await s.client.nextDispatch('VOICE_SERVER_UPDATE'));
      const { token, endpoint } = server.d as { token: string; endpoint: string };
      const wire = await VoiceWire.open(endpoint);
      await wire.next(8);
      wire.send({
        op: 0,
        d: {
          server_id: id,
          user_id: player.user.id,
          session_id: s.sessionId,
          token,
          max_dave_protocol_version: 0,
        },
      });
      await wire.next(2);
      return wire;
    };
    const [aliceWire, bobWire] = [await connect(a, alice), await connect(b, bob)];

    // Alice (the owner) removes Bob from the group: he leaves its call (his voice session ends, 4014);
    // the call goes on for Alice.
    expect((await call('DELETE', `/channels/${id}/recipients/${bob.user.id}`, alice.token)).status).toBe(204);
    expect(await bobWire.closeCode()).toBe(VoiceCloseCodes.Disconnected);
    expect((await aliceWire.next(13)).d).toStrictEqual({ user_id: bob.user.id });
    const gone = await a.client.next(
      (f) =>
        f.t === 'VOICE_STATE_UPDATE' &&
        (f.d as Data)['user_id'] === bob.user.id &&
        (f.d as Data)['channel_id'] === null,
    );
    expect(gone.d).not.toHaveProperty('guild_id');
    const after = (await a.client.nextDispatch('CALL_UPDATE')).d as { voice_states: Data[] };
    expect(after.voice_states.map((state) => state['user_id'])).toStrictEqual([alice.user.id]);

    // From 1 March 2026 the call takes end-to-end encrypted clients only.
    clock.set('2026-03-01T00:00:00Z');
    c.client.send(op4(id));
    const server = (await c.client.nextDispatch('VOICE_SERVER_UPDATE')).d as {
      token: string;
      endpoint: string;
    };
    const identify = (maxDave: number) => ({
      op: 0,
      d: {
        server_id: id,
        user_id: carol.user.id,
        session_id: c.sessionId,
        token: server.token,
        max_dave_protocol_version: maxDave,
      },
    });
    const plain = await VoiceWire.open(server.endpoint);
    await plain.next(8);
    plain.send(identify(0));
    expect(await plain.closeCode()).toBe(VoiceCloseCodes.E2EERequired);
    const daveWire = await VoiceWire.open(server.endpoint);
    await daveWire.next(8);
    daveWire.send(identify(1));
    expect((await daveWire.next(2)).d).toMatchObject({ ip: '127.0.0.1' });
    daveWire.socket.close();
    aliceWire.socket.close();
    await settled(a.client);
    for (const s of [a, b, c]) await s.client.close();
  });
});

/** A 1×1 PNG (a well-known minimal file), as a group DM icon's data URI. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const PNG_URI = `data:image/png;base64,${PNG.toString('base64')}`;
const md5 = (bytes: Buffer) => createHash('md5').update(bytes).digest('hex');

describe('PATCH /channels/{id} of a group DM (Modify Channel, group DM params)', () => {
  it('any recipient renames it or sets its icon: CHANNEL_UPDATE to all, CHANNEL_NAME_CHANGE / CHANNEL_ICON_CHANGE messages', async () => {
    const [alice, bob, carol] = await players(3);
    const id = await groupDm(alice, [bob, carol]);
    const [a, c] = [await session(alice), await session(carol)];

    // Bob, not the owner, renames it.
    const renamed = await call('PATCH', `/channels/${id}`, bob.token, { name: 'Raid night' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id,
      type: 3,
      name: 'Raid night',
      icon: null,
      owner_id: alice.user.id,
    });
    expect(ids(renamed.body!['recipients'])).toStrictEqual([alice.user.id, carol.user.id].sort());
    for (const s of [a, c]) {
      const update = (await s.client.nextDispatch('CHANNEL_UPDATE')).d as Data;
      expect(update).toMatchObject({ id, type: 3, name: 'Raid night' });
      expect(ids(update['recipients'])).not.toContain(s === a ? alice.user.id : carol.user.id);
      expect((await s.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
        channel_id: id,
        type: MessageTypes.ChannelNameChange,
        content: 'Raid night',
        author: { id: bob.user.id },
      });
    }

    // Carol sets an icon: its hash is the MD5 of the image, as for avatars.
    const iconed = await call('PATCH', `/channels/${id}`, carol.token, { icon: PNG_URI });
    expect(iconed).toMatchObject({ status: 200, body: { name: 'Raid night', icon: md5(PNG) } });
    expect((await a.client.nextDispatch('CHANNEL_UPDATE')).d).toMatchObject({ id, icon: md5(PNG) });
    expect((await c.client.nextDispatch('CHANNEL_UPDATE')).d).toMatchObject({ id, icon: md5(PNG) });
    await c.client.nextDispatch('MESSAGE_CREATE');
    expect((await a.client.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
      type: MessageTypes.ChannelIconChange,
      content: '',
      author: { id: carol.user.id },
    });
    expect((await call('GET', `/channels/${id}`, alice.token)).body).toMatchObject({
      name: 'Raid night',
      icon: md5(PNG),
    });
    // The image is served at the platform's CDN path for channel icons, as uploaded.
    const iconPath = `/channel-icons/${id}/${md5(PNG)}.png`;
    const served = await fetch(`${hearth.url}${iconPath}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
    expect((await fetch(`${hearth.url}/channel-icons/${id}/${'0'.repeat(32)}.png`)).status).toBe(404);

    // The same values again change nothing (no event); null clears both.
    expect((await call('PATCH', `/channels/${id}`, alice.token, { name: 'Raid night' })).status).toBe(200);
    const cleared = await call('PATCH', `/channels/${id}`, alice.token, { name: null, icon: null });
    expect(cleared).toMatchObject({ status: 200, body: { name: null, icon: null } });
    expect((await fetch(`${hearth.url}${iconPath}`)).status).toBe(404);
    const update = (await c.client.nextDispatch('CHANNEL_UPDATE')).d as Data;
    expect(update).toMatchObject({ name: null, icon: null });
    const changes = [
      (await c.client.nextDispatch('MESSAGE_CREATE')).d,
      (await c.client.nextDispatch('MESSAGE_CREATE')).d,
    ] as Data[];
    expect(changes.map((message) => message['type']).sort()).toStrictEqual([
      MessageTypes.ChannelNameChange,
      MessageTypes.ChannelIconChange,
    ]);
    await settled(c.client);
    expect(c.client.frames.filter((f) => f.t === 'CHANNEL_UPDATE')).toHaveLength(3);
    for (const s of [a, c]) await s.client.close();
  });

  it('refuses non-recipients (50001), a DM (50003), bad names and icons (50035) and changes nothing then', async () => {
    const [alice, bob, carol, eve] = await players(4);
    const id = await groupDm(alice, [bob, carol]);
    const patch = (body: unknown, auth = bob.token, channel = id) =>
      call('PATCH', `/channels/${channel}`, auth, body);
    expect(await patch({ name: 'mine now' }, eve.token)).toStrictEqual({
      status: 403,
      body: { code: 50001, message: 'Missing Access' },
    });
    const game = await createGame(hearth);
    expect(await patch({ name: 'bot' }, `Bot ${game.botToken}`)).toMatchObject({
      status: 403,
      body: { code: 50001 },
    });
    const dm = await call('POST', '/users/@me/channels', alice.token, { recipient_id: eve.user.id });
    expect(await patch({ name: 'a DM' }, alice.token, String(dm.body!['id']))).toStrictEqual({
      status: 403,
      body: { code: 50003, message: 'Cannot execute action on a DM channel' },
    });
    expect(await patch({ name: 'not yours' }, bob.token, String(dm.body!['id']))).toMatchObject({
      status: 403,
      body: { code: 50001 },
    });
    const invalid = (field: string) => ({
      status: 400,
      body: {
        code: 50035,
        errors: { [field]: { _errors: [expect.objectContaining({ code: expect.any(String) })] } },
      },
    });
    expect(await patch({ name: 'x'.repeat(101) })).toMatchObject(invalid('name'));
    expect(await patch({ name: 42 })).toMatchObject(invalid('name'));
    expect(await patch({ icon: true })).toMatchObject(invalid('icon'));
    // A well-formed name beside a bad icon: neither is applied.
    expect(await patch({ name: 'half', icon: 'data:image/png;base64,AAAA' })).toMatchObject(invalid('icon'));
    expect(
      await patch({ name: 'half', icon: `data:text/plain;base64,${PNG.toString('base64')}` }),
    ).toMatchObject(invalid('icon'));
    expect((await call('GET', `/channels/${id}`, alice.token)).body).toMatchObject({
      name: null,
      icon: null,
    });
    // 100 characters is the longest name.
    expect(await patch({ name: 'x'.repeat(100) })).toMatchObject({
      status: 200,
      body: { name: 'x'.repeat(100) },
    });
    expect(await patch({ name: 'x' }, bob.token, '4242424242424242')).toMatchObject({
      status: 404,
      body: { code: 10003 },
    });
  });
});

describe('READY private_channels', () => {
  it("lists a person's DMs and group DMs as GET /channels/{id} answers them; a bot's is empty", async () => {
    const [alice, bob, carol] = await players(3);
    const group = await groupDm(alice, [bob, carol]);
    await call('PATCH', `/channels/${group}`, alice.token, { name: 'Trio' });
    const dm = String(
      (await call('POST', '/users/@me/channels', alice.token, { recipient_id: bob.user.id })).body!['id'],
    );
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 2, d: { token: alice.token, intents: INTENTS, properties: PROPERTIES } });
    const ready = (await client.nextDispatch('READY')).d as { private_channels: Data[] };
    const byId = new Map(ready.private_channels.map((channel) => [channel['id'], channel]));
    expect([...byId.keys()].sort()).toStrictEqual([dm, group].sort());
    expect(byId.get(group)).toStrictEqual((await call('GET', `/channels/${group}`, alice.token)).body);
    expect(byId.get(group)).toMatchObject({ type: 3, name: 'Trio', owner_id: alice.user.id });
    expect(byId.get(dm)).toStrictEqual((await call('GET', `/channels/${dm}`, alice.token)).body);
    await client.close();

    // A bot's READY has the empty array, whatever DMs it has.
    const game = await createGame(hearth);
    await call('POST', '/users/@me/channels', `Bot ${game.botToken}`, { recipient_id: alice.user.id });
    const bot = await GatewayClient.connect(hearth.url);
    await bot.nextOp(GatewayOpcodes.Hello);
    bot.send({ op: 2, d: { token: game.botToken, intents: 0, properties: PROPERTIES } });
    expect(((await bot.nextDispatch('READY')).d as Data)['private_channels']).toStrictEqual([]);
    await bot.close();
  });
});
