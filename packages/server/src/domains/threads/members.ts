import {
  ChannelTypes,
  GatewayIntents,
  PermissionFlags,
  PRIVILEGED_INTENT_FLAGS,
  ThreadLimits,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { User } from '../accounts/service.js';
import { memberObjectOf } from '../channel-messages/message-events.js';
import type { GuildAccess } from '../guilds/access.js';
import { has } from '../guilds/permissions.js';
import { standingIn, type ThreadStanding } from './access.js';
import type { ThreadEvents } from './events.js';
import { type ThreadMemberObject, toThreadMemberObject } from './objects.js';
import { GetThreadMemberQuery, ListThreadMembersQuery } from './schemas.js';
import * as store from './store.js';

export interface ThreadMembersDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  access: GuildAccess;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  events: ThreadEvents;
  /** Archives the guild's threads whose time has come, before membership is read or changed. */
  archiveDue: (guildId: string) => Promise<unknown>;
  /** An application's flags: its GUILD_MEMBERS approval decides whether its bot lists thread members. */
  applicationFlags: (db: Executor, applicationId: string) => Promise<bigint | undefined>;
}

/** Who lists thread members: a bot's application must be approved for GUILD_MEMBERS. */
export interface MembersReader {
  userId: string;
  applicationId?: string | undefined;
  bot: boolean;
}

const { ViewChannel, SendMessages } = PermissionFlags;

/**
 * Thread members (GUILDS.md §2.5; channel resource, Join / Add / Leave / Remove / Get / List Thread
 * Member(s)). Joining, adding and removing refuse an archived thread (50083).
 */
export class ThreadMembersService {
  readonly #deps: ThreadMembersDeps;

  constructor(deps: ThreadMembersDeps) {
    this.#deps = deps;
  }

  /** PUT /channels/{id}/thread-members/@me: THREAD_MEMBERS_UPDATE, and THREAD_CREATE to the joiner. */
  async join(userId: string, threadId: string): Promise<void> {
    await this.#add(userId, threadId, userId);
  }

  /**
   * PUT /channels/{id}/thread-members/{user_id}: the adder must be able to send in the thread; a private
   * thread that is not `invitable` takes additions only from moderators; the user must be a guild member
   * who can view the parent. Adding a member again changes nothing (204).
   */
  async add(actorId: string, threadId: string, userId: string): Promise<void> {
    await this.#add(actorId, threadId, userId);
  }

