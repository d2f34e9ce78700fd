import {
  AuditLogEvents,
  ChannelFlags,
  ChannelTypes,
  DEFAULT_THREAD_AUTO_ARCHIVE_DURATION,
  FormErrors,
  MessageFlags,
  MessageReferenceTypes,
  MessageTypes,
  PermissionFlags,
  ThreadLimits,
} from '@hearth/protocol';
import type { Insertable } from 'kysely';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { UploadedFile } from '../../http/multipart.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { ThreadsTable } from '../../storage/schema.js';
import type { User } from '../accounts/service.js';
import type { MessageObject } from '../channel-messages/objects.js';
import { type Actor, type Place, placeOf } from '../channel-messages/places.js';
import type { ChannelMessagesService, PendingMessage } from '../channel-messages/service.js';
import type { ChannelRow } from '../channels/store.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import { type AuditLog, diffChanges } from '../guilds/audit-log.js';
import { has } from '../guilds/permissions.js';
import { isPrivateThread, standingIn, type ThreadStanding } from './access.js';
import { ThreadEvents } from './events.js';
import { type ThreadObject, toThreadMemberObject, toThreadObject } from './objects.js';
import {
  ModifyThread,
  StartForumThread,
  StartThreadFromMessage,
  StartThreadWithoutMessage,
} from './schemas.js';
import type { ThreadRow } from './store.js';
import * as store from './store.js';

export interface ThreadsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  messages: Pick<
    ChannelMessagesService,
    'createWithin' | 'postSystemMessage' | 'findMessageIn' | 'addFlags' | 'channelDeleted' | 'spendSlowmode'
  >;
  /** AutoMod over thread titles: refuses a blocked one with 200001, after running the rules' actions. */
  titles?: { screen(title: TitleScreening): Promise<void> };
}

/** A thread title as AutoMod screens it: its guild, its parent channel and who names it. */
export interface TitleScreening {
  guildId: string;
  channelId: string;
  authorId: string;
  content: string;
}

const {
  ViewChannel,
  SendMessages,
  ManageThreads,
  CreatePublicThreads,
  CreatePrivateThreads,
  ReadMessageHistory,
} = PermissionFlags;

/** The keys a thread's audit entries list (GUILDS.md §8: THREAD_CREATE / UPDATE / DELETE, 110–112). */
const AUDITED_KEYS = [
  'name',
  'type',
  'archived',
  'locked',
  'auto_archive_duration',
  'rate_limit_per_user',
  'invitable',
  'flags',
  'applied_tags',
] as const;

const POST_MESSAGE_FLAGS = MessageFlags.SuppressEmbeds | MessageFlags.SuppressNotifications;

const isForum = (type: number) => type === ChannelTypes.GuildForum || type === ChannelTypes.GuildMedia;

/** The parent channel a thread is started in, as the caller stands in it. */
interface Parent {
  row: ChannelRow;
  access: MemberAccess;
  permissions: bigint;
}

/**
 * Threads (GUILDS.md §2.5; Threads topic): starting them from a message, without one, or as a forum post;
 * reading, modifying and deleting them through the channel routes; their auto-archive. Each change is one
 * transaction with its audit entry; its gateway events go out once it committed.
 */
export class ThreadsService {
  readonly #deps: ThreadsDeps;
  readonly #events: ThreadEvents;

  constructor(deps: ThreadsDeps) {
    this.#deps = deps;
    this.#events = new ThreadEvents(deps);
  }

  get events(): ThreadEvents {
    return this.#events;
  }

