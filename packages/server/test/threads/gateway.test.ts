import { GatewayIntents, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient, GatewayFrame } from '../../../../test-support/gateway.js';
import { addTestBot, grantTestRole, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import { barrier, dispatchesUntilBarrier, identify } from '../channel-messages/actions-support.js';
import {
  call,
  createThreadRoom,
  MEMBER_PERMISSIONS,
  patchThread,
  post,
  startThread,
  type ThreadRoom,
} from './support.js';

/**
 * Thread dispatches (gateway events; Threads topic, Gateway Events and Thread Membership): THREAD_CREATE,
 * THREAD_UPDATE, THREAD_DELETE, THREAD_MEMBERS_UPDATE (GUILD_MEMBERS for others' changes),
 * THREAD_MEMBER_UPDATE on unarchive, THREAD_LIST_SYNC when access is gained, GUILD_CREATE's `threads`,
 * and private threads reaching only their members and moderators.
 */

const clock = new ManualClock(Date.parse('2026-03-02T10:00:00Z'));
const { Guilds, GuildMembers, GuildMessages } = GatewayIntents;
type Data = Record<string, unknown>;

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
});
afterAll(() => hearth.close());

/**
 * The thread and message dispatches each session got up to one barrier (published once, so that every
 * session reads up to the same point).
 */
async function threadEvents(room: ThreadRoom, ...clients: GatewayClient[]): Promise<GatewayFrame[][]> {
  await barrier(hearth, room.guild);
  const out: GatewayFrame[][] = [];
  for (const client of clients) {
    const frames = await dispatchesUntilBarrier(client);
    out.push(frames.filter((frame) => /^(THREAD_|MESSAGE_)/.test(String(frame.t))));
  }
  return out;
}

const types = (frames: readonly GatewayFrame[]) => frames.map((frame) => frame.t);

async function roomBot(room: ThreadRoom, grants: string[] = []): Promise<TestGame> {
  const bot = await addTestBot(hearth, room.guild);
  await grantTestRole(hearth, room.guild, MEMBER_PERMISSIONS, [bot.botUserId]);
  if (grants.length > 0) await hearth.services.applications.adminUpdate(bot.id, { grant_flags: grants });
  return bot;
}

describe('THREAD_CREATE / UPDATE / DELETE', () => {
  it('reach those who view the parent, in order, with the thread object', async () => {
    const room = await createThreadRoom(hearth);
    const hidden = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.other.id, type: 1, allow: 0n, deny: PermissionFlags.ViewChannel }],
    });
    const watcher = await identify(hearth, room.owner.token);
    const outsider = await identify(hearth, room.other.token);
    const thread = await startThread(hearth, hidden, room.member.token, { name: 'first' });
    await patchThread(hearth, thread, room.member.token, { name: 'second' });
    await call(hearth, `/channels/${thread}`, { method: 'DELETE', auth: room.moderator.token });

    const [seen = [], unseen = []] = await threadEvents(room, watcher, outsider);
    expect(types(seen)).toEqual([
      'THREAD_CREATE',
      'MESSAGE_CREATE',
      'THREAD_MEMBERS_UPDATE',
      'THREAD_UPDATE',
      'THREAD_DELETE',
    ]);
    expect(seen[0]!.d).toMatchObject({
      id: thread,
      type: 11,
      parent_id: hidden,
      name: 'first',
      newly_created: true,
      thread_metadata: { archived: false, locked: false },
    });
    expect(seen[1]!.d).toMatchObject({
      type: 18,
      channel_id: hidden,
      message_reference: { channel_id: thread },
    });
    expect(seen[2]!.d).toMatchObject({
      id: thread,
      guild_id: room.guild.id,
      member_count: 1,
      added_members: [{ id: thread, user_id: room.member.id, member: { user: { id: room.member.id } } }],
    });
    expect(seen[3]!.d).toMatchObject({ id: thread, name: 'second' });
    expect(seen[4]!.d).toEqual({ id: thread, guild_id: room.guild.id, parent_id: hidden, type: 11 });
    expect(unseen).toEqual([]);
    await Promise.all([watcher.close(), outsider.close()]);
  });

  it('a private thread and its messages reach only its members and MANAGE_THREADS holders', async () => {
    const room = await createThreadRoom(hearth);
    const other = await identify(hearth, room.other.token);
    const moderator = await identify(hearth, room.moderator.token);
    const thread = await startThread(hearth, room.textId, room.member.token, { type: 12 });
    await post(hearth, thread, room.member.token, { content: 'secret' });
    const [ofOther = [], ofModerator = []] = await threadEvents(room, other, moderator);
    expect(ofOther).toEqual([]);
    expect(types(ofModerator)).toEqual(['THREAD_CREATE', 'THREAD_MEMBERS_UPDATE', 'MESSAGE_CREATE']);

    // Added, `other` gets THREAD_CREATE with its member, then the membership change, then the thread's messages.
    const added = await call(hearth, `/channels/${thread}/thread-members/${room.other.id}`, {
      method: 'PUT',
      auth: room.member.token,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(204);
    await post(hearth, thread, room.member.token, { content: 'now you see it' });
    const [joined = [], again = []] = await threadEvents(room, other, moderator);
    expect(types(again)).toEqual(['THREAD_MEMBERS_UPDATE', 'MESSAGE_CREATE']);
    expect(types(joined)).toEqual(['THREAD_CREATE', 'THREAD_MEMBERS_UPDATE', 'MESSAGE_CREATE']);
    expect(joined[0]!.d).toMatchObject({ id: thread, member: { user_id: room.other.id } });
    expect(joined[0]!.d).not.toHaveProperty('newly_created');
    expect(joined[2]!.d).toMatchObject({ channel_id: thread, content: 'now you see it' });
    await Promise.all([other.close(), moderator.close()]);
  });
});