  async #add(actorId: string, threadId: string, userId: string): Promise<void> {
    const events = await this.#change(
      threadId,
      async (tx, standing) => {
        const { row } = standing;
        const self = actorId === userId;
        if (!self) {
          if (!has(standing.permissions, SendMessages)) throw new HearthError('MissingPermissions');
          if (
            Number(row.type) === ChannelTypes.PrivateThread &&
            Number(row.invitable ?? 1) === 0 &&
            !standing.moderator
          )
            throw new HearthError('MissingPermissions');
          await this.#requireViewer(tx, row.guild_id, row.parent_id, userId);
        }
        if (await store.findMember(tx, threadId, userId)) return [];
        if ((await store.countMembers(tx, threadId)) >= ThreadLimits.membersPerThread)
          throw new HearthError('MaximumThreadParticipants');
        await store.addMember(tx, {
          thread_id: threadId,
          user_id: userId,
          join_timestamp: this.#deps.clock.now(),
        });
        return [
          await this.#deps.events.joined(tx, row, userId),
          await this.#deps.events.membersUpdate(tx, row, [userId], []),
        ];
      },
      actorId,
    );
    await this.#publish(events);
  }

  /** DELETE /channels/{id}/thread-members/@me: leaves; 204 whether or not a member. */
  async leave(userId: string, threadId: string): Promise<void> {
    await this.#remove(userId, threadId, userId);
  }

  /** DELETE /channels/{id}/thread-members/{user_id}: MANAGE_THREADS, or the creator of a private thread. */
  async remove(actorId: string, threadId: string, userId: string): Promise<void> {
    await this.#remove(actorId, threadId, userId);
  }

  async #remove(actorId: string, threadId: string, userId: string): Promise<void> {
    const events = await this.#change(
      threadId,
      async (tx, standing) => {
        const { row } = standing;
        if (actorId !== userId) {
          const creator = Number(row.type) === ChannelTypes.PrivateThread && row.owner_id === actorId;
          if (!standing.moderator && !creator) throw new HearthError('MissingPermissions');
        }
        if (!(await store.removeMember(tx, threadId, userId))) return [];
        return [await this.#deps.events.membersUpdate(tx, row, [], [userId])];
      },
      actorId,
    );
    await this.#publish(events);
  }

  /** GET /channels/{id}/thread-members/{user_id}: 10007 when not a member; `with_member` adds the member. */
  async get(actorId: string, threadId: string, userId: string, query: unknown): Promise<ThreadMemberObject> {
    const { with_member = false } = parse(GetThreadMemberQuery, query ?? {});
    const db = this.#deps.storage.db;
    const standing = await this.#standing(db, actorId, threadId);
    const member = await store.findMember(db, threadId, userId);
    if (!member) throw new HearthError('UnknownMember');
    return toThreadMemberObject(
      member,
      with_member ? await this.#guildMember(db, standing, userId) : undefined,
    );
  }

  /**
   * GET /channels/{id}/thread-members: by user id, `after` one, at most `limit` (100). Restricted by the
   * GUILD_MEMBERS privileged intent: a bot whose application is not approved for it gets 50001.
   */
  async list(reader: MembersReader, threadId: string, query: unknown): Promise<ThreadMemberObject[]> {
    const actorId = reader.userId;
    const {
      with_member = false,
      after,
      limit = ThreadLimits.membersPageDefault,
    } = parse(ListThreadMembersQuery, query ?? {});
    const db = this.#deps.storage.db;
    const standing = await this.#standing(db, actorId, threadId);
    if (reader.bot && !(await this.#approvedForMembers(db, reader.applicationId)))
      throw new HearthError('MissingAccess');
    const rows = (await store.members(db, threadId))
      .filter((row) => after === undefined || BigInt(row.user_id) > BigInt(after))
      .slice(0, limit);
    const out: ThreadMemberObject[] = [];
    for (const row of rows)
      out.push(
        toThreadMemberObject(
          row,
          with_member ? await this.#guildMember(db, standing, row.user_id) : undefined,
        ),
      );
    return out;
  }

  // ---- Steps ----

  async #approvedForMembers(db: Executor, applicationId: string | undefined): Promise<boolean> {
    if (applicationId === undefined) return false;
    const flags = (await this.#deps.applicationFlags(db, applicationId)) ?? 0n;
    const approval = PRIVILEGED_INTENT_FLAGS.find((entry) => entry.intent === GatewayIntents.GuildMembers);
    return approval?.flags.some((flag) => (flags & flag) === flag) ?? false;
  }

  /** One membership change: the thread (10003), the actor's standing, not archived (50083). */
  async #change(
    threadId: string,
    work: (tx: Executor, standing: ThreadStanding) => Promise<BusEvent[]>,
    actorId: string,
  ): Promise<BusEvent[]> {
    const found = await store.findThread(this.#deps.storage.db, threadId);
    if (!found) throw new HearthError('UnknownChannel');
    await this.#deps.archiveDue(found.guild_id);
    return this.#deps.storage.transaction(async (tx) => {
      const standing = await this.#standing(tx, actorId, threadId);
      if (standing.archived) throw new HearthError('ThreadArchived');
      return work(tx, standing);
    });
  }

  async #standing(db: Executor, userId: string, threadId: string): Promise<ThreadStanding> {
    const row = await store.findThread(db, threadId);
    if (!row) throw new HearthError('UnknownChannel');
    return standingIn(db, this.#deps.access, userId, row);
  }

  /** 10007 unless the user is a guild member; 50001 unless they can view the parent channel. */
  async #requireViewer(db: Executor, guildId: string, parentId: string, userId: string): Promise<void> {
    let permissions: bigint;
    try {
      const access = await this.#deps.access.member(db, guildId, userId);
      permissions = await this.#deps.access.permissionsIn(db, access, parentId);
    } catch (error) {
      if (error instanceof HearthError && error.error === 'MissingAccess')
        throw new HearthError('UnknownMember');
      throw error;
    }
    if (!has(permissions, ViewChannel)) throw new HearthError('MissingAccess');
  }

  async #guildMember(
    db: Executor,
    standing: ThreadStanding,
    userId: string,
  ): Promise<Record<string, unknown> | undefined> {
    return memberObjectOf(db, this.#deps.users, standing.row.guild_id, userId);
  }

  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}
