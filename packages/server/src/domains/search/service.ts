import { ChannelTypes, MESSAGE_CHANNEL_TYPES, MessageSearchLimits, PermissionFlags } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { ContentReader } from '../channel-messages/content-access.js';
import type { MessageObject } from '../channel-messages/objects.js';
import type { Actor } from '../channel-messages/places.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import { channelPermissions, has } from '../guilds/permissions.js';
import * as threadStore from '../threads/store.js';
import { AuthorKinds, HasBits, type HasKind, TermKinds, words } from './documents.js';
import { QUERY_TRUE, SearchQuery } from './schemas.js';
import type { SearchIndex } from './search-index.js';
import * as store from './store.js';

export interface SearchDeps {
  storage: Storage;
  clock: Clock;
  access: GuildAccess;
  index: SearchIndex;
  /** Message objects as the actor reads them over REST (the message-content rule applied). */
  reading: {
    readable(actor: Actor, inGuild: boolean, rows: readonly store.MessageRow[]): Promise<MessageObject[]>;
    reader(actor: Actor, db?: Executor): Promise<ContentReader>;
  };
  /** The thread objects of results in threads, and the caller's memberships of them (domains/threads). */
  threads?: {
    ofResults(
      userId: string,
      threadIds: readonly string[],
    ): Promise<{ threads: unknown[]; members: unknown[] }>;
  };
}

/** A search result message: the message object without `reactions`, marked as a hit (SearchMessageResponse). */
export type SearchMessage = Omit<MessageObject, 'reactions'> & { hit: true };

/** The 200 body of Search Guild Messages (GuildSearchResponse). */
export interface SearchResult {
  doing_deep_historical_index: boolean;
  total_results: number;
  messages: SearchMessage[][];
  /** Present when results lie in threads: those threads, and the caller's memberships of them. */
  threads?: unknown[];
  members?: unknown[];
}

const { ViewChannel, ReadMessageHistory, ManageThreads } = PermissionFlags;

/** The channels a search covers, as the caller stands in them. */
interface Scope {
  channelIds: string[];
  /** Which of them are threads. */
  threadIds: ReadonlySet<string>;
}

/**
 * Search Guild Messages (GUILDS.md §4.11): the checked query, the caller's readable channels, then one
 * query of the index and the messages as the caller reads them.
 */
export class SearchService {
  readonly #deps: SearchDeps;

  constructor(deps: SearchDeps) {
    this.#deps = deps;
  }