describe('THREAD_MEMBERS_UPDATE and the GUILD_MEMBERS intent', () => {
  it('a bot without GUILD_MEMBERS hears only of its own membership; with it, of everyone’s', async () => {
    const room = await createThreadRoom(hearth);
    const plain = await roomBot(room);
    const members = await roomBot(room, ['GatewayGuildMembersLimited']);
    const plainSession = await identify(hearth, `Bot ${plain.botToken}`, Guilds, 1);
    const membersSession = await identify(hearth, `Bot ${members.botToken}`, Guilds | GuildMembers, 1);
    const thread = await startThread(hearth, room.textId, room.member.token);
    await call(hearth, `/channels/${thread}/thread-members/${room.other.id}`, {
      method: 'PUT',
      auth: room.member.token,
    });
    await call(hearth, `/channels/${thread}/thread-members/${plain.botUserId}`, {
      method: 'PUT',
      auth: room.member.token,
    });
    await call(hearth, `/channels/${thread}/thread-members/@me`, {
      method: 'DELETE',
      auth: room.other.token,
    });

    const [plainFrames = [], membersFrames = []] = await threadEvents(room, plainSession, membersSession);
    const ofPlain = plainFrames.filter((f) => f.t === 'THREAD_MEMBERS_UPDATE');
    expect(ofPlain.map((f) => f.d)).toEqual([
      expect.objectContaining({ added_members: [expect.objectContaining({ user_id: plain.botUserId })] }),
    ]);
    const ofMembers = membersFrames.filter((f) => f.t === 'THREAD_MEMBERS_UPDATE');
    expect(
      ofMembers.map((f) => (f.d as Data)['added_members'] ?? (f.d as Data)['removed_member_ids']),
    ).toEqual([
      [expect.objectContaining({ user_id: room.member.id })],
      [expect.objectContaining({ user_id: room.other.id })],
      [expect.objectContaining({ user_id: plain.botUserId })],
      [room.other.id],
    ]);
    await Promise.all([plainSession.close(), membersSession.close()]);
  });
});

