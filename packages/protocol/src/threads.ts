/**
 * Threads (GUILDS.md §2.5; platform docs, Threads topic and channel resource): the thread channel types,
 * the limits of their routes, and what their permission rules name.
 */

/** Thread channel types: announcement (10), public (11) and private (12) threads. */
export const THREAD_CHANNEL_TYPES: readonly number[] = [10, 11, 12];

/** Channel types a thread may be started in: text, announcement, forum and media. */
export const THREAD_PARENT_TYPES: readonly number[] = [0, 5, 15, 16];

export const ThreadLimits = {
  /** `name`: 1–100 characters (as any channel name). */
  nameMin: 1,
  nameMax: 100,
  /** `applied_tags` of a forum or media thread: at most 5 (GUILDS.md §2.4). */
  appliedTagsMax: 5,
  /** `member_count` is approximate and stops counting at 50 (Threads topic, Thread Fields). */
  memberCountCap: 50,
  /** GET /channels/{id}/thread-members: `limit` 1–100, default 100 (GUILDS.md §2.5). */
  membersPageMax: 100,
  membersPageDefault: 100,
  /** Archived thread lists: `limit` (OAS: 2–100); the platform publishes no default, 50 is ours. */
  archivedPageMin: 2,
  archivedPageMax: 100,
  archivedPageDefault: 50,
  /** Active threads per guild (160006), and members per thread (30033, "1000"). */
  activeThreadsPerGuild: 1000,
  membersPerThread: 1000,
} as const;

/** Thread auto-archive durations in minutes (GUILDS.md §2.5); the default when none is asked is a day. */
export const DEFAULT_THREAD_AUTO_ARCHIVE_DURATION = 1440;

/**
 * Gateway dispatches of threads (gateway events; GUILDS.md §7): all need the GUILDS intent, and a
 * THREAD_MEMBERS_UPDATE about other users needs GUILD_MEMBERS too.
 */
export const ThreadDispatches = {
  ThreadCreate: 'THREAD_CREATE',
  ThreadUpdate: 'THREAD_UPDATE',
  ThreadDelete: 'THREAD_DELETE',
  ThreadListSync: 'THREAD_LIST_SYNC',
  ThreadMemberUpdate: 'THREAD_MEMBER_UPDATE',
  ThreadMembersUpdate: 'THREAD_MEMBERS_UPDATE',
} as const;
