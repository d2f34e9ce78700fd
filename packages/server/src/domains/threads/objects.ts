import { ThreadLimits } from '@hearth/protocol';
import { isPrivateThread } from './access.js';
import type { ThreadMemberRow, ThreadRow } from './store.js';

/**
 * The wire shapes of threads (GUILDS.md §2.2, §2.5; OAS `ThreadResponse`, `ThreadMemberResponse`): a
 * thread is a channel object with `thread_metadata`, counts and, on some routes, the caller's `member`.
 */

const iso = (ms: number | string | null): string | null =>
  ms === null ? null : new Date(Number(ms)).toISOString();

export interface ThreadMemberObject {
  id: string;
  user_id: string;
  join_timestamp: string;
  flags: number;
  member?: Record<string, unknown>;
}

export function toThreadMemberObject(
  row: ThreadMemberRow,
  member?: Record<string, unknown>,
): ThreadMemberObject {
  return {
    id: row.thread_id,
    user_id: row.user_id,
    join_timestamp: iso(row.join_timestamp) as string,
    flags: Number(row.flags),
    ...(member === undefined ? {} : { member }),
  };
}

export interface ThreadMetadata {
  archived: boolean;
  auto_archive_duration: number;
  archive_timestamp: string;
  locked: boolean;
  invitable?: boolean;
  create_timestamp: string;
}

export interface ThreadObject extends Record<string, unknown> {
  id: string;
  type: number;
  guild_id: string;
  parent_id: string;
  owner_id: string;
  name: string;
  flags: number;
  last_message_id: string | null;
  last_pin_timestamp: string | null;
  rate_limit_per_user: number;
  thread_metadata: ThreadMetadata;
  message_count: number;
  member_count: number;
  total_message_sent: number;
  applied_tags: string[];
  member?: ThreadMemberObject;
}

/** A thread's channel object; `memberCount` is capped at 50 as the platform's is (Threads topic). */
export function toThreadObject(
  row: ThreadRow,
  memberCount: number,
  member?: ThreadMemberObject,
): ThreadObject {
  return {
    id: row.id,
    type: Number(row.type),
    guild_id: row.guild_id,
    parent_id: row.parent_id,
    owner_id: row.owner_id,
    name: row.name,
    flags: Number(row.flags),
    last_message_id: row.last_message_id,
    last_pin_timestamp: iso(row.last_pin_timestamp),
    rate_limit_per_user: Number(row.rate_limit_per_user),
    thread_metadata: {
      archived: Number(row.archived) === 1,
      auto_archive_duration: Number(row.auto_archive_duration),
      archive_timestamp: iso(row.archive_timestamp) as string,
      locked: Number(row.locked) === 1,
      ...(isPrivateThread(row) ? { invitable: Number(row.invitable ?? 1) === 1 } : {}),
      create_timestamp: iso(row.created_at) as string,
    },
    message_count: Number(row.message_count),
    member_count: Math.min(memberCount, ThreadLimits.memberCountCap),
    total_message_sent: Number(row.total_message_sent),
    applied_tags: JSON.parse(row.applied_tags) as string[],
    ...(member === undefined ? {} : { member }),
  };
}
