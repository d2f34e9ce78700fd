import {
  MESSAGE_SEARCH_AUTHOR_TYPES,
  MESSAGE_SEARCH_EMBED_TYPES,
  MESSAGE_SEARCH_HAS,
  MESSAGE_SEARCH_SORT_BY,
  MESSAGE_SEARCH_SORT_ORDER,
  MessageSearchLimits,
} from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });
const Choice = <T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values] });
/** A repeated query key (`?id=1&id=2`); a single value is read as a list of one. */
const List = <S extends TSchema>(item: S, maxItems: number) =>
  Type.Optional(Type.Array(item, { maxItems, uniqueItems: true }));
/** Query booleans as the platform reads them: `True|true|1`, `False|false|0` (PROTOCOL.md §E.1). */
export const QUERY_TRUE: readonly string[] = ['true', 'True', '1'];
const QueryBoolean = Choice(['true', 'True', '1', 'false', 'False', '0']);

const { idsMax, shortValueMax, filenameMax } = MessageSearchLimits;

/** GET /guilds/{id}/messages/search (GUILDS.md §4.11; reference `guild_search`). */
export const SearchQuery = Type.Object({
  content: Type.Optional(Type.String({ maxLength: MessageSearchLimits.contentMax })),
  slop: Type.Optional(Type.Integer({ minimum: 0, maximum: MessageSearchLimits.slopMax })),
  author_id: List(Snowflake, idsMax),
  author_type: List(Choice(MESSAGE_SEARCH_AUTHOR_TYPES), MESSAGE_SEARCH_AUTHOR_TYPES.length),
  mentions: List(Snowflake, idsMax),
  mentions_role_id: List(Snowflake, idsMax),
  replied_to_user_id: List(Snowflake, idsMax),
  replied_to_message_id: List(Snowflake, idsMax),
  mention_everyone: Type.Optional(QueryBoolean),
  min_id: Type.Optional(Snowflake),
  max_id: Type.Optional(Snowflake),
  limit: Type.Optional(
    Type.Integer({ minimum: MessageSearchLimits.limitMin, maximum: MessageSearchLimits.limitMax }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MessageSearchLimits.offsetMax })),
  has: List(Choice(MESSAGE_SEARCH_HAS), MESSAGE_SEARCH_HAS.length),
  link_hostname: List(Type.String({ maxLength: shortValueMax }), idsMax),
  embed_provider: List(Type.String({ maxLength: shortValueMax }), idsMax),
  embed_type: List(Choice(MESSAGE_SEARCH_EMBED_TYPES), MESSAGE_SEARCH_EMBED_TYPES.length),
  attachment_extension: List(Type.String({ maxLength: shortValueMax }), idsMax),
  attachment_filename: List(Type.String({ maxLength: filenameMax }), idsMax),
  pinned: Type.Optional(QueryBoolean),
  include_nsfw: Type.Optional(QueryBoolean),
  channel_id: List(Snowflake, MessageSearchLimits.channelIdsMax),
  sort_by: Type.Optional(Choice(MESSAGE_SEARCH_SORT_BY)),
  sort_order: Type.Optional(Choice(MESSAGE_SEARCH_SORT_ORDER)),
});
export type SearchQuery = Static<typeof SearchQuery>;

export const GuildParams = Type.Object({ guild_id: Snowflake });
