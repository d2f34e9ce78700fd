import { AuditLogEvents, GatewayIntents, MessageLimits, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, invalidForm, MISSING_PERMISSIONS } from '../guilds/core-helpers.js';
import { barrier, dispatchesUntilBarrier, identify, openDm, send } from './actions-support.js';

const { ViewChannel, SendMessages, ReadMessageHistory, ManageMessages } = PermissionFlags;
const TOO_OLD = { code: 50034, message: 'A message provided was too old to bulk delete' };
const UNKNOWN_MESSAGE = { code: 10008, message: 'Unknown Message' };
const DAY = 24 * 60 * 60 * 1000;

describe('Bulk Delete Messages (POST /channels/{id}/messages/bulk-delete, GUILDS.md §4.9)', () => {
  let hearth: TestHearth;
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  beforeAll(async () => {
    hearth = await startHearth({}, clock);
  });
  afterAll(() => hearth.close());

  async function setup(): Promise<{ guild: TestGuild; channelId: string; ids: string[] }> {
    const guild = await createTestGuild(hearth);
    await setEveryonePermissions(hearth, guild, ViewChannel | SendMessages | ReadMessageHistory);
    const channelId = await seedTestChannel(hearth, guild.id);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await send(hearth, guild.owner.token, channelId)).id);
    return { guild, channelId, ids };
  }

  const bulk = (channelId: string, auth: string, body: unknown, headers: Record<string, string> = {}) =>
    call(hearth, `/channels/${channelId}/messages/bulk-delete`, { method: 'POST', auth, body, headers });

  const exists = async (channelId: string, id: string, auth: string) =>
    (await call(hearth, `/channels/${channelId}/messages/${id}`, { auth })).status === 200;

  it('deletes the listed messages (204) and leaves the others', async () => {
    const { guild, channelId, ids } = await setup();
    expect(await bulk(channelId, guild.owner.token, { messages: ids.slice(0, 2) })).toEqual({
      status: 204,
      body: undefined,
    });
    expect(
      await call(hearth, `/channels/${channelId}/messages/${ids[0]}`, { auth: guild.owner.token }),
    ).toEqual({
      status: 404,
      body: UNKNOWN_MESSAGE,
    });
    expect(await exists(channelId, ids[1]!, guild.owner.token)).toBe(false);
    expect(await exists(channelId, ids[2]!, guild.owner.token)).toBe(true);
  });

  it('sends one MESSAGE_DELETE_BULK with the deleted ids and records MESSAGE_BULK_DELETE with its reason', async () => {
    const { guild, channelId, ids } = await setup();
    const game = await addTestBot(hearth, guild);
    const client = await identify(
      hearth,
      game.botToken,
      GatewayIntents.Guilds | GatewayIntents.GuildMessages,
      1,
    );
    // An id of no message, made in the same millisecond as the first (an older one would be too old).
    const unknown = (BigInt(ids[0]!) - 1n).toString();
    const reason = 'spam wave';
    expect(
      (
        await bulk(
          channelId,
          guild.owner.token,
          { messages: [ids[0], unknown, ids[1]] },
          { 'x-audit-log-reason': encodeURIComponent(reason) },
        )
      ).status,
    ).toBe(204);
    await barrier(hearth, guild);
    const frames = await dispatchesUntilBarrier(client);
    expect(frames.map((frame) => [frame.t, frame.d])).toEqual([
      ['MESSAGE_DELETE_BULK', { ids: [ids[0], ids[1]], channel_id: channelId, guild_id: guild.id }],
    ]);
    await client.close();
    const { body } = await call(
      hearth,
      `/guilds/${guild.id}/audit-logs?action_type=${AuditLogEvents.MessageBulkDelete}`,
      { auth: guild.owner.token },
    );
    expect((body as { audit_log_entries: unknown[] }).audit_log_entries).toEqual([
      expect.objectContaining({
        action_type: AuditLogEvents.MessageBulkDelete,
        target_id: channelId,
        user_id: guild.owner.id,
        options: { count: '2' },
        reason,
      }),
    ]);
  });

  it('2 ids is the least and 100 the most (unknown ids count); 1 and 101 are 50035', async () => {
    const { guild, channelId, ids } = await setup();
    const filler = (n: number) =>
      Array.from({ length: n }, (_, i) => (BigInt(ids[0]!) - BigInt(i + 1) * 4_194_304n).toString());
    expect(await bulk(channelId, guild.owner.token, { messages: [ids[0]] })).toEqual({
      status: 400,
      body: invalidForm({
        messages: { _errors: [{ code: 'BASE_TYPE_MIN_LENGTH', message: 'Must be 2 or more in length.' }] },
      }),
    });
    const tooMany = [ids[0]!, ...filler(MessageLimits.bulkDeleteMax)];
    expect(await bulk(channelId, guild.owner.token, { messages: tooMany })).toEqual({
      status: 400,
      body: invalidForm({
        messages: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 100 or fewer in length.' }] },
      }),
    });
    expect(await exists(channelId, ids[0]!, guild.owner.token)).toBe(true);
    const hundred = [ids[0]!, ids[1]!, ...filler(MessageLimits.bulkDeleteMax - 2)];
    expect((await bulk(channelId, guild.owner.token, { messages: hundred })).status).toBe(204);
    expect(await exists(channelId, ids[0]!, guild.owner.token)).toBe(false);
    expect(await exists(channelId, ids[1]!, guild.owner.token)).toBe(false);
  });

  it('an id listed twice is 50035 at the repeat, and nothing is deleted', async () => {
    const { guild, channelId, ids } = await setup();
    expect(await bulk(channelId, guild.owner.token, { messages: [ids[0], ids[1], ids[0]] })).toEqual({
      status: 400,
      body: invalidForm({
        messages: {
          2: {
            _errors: [
              { code: 'SET_TYPE_ALREADY_CONTAINS_VALUE', message: 'The set already contains this value' },
            ],
          },
        },
      }),
    });
    expect(await exists(channelId, ids[0]!, guild.owner.token)).toBe(true);
  });

  it.each([
    [
      'no body',
      undefined,
      { messages: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
    ],
    [
      'messages not a list',
      { messages: 'abc' },
      {
        messages: {
          _errors: [{ code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' }],
        },
      },
    ],
    [
      'an id that is no snowflake',
      { messages: ['x', '123456789012345678'] },
      {
        messages: {
          0: { _errors: [{ code: 'NUMBER_TYPE_COERCE', message: 'Value "x" is not snowflake.' }] },
        },
      },
    ],
  ])('%s is 50035 naming the field', async (_name, body, errors) => {
    const { guild, channelId } = await setup();
    expect(await bulk(channelId, guild.owner.token, body)).toEqual({
      status: 400,
      body: invalidForm(errors),
    });
  });

  it('a message exactly two weeks old may go; one a millisecond older is 50034 and nothing is deleted', async () => {
    const { guild, channelId, ids } = await setup();
    const start = clock.now();
    try {
      clock.set(start + MessageLimits.bulkDeleteMaxAgeMs + 1);
      const fresh = await send(hearth, guild.owner.token, channelId);
      expect(await bulk(channelId, guild.owner.token, { messages: [fresh.id, ids[0]] })).toEqual({
        status: 400,
        body: TOO_OLD,
      });
      expect(await exists(channelId, fresh.id, guild.owner.token)).toBe(true);
      clock.set(start + 14 * DAY);
      expect((await bulk(channelId, guild.owner.token, { messages: [ids[0], ids[1]] })).status).toBe(204);
      expect(await exists(channelId, ids[0]!, guild.owner.token)).toBe(false);
    } finally {
      clock.set(start + 15 * DAY);
    }
  });

  it('MANAGE_MESSAGES is needed (50013), even for one’s own messages', async () => {
    const { guild, channelId } = await setup();
    const member = await addTestMember(hearth, guild);
    const own = [
      (await send(hearth, member.token, channelId)).id,
      (await send(hearth, member.token, channelId)).id,
    ];
    expect(await bulk(channelId, member.token, { messages: own })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    await grantTestRole(hearth, guild, ManageMessages, [member.id]);
    expect((await bulk(channelId, member.token, { messages: own })).status).toBe(204);
  });

  it('a DM channel is 50003', async () => {
    const { guild } = await setup();
    const member = await addTestMember(hearth, guild);
    const dmId = await openDm(hearth, member.token, guild.owner.id);
    const ids = [(await send(hearth, member.token, dmId)).id, (await send(hearth, member.token, dmId)).id];
    expect(await bulk(dmId, member.token, { messages: ids })).toEqual({
      status: 403,
      body: { code: 50003, message: 'Cannot execute action on a DM channel' },
    });
    expect(await exists(dmId, ids[0]!, member.token)).toBe(true);
  });

  it('ids of another channel’s messages delete nothing there', async () => {
    const { guild, channelId, ids } = await setup();
    const other = await seedTestChannel(hearth, guild.id);
    expect((await bulk(other, guild.owner.token, { messages: ids.slice(0, 2) })).status).toBe(204);
    expect(await exists(channelId, ids[0]!, guild.owner.token)).toBe(true);
  });
});
