import { ChannelTypes, PermissionFlags, ThreadLimits } from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import { has } from '../guilds/permissions.js';
import { standingIn } from './access.js';
import {
  type ThreadMemberObject,
  type ThreadObject,
  toThreadMemberObject,
  toThreadObject,
} from './objects.js';
import { ArchivedThreadsQuery, JoinedArchivedThreadsQuery } from './schemas.js';
import type { ThreadRow } from './store.js';
import * as store from './store.js';

export interface ThreadListingDeps {
  storage: Storage;
  access: GuildAccess;
  /** Archives the guild's threads whose time has come, before a list is answered. */
  archiveDue: (guildId: string) => Promise<unknown>;
}

/** The answer of the thread lists (OAS `ThreadsResponse`): threads, the caller's memberships, more or not. */
export interface ThreadList extends Record<string, unknown> {
  threads: ThreadObject[];
  members: ThreadMemberObject[];
  has_more: boolean;
}

const { ViewChannel, ReadMessageHistory, ManageThreads } = PermissionFlags;

/**
 * Enumerating threads (Threads topic, Enumerating threads; GUILDS.md §2.5): a guild's active threads the
 * caller can see, and a channel's archived public, archived private, and joined archived private threads.
 */
export class ThreadListing {
  readonly #deps: ThreadListingDeps;

  constructor(deps: ThreadListingDeps) {
    this.#deps = deps;
  }