  /** A title AutoMod refuses (200001) before anything is written; an unknown parent is left to the caller. */
  async #screenTitle(userId: string, channelId: string, title: string): Promise<void> {
    const channel = this.#deps.titles && (await channelStore.findChannel(this.#deps.storage.db, channelId));
    if (!channel) return;
    await this.#deps.titles?.screen({
      guildId: channel.guild_id,
      channelId,
      authorId: userId,
      content: title,
    });
  }

  // ---- Start ----

  /**
   * POST /channels/{id}/messages/{message_id}/threads: a public thread (announcement thread in an
   * announcement channel) sharing the message's id; the message gets HAS_THREAD and `thread`, and the
   * thread a THREAD_STARTER_MESSAGE (21) pointing at it.
   */
  async startFromMessage(
    actor: Actor,
    channelId: string,
    messageId: string,
    input: unknown,
    reason: string | null,
  ): Promise<ThreadObject> {
    const body = parse(StartThreadFromMessage, input ?? {});
    await this.#screenTitle(actor.userId, channelId, body.name);
    const events: BusEvent[] = [];
    const thread = await this.#deps.storage.transaction(async (tx) => {
      const parent = await this.#parent(tx, actor.userId, channelId);
      const parentType = Number(parent.row.type);
      if (parentType !== ChannelTypes.GuildText && parentType !== ChannelTypes.GuildAnnouncement)
        throw new HearthError('CannotExecuteOnChannelType');
      requireBits(parent.permissions, CreatePublicThreads | ReadMessageHistory);
      const message = await this.#deps.messages.findMessageIn(tx, channelId, messageId);
      if (!message) throw new HearthError('UnknownMessage');
      if (await store.findThread(tx, messageId)) throw new HearthError('ThreadAlreadyCreatedForMessage');
      const type =
        parentType === ChannelTypes.GuildAnnouncement
          ? ChannelTypes.AnnouncementThread
          : ChannelTypes.PublicThread;
      const row = await this.#insert(tx, actor, parent, {
        id: messageId,
        type,
        name: body.name,
        auto_archive_duration: body.auto_archive_duration,
        rate_limit_per_user: body.rate_limit_per_user,
      });
      events.push(await this.#events.created(tx, row));
      const parentPlace = await placeOf(tx, this.#deps.access, actor, channelId);
      const updated = await this.#deps.messages.addFlags(tx, parentPlace, messageId, MessageFlags.HasThread);
      if (updated) events.push(updated);
      const threadPlace = await placeOf(tx, this.#deps.access, actor, row.id);
      events.push(
        await this.#systemMessage(tx, threadPlace, actor, MessageTypes.ThreadStarterMessage, '', {
          type: MessageReferenceTypes.Default,
          channel_id: channelId,
          guild_id: row.guild_id,
          message_id: messageId,
        }),
      );
      events.push(await this.#events.membersUpdate(tx, row, [actor.userId], []));
      await this.#audit(tx, actor.userId, row, AuditLogEvents.ThreadCreate, reason);
      return this.#object(tx, row.id, actor.userId);
    });
    await this.#publish(events);
    return thread;
  }

  /**
   * POST /channels/{id}/threads: on a text or announcement channel a thread without a message (private by
   * default; public ones announce themselves with a THREAD_CREATED message in the parent); on a forum or
   * media channel a post, whose first message shares its id.
   */
  async start(
    actor: Actor,
    channelId: string,
    input: unknown,
    uploads: readonly UploadedFile[],
    reason: string | null,
  ): Promise<ThreadObject & { message?: MessageObject }> {
    const parent = await this.#parent(this.#deps.storage.db, actor.userId, channelId);
    if (isForum(Number(parent.row.type))) return this.#startPost(actor, channelId, input, uploads, reason);
    return this.#startWithoutMessage(actor, channelId, input, reason);
  }

  async #startWithoutMessage(
    actor: Actor,
    channelId: string,
    input: unknown,
    reason: string | null,
  ): Promise<ThreadObject> {
    const body = parse(StartThreadWithoutMessage, input ?? {});
    await this.#screenTitle(actor.userId, channelId, body.name);
    const events: BusEvent[] = [];
    const thread = await this.#deps.storage.transaction(async (tx) => {
      const parent = await this.#parent(tx, actor.userId, channelId);
      const type = threadTypeIn(Number(parent.row.type), body.type);
      requireBits(
        parent.permissions,
        type === ChannelTypes.PrivateThread ? CreatePrivateThreads : CreatePublicThreads,
      );
      const row = await this.#insert(tx, actor, parent, {
        id: this.#deps.snowflakes.next(),
        type,
        name: body.name,
        auto_archive_duration: body.auto_archive_duration,
        rate_limit_per_user: body.rate_limit_per_user,
        invitable: body.invitable,
      });
      events.push(await this.#events.created(tx, row));
      if (type !== ChannelTypes.PrivateThread) {
        const parentPlace = await placeOf(tx, this.#deps.access, actor, channelId);
        events.push(
          await this.#systemMessage(tx, parentPlace, actor, MessageTypes.ThreadCreated, row.name, {
            type: MessageReferenceTypes.Default,
            channel_id: row.id,
            guild_id: row.guild_id,
          }),
        );
      }
      events.push(await this.#events.membersUpdate(tx, row, [actor.userId], []));
      await this.#audit(tx, actor.userId, row, AuditLogEvents.ThreadCreate, reason);
      return this.#object(tx, row.id, actor.userId);
    });
    await this.#publish(events);
    return thread;
  }

  /**
   * A forum or media post (Start Thread in Forum or Media Channel): SEND_MESSAGES in the parent, the first
   * message in the same transaction, `applied_tags` among the parent's `available_tags`, at least one when
   * the parent has REQUIRE_TAG (40067).
   */
  async #startPost(
    actor: Actor,
    channelId: string,
    input: unknown,
    uploads: readonly UploadedFile[],
    reason: string | null,
  ): Promise<ThreadObject & { message: MessageObject }> {
    const body = parse(StartForumThread, input ?? {});
    await this.#screenTitle(actor.userId, channelId, body.name);
    const events: BusEvent[] = [];
    let pending: PendingMessage | undefined;
    let created: ThreadObject;
    try {
      created = await this.#deps.storage.transaction(async (tx) => {
        const parent = await this.#parent(tx, actor.userId, channelId);
        requireBits(parent.permissions, SendMessages);
        const tags = checkTags(parent, [], body.applied_tags ?? []);
        if (tags.length === 0 && (Number(parent.row.flags) & ChannelFlags.RequireTag) !== 0)
          throw new HearthError('ForumTagRequired');
        // A post's first message takes only SUPPRESS_EMBEDS and SUPPRESS_NOTIFICATIONS (channel resource).
        if (((body.message.flags ?? 0) & ~POST_MESSAGE_FLAGS) !== 0)
          throw invalidForm('message.flags', FormErrors.invalid());
        // The forum's own slowmode limits how often a member starts posts (Threads topic, Forum fields).
        await this.#deps.messages.spendSlowmode(
          tx,
          actor,
          await placeOf(tx, this.#deps.access, actor, channelId),
        );
        const id = this.#deps.snowflakes.next();
        const row = await this.#insert(tx, actor, parent, {
          id,
          type: ChannelTypes.PublicThread,
          name: body.name,
          auto_archive_duration: body.auto_archive_duration,
          rate_limit_per_user: body.rate_limit_per_user,
          applied_tags: tags,
        });
        // A forum's `last_message_id` is its newest post (Threads topic, Forum and Media Channel Fields).
        await channelStore.updateChannel(tx, channelId, { last_message_id: id });
        events.push(await this.#events.created(tx, row));
        pending = await this.#deps.messages
          .createWithin(tx, actor, id, body.message, uploads, { id, firstPost: true })
          .catch(underMessage);
        events.push(await this.#events.membersUpdate(tx, row, [actor.userId], []));
        await this.#audit(tx, actor.userId, row, AuditLogEvents.ThreadCreate, reason);
        return this.#object(tx, id, actor.userId);
      });
    } catch (error) {
      await pending?.fail();
      throw error;
    }
    await this.#publish(events.slice(0, 1));
    const message = await pending!.finish();
    await this.#publish(events.slice(1));
    return { ...created, message };
  }

  // ---- Read ----

  /** GET /channels/{id} for a thread: the thread with the caller's `member`; undefined when no thread. */
  async get(userId: string, threadId: string): Promise<ThreadObject | undefined> {
    const row = await this.#settled(threadId);
    if (!row) return undefined;
    const db = this.#deps.storage.db;
    await standingIn(db, this.#deps.access, userId, row);
    return this.#object(db, threadId, userId);
  }

  // ---- Modify (PATCH /channels/{id}) ----

  /**
   * Modify Channel on a thread (Threads topic, Editing & Deleting Threads): `name`, `archived`,
   * `auto_archive_duration` and `applied_tags` by its creator or MANAGE_THREADS; unarchiving by a member
   * (MANAGE_THREADS when locked); `locked`, `rate_limit_per_user` and PINNED by MANAGE_THREADS. An
   * archived thread takes no change but its unarchiving (50083); a locked one none from others (160005).
   */
  async modify(
    userId: string,
    threadId: string,
    input: unknown,
    reason: string | null,
  ): Promise<ThreadObject | undefined> {
    if (!(await this.#settled(threadId))) return undefined;
    const body = parse(ModifyThread, input ?? {});
    if (body.name !== undefined && body.name !== null) {
      const current = await store.findThread(this.#deps.storage.db, threadId);
      if (current) await this.#screenTitle(userId, current.parent_id, body.name);
    }
    const events: BusEvent[] = [];
    const thread = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#thread(tx, threadId);
      const standing = await standingIn(tx, this.#deps.access, userId, row);
      const changes = this.#changes(standing, userId, body);
      await store.updateThread(tx, threadId, changes);
      const after = await this.#thread(tx, threadId);
      const diff = diffChanges(auditView(row), auditView(after), AUDITED_KEYS);
      if (diff.length > 0) {
        await this.#deps.auditLog.record(tx, {
          guildId: row.guild_id,
          userId,
          targetId: threadId,
          actionType: AuditLogEvents.ThreadUpdate,
          changes: diff,
          reason,
        });
        events.push(await this.#events.updated(tx, after));
        if (Number(row.archived) === 1 && Number(after.archived) === 0)
          events.push(...(await this.#events.memberUpdates(tx, after)));
      }
      return this.#object(tx, threadId, userId);
    });
    await this.#publish(events);
    return thread;
  }

  /** The columns a modify request changes, each checked against the caller's rights (see `modify`). */
  #changes(standing: ThreadStanding, userId: string, body: ModifyThread): Partial<Insertable<ThreadsTable>> {
    const { row, moderator } = standing;
    const now = this.#deps.clock.now();
    const owner = row.owner_id === userId;
    const locked = Number(row.locked) === 1;
    const archived = Number(row.archived) === 1;
    const changes: Partial<Insertable<ThreadsTable>> = {};
    const wants = <K extends keyof ModifyThread>(key: K) => body[key] !== undefined && body[key] !== null;
    const unarchiving = archived && body.archived === false;
    const editing =
      wants('name') ||
      wants('auto_archive_duration') ||
      wants('locked') ||
      wants('invitable') ||
      wants('rate_limit_per_user') ||
      wants('flags') ||
      wants('applied_tags') ||
      body.archived === true;
    if (archived && !unarchiving && editing) throw new HearthError('ThreadArchived');
    // Who may ask for what (Threads topic): 50013 before the lock's 160005.
    if (unarchiving && !(moderator || (!locked && (owner || standing.member))))
      throw new HearthError('MissingPermissions');
    if ((wants('name') || wants('auto_archive_duration') || body.archived === true) && !(owner || moderator))
      throw new HearthError('MissingPermissions');
    if ((wants('locked') || wants('rate_limit_per_user')) && !moderator)
      throw new HearthError('MissingPermissions');
    if ((wants('invitable') || wants('applied_tags')) && !(owner || moderator))
      throw new HearthError('MissingPermissions');
    if (
      wants('flags') &&
      ((body.flags ?? 0) & ChannelFlags.Pinned) !== (Number(row.flags) & ChannelFlags.Pinned) &&
      !moderator
    )
      throw new HearthError('MissingPermissions');
    if (locked && !moderator && editing) throw new HearthError('ThreadLocked');

    if (body.name !== undefined) changes.name = body.name;
    if (body.rate_limit_per_user !== undefined && body.rate_limit_per_user !== null)
      changes.rate_limit_per_user = body.rate_limit_per_user;
    if (body.locked !== undefined && body.locked !== null) changes.locked = body.locked ? 1 : 0;
    if (body.invitable !== undefined && body.invitable !== null && isPrivateThread(row))
      changes.invitable = body.invitable ? 1 : 0;
    if (wants('auto_archive_duration') && body.auto_archive_duration !== Number(row.auto_archive_duration)) {
      // A new duration counts as activity and moves archive_timestamp (Threads topic, Thread Fields).
      changes.auto_archive_duration = body.auto_archive_duration as number;
      changes.archive_timestamp = now;
      changes.last_activity_at = now;
    }
    const forum = isForum(Number(standing.parent.type));
    let flags = Number(row.flags);
    if (wants('flags') && forum)
      flags = (flags & ~ChannelFlags.Pinned) | ((body.flags ?? 0) & ChannelFlags.Pinned);
    if (wants('applied_tags') && forum) {
      const current = JSON.parse(row.applied_tags) as string[];
      const tags = checkTags(
        { row: standing.parent, permissions: standing.parentPermissions },
        current,
        body.applied_tags ?? [],
      );
      if (tags.length === 0 && (Number(standing.parent.flags) & ChannelFlags.RequireTag) !== 0)
        throw new HearthError('ForumTagRequired');
      changes.applied_tags = JSON.stringify(tags);
    }
    if (unarchiving) {
      changes.archived = 0;
      changes.archive_timestamp = now;
      changes.last_activity_at = now;
    } else if (body.archived === true && !archived) {
      changes.archived = 1;
      changes.archive_timestamp = now;
      // Archiving unpins a forum post (Threads topic, Forum and Media Channel Thread Fields).
      flags &= ~ChannelFlags.Pinned;
    }
    if (flags !== Number(row.flags)) changes.flags = flags;
    return changes;
  }

  // ---- Delete (DELETE /channels/{id}) ----

  /** Deletes a thread and its messages: MANAGE_THREADS in the parent; answers the thread as it was. */
  async delete(userId: string, threadId: string, reason: string | null): Promise<ThreadObject | undefined> {
    const found = await store.findThread(this.#deps.storage.db, threadId);
    if (!found) return undefined;
    const events: BusEvent[] = [];
    const thread = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#thread(tx, threadId);
      const standing = await standingIn(tx, this.#deps.access, userId, row);
      if (!standing.moderator) throw new HearthError('MissingPermissions');
      const object = await this.#object(tx, threadId, undefined);
      events.push(await this.#events.deleted(tx, row));
      await this.#deps.messages.channelDeleted(tx, threadId);
      await store.deleteThread(tx, threadId);
      await this.#audit(tx, userId, row, AuditLogEvents.ThreadDelete, reason, true);
      return object;
    });
    await this.#publish(events);
    return thread;
  }

  /** Inside a parent channel's deletion: its threads, their members and their messages go with it. */
  async parentDeleted(tx: Executor, channelId: string): Promise<void> {
    for (const threadId of await store.threadIdsOf(tx, channelId)) {
      await this.#deps.messages.channelDeleted(tx, threadId);
      await store.deleteThread(tx, threadId);
    }
  }

  // ---- Gaining access ----

  /**
   * Before a channel's overwrites change: who can view it now. After: THREAD_LIST_SYNC to each member who
   * gained access, with the channel's active threads they can see (Threads topic, Gaining Access to
   * Channels). Nothing when the channel has no active thread.
   */
  async accessChanging(tx: Executor, channelId: string): Promise<(tx: Executor) => Promise<BusEvent[]>> {
    const threads = await store.activeThreadsIn(tx, channelId);
    if (threads.length === 0) return async () => [];
    const guildId = threads[0]!.guild_id;
    const before = await this.#viewers(tx, guildId, channelId);
    return async (after) => {
      const events: BusEvent[] = [];
      for (const userId of await this.#viewers(after, guildId, channelId)) {
        if (before.has(userId)) continue;
        const visible: ThreadRow[] = [];
        for (const row of threads) {
          const standing = await standingIn(after, this.#deps.access, userId, row).catch(() => undefined);
          if (standing) visible.push(row);
        }
        events.push(await this.#events.listSync(after, guildId, [channelId], userId, visible));
      }
      return events;
    };
  }

  /**
   * Before a member's roles change: the channels with active threads they can view. After: one
   * THREAD_LIST_SYNC naming the channels they gained, with the threads there they can see.
   */
  async rolesChanging(
    tx: Executor,
    guildId: string,
    userId: string,
  ): Promise<(tx: Executor) => Promise<BusEvent[]>> {
    const threads = await store.activeThreads(tx, guildId);
    if (threads.length === 0) return async () => [];
    const parents = [...new Set(threads.map((row) => row.parent_id))];
    const before = await this.#viewable(tx, guildId, userId, parents);
    return async (after) => {
      const gained = [...(await this.#viewable(after, guildId, userId, parents))].filter(
        (id) => !before.has(id),
      );
      if (gained.length === 0) return [];
      const visible: ThreadRow[] = [];
      for (const row of threads) {
        if (!gained.includes(row.parent_id)) continue;
        if (await standingIn(after, this.#deps.access, userId, row).catch(() => undefined)) visible.push(row);
      }
      return [await this.#events.listSync(after, guildId, gained, userId, visible)];
    };
  }

  /**
   * Before a role's permissions change: the channels with active threads each member can view. After:
   * THREAD_LIST_SYNC to each member who gained some, with the threads there they can see.
   */
  async roleChanging(tx: Executor, guildId: string): Promise<(tx: Executor) => Promise<BusEvent[]>> {
    const threads = await store.activeThreads(tx, guildId);
    if (threads.length === 0) return async () => [];
    const parents = [...new Set(threads.map((row) => row.parent_id))];
    const members = await store.guildMemberIds(tx, guildId);
    const before = new Map<string, Set<string>>();
    for (const userId of members) before.set(userId, await this.#viewable(tx, guildId, userId, parents));
    return async (after) => {
      const events: BusEvent[] = [];
      for (const userId of members) {
        const seen = before.get(userId)!;
        const gained = [...(await this.#viewable(after, guildId, userId, parents))].filter(
          (id) => !seen.has(id),
        );
        if (gained.length === 0) continue;
        const visible: ThreadRow[] = [];
        for (const row of threads) {
          if (!gained.includes(row.parent_id)) continue;
          if (await standingIn(after, this.#deps.access, userId, row).catch(() => undefined))
            visible.push(row);
        }
        events.push(await this.#events.listSync(after, guildId, gained, userId, visible));
      }
      return events;
    };
  }

  /** Which of `channelIds` the member can view. */
  async #viewable(db: Executor, guildId: string, userId: string, channelIds: readonly string[]) {
    const access = await this.#deps.access.member(db, guildId, userId);
    const viewable = new Set<string>();
    for (const channelId of channelIds)
      if (has(await this.#deps.access.permissionsIn(db, access, channelId), ViewChannel))
        viewable.add(channelId);
    return viewable;
  }

  async #viewers(db: Executor, guildId: string, channelId: string): Promise<Set<string>> {
    const viewers = new Set<string>();
    for (const userId of await store.guildMemberIds(db, guildId)) {
      const access = await this.#deps.access.member(db, guildId, userId);
      if (has(await this.#deps.access.permissionsIn(db, access, channelId), ViewChannel)) viewers.add(userId);
    }
    return viewers;
  }

  // ---- Auto-archive ----

  /**
   * Archives every active thread (of one guild, or all) whose inactivity outlasted its
   * `auto_archive_duration`; its archive time is the moment the duration ran out. Driven by the clock:
   * a periodic sweep, and lazily before a thread or a list of threads is answered.
   */
  async archiveDue(guildId?: string): Promise<number> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      for (const row of await store.dueThreads(tx, this.#deps.clock.now(), guildId))
        events.push(await this.#archive(tx, row));
    });
    await this.#publish(events);
    return events.length;
  }

  async #archive(tx: Executor, row: ThreadRow): Promise<BusEvent> {
    const at = Number(row.last_activity_at) + Number(row.auto_archive_duration) * 60_000;
    await store.updateThread(tx, row.id, {
      archived: 1,
      archive_timestamp: at,
      flags: Number(row.flags) & ~ChannelFlags.Pinned,
    });
    return this.#events.updated(tx, await this.#thread(tx, row.id));
  }

  /** The thread, archived first when its time has come; undefined when there is none. */
  async #settled(threadId: string): Promise<ThreadRow | undefined> {
    const db = this.#deps.storage.db;
    const row = await store.findThread(db, threadId);
    if (!row || !store.isDue(row, this.#deps.clock.now())) return row;
    await this.archiveDue(row.guild_id);
    return store.findThread(db, threadId);
  }

  // ---- What the message core tells ----

  /**
   * A message was stored in a thread: counts (not for a post's first message, which shares the thread's
   * id), last message and activity; an archived thread is unarchived (Threads topic: sending unarchives).
   */
  async messageCreated(tx: Executor, place: Place, messageId: string): Promise<BusEvent[]> {
    const row = await store.findThread(tx, place.channelId);
    if (!row) return [];
    const now = this.#deps.clock.now();
    const first = messageId === row.id;
    const wasArchived = Number(row.archived) === 1 || store.isDue(row, now);
    await store.updateThread(tx, row.id, {
      last_message_id: messageId,
      last_activity_at: now,
      ...(first
        ? {}
        : {
            message_count: Number(row.message_count) + 1,
            total_message_sent: Number(row.total_message_sent) + 1,
          }),
      ...(wasArchived ? { archived: 0, archive_timestamp: now } : {}),
    });
    if (!wasArchived) return [];
    const after = await this.#thread(tx, row.id);
    return [await this.#events.updated(tx, after), ...(await this.#events.memberUpdates(tx, after))];
  }

  /** Messages of a thread were deleted: `message_count` follows, `total_message_sent` never does. */
  async messagesDeleted(tx: Executor, place: Place, messageIds: readonly string[]): Promise<void> {
    const row = await store.findThread(tx, place.channelId);
    if (!row) return;
    const counted = messageIds.filter((id) => id !== row.id).length;
    if (counted === 0) return;
    await store.updateThread(tx, row.id, {
      message_count: Math.max(0, Number(row.message_count) - counted),
    });
  }

  /** The thread each message among `messageIds` started (same id), for its `thread` field. */
  async threadsOf(
    db: Executor,
    messageIds: readonly string[],
  ): Promise<Map<string, Record<string, unknown>>> {
    const rows = await store.threadsAmong(db, messageIds);
    const counts = await store.memberCounts(
      db,
      rows.map((row) => row.id),
    );
    return new Map(rows.map((row) => [row.id, toThreadObject(row, counts.get(row.id) ?? 0)]));
  }

  // ---- Steps ----

  /** The channel a thread is started in: 10003 unknown (or a thread: 50024), 50001 without VIEW_CHANNEL. */
  async #parent(db: Executor, userId: string, channelId: string): Promise<Parent> {
    const row = await channelStore.findChannel(db, channelId);
    if (!row) {
      if (await store.findThread(db, channelId)) throw new HearthError('CannotExecuteOnChannelType');
      throw new HearthError('UnknownChannel');
    }
    const access = await this.#deps.access.member(db, row.guild_id, userId);
    const permissions = await this.#deps.access.permissionsIn(db, access, channelId);
    if (!has(permissions, ViewChannel)) throw new HearthError('MissingAccess');
    const type = Number(row.type);
    if (type !== ChannelTypes.GuildText && type !== ChannelTypes.GuildAnnouncement && !isForum(type))
      throw new HearthError('CannotExecuteOnChannelType');
    return { row, access, permissions };
  }

  /** Stores a new thread with its creator as first member; 160006 when the guild has no room. */
  async #insert(
    tx: Executor,
    actor: Actor,
    parent: Parent,
    thread: {
      id: string;
      type: number;
      name: string;
      auto_archive_duration?: number | null | undefined;
      rate_limit_per_user?: number | null | undefined;
      invitable?: boolean | null | undefined;
      applied_tags?: readonly string[];
    },
  ): Promise<ThreadRow> {
    const guildId = parent.row.guild_id;
    if ((await store.countActiveThreads(tx, guildId)) >= ThreadLimits.activeThreadsPerGuild)
      throw new HearthError('MaximumActiveThreads');
    const now = this.#deps.clock.now();
    const duration =
      thread.auto_archive_duration ??
      (parent.row.default_auto_archive_duration === null
        ? DEFAULT_THREAD_AUTO_ARCHIVE_DURATION
        : Number(parent.row.default_auto_archive_duration));
    await store.insertThread(tx, {
      id: thread.id,
      guild_id: guildId,
      parent_id: parent.row.id,
      type: thread.type,
      name: thread.name,
      owner_id: actor.userId,
      rate_limit_per_user:
        thread.rate_limit_per_user ?? Number(parent.row.default_thread_rate_limit_per_user ?? 0),
      last_message_id: null,
      last_pin_timestamp: null,
      auto_archive_duration: duration,
      archive_timestamp: now,
      invitable: thread.type === ChannelTypes.PrivateThread ? (thread.invitable === false ? 0 : 1) : null,
      applied_tags: JSON.stringify(thread.applied_tags ?? []),
      last_activity_at: now,
      created_at: now,
    });
    await store.addMember(tx, { thread_id: thread.id, user_id: actor.userId, join_timestamp: now });
    return this.#thread(tx, thread.id);
  }

  async #systemMessage(
    tx: Executor,
    place: Place,
    actor: Actor,
    type: number,
    content: string,
    reference: Record<string, unknown>,
  ): Promise<BusEvent> {
    return this.#deps.messages.postSystemMessage(tx, {
      place,
      authorId: actor.userId,
      type,
      content,
      reference,
    });
  }

  async #audit(
    tx: Executor,
    userId: string,
    row: ThreadRow,
    actionType: (typeof AuditLogEvents)['ThreadCreate' | 'ThreadDelete'],
    reason: string | null,
    deleted = false,
  ): Promise<void> {
    const view = auditView(row);
    const changes = (
      deleted ? diffChanges(view, undefined, AUDITED_KEYS) : diffChanges(undefined, view, AUDITED_KEYS)
    ).filter((change) => (deleted ? change.old_value : change.new_value) !== null);
    await this.#deps.auditLog.record(tx, {
      guildId: row.guild_id,
      userId,
      targetId: row.id,
      actionType,
      changes,
      reason,
    });
  }

  async #thread(db: Executor, threadId: string): Promise<ThreadRow> {
    const row = await store.findThread(db, threadId);
    if (!row) throw new HearthError('UnknownChannel');
    return row;
  }

  /** The thread object; with the viewer's thread member as `member` when they joined it. */
  async #object(db: Executor, threadId: string, viewerId: string | undefined): Promise<ThreadObject> {
    const row = await this.#thread(db, threadId);
    const count = await store.countMembers(db, threadId);
    const member = viewerId === undefined ? undefined : await store.findMember(db, threadId, viewerId);
    return toThreadObject(row, count, member ? toThreadMemberObject(member) : undefined);
  }

  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}

/** 50013 unless every bit is held. */
export function requireBits(permissions: bigint, bits: bigint): void {
  if (!has(permissions, bits)) throw new HearthError('MissingPermissions');
}

/**
 * The type of a thread started without a message: in a text channel PUBLIC (11) or PRIVATE (12, the
 * default); in an announcement channel ANNOUNCEMENT (10) only.
 */
function threadTypeIn(parentType: number, requested: number | null | undefined): number {
  if (isForum(parentType)) return ChannelTypes.PublicThread;
  const allowed: number[] =
    parentType === ChannelTypes.GuildAnnouncement
      ? [ChannelTypes.AnnouncementThread]
      : [ChannelTypes.PublicThread, ChannelTypes.PrivateThread];
  const type = requested ?? allowed[allowed.length - 1]!;
  if (!allowed.includes(type)) throw invalidForm('type', FormErrors.choices(allowed));
  return type;
}

/**
 * Tags of a forum post: ids among the parent's `available_tags` (50035 otherwise), each once; adding or
 * removing a `moderated` tag needs MANAGE_THREADS (forum tag object).
 */
function checkTags(
  parent: Pick<Parent, 'row' | 'permissions'>,
  current: readonly string[],
  requested: readonly string[],
): string[] {
  const available = new Map(
    (JSON.parse(parent.row.available_tags ?? '[]') as { id: string; moderated?: boolean }[]).map((tag) => [
      tag.id,
      tag,
    ]),
  );
  const tags = [...new Set(requested)];
  for (const [index, id] of tags.entries()) {
    const tag = available.get(id);
    if (!tag) throw invalidForm(`applied_tags.${index}`, FormErrors.invalid());
  }
  const changed = [
    ...tags.filter((id) => !current.includes(id)),
    ...current.filter((id) => !tags.includes(id)),
  ];
  if (changed.some((id) => available.get(id)?.moderated === true) && !has(parent.permissions, ManageThreads))
    throw new HearthError('MissingPermissions');
  return tags;
}

/** A form error of a post's first message, reported under `message` as the request nests it. */
function underMessage(error: unknown): never {
  if (error instanceof HearthError && error.error === 'InvalidFormBody' && error.errors)
    throw new HearthError('InvalidFormBody', { errors: { message: error.errors } });
  throw error;
}

/** A thread's audited values, as its audit entries name them. */
function auditView(row: ThreadRow): Record<string, unknown> {
  return {
    name: row.name,
    type: Number(row.type),
    archived: Number(row.archived) === 1,
    locked: Number(row.locked) === 1,
    auto_archive_duration: Number(row.auto_archive_duration),
    rate_limit_per_user: Number(row.rate_limit_per_user),
    invitable: row.invitable === null ? null : Number(row.invitable) === 1,
    flags: Number(row.flags),
    applied_tags: JSON.parse(row.applied_tags) as string[],
  };
}
