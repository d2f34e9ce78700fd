/**
 * What the search index keeps of one guild message (GUILDS.md §4.11): the words of its content, who wrote
 * it, what it has (links, embeds, files…) and the facets its filters name. Pure: no I/O here.
 */

/** `author_type` values as stored; the query names them `user`, `bot`, `webhook`. */
export const AuthorKinds = { user: 1, bot: 2, webhook: 3 } as const;
export type AuthorKind = keyof typeof AuthorKinds;

/** One bit per `has` value of the query (HasOption of the reference). */
export const HasBits = {
  link: 1,
  embed: 2,
  file: 4,
  image: 8,
  video: 16,
  sound: 32,
  sticker: 64,
  poll: 128,
  snapshot: 256,
} as const;
export type HasKind = keyof typeof HasBits;

/** Multi-valued facets, each a `kind` of `message_search_terms`. */
export const TermKinds = {
  mention: 'mention',
  mentionRole: 'mention_role',
  repliedUser: 'replied_user',
  repliedMessage: 'replied_message',
  linkHostname: 'link_hostname',
  attachmentFilename: 'attachment_filename',
  attachmentExtension: 'attachment_extension',
  embedType: 'embed_type',
  embedProvider: 'embed_provider',
} as const;
export type TermKind = (typeof TermKinds)[keyof typeof TermKinds];

/** The parts of a stored message the document is made of. */
export interface IndexedMessage {
  id: string;
  guildId: string;
  channelId: string;
  authorId: string;
  authorBot: boolean;
  webhookId: string | null;
  content: string;
  mentionEveryone: boolean;
  mentions: readonly string[];
  mentionRoles: readonly string[];
  embeds: readonly Record<string, unknown>[];
  /** Files as their objects carry them: name and media type. */
  attachments: readonly { filename: string; content_type?: string | null | undefined }[];
  /** The replied-to message and its author, for a reply. */
  repliedTo: { messageId: string; authorId: string | undefined } | undefined;
  hasSnapshot: boolean;
  hasPoll: boolean;
  hasSticker: boolean;
  createdAt: number;
}

export interface SearchDocument {
  messageId: string;
  guildId: string;
  channelId: string;
  authorId: string;
  authorType: number;
  has: number;
  mentionEveryone: boolean;
  createdAt: number;
  /** The content's words, lowercased and without diacritics, joined by single spaces. */
  text: string;
  terms: ReadonlyArray<readonly [TermKind, string]>;
}

/**
 * The words of a text as both engines index them: Unicode letters and digits, lowercased, diacritics
 * removed. Queries are cut the same way, so SQLite and PostgreSQL find the same messages.
 */
export function words(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"']+/giu;

/** The hostname of each http(s) link in a text, lowercased. */
export function linkHostnames(text: string): string[] {
  const hosts: string[] = [];
  for (const match of text.matchAll(URL_PATTERN)) {
    const host = hostnameOf(match[0]);
    if (host) hosts.push(host);
  }
  return hosts;
}

function hostnameOf(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    const { hostname } = new URL(url);
    return hostname === '' ? undefined : hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The extension of a file name (lowercase, no dot); none for names without one. */
export function extensionOf(filename: string): string | undefined {
  const dot = filename.lastIndexOf('.');
  return dot > 0 && dot < filename.length - 1 ? filename.slice(dot + 1).toLowerCase() : undefined;
}

/** The searchable embed type of an embed's `type` (SearchableEmbedType); others are not searchable. */
function searchableEmbedType(type: unknown): string | undefined {
  switch (type) {
    case 'image':
    case 'video':
    case 'article':
      return type;
    case 'gifv':
      return 'gif';
    case 'audio':
      return 'sound';
    default:
      return undefined;
  }
}

function mediaKind(contentType: string | null | undefined): HasKind | undefined {
  if (!contentType) return undefined;
  if (contentType.startsWith('image/')) return 'image';
  if (contentType.startsWith('video/')) return 'video';
  if (contentType.startsWith('audio/')) return 'sound';
  return undefined;
}

/** The document of a message: its words, bits and facets. */
export function documentOf(message: IndexedMessage): SearchDocument {
  let has = 0;
  const terms = new Map<string, readonly [TermKind, string]>();
  const term = (kind: TermKind, value: string) => terms.set(`${kind}\u0000${value}`, [kind, value]);

  for (const id of message.mentions) term(TermKinds.mention, id);
  for (const id of message.mentionRoles) term(TermKinds.mentionRole, id);
  if (message.repliedTo) {
    term(TermKinds.repliedMessage, message.repliedTo.messageId);
    if (message.repliedTo.authorId) term(TermKinds.repliedUser, message.repliedTo.authorId);
  }
  const hosts = linkHostnames(message.content);
  for (const file of message.attachments) {
    has |= HasBits.file;
    const kind = mediaKind(file.content_type);
    if (kind) has |= HasBits[kind];
    term(TermKinds.attachmentFilename, file.filename.toLowerCase());
    const extension = extensionOf(file.filename);
    if (extension) term(TermKinds.attachmentExtension, extension);
  }
  for (const embed of message.embeds) {
    has |= HasBits.embed;
    const type = searchableEmbedType(embed['type']);
    if (type) term(TermKinds.embedType, type);
    if (type === 'image' || type === 'gif') has |= HasBits.image;
    if (type === 'video') has |= HasBits.video;
    if (type === 'sound') has |= HasBits.sound;
    const provider = (embed['provider'] as { name?: unknown } | undefined)?.name;
    if (typeof provider === 'string' && provider !== '') term(TermKinds.embedProvider, provider);
    const host = hostnameOf(embed['url']);
    if (host) hosts.push(host);
  }
  if (hosts.length > 0) has |= HasBits.link;
  for (const host of hosts) term(TermKinds.linkHostname, host);
  if (message.hasSticker) has |= HasBits.sticker;
  if (message.hasPoll) has |= HasBits.poll;
  if (message.hasSnapshot) has |= HasBits.snapshot;

  const authorType =
    message.webhookId !== null ? AuthorKinds.webhook : message.authorBot ? AuthorKinds.bot : AuthorKinds.user;
  return {
    messageId: message.id,
    guildId: message.guildId,
    channelId: message.channelId,
    authorId: message.authorId,
    authorType,
    has,
    mentionEveryone: message.mentionEveryone,
    createdAt: message.createdAt,
    text: words(message.content).join(' '),
    terms: [...terms.values()],
  };
}
