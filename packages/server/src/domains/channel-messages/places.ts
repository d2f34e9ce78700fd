import { ChannelTypes, MESSAGE_CHANNEL_TYPES, PermissionFlags } from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import { has } from '../guilds/permissions.js';
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
  /** The two participants of a DM channel. */
  recipients?: readonly [string, string];
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
