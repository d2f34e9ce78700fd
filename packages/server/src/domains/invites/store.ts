import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { InvitesTable } from '../../storage/schema.js';

/** Queries of the invites domain (0026_invites); every rule lives in the service. */

export type InviteRow = Selectable<InvitesTable>;

export async function insertInvite(db: Executor, row: Insertable<InvitesTable>): Promise<void> {
  await db.insertInto('invites').values(row).execute();
}

export function findInvite(db: Executor, code: string): Promise<InviteRow | undefined> {
  return db.selectFrom('invites').selectAll().where('code', '=', code).executeTakeFirst();
}

export async function codeTaken(db: Executor, code: string): Promise<boolean> {
  const row = await db.selectFrom('invites').select('code').where('code', '=', code).executeTakeFirst();
  return row !== undefined;
}

/** The invites still usable at `now` (not expired, not used up), oldest first. */
export function listInvites(
  db: Executor,
  where: { guildId: string } | { channelId: string },
  now: number,
): Promise<InviteRow[]> {
  let query = db.selectFrom('invites').selectAll();
  query =
    'guildId' in where
      ? query.where('guild_id', '=', where.guildId)
      : query.where('channel_id', '=', where.channelId);
  return query
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('max_uses', '=', 0), eb('uses', '<', eb.ref('max_uses'))]))
    .orderBy('created_at')
    .orderBy('code')
    .execute();
}

export async function countGuildInvites(db: Executor, guildId: string, now: number): Promise<number> {
  const row = await db
    .selectFrom('invites')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('guild_id', '=', guildId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/** An invite `unique: false` may answer instead of a new one: same channel, inviter and settings, still usable. */
export function findSimilar(
  db: Executor,
  like: {
    channelId: string;
    inviterId: string | null;
    maxAge: number;
    maxUses: number;
    temporary: number;
    targetType: number | null;
    targetUserId: string | null;
    targetApplicationId: string | null;
    roleIds: string;
  },
  now: number,
): Promise<InviteRow | undefined> {
  return db
    .selectFrom('invites')
    .selectAll()
    .where('channel_id', '=', like.channelId)
    .where((eb) =>
      eb.and([
        like.inviterId === null ? eb('inviter_id', 'is', null) : eb('inviter_id', '=', like.inviterId),
        like.targetType === null ? eb('target_type', 'is', null) : eb('target_type', '=', like.targetType),
        like.targetUserId === null
          ? eb('target_user_id', 'is', null)
          : eb('target_user_id', '=', like.targetUserId),
        like.targetApplicationId === null
          ? eb('target_application_id', 'is', null)
          : eb('target_application_id', '=', like.targetApplicationId),
      ]),
    )
    .where('max_age', '=', like.maxAge)
    .where('max_uses', '=', like.maxUses)
    .where('temporary', '=', like.temporary)
    .where('role_ids', '=', like.roleIds)
    .where('target_users_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => eb.or([eb('max_uses', '=', 0), eb('uses', '<', eb.ref('max_uses'))]))
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

/** Counts one use; answers false when a concurrent use took the last one first. */
export async function countUse(db: Executor, code: string): Promise<boolean> {
  const result = await db
    .updateTable('invites')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('code', '=', code)
    .where((eb) => eb.or([eb('max_uses', '=', 0), eb('uses', '<', eb.ref('max_uses'))]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteInvite(db: Executor, code: string): Promise<void> {
  await db.deleteFrom('invites').where('code', '=', code).execute();
}

// ---- Target users ----

export async function replaceTargetUsers(
  db: Executor,
  code: string,
  userIds: readonly string[],
  at: number,
): Promise<void> {
  await db.deleteFrom('invite_target_users').where('code', '=', code).execute();
  // In slices: SQLite caps the bound parameters of one statement.
  for (let i = 0; i < userIds.length; i += 400) {
    const slice = userIds.slice(i, i + 400).map((user_id) => ({ code, user_id }));
    await db.insertInto('invite_target_users').values(slice).execute();
  }
  await db
    .updateTable('invites')
    .set({ target_users_at: at, target_users_completed_at: at, target_users_total: userIds.length })
    .where('code', '=', code)
    .execute();
}

export async function targetUserIds(db: Executor, code: string): Promise<string[]> {
  const rows = await db
    .selectFrom('invite_target_users')
    .select('user_id')
    .where('code', '=', code)
    .execute();
  return rows.map((row) => row.user_id).sort(bySnowflake);
}

export async function isTargetUser(db: Executor, code: string, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('invite_target_users')
    .select('user_id')
    .where('code', '=', code)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

// ---- Temporary memberships ----

export async function recordTemporaryMember(
  db: Executor,
  guildId: string,
  userId: string,
  roleIds: readonly string[],
  at: number,
): Promise<void> {
  await db
    .insertInto('invite_temporary_members')
    .values({ guild_id: guildId, user_id: userId, role_ids: JSON.stringify(roleIds), joined_at: at })
    .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doNothing())
    .execute();
}

/** A user's temporary memberships, with the roles each invite gave. */
export function temporaryMembershipsOf(db: Executor, userId: string) {
  return db
    .selectFrom('invite_temporary_members')
    .select(['guild_id', 'role_ids'])
    .where('user_id', '=', userId)
    .execute();
}

export async function forgetTemporaryMember(db: Executor, guildId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('invite_temporary_members')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
}

function bySnowflake(a: string, b: string): number {
  const [x, y] = [BigInt(a), BigInt(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}
