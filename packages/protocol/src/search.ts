/**
 * Search Guild Messages (GUILDS.md §4.11; reference `guild_search`): the query's limits and value sets.
 */
export const MessageSearchLimits = {
  limitMin: 1,
  limitMax: 25,
  limitDefault: 25,
  offsetMax: 9975,
  contentMax: 1024,
  slopMax: 100,
  slopDefault: 2,
  channelIdsMax: 500,
  /** author_id, mentions, mentions_role_id, replied_to_*, link_hostname, embed_provider, attachment_*. */
  idsMax: 100,
  /** embed_provider, link_hostname, attachment_extension values. */
  shortValueMax: 256,
  /** attachment_filename values. */
  filenameMax: 1024,
} as const;

/** `author_type` values; a `-` prefix negates. */
export const MESSAGE_SEARCH_AUTHOR_TYPES = ['user', 'bot', 'webhook', '-user', '-bot', '-webhook'] as const;
export type MessageSearchAuthorType = (typeof MESSAGE_SEARCH_AUTHOR_TYPES)[number];

/** `has` values; a `-` prefix negates. */
export const MESSAGE_SEARCH_HAS = [
  'link',
  'embed',
  'file',
  'image',
  'video',
  'sound',
  'sticker',
  'poll',
  'snapshot',
  '-link',
  '-embed',
  '-file',
  '-image',
  '-video',
  '-sound',
  '-sticker',
  '-poll',
  '-snapshot',
] as const;
export type MessageSearchHas = (typeof MESSAGE_SEARCH_HAS)[number];

/** `embed_type` values (SearchableEmbedType). */
export const MESSAGE_SEARCH_EMBED_TYPES = ['image', 'video', 'gif', 'sound', 'article'] as const;
export type MessageSearchEmbedType = (typeof MESSAGE_SEARCH_EMBED_TYPES)[number];

export const MESSAGE_SEARCH_SORT_BY = ['timestamp', 'relevance'] as const;
export const MESSAGE_SEARCH_SORT_ORDER = ['desc', 'asc'] as const;
