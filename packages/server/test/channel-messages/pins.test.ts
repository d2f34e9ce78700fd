import { API } from '@discordjs/core';
import { API as NextAPI } from '@discordjs/core-next';
import { REST } from '@discordjs/rest';
import {
  AuditLogEvents,
  FormErrors,
  GatewayIntents,
  MessageTypes,
  OverwriteTypes,
  PermissionFlags,
  PinLimits,
} from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { type APIMessage, Routes } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient, GatewayFrame } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  addTestMember,
  grantTestRole,
  seedTestChannel,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { identify, openDm, send } from './actions-support.js';
import {
  call,
  createRoom,
  invalidForm,
  MEMBER_PERMISSIONS,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  post,
  type Room,
  UNKNOWN_CHANNEL,
  UNKNOWN_MESSAGE,
} from './support.js';

/**
 * Pins (GUILDS.md §3.7; DOCS message resource: Get Channel Pins, Pin Message, Unpin Message and the
 * deprecated routes; seed: Versioning, PIN_MESSAGES from 23 February 2026, old pin routes deprecated).
 */

const BEFORE_CUTOVER = Date.parse('2026-02-01T00:00:00Z');
const AFTER_CUTOVER = Date.parse('2026-03-01T00:00:00Z');
const clock = new ManualClock(AFTER_CUTOVER);
const withPostgres = await postgresAvailable();
const { ViewChannel, ReadMessageHistory, ManageMessages, PinMessages } = PermissionFlags;

const MAXIMUM_PINS = { code: 30003, message: 'Maximum number of pins reached for the channel (250)' };
const SYSTEM_MESSAGE = { code: 50021, message: 'Cannot execute action on a system message' };
/** Unix seconds of 25 June 2025, the change log entry that deprecated the old pin routes. */
const DEPRECATED_SINCE = `@${Date.parse('2025-06-25T00:00:00Z') / 1000}`;

interface PinsPage {
  items: Array<{ pinned_at: string; message: APIMessage }>;
  has_more: boolean;
}

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
});
afterAll(() => hearth.close());

const pinPath = (channelId: string, messageId: string) => `/channels/${channelId}/messages/pins/${messageId}`;
const legacyPinPath = (channelId: string, messageId: string) => `/channels/${channelId}/pins/${messageId}`;

function pin(auth: string, channelId: string, messageId: string, headers: Record<string, string> = {}) {
  return call(hearth, pinPath(channelId, messageId), { method: 'PUT', auth, headers });
}

function unpin(auth: string, channelId: string, messageId: string, headers: Record<string, string> = {}) {
  return call(hearth, pinPath(channelId, messageId), { method: 'DELETE', auth, headers });
}

function pins(auth: string, channelId: string, query = '') {
  return call<PinsPage>(hearth, `/channels/${channelId}/messages/pins${query}`, { auth });
}

async function history(auth: string, channelId: string): Promise<APIMessage[]> {
  const { status, body } = await call<APIMessage[]>(hearth, `/channels/${channelId}/messages`, { auth });
  expect(status).toBe(200);
  return body;
}

async function auditEntries(room: Room, actionType: number) {
  const { status, body } = await call<{ audit_log_entries: Array<Record<string, unknown>> }>(
    hearth,
    `/guilds/${room.guild.id}/audit-logs?action_type=${actionType}`,
    { auth: room.owner.token },
  );
  expect(status).toBe(200);
  return body.audit_log_entries;
}

/** A member holding `permissions` beside @everyone's read and write. */
async function memberWith(room: Room, permissions: bigint) {
  const member = await addTestMember(hearth, room.guild);
  await grantTestRole(hearth, room.guild, permissions, [member.id]);
  return member;
}

/** The dispatches a session got up to a barrier published to `audience`, in order. */
async function dispatchesUntilBarrier(
  client: GatewayClient,
  audience: { guildId: string } | { users: string[] },
): Promise<GatewayFrame[]> {
  await hearth.bus.publish({ type: 'BARRIER', data: {}, audience });
  const frames: GatewayFrame[] = [];
  for (;;) {
    const frame = await client.next((candidate) => candidate.op === 0);
    if (frame.t === 'BARRIER') return frames;
    frames.push(frame);
  }
}

