import { PermissionFlags } from '@hearth/protocol';
import { expect } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import type { ApiInit, TestHearth } from '../../../../test-support/hearth.js';
import { call as messagesCall } from '../channel-messages/support.js';

/** The thread suites' requests: status and JSON body (an object unless told), never a 5xx. */
export const call = <T = Record<string, unknown>>(hearth: TestHearth, path: string, init: ApiInit = {}) =>
  messagesCall<T>(hearth, path, init);

export {
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  UNKNOWN_CHANNEL,
  UNKNOWN_MESSAGE,
} from '../channel-messages/support.js';
export const UNKNOWN_MEMBER = { code: 10007, message: 'Unknown Member' };
export const THREAD_LOCKED = { code: 160005, message: 'Thread is locked' };
export const THREAD_ARCHIVED = { code: 50083, message: 'Thread is archived' };
export const ALREADY_CREATED = {
  code: 160004,
  message: 'A thread has already been created for this message',
};
export const WRONG_CHANNEL_TYPE = { code: 50024, message: 'Cannot execute action on this channel type' };
export const TAG_REQUIRED = {
  code: 40067,
  message: 'A tag is required to create a forum post in this channel',
};

const {
  ViewChannel,
  SendMessages,
  ReadMessageHistory,
  EmbedLinks,
  AddReactions,
  AttachFiles,
  CreatePublicThreads,
  CreatePrivateThreads,
  SendMessagesInThreads,
  ManageThreads,
} = PermissionFlags;

/** What @everyone holds in the thread suites: read, write, react, start threads and talk in them. */
export const MEMBER_PERMISSIONS =
  ViewChannel |
  SendMessages |
  ReadMessageHistory |
  EmbedLinks |
  AddReactions |
  AttachFiles |
  CreatePublicThreads |
  CreatePrivateThreads |
  SendMessagesInThreads;

export interface User {
  id: string;
  token: string;
}

export interface ThreadRoom {
  guild: TestGuild;
  owner: User;
  member: User;
  other: User;
  /** Holds MANAGE_THREADS through a role. */
  moderator: User;
  textId: string;
  announcementId: string;
  forumId: string;
  /** The forum's tags: `open` (anyone), `staff` (moderated). */
  tags: { open: string; staff: string };
}

/** A guild whose @everyone reads, writes and starts threads; three members, one a moderator; three parents. */
export async function createThreadRoom(hearth: TestHearth): Promise<ThreadRoom> {
  const guild = await createTestGuild(hearth);
  await setEveryonePermissions(hearth, guild, MEMBER_PERMISSIONS);
  const member = await addTestMember(hearth, guild);
  const other = await addTestMember(hearth, guild);
  const moderator = await addTestMember(hearth, guild);
  await grantTestRole(hearth, guild, ManageThreads, [moderator.id]);
  const textId = await seedTestChannel(hearth, guild.id, { name: 'general' });
  const announcementId = await seedTestChannel(hearth, guild.id, { type: 5, name: 'news' });
  const forumId = await seedTestChannel(hearth, guild.id, { type: 15, name: 'forum' });
  const forum = await call<{ available_tags: Array<{ id: string; name: string }> }>(
    hearth,
    `/channels/${forumId}`,
    {
      method: 'PATCH',
      auth: guild.owner.token,
      body: { available_tags: [{ name: 'open' }, { name: 'staff', moderated: true }] },
    },
  );
  expect(forum.status).toBe(200);
  const [open, staff] = forum.body.available_tags;
  return {
    guild,
    owner: guild.owner,
    member,
    other,
    moderator,
    textId,
    announcementId,
    forumId,
    tags: { open: open!.id, staff: staff!.id },
  };
}

/** Posts a message as `token`. */
export function post(hearth: TestHearth, channelId: string, token: string, body: unknown) {
  return call<{ id: string } & Record<string, unknown>>(hearth, `/channels/${channelId}/messages`, {
    method: 'POST',
    auth: token,
    body,
  });
}

/** Starts a thread without a message (public unless told) as `token`; answers its id. */
export async function startThread(
  hearth: TestHearth,
  channelId: string,
  token: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const created = await call<{ id: string }>(hearth, `/channels/${channelId}/threads`, {
    method: 'POST',
    auth: token,
    body: { name: 'a thread', type: 11, ...body },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

/** PATCH /channels/{id} on a thread. */
export function patchThread(hearth: TestHearth, threadId: string, token: string, body: unknown) {
  return call<Record<string, unknown>>(hearth, `/channels/${threadId}`, {
    method: 'PATCH',
    auth: token,
    body,
  });
}
