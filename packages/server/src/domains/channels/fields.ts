import {
  ChannelFlags,
  ChannelTypes,
  FormErrors,
  GUILD_CHANNEL_TYPES,
  GuildFeatures,
  GuildLimits,
  VOICE_CHANNEL_TYPES,
} from '@hearth/protocol';
import type { Insertable } from 'kysely';
import { invalidForm } from '../../kernel/errors.js';
import type { ChannelsTable } from '../../storage/schema.js';
import type { ModifyChannel, TagRequest } from './schemas.js';

/**
 * The fields of a guild channel by its type (GUILDS.md §2.1, §2.4): which a type keeps, their limits,
 * and the type changes allowed. Fields a type does not have are ignored, as the platform does.
 */

/** Columns a request sets; absent keys keep what is stored. */
export type ChannelFields = {
  [K in keyof Insertable<ChannelsTable>]?: Exclude<Insertable<ChannelsTable>[K], undefined>;
};

export const isForum = (type: number) => type === ChannelTypes.GuildForum || type === ChannelTypes.GuildMedia;
export const isTextLike = (type: number) =>
  type === ChannelTypes.GuildText || type === ChannelTypes.GuildAnnouncement || isForum(type);
export const isVoice = (type: number) => VOICE_CHANNEL_TYPES.includes(type);

/** The type-dependent fields of a request, checked against the type's limits (GUILDS.md §2.4). */
export function channelFields(
  features: readonly string[],
  type: number,
  body: ModifyChannel,
  tags: readonly unknown[],
  nextId: () => string,
): ChannelFields {
  const fields: ChannelFields = {};
  if (body.nsfw !== undefined) fields.nsfw = body.nsfw ? 1 : 0;
  if (body.rate_limit_per_user !== undefined && (isTextLike(type) || isVoice(type)))
    fields.rate_limit_per_user = body.rate_limit_per_user ?? 0;
  if (isTextLike(type)) {
    const topicMax = isForum(type) ? GuildLimits.forumTopicMax : GuildLimits.topicMax;
    if (body.topic !== undefined && body.topic !== null && body.topic.length > topicMax)
      throw invalidForm('topic', FormErrors.maxLength(topicMax));
    if (body.topic !== undefined) fields.topic = body.topic;
    if (body.default_auto_archive_duration !== undefined)
      fields.default_auto_archive_duration = body.default_auto_archive_duration;
    if (body.default_thread_rate_limit_per_user !== undefined)
      fields.default_thread_rate_limit_per_user = body.default_thread_rate_limit_per_user;
  }
  if (isVoice(type)) {
    const stage = type === ChannelTypes.GuildStageVoice;
    const vip = features.includes(GuildFeatures.VipRegions);
    const bitrateMax = stage
      ? GuildLimits.stageBitrateMax
      : vip
        ? GuildLimits.vipVoiceBitrateMax
        : GuildLimits.voiceBitrateMax;
    if (body.bitrate !== undefined && body.bitrate !== null) {
      if (body.bitrate > bitrateMax) throw invalidForm('bitrate', FormErrors.maximum(bitrateMax));
      fields.bitrate = body.bitrate;
    }
    const userLimitMax = stage ? GuildLimits.stageUserLimitMax : GuildLimits.voiceUserLimitMax;
    if (body.user_limit !== undefined && body.user_limit !== null) {
      if (body.user_limit > userLimitMax) throw invalidForm('user_limit', FormErrors.maximum(userLimitMax));
      fields.user_limit = body.user_limit;
    }
    if (body.rtc_region !== undefined) fields.rtc_region = body.rtc_region;
    if (body.video_quality_mode !== undefined) fields.video_quality_mode = body.video_quality_mode;
  }
  if (isForum(type)) {
    if (body.available_tags !== undefined)
      fields.available_tags = JSON.stringify(forumTags(body.available_tags ?? [], tags, nextId));
    if (body.default_reaction_emoji !== undefined)
      fields.default_reaction_emoji =
        body.default_reaction_emoji === null
          ? null
          : JSON.stringify({
              emoji_id: body.default_reaction_emoji.emoji_id ?? null,
              emoji_name: body.default_reaction_emoji.emoji_name ?? null,
            });
    if (body.default_sort_order !== undefined) fields.default_sort_order = body.default_sort_order;
    if (body.default_forum_layout !== undefined && type === ChannelTypes.GuildForum)
      fields.default_forum_layout = body.default_forum_layout ?? 0;
    if (body.flags !== undefined && body.flags !== null) {
      const settable =
        ChannelFlags.RequireTag |
        (type === ChannelTypes.GuildMedia ? ChannelFlags.HideMediaDownloadOptions : 0);
      fields.flags = body.flags & settable;
    }
  }
  return fields;
}

/** Forum tags: a tag that names an existing one keeps its id, a new one gets an id. */
function forumTags(requested: readonly TagRequest[], existing: readonly unknown[], nextId: () => string) {
  const known = new Set(existing.map((tag) => (tag as { id: string }).id));
  return requested.map((tag) => ({
    id: tag.id && known.has(tag.id) ? tag.id : nextId(),
    name: tag.name,
    moderated: tag.moderated ?? false,
    emoji_id: tag.emoji_id ?? null,
    emoji_name: tag.emoji_name ?? null,
  }));
}

/** A new channel's type: a guild channel type; announcement only with the NEWS feature (GUILDS.md §2.1). */
export function creatableType(features: readonly string[], type: number): number {
  const news = features.includes(GuildFeatures.News);
  const allowed = GUILD_CHANNEL_TYPES.filter((t) => news || t !== ChannelTypes.GuildAnnouncement);
  if (!allowed.includes(type)) throw invalidForm('type', FormErrors.choices(allowed));
  return type;
}

/** A type change: only text ↔ announcement, only with the NEWS feature (GUILDS.md §2.4). */
export function changedType(
  features: readonly string[],
  current: number,
  wanted: number | null | undefined,
): number {
  if (wanted === undefined || wanted === null || wanted === current) return current;
  const news = features.includes(GuildFeatures.News);
  const pair: number[] = [ChannelTypes.GuildText, ChannelTypes.GuildAnnouncement];
  if (news && pair.includes(current) && pair.includes(wanted)) return wanted;
  throw invalidForm('type', FormErrors.choices(news && pair.includes(current) ? pair : [current]));
}