/** Setup only: `count` pinned messages of the member stored directly (the pins under test go through HTTP). */
async function seedPins(target: TestHearth, room: Room, count: number): Promise<string[]> {
  const base = BigInt(room.channelId) + 1_000_000n;
  const now = clock.now();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: String(base + BigInt(i)),
    channel_id: room.channelId,
    guild_id: room.guild.id,
    author_id: room.member.id,
    content: `seeded ${i}`,
    pinned: 1,
    pinned_at: now - 10_000 + i,
    created_at: now - 20_000 + i,
  }));
  await target.storage.db.insertInto('messages').values(rows).execute();
  return rows.map((row) => row.id);
}

/**
 * Pins racing in one channel count and mark one after another: of two pins for the last free place one
 * wins (30003 for the other), and two pins of one message post one notice.
 */
async function racingPins(target: TestHearth): Promise<void> {
  const put = (room: Room, messageId: string) =>
    call(target, pinPath(room.channelId, messageId), { method: 'PUT', auth: room.owner.token });
  const full = await createRoom(target);
  await seedPins(target, full, PinLimits.perChannel - 1);
  const a = await send(target, full.member.token, full.channelId, { content: 'a' });
  const b = await send(target, full.member.token, full.channelId, { content: 'b' });
  const raced = await Promise.all([put(full, a.id), put(full, b.id)]);
  expect(raced.map((r) => r.status).sort()).toEqual([204, 400]);
  expect(raced.find((r) => r.status === 400)?.body).toEqual(MAXIMUM_PINS);

  const room = await createRoom(target);
  const message = await send(target, room.member.token, room.channelId);
  const twice = await Promise.all([put(room, message.id), put(room, message.id)]);
  expect(twice.map((r) => r.status)).toEqual([204, 204]);
  const all = await call<APIMessage[]>(target, `/channels/${room.channelId}/messages`, {
    auth: room.owner.token,
  });
  expect(all.body.filter((m) => m.type === MessageTypes.ChannelPinnedMessage)).toHaveLength(1);
}

