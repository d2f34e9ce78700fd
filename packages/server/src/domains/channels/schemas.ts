import {
  ForumLayouts,
  ForumSortOrders,
  GuildLimits,
  OverwriteTypes,
  THREAD_AUTO_ARCHIVE_DURATIONS,
  VideoQualityModes,
} from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';

/**
 * Request shapes of the guild channel routes (OAS `CreateGuildChannelRequest`,
 * `UpdateGuildChannelRequestPartial`, `ChannelPermissionOverwriteRequest`; GUILDS.md §2.4). Limits that
 * depend on the channel's type (topic, bitrate, user limit) are the service's.
 */

const Snowflake = Type.String({ format: 'snowflake' });
/** OAS types positions as `int32`: larger ones would overflow PostgreSQL's integer column. */
const Position = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** An integer out of a list: one `enum` keyword, so a wrong value gets one BASE_TYPE_CHOICES leaf. */
const Choice = (values: readonly number[]) => Type.Unsafe<number>({ type: 'integer', enum: [...values] });

/** A permission bitset: the decimal string clients send, or the integer OAS describes. */
export const PermissionBits = Type.Union([
  Type.String({ pattern: '^[0-9]{1,20}$' }),
  Type.Integer({ minimum: 0 }),
]);

export const OverwriteRequest = Type.Object({
  id: Snowflake,
  type: Type.Optional(Nullable(Choice(Object.values(OverwriteTypes)))),
  allow: Type.Optional(Nullable(PermissionBits)),
  deny: Type.Optional(Nullable(PermissionBits)),
});
export type OverwriteRequest = Static<typeof OverwriteRequest>;

const Tag = Type.Object({
  id: Type.Optional(Nullable(Snowflake)),
  name: Type.String({ maxLength: GuildLimits.forumTagNameMax }),
  emoji_id: Type.Optional(Nullable(Snowflake)),
  emoji_name: Type.Optional(Nullable(Type.String({ maxLength: GuildLimits.emojiNameMax }))),
  moderated: Type.Optional(Nullable(Type.Boolean())),
});
export type TagRequest = Static<typeof Tag>;

const ReactionEmoji = Type.Object({
  emoji_id: Type.Optional(Nullable(Snowflake)),
  emoji_name: Type.Optional(Nullable(Type.String({ maxLength: GuildLimits.emojiNameMax }))),
});

/** The fields create and modify share. */
const channelFields = {
  name: Type.String({ minLength: GuildLimits.channelNameMin, maxLength: GuildLimits.channelNameMax }),
  type: Type.Optional(Nullable(Type.Integer())),
  position: Type.Optional(Nullable(Position)),
  topic: Type.Optional(Nullable(Type.String({ maxLength: GuildLimits.forumTopicMax }))),
  nsfw: Type.Optional(Nullable(Type.Boolean())),
  rate_limit_per_user: Type.Optional(
    Nullable(Type.Integer({ minimum: 0, maximum: GuildLimits.rateLimitPerUserMax })),
  ),
  bitrate: Type.Optional(Nullable(Type.Integer({ minimum: GuildLimits.bitrateMin }))),
  user_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  parent_id: Type.Optional(Nullable(Snowflake)),
  permission_overwrites: Type.Optional(
    Nullable(Type.Array(OverwriteRequest, { maxItems: GuildLimits.overwritesPerChannel })),
  ),
  rtc_region: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  video_quality_mode: Type.Optional(Nullable(Choice(Object.values(VideoQualityModes)))),
  default_auto_archive_duration: Type.Optional(Nullable(Choice(THREAD_AUTO_ARCHIVE_DURATIONS))),
  default_thread_rate_limit_per_user: Type.Optional(
    Nullable(Type.Integer({ minimum: 0, maximum: GuildLimits.rateLimitPerUserMax })),
  ),
  available_tags: Type.Optional(Nullable(Type.Array(Tag, { maxItems: GuildLimits.availableTagsMax }))),
  default_reaction_emoji: Type.Optional(Nullable(ReactionEmoji)),
  default_sort_order: Type.Optional(Nullable(Choice(Object.values(ForumSortOrders)))),
  default_forum_layout: Type.Optional(Nullable(Choice(Object.values(ForumLayouts)))),
};

export const CreateChannel = Type.Object(channelFields);
export type CreateChannel = Static<typeof CreateChannel>;

/** PATCH /channels/{id}: every field optional; `flags` only here. */
export const ModifyChannel = Type.Object({
  ...channelFields,
  name: Type.Optional(channelFields.name),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
});
export type ModifyChannel = Static<typeof ModifyChannel>;

/** PATCH /guilds/{id}/channels: the positions (and parents) of several channels. */
export const ReorderChannels = Type.Array(
  Type.Object({
    id: Snowflake,
    position: Type.Optional(Nullable(Position)),
    lock_permissions: Type.Optional(Nullable(Type.Boolean())),
    parent_id: Type.Optional(Nullable(Snowflake)),
  }),
);
export type ReorderChannels = Static<typeof ReorderChannels>;

/** PUT /channels/{id}/permissions/{overwrite_id}. */
export const EditOverwrite = Type.Object({
  type: Choice(Object.values(OverwriteTypes)),
  allow: Type.Optional(Nullable(PermissionBits)),
  deny: Type.Optional(Nullable(PermissionBits)),
});
export type EditOverwrite = Static<typeof EditOverwrite>;

export const GuildParams = Type.Object({ guild_id: Snowflake });
export const ChannelParams = Type.Object({ channel_id: Snowflake });
export const OverwriteParams = Type.Object({ channel_id: Snowflake, overwrite_id: Snowflake });
