import type { Executor } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import * as memberStore from '../guilds/members-store.js';
import { toMemberObject } from '../guilds/objects.js';

/**
 * The guild member object with its `user`, as MESSAGE_REACTION_ADD and TYPING_START carry it (gateway
 * events); undefined when the user is no longer a member.
 */
export async function memberObjectOf(
  db: Executor,
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> },
  guildId: string,
  userId: string,
): Promise<Record<string, unknown> | undefined> {
  const [member, user] = await Promise.all([
    memberStore.findMember(db, guildId, userId),
    users.getUserIn(db, userId),
  ]);
  if (!member || !user) return undefined;
  const roles = (await memberStore.roleIdsOf(db, guildId, [userId])).get(userId) ?? [];
  return toMemberObject(member, roles, toUserObject(user));
}