describe('Pin Message: PUT /channels/{id}/messages/pins/{message_id}', () => {
  it('pins: `pinned` becomes true, the pin is listed, a CHANNEL_PINNED_MESSAGE notice references it', async () => {
    clock.advance(1000);
    const room = await createRoom(hearth);
    const message = await send(hearth, room.member.token, room.channelId, { content: 'pin me' });
    expect(await pin(room.owner.token, room.channelId, message.id)).toEqual({ status: 204, body: undefined });
    const pinnedAt = new Date(clock.now()).toISOString();

    const got = await call(hearth, `/channels/${room.channelId}/messages/${message.id}`, {
      auth: room.member.token,
    });
    expect(got.body).toMatchObject({ id: message.id, pinned: true, content: 'pin me' });
    const listed = await pins(room.member.token, room.channelId);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      items: [{ pinned_at: pinnedAt, message: expect.objectContaining({ id: message.id, pinned: true }) }],
      has_more: false,
    });

    const [notice, ...rest] = await history(room.member.token, room.channelId);
    expect(rest.map((m) => m.id)).toEqual([message.id]);
    expect(notice).toMatchObject({
      type: MessageTypes.ChannelPinnedMessage,
      author: { id: room.owner.id },
      content: '',
      pinned: false,
      message_reference: {
        type: 0,
        channel_id: room.channelId,
        message_id: message.id,
        guild_id: room.guild.id,
      },
    });
    const channel = await call(hearth, `/channels/${room.channelId}`, { auth: room.member.token });
    expect(channel.body).toMatchObject({ last_pin_timestamp: pinnedAt, last_message_id: notice!.id });

    // Pinning a pinned message changes nothing: no second notice, no second audit entry.
    clock.advance(1000);
    expect((await pin(room.owner.token, room.channelId, message.id)).status).toBe(204);
    expect((await history(room.member.token, room.channelId)).length).toBe(2);
    expect((await pins(room.member.token, room.channelId)).body.items[0]?.pinned_at).toBe(pinnedAt);
    expect(await auditEntries(room, AuditLogEvents.MessagePin)).toHaveLength(1);
  });

  it('records MESSAGE_PIN (74) and MESSAGE_UNPIN (75) with the author as target and X-Audit-Log-Reason', async () => {
    const room = await createRoom(hearth);
    const message = await send(hearth, room.member.token, room.channelId);
    const reason = { 'x-audit-log-reason': encodeURIComponent('keep this – important') };
    expect((await pin(room.owner.token, room.channelId, message.id, reason)).status).toBe(204);
    expect((await unpin(room.owner.token, room.channelId, message.id, reason)).status).toBe(204);
    for (const actionType of [AuditLogEvents.MessagePin, AuditLogEvents.MessageUnpin]) {
      expect(await auditEntries(room, actionType)).toEqual([
        expect.objectContaining({
          action_type: actionType,
          user_id: room.owner.id,
          target_id: room.member.id,
          options: { channel_id: room.channelId, message_id: message.id },
          reason: 'keep this – important',
        }),
      ]);
    }
  });

  it('sends MESSAGE_UPDATE, CHANNEL_PINS_UPDATE and the notice’s MESSAGE_CREATE; unpinning tells the newest remaining pin', async () => {
    const room = await createRoom(hearth);
    const bot = await addTestBot(hearth, room.guild);
    await grantTestRole(hearth, room.guild, MEMBER_PERMISSIONS, [bot.botUserId]);
    const { Guilds, GuildMessages } = GatewayIntents;
    const session = await identify(hearth, `Bot ${bot.botToken}`, Guilds | GuildMessages, 1);
    try {
      const first = await send(hearth, room.member.token, room.channelId, { content: 'first' });
      const second = await send(hearth, room.member.token, room.channelId, { content: 'second' });
      clock.advance(1000);
      const firstAt = new Date(clock.now()).toISOString();
      expect((await pin(room.owner.token, room.channelId, first.id)).status).toBe(204);
      clock.advance(1000);
      expect((await pin(room.owner.token, room.channelId, second.id)).status).toBe(204);
      clock.advance(1000);
      expect((await unpin(room.owner.token, room.channelId, second.id)).status).toBe(204);
      const frames = (await dispatchesUntilBarrier(session, { guildId: room.guild.id })).filter(
        (frame) => frame.t !== 'MESSAGE_CREATE' || (frame.d as APIMessage).type !== MessageTypes.Default,
      );
      const secondAt = new Date(clock.now() - 1000).toISOString();
      expect(frames.map((frame) => [frame.t, frame.d])).toEqual([
        ['MESSAGE_UPDATE', expect.objectContaining({ id: first.id, pinned: true, guild_id: room.guild.id })],
        [
          'CHANNEL_PINS_UPDATE',
          { guild_id: room.guild.id, channel_id: room.channelId, last_pin_timestamp: firstAt },
        ],
        [
          'MESSAGE_CREATE',
          expect.objectContaining({
            type: MessageTypes.ChannelPinnedMessage,
            message_reference: expect.objectContaining({ message_id: first.id }),
          }),
        ],
        ['MESSAGE_UPDATE', expect.objectContaining({ id: second.id, pinned: true })],
        [
          'CHANNEL_PINS_UPDATE',
          { guild_id: room.guild.id, channel_id: room.channelId, last_pin_timestamp: secondAt },
        ],
        [
          'MESSAGE_CREATE',
          expect.objectContaining({
            type: MessageTypes.ChannelPinnedMessage,
            message_reference: expect.objectContaining({ message_id: second.id }),
          }),
        ],
        ['MESSAGE_UPDATE', expect.objectContaining({ id: second.id, pinned: false })],
        [
          'CHANNEL_PINS_UPDATE',
          { guild_id: room.guild.id, channel_id: room.channelId, last_pin_timestamp: firstAt },
        ],
      ]);
      // The last unpin leaves no pin: the timestamp is null, on the event and on the channel.
      expect((await unpin(room.owner.token, room.channelId, first.id)).status).toBe(204);
      const last = await session.nextDispatch('CHANNEL_PINS_UPDATE');
      expect(last.d).toEqual({
        guild_id: room.guild.id,
        channel_id: room.channelId,
        last_pin_timestamp: null,
      });
      const channel = await call(hearth, `/channels/${room.channelId}`, { auth: room.member.token });
      expect(channel.body).toMatchObject({ last_pin_timestamp: null });
    } finally {
      await session.close();
    }
  });

  it('refuses unknown messages, other channels’ messages and system messages', async () => {
    const room = await createRoom(hearth);
    const other = await seedTestChannel(hearth, room.guild.id);
    const elsewhere = await send(hearth, room.member.token, other);
    const message = await send(hearth, room.member.token, room.channelId);
    expect(await pin(room.owner.token, room.channelId, '1234567890123456789')).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    expect(await pin(room.owner.token, room.channelId, elsewhere.id)).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    expect(await unpin(room.owner.token, room.channelId, elsewhere.id)).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    expect((await pin(room.owner.token, room.channelId, message.id)).status).toBe(204);
    const [notice] = await history(room.owner.token, room.channelId);
    expect(notice?.type).toBe(MessageTypes.ChannelPinnedMessage);
    expect(await pin(room.owner.token, room.channelId, notice!.id)).toEqual({
      status: 400,
      body: SYSTEM_MESSAGE,
    });
    expect(await pin(room.owner.token, '1234567890123456789', message.id)).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
    expect(await pin(room.owner.token, room.channelId, 'not-an-id')).toMatchObject({
      status: 400,
      body: invalidForm({ message_id: { _errors: [FormErrors.snowflake('not-an-id')] } }),
    });
    // The other channel's message was not pinned by any of this.
    const got = await call(hearth, `/channels/${other}/messages/${elsewhere.id}`, { auth: room.owner.token });
    expect(got.body).toMatchObject({ pinned: false });
  });

  it('holds 250 pins per channel: the 251st is 30003; unpinning one makes room', async () => {
    const room = await createRoom(hearth);
    const seeded = await seedPins(hearth, room, PinLimits.perChannel - 1);
    const at250 = await send(hearth, room.member.token, room.channelId);
    const at251 = await send(hearth, room.member.token, room.channelId);
    expect((await pin(room.owner.token, room.channelId, at250.id)).status).toBe(204);
    expect(await pin(room.owner.token, room.channelId, at251.id)).toEqual({
      status: 400,
      body: MAXIMUM_PINS,
    });
    expect(
      await call(hearth, legacyPinPath(room.channelId, at251.id), { method: 'PUT', auth: room.owner.token }),
    ).toEqual({ status: 400, body: MAXIMUM_PINS });
    expect((await unpin(room.owner.token, room.channelId, seeded[0]!)).status).toBe(204);
    expect((await pin(room.owner.token, room.channelId, at251.id)).status).toBe(204);
    const page = await pins(room.owner.token, room.channelId, '?limit=1');
    expect(page.body.items[0]?.message.id).toBe(at251.id);
  });
});

