import { type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { EntitlementsTable, SkusTable, SubscriptionsTable } from '../../storage/schema.js';

export type SkuRow = Selectable<SkusTable>;
export type EntitlementRow = Selectable<EntitlementsTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;

export async function insertSku(db: Executor, row: Insertable<SkusTable>): Promise<void> {
  await db.insertInto('skus').values(row).execute();
}

export async function findSku(db: Executor, id: string): Promise<SkuRow | undefined> {
  return db.selectFrom('skus').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listSkus(db: Executor, applicationId: string): Promise<SkuRow[]> {
  return db
    .selectFrom('skus')
    .selectAll()
    .where('application_id', '=', applicationId)
    .orderBy('id')
    .execute();
}

export async function insertEntitlement(db: Executor, row: Insertable<EntitlementsTable>): Promise<void> {
  await db.insertInto('entitlements').values(row).execute();
}

export async function findEntitlement(db: Executor, id: string): Promise<EntitlementRow | undefined> {
  return db.selectFrom('entitlements').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateEntitlement(
  db: Executor,
  id: string,
  changes: Updateable<EntitlementsTable>,
): Promise<void> {
  await db.updateTable('entitlements').set(changes).where('id', '=', id).execute();
}

export interface EntitlementFilter {
  applicationId: string;
  userId?: string | undefined;
  guildId?: string | undefined;
  skuIds?: string[] | undefined;
  before?: string | undefined;
  after?: string | undefined;
  limit: number;
  /** Entitlements whose `ends_at` has passed at this instant are left out. */
  endedBefore?: number | undefined;
  excludeDeleted: boolean;
  excludeConsumed?: boolean | undefined;
}

/** Ids are snowflakes: compared by length, then as text, they sort as numbers on both engines. */
export async function listEntitlements(db: Executor, filter: EntitlementFilter): Promise<EntitlementRow[]> {
  let query = db.selectFrom('entitlements').selectAll().where('application_id', '=', filter.applicationId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.guildId !== undefined) query = query.where('guild_id', '=', filter.guildId);
  if (filter.skuIds !== undefined) query = query.where('sku_id', 'in', filter.skuIds);
  if (filter.excludeDeleted) query = query.where('deleted', '=', 0);
  if (filter.excludeConsumed) query = query.where('consumed', '=', 0);
  if (filter.endedBefore !== undefined) {
    const now = filter.endedBefore;
    query = query.where((eb) => eb.or([eb('ends_at', 'is', null), eb('ends_at', '>', now)]));
  }
  if (filter.after !== undefined) query = query.where(idAfter(filter.after));
  if (filter.before !== undefined) query = query.where(idBefore(filter.before));
  const order = direction(filter);
  const rows = await query.orderBy(idLength, order).orderBy('id', order).limit(filter.limit).execute();
  return order === 'desc' ? rows.reverse() : rows;
}

export async function insertSubscription(db: Executor, row: Insertable<SubscriptionsTable>): Promise<void> {
  await db.insertInto('subscriptions').values(row).execute();
}

export async function findSubscription(db: Executor, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function updateSubscription(
  db: Executor,
  id: string,
  changes: Updateable<SubscriptionsTable>,
): Promise<void> {
  await db.updateTable('subscriptions').set(changes).where('id', '=', id).execute();
}

/** Active and ending subscriptions whose period ended by `now`: due for renewal or for their end. */
export async function dueSubscriptions(
  db: Executor,
  now: number,
  statuses: readonly number[],
): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('current_period_end', '<=', now)
    .where('status', 'in', [...statuses])
    .orderBy('current_period_end')
    .execute();
}

/** Subscriptions holding the SKU (its id is in the JSON `sku_ids`), optionally of one user. */
export async function listSubscriptions(
  db: Executor,
  filter: {
    skuId: string;
    userId?: string | undefined;
    before?: string | undefined;
    after?: string | undefined;
    limit: number;
  },
): Promise<SubscriptionRow[]> {
  let query = db.selectFrom('subscriptions').selectAll().where('sku_ids', 'like', `%"${filter.skuId}"%`);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.after !== undefined) query = query.where(idAfter(filter.after));
  if (filter.before !== undefined) query = query.where(idBefore(filter.before));
  const order = direction(filter);
  const rows = await query.orderBy(idLength, order).orderBy('id', order).limit(filter.limit).execute();
  return order === 'desc' ? rows.reverse() : rows;
}

/**
 * Snowflake-id order: by length, then as text, which is numeric order on both engines (ids are text).
 * `after` reads ascending from it, `before` descending from it (then reversed), neither ascending.
 */
const idAfter = (id: string) =>
  sql<boolean>`(length(id) > ${id.length} or (length(id) = ${id.length} and id > ${id}))`;
const idBefore = (id: string) =>
  sql<boolean>`(length(id) < ${id.length} or (length(id) = ${id.length} and id < ${id}))`;
const idLength = sql`length(id)`;

function direction(page: { before?: string | undefined; after?: string | undefined }): 'asc' | 'desc' {
  return page.before !== undefined && page.after === undefined ? 'desc' : 'asc';
}