  /** GET /guilds/{id}/threads/active: public and private threads the caller can see, by id descending. */
  async active(userId: string, guildId: string): Promise<ThreadList> {
    const db = this.#deps.storage.db;
    await this.#deps.access.member(db, guildId, userId);
    await this.#deps.archiveDue(guildId);
    const visible: ThreadRow[] = [];
    for (const row of await store.activeThreads(db, guildId))
      if (await this.#sees(db, userId, row)) visible.push(row);
    return this.#list(db, userId, visible, false);
  }

  /**
   * GUILD_CREATE's `threads`: the active threads the user can see, each with `member` when they joined it
   * (its `id` and `user_id` left out there, gateway events Guild Create).
   */
  async guildCreateThreads(guildId: string, userId: string): Promise<ThreadObject[]> {
    const db = this.#deps.storage.db;
    const visible: ThreadRow[] = [];
    for (const row of await store.activeThreads(db, guildId))
      if (await this.#sees(db, userId, row)) visible.push(row);
    const list = await this.#list(db, userId, visible, false);
    return list.threads.map((thread) => {
      const member = list.members.find((entry) => entry.id === thread.id);
      return member
        ? { ...thread, member: { join_timestamp: member.join_timestamp, flags: member.flags } }
        : thread;
    }) as ThreadObject[];
  }

  /**
   * Search Guild Messages' `threads` and `members`: the threads of the results (the search has already
   * checked the caller may read them) and the caller's memberships among them.
   */
  async ofResults(
    userId: string,
    threadIds: readonly string[],
  ): Promise<{ threads: ThreadObject[]; members: ThreadMemberObject[] }> {
    const db = this.#deps.storage.db;
    const rows = (await Promise.all(threadIds.map((id) => store.findThread(db, id)))).flatMap((row) =>
      row ? [row] : [],
    );
    const { threads, members } = await this.#list(db, userId, rows, false);
    return { threads, members };
  }

  /** GET /channels/{id}/threads/archived/public: READ_MESSAGE_HISTORY; by archive time descending. */
  async archivedPublic(userId: string, channelId: string, query: unknown): Promise<ThreadList> {
    const { before, limit = ThreadLimits.archivedPageDefault } = parse(ArchivedThreadsQuery, query ?? {});
    const db = this.#deps.storage.db;
    const parent = await this.#parent(db, userId, channelId, ReadMessageHistory);
    const types =
      Number(parent.type) === ChannelTypes.GuildAnnouncement
        ? [ChannelTypes.AnnouncementThread]
        : [ChannelTypes.PublicThread];
    const rows = await store.archivedThreads(db, channelId, types, timeOf(before), limit);
    return this.#list(db, userId, rows.slice(0, limit), rows.length > limit);
  }

  /** GET /channels/{id}/threads/archived/private: READ_MESSAGE_HISTORY and MANAGE_THREADS. */
  async archivedPrivate(userId: string, channelId: string, query: unknown): Promise<ThreadList> {
    const { before, limit = ThreadLimits.archivedPageDefault } = parse(ArchivedThreadsQuery, query ?? {});
    const db = this.#deps.storage.db;
    await this.#parent(db, userId, channelId, ReadMessageHistory | ManageThreads);
    const rows = await store.archivedThreads(
      db,
      channelId,
      [ChannelTypes.PrivateThread],
      timeOf(before),
      limit,
    );
    return this.#list(db, userId, rows.slice(0, limit), rows.length > limit);
  }

  /** GET /channels/{id}/users/@me/threads/archived/private: joined ones, by id descending, `before` an id. */
  async joinedArchivedPrivate(userId: string, channelId: string, query: unknown): Promise<ThreadList> {
    const { before, limit = ThreadLimits.archivedPageDefault } = parse(
      JoinedArchivedThreadsQuery,
      query ?? {},
    );
    const db = this.#deps.storage.db;
    await this.#parent(db, userId, channelId, ReadMessageHistory);
    const rows = await store.joinedArchivedPrivateThreads(
      db,
      channelId,
      userId,
      ChannelTypes.PrivateThread,
      before,
      limit,
    );
    return this.#list(db, userId, rows.slice(0, limit), rows.length > limit);
  }

  // ---- Steps ----

  /** A channel that holds threads, seen by the caller with `bits` (10003, 50001, 50013, 50024). */
  async #parent(db: Executor, userId: string, channelId: string, bits: bigint) {
    const row = await channelStore.findChannel(db, channelId);
    if (!row) {
      if (await store.findThread(db, channelId)) throw new HearthError('CannotExecuteOnChannelType');
      throw new HearthError('UnknownChannel');
    }
    const access = await this.#deps.access.member(db, row.guild_id, userId);
    const permissions = await this.#deps.access.permissionsIn(db, access, channelId);
    if (!has(permissions, ViewChannel)) throw new HearthError('MissingAccess');
    if (!has(permissions, bits)) throw new HearthError('MissingPermissions');
    const type = Number(row.type);
    if (
      ![
        ChannelTypes.GuildText,
        ChannelTypes.GuildAnnouncement,
        ChannelTypes.GuildForum,
        ChannelTypes.GuildMedia,
      ].includes(type as 0)
    )
      throw new HearthError('CannotExecuteOnChannelType');
    await this.#deps.archiveDue(row.guild_id);
    return row;
  }

  async #sees(db: Executor, userId: string, row: ThreadRow): Promise<boolean> {
    try {
      await standingIn(db, this.#deps.access, userId, row);
      return true;
    } catch (error) {
      if (error instanceof HearthError && error.error === 'MissingAccess') return false;
      throw error;
    }
  }

  async #list(db: Executor, userId: string, rows: readonly ThreadRow[], more: boolean): Promise<ThreadList> {
    const ids = rows.map((row) => row.id);
    const counts = await store.memberCounts(db, ids);
    const members = await store.membershipsOf(db, ids, userId);
    return {
      threads: rows.map((row) => toThreadObject(row, counts.get(row.id) ?? 0)),
      members: ids.flatMap((id) => {
        const member = members.find((row) => row.thread_id === id);
        return member ? [toThreadMemberObject(member)] : [];
      }),
      has_more: more,
    };
  }
}

/** An ISO 8601 `before` as milliseconds. */
function timeOf(before: string | undefined): number | undefined {
  return before === undefined ? undefined : Date.parse(before);
}