describe('racing pins (the 250 limit and one notice per pin) on both engines', () => {
  it('on SQLite', async () => {
    await racingPins(hearth);
  });

  it.skipIf(!withPostgres)('on PostgreSQL', async () => {
    const schema = postgresSchema();
    const onPostgres = await startHearth({ databaseUrl: schema.url, rateLimitGlobal: 1_000_000 }, clock);
    try {
      await racingPins(onPostgres);
    } finally {
      await onPostgres.close();
      await schema.drop();
    }
  });
});

describe('PIN_MESSAGES from 23 February 2026 (seed: Versioning)', () => {
  it('before the date MANAGE_MESSAGES pins and unpins; from the date only PIN_MESSAGES does', async () => {
    const room = await createRoom(hearth);
    const manager = await memberWith(room, ManageMessages);
    const pinner = await memberWith(room, PinMessages);
    const message = await send(hearth, room.member.token, room.channelId);
    try {
      clock.set(BEFORE_CUTOVER);
      expect((await pin(manager.token, room.channelId, message.id)).status).toBe(204);
      expect((await unpin(manager.token, room.channelId, message.id)).status).toBe(204);
      expect((await pin(pinner.token, room.channelId, message.id)).status).toBe(204);
      expect((await unpin(pinner.token, room.channelId, message.id)).status).toBe(204);
      expect(await pin(room.member.token, room.channelId, message.id)).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });

      clock.set(Date.parse('2026-02-23T00:00:00Z'));
      expect(await pin(manager.token, room.channelId, message.id)).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });
      expect(
        await call(hearth, legacyPinPath(room.channelId, message.id), { method: 'PUT', auth: manager.token }),
      ).toEqual({ status: 403, body: MISSING_PERMISSIONS });
      expect((await pin(pinner.token, room.channelId, message.id)).status).toBe(204);
      expect(await unpin(manager.token, room.channelId, message.id)).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });
      expect(await unpin(room.member.token, room.channelId, message.id)).toEqual({
        status: 403,
        body: MISSING_PERMISSIONS,
      });
      expect((await unpin(pinner.token, room.channelId, message.id)).status).toBe(204);
    } finally {
      clock.set(AFTER_CUTOVER + 60 * 60 * 1000);
    }
  });

  it('PIN_MESSAGES denied by a channel overwrite refuses; an unknown message is still 50013 without the right', async () => {
    const room = await createRoom(hearth);
    const pinner = await memberWith(room, PinMessages);
    const locked = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: pinner.id, type: OverwriteTypes.Member, allow: 0n, deny: PinMessages }],
    });
    const message = await send(hearth, room.member.token, locked);
    expect(await pin(pinner.token, locked, message.id)).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await pin(room.member.token, room.channelId, '1234567890123456789')).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
  });
});

