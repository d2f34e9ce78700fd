import { ChannelTypes, PermissionFlags } from '@hearth/protocol';
import type { Audience } from '../../bus/bus.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import type { ChannelRow } from '../channels/store.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import { has, threadPermissions } from '../guilds/permissions.js';
import type { ThreadRow } from './store.js';
import * as store from './store.js';

const { ViewChannel, ManageThreads } = PermissionFlags;

/**
 * A user's standing in a thread (Threads topic, Permissions): the parent channel's permissions, the
 * thread's own (SEND_MESSAGES_IN_THREADS for sending), membership, and whether they moderate threads
 * there. `archived` counts a thread whose auto-archive time has come as archived before a sweep stores it.
 */
export interface ThreadStanding {
  row: ThreadRow;
  parent: ChannelRow;
  access: MemberAccess;
  parentPermissions: bigint;
  permissions: bigint;
  member: boolean;
  moderator: boolean;
  archived: boolean;
}

export const isPrivateThread = (row: Pick<ThreadRow, 'type'>) =>
  Number(row.type) === ChannelTypes.PrivateThread;

/**
 * The user's standing in the thread `threadId`; undefined when no thread has that id. 50001 when they
 * cannot see it: no VIEW_CHANNEL on the parent, or a private thread they neither joined nor moderate.
 */
export async function threadStanding(
  db: Executor,
  guildAccess: GuildAccess,
  userId: string,
  threadId: string,
): Promise<ThreadStanding | undefined> {
  const row = await store.findThread(db, threadId);
  if (!row) return undefined;
  return standingIn(db, guildAccess, userId, row);
}

export async function standingIn(
  db: Executor,
  guildAccess: GuildAccess,
  userId: string,
  row: ThreadRow,
): Promise<ThreadStanding> {
  const parent = await channelStore.findChannel(db, row.parent_id);
  if (!parent) throw new HearthError('UnknownChannel');
  const access = await guildAccess.member(db, row.guild_id, userId);
  const parentPermissions = await guildAccess.permissionsIn(db, access, parent.id);
  if (!has(parentPermissions, ViewChannel)) throw new HearthError('MissingAccess');
  const member = (await store.findMember(db, row.id, userId)) !== undefined;
  const moderator = has(parentPermissions, ManageThreads);
  if (isPrivateThread(row) && !member && !moderator) throw new HearthError('MissingAccess');
  return {
    row,
    parent,
    access,
    parentPermissions,
    permissions: threadPermissions(parentPermissions),
    member,
    moderator,
    archived: Number(row.archived) === 1 || store.isDue(row, guildAccess.now()),
  };
}

/**
 * Who receives a thread's events: those who can view the parent; for a private thread only its members
 * and the guild's members who moderate threads in the parent (Threads topic, Public & Private Threads).
 */
export async function threadAudience(
  db: Executor,
  guildAccess: GuildAccess,
  row: Pick<ThreadRow, 'id' | 'guild_id' | 'parent_id' | 'type'>,
): Promise<Audience> {
  const audience = {
    guildId: row.guild_id,
    channelId: row.parent_id,
    permission: ViewChannel.toString(),
  };
  if (!isPrivateThread(row)) return audience;
  return { ...audience, users: await privateViewers(db, guildAccess, row) };
}

/** The members of a private thread and the members who hold MANAGE_THREADS in its parent. */
export async function privateViewers(
  db: Executor,
  guildAccess: GuildAccess,
  row: Pick<ThreadRow, 'id' | 'guild_id' | 'parent_id'>,
): Promise<string[]> {
  const users = new Set((await store.members(db, row.id)).map((member) => member.user_id));
  for (const userId of await store.guildMemberIds(db, row.guild_id)) {
    if (users.has(userId)) continue;
    const access = await guildAccess.member(db, row.guild_id, userId);
    if (has(await guildAccess.permissionsIn(db, access, row.parent_id), ManageThreads)) users.add(userId);
  }
  return [...users];
}
