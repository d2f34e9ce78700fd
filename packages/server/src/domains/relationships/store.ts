import type { Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { GameRelationshipsTable, RelationshipsTable } from '../../storage/schema.js';

export type RelationshipRow = Selectable<RelationshipsTable>;
export type GameRelationshipRow = Selectable<GameRelationshipsTable>;

export function getRelationship(
  db: Executor,
  userId: string,
  targetId: string,
): Promise<RelationshipRow | undefined> {
  return db
    .selectFrom('relationships')
    .selectAll()
    .where('user_id', '=', userId)
    .where('target_id', '=', targetId)
    .executeTakeFirst();
}

export function listRelationships(db: Executor, userId: string): Promise<RelationshipRow[]> {
  return db
    .selectFrom('relationships')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('since')
    .orderBy('target_id')
    .execute();
}

export async function putRelationship(db: Executor, row: RelationshipRow): Promise<void> {
  await db
    .insertInto('relationships')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['user_id', 'target_id']).doUpdateSet({ type: row.type, since: row.since }),
    )
    .execute();
}

/** Deletes A's view of B; answers the row it deleted. */
export async function deleteRelationship(
  db: Executor,
  userId: string,
  targetId: string,
): Promise<RelationshipRow | undefined> {
  const row = await getRelationship(db, userId, targetId);
  if (row) {
    await db
      .deleteFrom('relationships')
      .where('user_id', '=', userId)
      .where('target_id', '=', targetId)
      .execute();
  }
  return row;
}

export async function countOfType(db: Executor, userId: string, type: number): Promise<number> {
  const row = await db
    .selectFrom('relationships')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .where('type', '=', type)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function targetsOfType(db: Executor, userId: string, type: number): Promise<string[]> {
  const rows = await db
    .selectFrom('relationships')
    .select('target_id')
    .where('user_id', '=', userId)
    .where('type', '=', type)
    .execute();
  return rows.map((row) => row.target_id);
}

export function getGameRelationship(
  db: Executor,
  applicationId: string,
  userId: string,
  targetId: string,
): Promise<GameRelationshipRow | undefined> {
  return db
    .selectFrom('game_relationships')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('user_id', '=', userId)
    .where('target_id', '=', targetId)
    .executeTakeFirst();
}

export function listGameRelationships(
  db: Executor,
  applicationId: string,
  userId: string,
): Promise<GameRelationshipRow[]> {
  return db
    .selectFrom('game_relationships')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('user_id', '=', userId)
    .orderBy('since')
    .orderBy('target_id')
    .execute();
}

export async function putGameRelationship(db: Executor, row: GameRelationshipRow): Promise<void> {
  await db
    .insertInto('game_relationships')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['application_id', 'user_id', 'target_id'])
        .doUpdateSet({ type: row.type, since: row.since }),
    )
    .execute();
}

export async function deleteGameRelationship(
  db: Executor,
  applicationId: string,
  userId: string,
  targetId: string,
): Promise<GameRelationshipRow | undefined> {
  const row = await getGameRelationship(db, applicationId, userId, targetId);
  if (row) {
    await db
      .deleteFrom('game_relationships')
      .where('application_id', '=', applicationId)
      .where('user_id', '=', userId)
      .where('target_id', '=', targetId)
      .execute();
  }
  return row;
}

/** Every game relationship between two users, in every application, both directions: what a block ends. */
export async function deleteGameRelationshipsBetween(
  db: Executor,
  a: string,
  b: string,
): Promise<GameRelationshipRow[]> {
  const rows = await db
    .selectFrom('game_relationships')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb.and([eb('user_id', '=', a), eb('target_id', '=', b)]),
        eb.and([eb('user_id', '=', b), eb('target_id', '=', a)]),
      ]),
    )
    .execute();
  if (rows.length > 0) {
    await db
      .deleteFrom('game_relationships')
      .where((eb) =>
        eb.or([
          eb.and([eb('user_id', '=', a), eb('target_id', '=', b)]),
          eb.and([eb('user_id', '=', b), eb('target_id', '=', a)]),
        ]),
      )
      .execute();
  }
  return rows;
}

export async function gameFriendIds(db: Executor, applicationId: string, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('game_relationships')
    .select('target_id')
    .where('application_id', '=', applicationId)
    .where('user_id', '=', userId)
    .where('type', '=', 1)
    .execute();
  return rows.map((row) => row.target_id);
}

/** The applications in which `userId` has game friends, with those friends. */
export async function allGameFriends(
  db: Executor,
  userId: string,
): Promise<Array<{ application_id: string; target_id: string }>> {
  return db
    .selectFrom('game_relationships')
    .select(['application_id', 'target_id'])
    .where('user_id', '=', userId)
    .where('type', '=', 1)
    .execute();
}

// ---- Account links (PROTOCOL.md §B.3) ----

/** Every platform relationship row that names `userId`, its own and others' views of it, oldest first. */
export function relationshipsInvolving(db: Executor, userId: string): Promise<RelationshipRow[]> {
  return db
    .selectFrom('relationships')
    .selectAll()
    .where((eb) => eb.or([eb('user_id', '=', userId), eb('target_id', '=', userId)]))
    .orderBy('since')
    .orderBy('user_id')
    .orderBy('target_id')
    .execute();
}

/** The rows of users who hold a relationship of `type` towards `targetId` (blockers, with BLOCKED). */
export function holdersOfType(db: Executor, targetId: string, type: number): Promise<RelationshipRow[]> {
  return db
    .selectFrom('relationships')
    .selectAll()
    .where('target_id', '=', targetId)
    .where('type', '=', type)
    .execute();
}

/**
 * Hands one application's game relationships of `from`, both directions, to `to`. Only for a `to` that
 * has none there yet (a provisional account created in the same transaction): no key can collide.
 */
export async function moveGameRelationships(
  db: Executor,
  applicationId: string,
  from: string,
  to: string,
): Promise<void> {
  await db
    .updateTable('game_relationships')
    .set({ user_id: to })
    .where('application_id', '=', applicationId)
    .where('user_id', '=', from)
    .execute();
  await db
    .updateTable('game_relationships')
    .set({ target_id: to })
    .where('application_id', '=', applicationId)
    .where('target_id', '=', from)
    .execute();
}