describe('Get Channel Pins: GET /channels/{id}/messages/pins', () => {
  it('pages newest pin first with `before` (a pin time) and `limit`; has_more says whether more remain', async () => {
    const room = await createRoom(hearth);
    const ids: string[] = [];
    for (const content of ['one', 'two', 'three']) {
      const message = await send(hearth, room.member.token, room.channelId, { content });
      clock.advance(1000);
      expect((await pin(room.owner.token, room.channelId, message.id)).status).toBe(204);
      ids.push(message.id);
    }
    const first = await pins(room.member.token, room.channelId, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.has_more).toBe(true);
    expect(first.body.items.map((item) => item.message.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.items.map((item) => item.pinned_at)).toEqual([
      new Date(clock.now()).toISOString(),
      new Date(clock.now() - 1000).toISOString(),
    ]);
    const before = encodeURIComponent(first.body.items[1]!.pinned_at);
    const second = await pins(room.member.token, room.channelId, `?limit=2&before=${before}`);
    expect(second.body).toEqual({
      items: [expect.objectContaining({ message: expect.objectContaining({ id: ids[0] }) })],
      has_more: false,
    });
    const all = await pins(room.member.token, room.channelId);
    expect(all.body.items.map((item) => item.message.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(all.body.has_more).toBe(false);
    // A pinned message that is deleted leaves the list.
    expect(
      (
        await call(hearth, `/channels/${room.channelId}/messages/${ids[1]}`, {
          method: 'DELETE',
          auth: room.owner.token,
        })
      ).status,
    ).toBe(204);
    expect((await pins(room.member.token, room.channelId)).body.items.map((item) => item.message.id)).toEqual(
      [ids[2], ids[0]],
    );
  });

  it('answers 50035 for a `limit` outside 1–50 or not a number, and a `before` that is not ISO8601', async () => {
    const room = await createRoom(hearth);
    const auth = room.member.token;
    expect(await pins(auth, room.channelId, '?limit=0')).toEqual({
      status: 400,
      body: invalidForm({ limit: { _errors: [FormErrors.minimum(1)] } }),
    });
    expect(await pins(auth, room.channelId, '?limit=51')).toEqual({
      status: 400,
      body: invalidForm({ limit: { _errors: [FormErrors.maximum(50)] } }),
    });
    expect(await pins(auth, room.channelId, '?limit=many')).toEqual({
      status: 400,
      body: invalidForm({ limit: { _errors: [FormErrors.integer('many')] } }),
    });
    for (const before of ['yesterday', '2026-13-01T00:00:00Z', '1700000000']) {
      expect(await pins(auth, room.channelId, `?before=${before}`)).toEqual({
        status: 400,
        body: invalidForm({ before: { _errors: [FormErrors.dateTime(before)] } }),
      });
    }
    expect((await pins(auth, room.channelId, '?limit=50&before=2026-01-01T00:00:00.000Z')).status).toBe(200);
  });

  it('needs VIEW_CHANNEL (50001); without READ_MESSAGE_HISTORY no pins are listed', async () => {
    const room = await createRoom(hearth);
    const message = await send(hearth, room.member.token, room.channelId);
    expect((await pin(room.owner.token, room.channelId, message.id)).status).toBe(204);
    const forgetful = await addTestMember(hearth, room.guild);
    const blind = await addTestMember(hearth, room.guild);
    await hearth.storage.db
      .insertInto('channel_overwrites')
      .values([
        {
          channel_id: room.channelId,
          target_id: forgetful.id,
          type: 1,
          allow: '0',
          deny: String(ReadMessageHistory),
        },
        { channel_id: room.channelId, target_id: blind.id, type: 1, allow: '0', deny: String(ViewChannel) },
      ])
      .execute();
    expect(await pins(forgetful.token, room.channelId)).toEqual({
      status: 200,
      body: { items: [], has_more: false },
    });
    expect(await call(hearth, `/channels/${room.channelId}/pins`, { auth: forgetful.token })).toEqual({
      status: 200,
      body: [],
    });
    expect(await pins(blind.token, room.channelId)).toEqual({ status: 403, body: MISSING_ACCESS });
    const outsider = await createPlayer(hearth);
    expect(await pins(outsider.token, room.channelId)).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(await pin(outsider.token, room.channelId, message.id)).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await pins(room.member.token, '1234567890123456789')).toEqual({
      status: 404,
      body: UNKNOWN_CHANNEL,
    });
  });
});

describe('pins in a DM', () => {
  it('either participant pins and unpins; both read the pin; a stranger is refused; the bot gets CHANNEL_PINS_UPDATE with DIRECT_MESSAGES', async () => {
    const alice = await createPlayer(hearth);
    const room = await createRoom(hearth);
    const bot = await addTestBot(hearth, room.guild);
    const dm = await openDm(hearth, `Bot ${bot.botToken}`, alice.user.id);
    const withDms = await identify(hearth, `Bot ${bot.botToken}`, GatewayIntents.DirectMessages);
    // One Identify per bot per 5 s (max_concurrency 1): the second session starts on the next window.
    clock.advance(5_000);
    const withoutDms = await identify(hearth, `Bot ${bot.botToken}`, GatewayIntents.Guilds, 1);
    try {
      const message = await send(hearth, alice.token, dm, { content: 'remember this' });
      expect((await pin(`Bot ${bot.botToken}`, dm, message.id)).status).toBe(204);
      const pinnedAt = new Date(clock.now()).toISOString();
      const listed = await pins(alice.token, dm);
      expect(listed.body).toEqual({
        items: [{ pinned_at: pinnedAt, message: expect.objectContaining({ id: message.id, pinned: true }) }],
        has_more: false,
      });
      const [notice] = await history(alice.token, dm);
      expect(notice).toMatchObject({
        type: MessageTypes.ChannelPinnedMessage,
        author: { id: bot.botUserId },
        message_reference: { type: 0, channel_id: dm, message_id: message.id },
      });
      expect(notice?.message_reference).not.toHaveProperty('guild_id');
      const stranger = await createPlayer(hearth);
      expect(await pin(stranger.token, dm, message.id)).toEqual({ status: 403, body: MISSING_ACCESS });
      expect(await pins(stranger.token, dm)).toEqual({ status: 403, body: MISSING_ACCESS });
      expect((await unpin(alice.token, dm, message.id)).status).toBe(204);
      expect((await pin(alice.token, dm, message.id)).status).toBe(204);

      const audience = { users: [bot.botUserId] };
      const got = (await dispatchesUntilBarrier(withDms, audience)).filter(
        (f) => f.t === 'CHANNEL_PINS_UPDATE',
      );
      expect(got.map((frame) => frame.d)).toEqual([
        { channel_id: dm, last_pin_timestamp: pinnedAt },
        { channel_id: dm, last_pin_timestamp: null },
        { channel_id: dm, last_pin_timestamp: new Date(clock.now()).toISOString() },
      ]);
      const withheld = await dispatchesUntilBarrier(withoutDms, audience);
      expect(withheld.filter((frame) => frame.t === 'CHANNEL_PINS_UPDATE')).toEqual([]);
    } finally {
      await withDms.close();
      await withoutDms.close();
    }
  });
});

describe('the deprecated pin routes (seed: Versioning) keep working', () => {
  it('PUT, GET and DELETE /channels/{id}/pins… act as the new routes, with a Deprecation header', async () => {
    const room = await createRoom(hearth);
    const older = await send(hearth, room.member.token, room.channelId, { content: 'older' });
    const newer = await send(hearth, room.member.token, room.channelId, { content: 'newer' });
    for (const message of [newer, older]) {
      clock.advance(1000);
      const put = await hearth.api(legacyPinPath(room.channelId, message.id), {
        method: 'PUT',
        auth: room.owner.token,
      });
      expect(put.status).toBe(204);
      expect(put.headers.get('deprecation')).toBe(DEPRECATED_SINCE);
    }
    // Newest pin first: `older` was pinned last.
    const list = await hearth.api(`/channels/${room.channelId}/pins`, { auth: room.member.token });
    expect(list.headers.get('deprecation')).toBe(DEPRECATED_SINCE);
    const listed = (await list.json()) as APIMessage[];
    expect(listed.map((message) => [message.id, message.pinned])).toEqual([
      [older.id, true],
      [newer.id, true],
    ]);
    const removed = await hearth.api(legacyPinPath(room.channelId, older.id), {
      method: 'DELETE',
      auth: room.owner.token,
    });
    expect(removed.status).toBe(204);
    expect(removed.headers.get('deprecation')).toBe(DEPRECATED_SINCE);
    expect((await pins(room.member.token, room.channelId)).body.items.map((i) => i.message.id)).toEqual([
      newer.id,
    ]);
    expect(await auditEntries(room, AuditLogEvents.MessageUnpin)).toHaveLength(1);
    // The new routes are not deprecated.
    const current = await hearth.api(`/channels/${room.channelId}/messages/pins`, {
      auth: room.member.token,
    });
    expect(current.headers.get('deprecation')).toBeNull();
  });

  it('before 25 June 2025 the old routes were the only ones: no Deprecation header', async () => {
    const room = await createRoom(hearth);
    const saved = clock.now();
    try {
      clock.set('2025-06-01T00:00:00Z');
      const list = await hearth.api(`/channels/${room.channelId}/pins`, { auth: room.member.token });
      expect(list.status).toBe(200);
      expect(list.headers.get('deprecation')).toBeNull();
    } finally {
      clock.set(saved);
    }
  });
});

describe('@discordjs/core and @discordjs/rest drive the pin routes', () => {
  it('API.channels.pinMessage / getPins / unpinMessage (the deprecated routes) and Routes.channelMessagesPin(s)', async () => {
    const room = await createRoom(hearth);
    const bot = await addTestBot(hearth, room.guild);
    await grantTestRole(hearth, room.guild, MEMBER_PERMISSIONS | PinMessages, [bot.botUserId]);
    const rest = new REST({ api: `${hearth.url}/api`, retries: 0 }).setToken(bot.botToken);
    const api = new API(rest);
    const message = await api.channels.createMessage(room.channelId, { content: 'from core' });
    await api.channels.pinMessage(room.channelId, message.id, { reason: 'core pin' });
    const pinned = await api.channels.getPins(room.channelId);
    expect(pinned.map((m) => [m.id, m.pinned])).toEqual([[message.id, true]]);
    expect((await auditEntries(room, AuditLogEvents.MessagePin))[0]).toMatchObject({ reason: 'core pin' });
    await api.channels.unpinMessage(room.channelId, message.id);
    expect(await api.channels.getPins(room.channelId)).toEqual([]);

    await rest.put(Routes.channelMessagesPin(room.channelId, message.id), { reason: 'new route' });
    const page = (await rest.get(Routes.channelMessagesPins(room.channelId), {
      query: new URLSearchParams({ limit: '10' }),
    })) as PinsPage;
    expect(page.has_more).toBe(false);
    expect(page.items.map((item) => [item.message.id, item.message.pinned])).toEqual([[message.id, true]]);
    await rest.delete(Routes.channelMessagesPin(room.channelId, message.id));
    expect(await rest.get(Routes.channelMessagesPins(room.channelId))).toEqual({
      items: [],
      has_more: false,
    });

    await expect(api.channels.pinMessage(room.channelId, '1234567890123456789')).rejects.toMatchObject({
      status: 404,
      code: 10008,
    });
  });
});

describe('@discordjs/core 3 (the next major, pinned as @discordjs/core-next) uses the paginated pin routes', () => {
  it('a bot pins and unpins with PUT/DELETE …/messages/pins/{id} and pages Get Channel Pins with `before` and `limit`', async () => {
    const room = await createRoom(hearth);
    const bot = await addTestBot(hearth, room.guild);
    await grantTestRole(hearth, room.guild, MEMBER_PERMISSIONS | PinMessages, [bot.botUserId]);
    const rest = new REST({ api: `${hearth.url}/api`, retries: 0 }).setToken(bot.botToken);
    // The next major brings its own @discordjs/rest 3; the instance of the released one speaks the same wire.
    const api = new NextAPI(rest as unknown as ConstructorParameters<typeof NextAPI>[0]);
    const ids: string[] = [];
    for (const content of ['one', 'two', 'three']) {
      const message = await api.channels.createMessage(room.channelId, { content });
      await api.channels.pinMessage(room.channelId, message.id, { reason: 'next pin' });
      ids.push(message.id);
      clock.advance(1_000);
    }
    const first = await api.channels.getPins(room.channelId, { limit: 2 });
    expect(first.has_more).toBe(true);
    expect(first.items.map((item) => item.message.id)).toEqual([ids[2], ids[1]]);
    const second = await api.channels.getPins(room.channelId, {
      limit: 2,
      before: first.items[1]!.pinned_at,
    });
    expect(second).toMatchObject({ has_more: false });
    expect(second.items.map((item) => item.message.id)).toEqual([ids[0]]);

    await api.channels.unpinMessage(room.channelId, ids[1]!);
    const after = await api.channels.getPins(room.channelId);
    expect(after.items.map((item) => [item.message.id, item.message.pinned])).toEqual([
      [ids[2], true],
      [ids[0], true],
    ]);
    await expect(api.channels.pinMessage(room.channelId, '1234567890123456789')).rejects.toMatchObject({
      status: 404,
      code: 10008,
    });
  });
});

describe('pins in threads follow the locked and archived rules (seed: Locked threads)', () => {
  it('a locked thread refuses a pin without MANAGE_THREADS (160005); an archived one refuses every pin (50083)', async () => {
    const room = await createRoom(hearth);
    const moderator = await memberWith(room, MEMBER_PERMISSIONS | PinMessages);
    const owner = room.owner.token;
    const started = await call<{ id: string }>(hearth, `/channels/${room.channelId}/threads`, {
      method: 'POST',
      auth: owner,
      body: { name: 'pinned talk', type: 11 },
    });
    expect(started.status).toBe(201);
    const thread = started.body.id;
    const first = await post(hearth, thread, owner, { content: 'first' });
    const second = await post(hearth, thread, owner, { content: 'second' });
    expect(first.status).toBe(200);
    const modify = (body: unknown) =>
      call(hearth, `/channels/${thread}`, { method: 'PATCH', auth: owner, body });

    expect((await modify({ locked: true })).status).toBe(200);
    expect(await pin(moderator.token, thread, first.body.id)).toMatchObject({
      status: 400,
      body: { code: 160005 },
    });
    expect((await pin(owner, thread, first.body.id)).status).toBe(204);

    expect((await modify({ archived: true })).status).toBe(200);
    for (const auth of [moderator.token, owner])
      expect(await pin(auth, thread, second.body.id)).toMatchObject({ status: 400, body: { code: 50083 } });
    expect(await unpin(owner, thread, first.body.id)).toMatchObject({ status: 400, body: { code: 50083 } });
  });
});
