import { ThreadDispatches, ThreadLimits } from '@hearth/protocol';
import type { BusEvent } from '../../bus/bus.js';
import type { Executor } from '../../storage/database.js';
import type { User } from '../accounts/service.js';
import { memberObjectOf } from '../channel-messages/message-events.js';
import type { GuildAccess } from '../guilds/access.js';
import { threadAudience } from './access.js';
import { toThreadMemberObject, toThreadObject } from './objects.js';
import type { ThreadRow } from './store.js';
import * as store from './store.js';

export interface ThreadEventsDeps {
  access: GuildAccess;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
}

/**
 * The gateway dispatches of threads (gateway events, Threads topic): built inside the change's transaction
 * and published once it committed. Each goes to those who can see the thread: viewers of the parent, and
 * for a private thread only its members and those who moderate threads there.
 */
export class ThreadEvents {
  readonly #deps: ThreadEventsDeps;

  constructor(deps: ThreadEventsDeps) {
    this.#deps = deps;
  }

  /** THREAD_CREATE of a new thread (`newly_created`). */
  async created(db: Executor, row: ThreadRow): Promise<BusEvent> {
    return {
      type: ThreadDispatches.ThreadCreate,
      data: { ...(await this.#object(db, row)), newly_created: true },
      audience: await threadAudience(db, this.#deps.access, row),
    };
  }

  /** THREAD_CREATE to a user added to a thread, with their thread member (Threads topic, Thread Access). */
  async joined(db: Executor, row: ThreadRow, userId: string): Promise<BusEvent> {
    const member = await store.findMember(db, row.id, userId);
    return {
      type: ThreadDispatches.ThreadCreate,
      data: {
        ...(await this.#object(db, row)),
        ...(member ? { member: toThreadMemberObject(member) } : {}),
      },
      audience: { guildId: row.guild_id, users: [userId] },
    };
  }

  async updated(db: Executor, row: ThreadRow): Promise<BusEvent> {
    return {
      type: ThreadDispatches.ThreadUpdate,
      data: await this.#object(db, row),
      audience: await threadAudience(db, this.#deps.access, row),
    };
  }

  /** THREAD_DELETE: only `id`, `guild_id`, `parent_id` and `type` (gateway events, Thread Delete). */
  async deleted(db: Executor, row: ThreadRow): Promise<BusEvent> {
    return {
      type: ThreadDispatches.ThreadDelete,
      data: { id: row.id, guild_id: row.guild_id, parent_id: row.parent_id, type: Number(row.type) },
      audience: await threadAudience(db, this.#deps.access, row),
    };
  }

  /**
   * THREAD_MEMBERS_UPDATE: who was added (thread members with their guild member) and removed. The users
   * removed still hear of it; the gateway sends it to bots without GUILD_MEMBERS only when it names them.
   */
  async membersUpdate(
    db: Executor,
    row: ThreadRow,
    added: readonly string[],
    removed: readonly string[],
  ): Promise<BusEvent> {
    const addedMembers: Record<string, unknown>[] = [];
    for (const userId of added) {
      const member = await store.findMember(db, row.id, userId);
      if (!member) continue;
      const guildMember = await memberObjectOf(db, this.#deps.users, row.guild_id, userId);
      addedMembers.push({ ...toThreadMemberObject(member, guildMember), guild_id: row.guild_id });
    }
    const audience = await threadAudience(db, this.#deps.access, row);
    return {
      type: ThreadDispatches.ThreadMembersUpdate,
      data: {
        id: row.id,
        guild_id: row.guild_id,
        member_count: Math.min(await store.countMembers(db, row.id), ThreadLimits.memberCountCap),
        ...(addedMembers.length > 0 ? { added_members: addedMembers } : {}),
        ...(removed.length > 0 ? { removed_member_ids: [...removed] } : {}),
      },
      audience: audience.users
        ? { ...audience, users: [...new Set([...audience.users, ...removed])] }
        : audience,
    };
  }

  /** THREAD_MEMBER_UPDATE to each member of a thread just unarchived (Threads topic, Unarchiving a Thread). */
  async memberUpdates(db: Executor, row: ThreadRow): Promise<BusEvent[]> {
    return (await store.members(db, row.id)).map((member) => ({
      type: ThreadDispatches.ThreadMemberUpdate,
      data: { ...toThreadMemberObject(member), guild_id: row.guild_id },
      audience: { guildId: row.guild_id, users: [member.user_id] },
    }));
  }

  /**
   * THREAD_LIST_SYNC to one user who gained access to channels: their active threads they can see, and their
   * memberships among them (gateway events, Thread List Sync).
   */
  async listSync(
    db: Executor,
    guildId: string,
    channelIds: readonly string[],
    userId: string,
    rows: readonly ThreadRow[],
  ): Promise<BusEvent> {
    const ids = rows.map((row) => row.id);
    const memberships = await store.membershipsOf(db, ids, userId);
    const threads: Record<string, unknown>[] = [];
    for (const row of rows) threads.push(await this.#object(db, row));
    return {
      type: ThreadDispatches.ThreadListSync,
      data: {
        guild_id: guildId,
        channel_ids: [...channelIds],
        threads,
        members: memberships.map((member) => toThreadMemberObject(member)),
      },
      audience: { guildId, users: [userId] },
    };
  }

  async #object(db: Executor, row: ThreadRow): Promise<Record<string, unknown>> {
    return toThreadObject(row, await store.countMembers(db, row.id));
  }
}
