import { ChannelTypes, MESSAGE_CHANNEL_TYPES, PermissionFlags } from '@hearth/protocol';
import type { Audience, BusEvent } from '../../bus/bus.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import { has } from '../guilds/permissions.js';
import { threadAudience, threadStanding } from '../threads/access.js';
import * as store from './store.js';

/** Who acts: a user (a person's session) or an application's bot user. */
export interface Actor {
  userId: string;
  bot: boolean;
  /** The bot's application (set on messages it sends). */
  applicationId?: string;
}

/**
 * A channel that holds messages, as one actor stands in it: a guild channel with the actor's computed
 * permissions, or a DM channel between two users where each participant holds DM_PERMISSIONS.
 */
export interface Place {
  channelId: string;
  type: number;
  /** Null for a DM channel. */
  guildId: string | null;
  /** The actor's permissions here (GuildAccess for guild channels). */
  permissions: bigint;
  /** Slowmode seconds (`rate_limit_per_user`); 0 in DMs. */
  rateLimitPerUser: number;
  /** The participants of a DM channel (two) or a group DM. */
  recipients?: readonly string[];
  /** A thread's state (types 10–12): its locks and archive rule the writes in it. */
  thread?: ThreadState;
  /** Who receives the place's events, when not everyone who views the channel (threads). */
  audience?: Audience;
}

export interface ThreadState {
  parentId: string;
  ownerId: string;
  locked: boolean;
  /** Archived, or due to be (its auto-archive time has come). */
  archived: boolean;
  /** The actor's permissions in the parent channel (a forum post's first message needs SEND_MESSAGES there). */
  parentPermissions: bigint;
}

const {
  ViewChannel,
  SendMessages,
  ReadMessageHistory,
  EmbedLinks,
  AttachFiles,
  AddReactions,
  SendTTSMessages,
  UseExternalEmojis,
} = PermissionFlags;

/** What both participants of a DM may do: read, write, embed, attach and react; no moderation there. */
export const DM_PERMISSIONS =
  ViewChannel |
  SendMessages |
  ReadMessageHistory |
  EmbedLinks |
  AttachFiles |
  AddReactions |
  SendTTSMessages |
  UseExternalEmojis;

/**
 * Finds the channel and the actor's standing in it: 10003 when it does not exist, 50001 when the actor
 * may not see it (not a member, no VIEW_CHANNEL, or a DM of other users).
 */
export async function placeOf(
  db: Executor,
  access: GuildAccess,
  actor: Actor,
  channelId: string,
): Promise<Place> {
  const channel = await channelStore.findChannel(db, channelId);
  if (channel) {
    const member = await access.member(db, channel.guild_id, actor.userId);
    const permissions = await access.permissionsIn(db, member, channelId);
    if (!has(permissions, ViewChannel)) throw new HearthError('MissingAccess');
    return {
      channelId,
      type: Number(channel.type),
      guildId: channel.guild_id,
      permissions,
      rateLimitPerUser: Number(channel.rate_limit_per_user ?? 0),
    };
  }
  const thread = await threadStanding(db, access, actor.userId, channelId);
  if (thread) {
    const row = thread.row;
    return {
      channelId,
      type: Number(row.type),
      guildId: row.guild_id,
      permissions: thread.permissions,
      rateLimitPerUser: Number(row.rate_limit_per_user),
      thread: {
        parentId: row.parent_id,
        ownerId: row.owner_id,
        locked: Number(row.locked) === 1,
        archived: thread.archived,
        parentPermissions: thread.parentPermissions,
      },
      audience: await threadAudience(db, access, row),
    };
  }
  const group = await store.findGroupDm(db, channelId);
  if (group) {
    const recipients = await store.groupDmRecipients(db, channelId);
    if (!recipients.includes(actor.userId)) throw new HearthError('MissingAccess');
    return {
      channelId,
      type: ChannelTypes.GroupDM,
      guildId: null,
      permissions: DM_PERMISSIONS,
      rateLimitPerUser: 0,
      recipients,
    };
  }
  const dm = await store.findDmChannel(db, channelId);
  if (!dm) throw new HearthError('UnknownChannel');
  if (dm.user_low !== actor.userId && dm.user_high !== actor.userId) throw new HearthError('MissingAccess');
  return {
    channelId,
    type: ChannelTypes.DM,
    guildId: null,
    permissions: DM_PERMISSIONS,
    rateLimitPerUser: 0,
    recipients: [dm.user_low, dm.user_high],
  };
}

/** 50008 unless the channel holds messages (forum, media, category and directory channels do not). */
export function requireMessageChannel(place: Place): void {
  if (!MESSAGE_CHANNEL_TYPES.includes(place.type))
    throw new HearthError('CannotSendMessagesInNonTextChannel');
}

/** 50013 unless the actor holds every bit here. */
export function requirePermissions(place: Place, bits: bigint): void {
  if (!has(place.permissions, bits)) throw new HearthError('MissingPermissions');
}

/** What an actor does in a thread: send, edit, delete a message, or add or remove a reaction. */
export type ThreadWrite = 'send' | 'edit' | 'delete' | 'react';

/**
 * Locked and archived threads (seed, States: Locked threads; Threads topic). Without MANAGE_THREADS, a
 * locked thread refuses new and edited messages (160005); deleting and reacting stay allowed while it is
 * not archived. An archived thread refuses edits and reactions (50083); a message sent into it unarchives
 * it unless it is locked, and deleting stays allowed unless it is locked. MANAGE_THREADS lifts the lock only.
 */
export function requireThreadWrite(place: Place, write: ThreadWrite): void {
  const thread = place.thread;
  if (!thread) return;
  const locked = thread.locked && !has(place.permissions, PermissionFlags.ManageThreads);
  if (thread.archived && (locked || write === 'edit' || write === 'react'))
    throw new HearthError('ThreadArchived');
  if (locked && (write === 'send' || write === 'edit')) throw new HearthError('ThreadLocked');
}

/**
 * What the thread domain keeps per message of a thread (counts, last message, unarchive on send) and shows
 * on a message that started a thread (`thread`). Declared here so the message core does not import it.
 */
export interface MessageThreads {
  /** A message was stored in the thread `place`; answers the events to publish once committed. */
  messageCreated(tx: Executor, place: Place, messageId: string): Promise<BusEvent[]>;
  /** Messages of the thread `place` were deleted. */
  messagesDeleted(tx: Executor, place: Place, messageIds: readonly string[]): Promise<void>;
  /** The thread objects of messages that started a thread, by message id. */
  threadsOf(db: Executor, messageIds: readonly string[]): Promise<Map<string, Record<string, unknown>>>;
}