describe('Archive, unarchive and access', () => {
  it('auto-archive sends THREAD_UPDATE; a message unarchives with THREAD_UPDATE and THREAD_MEMBER_UPDATE to members', async () => {
    const room = await createThreadRoom(hearth);
    const member = await identify(hearth, room.member.token);
    const thread = await startThread(hearth, room.textId, room.member.token, { auto_archive_duration: 60 });
    clock.advance(60 * 60_000);
    expect(await hearth.services.threads.archiveDue()).toBeGreaterThanOrEqual(1);
    await post(hearth, thread, room.member.token, { content: 'wake up' });
    const [frames = []] = await threadEvents(room, member);
    const seen = frames.filter((frame) => frame.t !== 'MESSAGE_CREATE');
    expect(types(seen)).toEqual([
      'THREAD_CREATE',
      'THREAD_MEMBERS_UPDATE',
      'THREAD_UPDATE',
      'THREAD_UPDATE',
      'THREAD_MEMBER_UPDATE',
    ]);
    expect(seen[2]!.d).toMatchObject({ id: thread, thread_metadata: { archived: true } });
    expect(seen[3]!.d).toMatchObject({ id: thread, thread_metadata: { archived: false } });
    expect(seen[4]!.d).toMatchObject({ id: thread, user_id: room.member.id, guild_id: room.guild.id });
    await member.close();
  });

  it('GUILD_CREATE carries the active threads a bot can see; THREAD_LIST_SYNC follows access gained by an overwrite or a role', async () => {
    const room = await createThreadRoom(hearth);
    const closed = await seedTestChannel(hearth, room.guild.id, { name: 'closed' });
    const visible = await startThread(hearth, room.textId, room.member.token);
    const behind = await startThread(hearth, closed, room.member.token);
    await call(hearth, `/channels/${closed}/permissions/${room.guild.id}`, {
      method: 'PUT',
      auth: room.owner.token,
      body: { type: 0, deny: String(PermissionFlags.ViewChannel) },
    });
    const bot = await roomBot(room);
    const session = await identify(hearth, `Bot ${bot.botToken}`, Guilds | GuildMessages);
    const guildCreate = await session.nextDispatch('GUILD_CREATE');
    const threads = (guildCreate.d as Data)['threads'] as Data[];
    expect(threads.map((thread) => thread['id'])).toEqual([visible]);

    await call(hearth, `/channels/${closed}/permissions/${bot.botUserId}`, {
      method: 'PUT',
      auth: room.owner.token,
      body: { type: 1, allow: String(PermissionFlags.ViewChannel) },
    });
    const sync = await session.nextDispatch('THREAD_LIST_SYNC');
    expect(sync.d).toMatchObject({
      guild_id: room.guild.id,
      channel_ids: [closed],
      threads: [{ id: behind, parent_id: closed }],
      members: [],
    });

    // A role that opens another hidden channel, given to the bot: THREAD_LIST_SYNC for that channel.
    const staff = await grantTestRole(hearth, room.guild, 0n, []);
    const staffOnly = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [
        { id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.ViewChannel },
        { id: staff, type: 0, allow: PermissionFlags.ViewChannel, deny: 0n },
      ],
    });
    const staffThread = await startThread(hearth, staffOnly, room.owner.token);
    const granted = await call(hearth, `/guilds/${room.guild.id}/members/${bot.botUserId}/roles/${staff}`, {
      method: 'PUT',
      auth: room.owner.token,
    });
    expect(granted.status).toBe(204);
    const roleSync = await session.nextDispatch('THREAD_LIST_SYNC');
    expect(roleSync.d).toMatchObject({ channel_ids: [staffOnly], threads: [{ id: staffThread }] });
    await session.close();
  });

  it("THREAD_LIST_SYNC follows access gained when a role's permissions are edited", async () => {
    const room = await createThreadRoom(hearth);
    const watchers = await grantTestRole(hearth, room.guild, 0n, []);
    const hidden = await seedTestChannel(hearth, room.guild.id, {
      overwrites: [{ id: room.guild.id, type: 0, allow: 0n, deny: PermissionFlags.ViewChannel }],
    });
    const thread = await startThread(hearth, hidden, room.owner.token);
    const bot = await roomBot(room);
    expect(
      (
        await call(hearth, `/guilds/${room.guild.id}/members/${bot.botUserId}/roles/${watchers}`, {
          method: 'PUT',
          auth: room.owner.token,
        })
      ).status,
    ).toBe(204);
    const session = await identify(hearth, `Bot ${bot.botToken}`, Guilds | GuildMessages);
    await session.nextDispatch('GUILD_CREATE');
    const edited = await call(hearth, `/guilds/${room.guild.id}/roles/${watchers}`, {
      method: 'PATCH',
      auth: room.owner.token,
      body: { permissions: String(PermissionFlags.Administrator) },
    });
    expect(edited.status).toBe(200);
    const sync = await session.nextDispatch('THREAD_LIST_SYNC');
    expect(sync.d).toMatchObject({
      guild_id: room.guild.id,
      channel_ids: [hidden],
      threads: [{ id: thread }],
    });
    await session.close();
  });
});