  async search(actor: Actor, guildId: string, input: unknown): Promise<SearchResult> {
    const query = parse(SearchQuery, input ?? {});
    const db = this.#deps.storage.db;
    const member = await this.#deps.access.member(db, guildId, actor.userId);
    await this.#requireIndex(db, guildId);
    const scope = await this.#scope(db, guildId, actor.userId, member, query);
    if (scope.channelIds.length === 0) return emptyResult();
    const reader = await this.#deps.reading.reader(actor);
    const { total, rows } = await store.search(db, this.#deps.storage.engine, {
      guildId,
      channelIds: scope.channelIds,
      // An empty `content` filters nothing; text without words (punctuation only) matches nothing.
      words: query.content === undefined || query.content.trim() === '' ? undefined : words(query.content),
      authorIds: query.author_id ?? [],
      authorTypes: authorTypes(query.author_type ?? []),
      has: hasBits(query.has ?? []),
      terms: termFilters(query),
      mentionEveryone: bool(query.mention_everyone),
      pinned: bool(query.pinned),
      minId: query.min_id,
      maxId: query.max_id,
      contentReader: reader.bot && !reader.contentAccess ? reader.userId : undefined,
      sortBy: query.sort_by ?? 'timestamp',
      sortOrder: query.sort_order ?? 'desc',
      limit: query.limit ?? MessageSearchLimits.limitDefault,
      offset: query.offset ?? 0,
    });
    const messages = await this.#deps.reading.readable(actor, true, rows);
    const result: SearchResult = {
      doing_deep_historical_index: false,
      total_results: total,
      messages: messages.map((message) => [asHit(message)]),
    };
    const threadIds = [...new Set(rows.map((row) => row.channel_id))].filter((id) => scope.threadIds.has(id));
    if (threadIds.length === 0 || !this.#deps.threads) return result;
    return { ...result, ...(await this.#deps.threads.ofResults(actor.userId, threadIds)) };
  }

  /** 202 with 110000 while the guild's index is being built (PROTOCOL.md §E.2). */
  async #requireIndex(db: Executor, guildId: string): Promise<void> {
    const building = await this.#deps.index.building(db, guildId);
    if (building)
      throw new HearthError('IndexNotYetAvailable', {
        extra: { documents_indexed: building.documentsIndexed, retry_after: building.retryAfter },
      });
  }

  /**
   * The channels searched: the requested ones (or every message channel of the guild) where the caller
   * holds VIEW_CHANNEL and READ_MESSAGE_HISTORY; age-restricted ones only with `include_nsfw`. Unreadable
   * channels are left out; when none of the requested ones is readable: 50001 if none is visible, else 50013.
   */
  async #scope(
    db: Executor,
    guildId: string,
    userId: string,
    member: MemberAccess,
    query: SearchQuery,
  ): Promise<Scope> {
    const channels = await channelStore.guildChannels(db, guildId);
    const byId = new Map(channels.map((channel) => [channel.id, channel]));
    const overwrites = new Map<string, channelStore.OverwriteRow[]>();
    for (const row of await channelStore.guildOverwrites(db, guildId))
      overwrites.set(row.channel_id, [...(overwrites.get(row.channel_id) ?? []), row]);
    const now = this.#deps.clock.now();
    const permissionsIn = (channel: channelStore.ChannelRow) =>
      channelPermissions(
        member.input,
        (overwrites.get(channel.id) ?? []).map((row) => ({
          id: row.target_id,
          type: Number(row.type),
          allow: BigInt(row.allow),
          deny: BigInt(row.deny),
        })),
        now,
      );

    // Threads live apart from channels: each searched as its parent, a private one only by its members
    // and MANAGE_THREADS holders.
    const threads = new Map(
      (await threadStore.guildThreadsFor(db, guildId, userId)).flatMap((thread) => {
        const parent = byId.get(thread.parent_id);
        return parent ? [[thread.id, { ...thread, parent }] as const] : [];
      }),
    );
    const requested = query.channel_id;
    const candidates = (
      requested === undefined
        ? [
            ...channels.filter((channel) => MESSAGE_CHANNEL_TYPES.includes(Number(channel.type))),
            ...threads.keys(),
          ]
        : requested.filter(
            (id) => threads.has(id) || MESSAGE_CHANNEL_TYPES.includes(Number(byId.get(id)?.type)),
          )
    ).map((candidate) => (typeof candidate === 'string' ? candidate : candidate.id));
    let visible = 0;
    const readable: channelStore.ChannelRow[] = [];
    for (const id of candidates) {
      const thread = threads.get(id);
      const channel = thread ? thread.parent : byId.get(id)!;
      const permissions = permissionsIn(channel);
      if (!has(permissions, ViewChannel)) continue;
      if (thread && Number(thread.type) === ChannelTypes.PrivateThread && Number(thread.joined) !== 1)
        if (!has(permissions, ManageThreads)) continue;
      visible += 1;
      if (has(permissions, ReadMessageHistory)) readable.push(thread ? { ...channel, id } : channel);
    }
    const asked = requested === undefined ? candidates.length : requested.length;
    if (readable.length === 0 && asked > 0)
      throw new HearthError(visible === 0 ? 'MissingAccess' : 'MissingPermissions');
    const includeNsfw = bool(query.include_nsfw) === true;
    return {
      // A thread's row here is its parent's with the thread's id: the parent's age restriction holds.
      channelIds: readable
        .filter((channel) => includeNsfw || Number(channel.nsfw) !== 1)
        .map((channel) => channel.id),
      threadIds: new Set(threads.keys()),
    };
  }
}

function emptyResult(): SearchResult {
  return { doing_deep_historical_index: false, total_results: 0, messages: [] };
}

function asHit(message: MessageObject): SearchMessage {
  const { reactions: _reactions, ...rest } = message;
  return { ...rest, hit: true };
}

function bool(value: string | undefined): boolean | undefined {
  return value === undefined ? undefined : QUERY_TRUE.includes(value);
}

/** `author_type`: the named kinds (any of them), minus the negated ones. */
function authorTypes(values: readonly string[]): { include: number[]; exclude: number[] } {
  const include: number[] = [];
  const exclude: number[] = [];
  for (const value of values) {
    const negated = value.startsWith('-');
    const kind = AuthorKinds[(negated ? value.slice(1) : value) as keyof typeof AuthorKinds];
    (negated ? exclude : include).push(kind);
  }
  return { include, exclude };
}

/** `has`: every named thing present, every negated one absent. */
function hasBits(values: readonly string[]): { all: number; none: number } {
  let all = 0;
  let none = 0;
  for (const value of values) {
    if (value.startsWith('-')) none |= HasBits[value.slice(1) as HasKind];
    else all |= HasBits[value as HasKind];
  }
  return { all, none };
}

/** Facet filters, each matching any of its values; names and hosts compare case-insensitively. */
function termFilters(query: SearchQuery): store.TermFilter[] {
  const lower = (values: readonly string[] | undefined) => values?.map((value) => value.toLowerCase());
  const extension = (values: readonly string[] | undefined) =>
    values?.map((value) => value.toLowerCase().replace(/^\./, ''));
  const filters: Array<[store.TermFilter['kind'], readonly string[] | undefined]> = [
    [TermKinds.mention, query.mentions],
    [TermKinds.mentionRole, query.mentions_role_id],
    [TermKinds.repliedUser, query.replied_to_user_id],
    [TermKinds.repliedMessage, query.replied_to_message_id],
    [TermKinds.linkHostname, lower(query.link_hostname)],
    [TermKinds.attachmentFilename, lower(query.attachment_filename)],
    [TermKinds.attachmentExtension, extension(query.attachment_extension)],
    [TermKinds.embedType, query.embed_type],
    [TermKinds.embedProvider, query.embed_provider],
  ];
  return filters.flatMap(([kind, values]) =>
    values !== undefined && values.length > 0 ? [{ kind, values }] : [],
  );
}
