import { GuildLimits, THREAD_AUTO_ARCHIVE_DURATIONS, ThreadLimits } from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';
import { CreateMessage } from '../channel-messages/schemas.js';

/**
 * Request shapes of the thread routes (OAS `CreateTextThreadWithMessageRequest`,
 * `CreateTextThreadWithoutMessageRequest`, `CreateForumThreadRequest`, `UpdateThreadRequestPartial`;
 * GUILDS.md §2.5). Rules that depend on the parent (types, tags) are the service's.
 */

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Choice = (values: readonly number[]) => Type.Unsafe<number>({ type: 'integer', enum: [...values] });

const Name = Type.String({ minLength: ThreadLimits.nameMin, maxLength: ThreadLimits.nameMax });
const AutoArchiveDuration = Type.Optional(Nullable(Choice(THREAD_AUTO_ARCHIVE_DURATIONS)));
const RateLimitPerUser = Type.Optional(
  Nullable(Type.Integer({ minimum: 0, maximum: GuildLimits.rateLimitPerUserMax })),
);
const AppliedTags = Type.Array(Snowflake, { maxItems: ThreadLimits.appliedTagsMax });

/** POST /channels/{id}/messages/{message_id}/threads. */
export const StartThreadFromMessage = Type.Object({
  name: Name,
  auto_archive_duration: AutoArchiveDuration,
  rate_limit_per_user: RateLimitPerUser,
});
export type StartThreadFromMessage = Static<typeof StartThreadFromMessage>;

/** POST /channels/{id}/threads on a text or announcement channel. */
export const StartThreadWithoutMessage = Type.Object({
  name: Name,
  auto_archive_duration: AutoArchiveDuration,
  rate_limit_per_user: RateLimitPerUser,
  type: Type.Optional(Nullable(Type.Integer())),
  invitable: Type.Optional(Nullable(Type.Boolean())),
});
export type StartThreadWithoutMessage = Static<typeof StartThreadWithoutMessage>;

/** POST /channels/{id}/threads on a forum or media channel: the post and its first message. */
export const StartForumThread = Type.Object({
  name: Name,
  auto_archive_duration: AutoArchiveDuration,
  rate_limit_per_user: RateLimitPerUser,
  applied_tags: Type.Optional(Nullable(AppliedTags)),
  message: CreateMessage,
});
export type StartForumThread = Static<typeof StartForumThread>;

/** PATCH /channels/{id} on a thread (Modify Channel, Thread). */
export const ModifyThread = Type.Object({
  name: Type.Optional(Name),
  archived: Type.Optional(Nullable(Type.Boolean())),
  auto_archive_duration: AutoArchiveDuration,
  locked: Type.Optional(Nullable(Type.Boolean())),
  invitable: Type.Optional(Nullable(Type.Boolean())),
  rate_limit_per_user: RateLimitPerUser,
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
  applied_tags: Type.Optional(Nullable(AppliedTags)),
});
export type ModifyThread = Static<typeof ModifyThread>;

/** GET /channels/{id}/thread-members. */
export const ListThreadMembersQuery = Type.Object({
  with_member: Type.Optional(Type.Boolean()),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ThreadLimits.membersPageMax })),
});
export type ListThreadMembersQuery = Static<typeof ListThreadMembersQuery>;

/** GET /channels/{id}/thread-members/{user_id}. */
export const GetThreadMemberQuery = Type.Object({ with_member: Type.Optional(Type.Boolean()) });
export type GetThreadMemberQuery = Static<typeof GetThreadMemberQuery>;

const ArchivedLimit = Type.Integer({
  minimum: ThreadLimits.archivedPageMin,
  maximum: ThreadLimits.archivedPageMax,
});

/** GET /channels/{id}/threads/archived/public and /private: `before` is a timestamp. */
export const ArchivedThreadsQuery = Type.Object({
  before: Type.Optional(Type.String({ format: 'date-time' })),
  limit: Type.Optional(ArchivedLimit),
});
export type ArchivedThreadsQuery = Static<typeof ArchivedThreadsQuery>;

/** GET /channels/{id}/users/@me/threads/archived/private: `before` is a thread id. */
export const JoinedArchivedThreadsQuery = Type.Object({
  before: Type.Optional(Snowflake),
  limit: Type.Optional(ArchivedLimit),
});
export type JoinedArchivedThreadsQuery = Static<typeof JoinedArchivedThreadsQuery>;

export const ChannelParams = Type.Object({ channel_id: Snowflake });
export const MessageParams = Type.Object({ channel_id: Snowflake, message_id: Snowflake });
export const ThreadMemberParams = Type.Object({ channel_id: Snowflake, user_id: Snowflake });
export const GuildParams = Type.Object({ guild_id: Snowflake });
