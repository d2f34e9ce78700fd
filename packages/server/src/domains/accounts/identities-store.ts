import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import { prepared, preparedInsert } from '../../storage/prepared.js';
import type { ExternalIdentitiesTable, IdentityProvidersTable, UserBansTable } from '../../storage/schema.js';

export type IdentityRow = Selectable<ExternalIdentitiesTable>;
export type ProviderRow = Selectable<IdentityProvidersTable>;
export type BanRow = Selectable<UserBansTable>;

export interface IdentityKey {
  applicationId: string;
  providerType: string;
  providerId: string;
  externalUserId: string;
}

/** On every provisional token request: prepared. */
const findIdentityRow = prepared(
  4,
  (db, applicationId: string, providerType: string, providerId: string, externalUserId: string) =>
    db
      .selectFrom('external_identities')
      .selectAll()
      .where('application_id', '=', applicationId)
      .where('provider_type', '=', providerType)
      .where('provider_id', '=', providerId)
      .where('external_user_id', '=', externalUserId),
);

export function findIdentity(db: Executor, key: IdentityKey): Promise<IdentityRow | undefined> {
  return findIdentityRow(db, key.applicationId, key.providerType, key.providerId, key.externalUserId);
}

/** On every provisional token request: the account behind an identity, and what the request checks of it. */
export const findIdentityAccount: (
  db: Executor,
  key: IdentityKey,
) => Promise<{ user_id: string; provisional: number | null; global_name: string | null } | undefined> = (
  db,
  key,
) => findIdentityAccountRow(db, key.applicationId, key.providerType, key.providerId, key.externalUserId);

const findIdentityAccountRow = prepared(
  4,
  (db, applicationId: string, providerType: string, providerId: string, externalUserId: string) =>
    db
      .selectFrom('external_identities')
      .leftJoin('users', 'users.id', 'external_identities.user_id')
      .select(['external_identities.user_id', 'users.provisional', 'users.global_name'])
      .where('external_identities.application_id', '=', applicationId)
      .where('external_identities.provider_type', '=', providerType)
      .where('external_identities.provider_id', '=', providerId)
      .where('external_identities.external_user_id', '=', externalUserId),
);

/** On every new provisional account: prepared. */
export const insertIdentity: (db: Executor, row: Insertable<ExternalIdentitiesTable>) => Promise<void> =
  preparedInsert('external_identities', [
    'id',
    'application_id',
    'provider_type',
    'provider_id',
    'external_user_id',
    'user_id',
    'restricted_by',
    'created_at',
  ]);

/** Every identity a user holds, in every application. */
export function identitiesOfUser(db: Executor, userId: string): Promise<IdentityRow[]> {
  return db
    .selectFrom('external_identities')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
}

export function identitiesOfUserIn(
  db: Executor,
  userId: string,
  applicationId: string,
): Promise<IdentityRow[]> {
  return db
    .selectFrom('external_identities')
    .selectAll()
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .orderBy('id')
    .execute();
}

export async function moveIdentity(
  db: Executor,
  id: string,
  userId: string,
  restrictedBy: string | null,
): Promise<void> {
  await db
    .updateTable('external_identities')
    .set({ user_id: userId, restricted_by: restrictedBy })
    .where('id', '=', id)
    .execute();
}

export async function insertProvider(db: Executor, row: Insertable<IdentityProvidersTable>): Promise<void> {
  await db.insertInto('identity_providers').values(row).execute();
}

export async function updateProvider(
  db: Executor,
  id: string,
  changes: Updateable<IdentityProvidersTable>,
): Promise<void> {
  await db.updateTable('identity_providers').set(changes).where('id', '=', id).execute();
}

export async function deleteProvider(db: Executor, applicationId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('identity_providers')
    .where('application_id', '=', applicationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export function findProvider(
  db: Executor,
  applicationId: string,
  id: string,
): Promise<ProviderRow | undefined> {
  return db
    .selectFrom('identity_providers')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function providersOf(db: Executor, applicationId: string, type?: string): Promise<ProviderRow[]> {
  let query = db.selectFrom('identity_providers').selectAll().where('application_id', '=', applicationId);
  if (type !== undefined) query = query.where('type', '=', type);
  return query.orderBy('id').execute();
}

export function findBan(db: Executor, userId: string): Promise<BanRow | undefined> {
  return db.selectFrom('user_bans').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

export async function saveBan(db: Executor, row: Insertable<UserBansTable>): Promise<void> {
  await db
    .insertInto('user_bans')
    .values(row)
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({ reason: row.reason, expires_at: row.expires_at, created_at: row.created_at }),
    )
    .execute();
}

export async function deleteBan(db: Executor, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('user_bans').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
