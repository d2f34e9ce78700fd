import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import { prepared, preparedWrite } from '../../storage/prepared.js';
import type { OAuthCodesTable, OAuthGrantsTable, OAuthTokensTable } from '../../storage/schema.js';

export type GrantRow = Selectable<OAuthGrantsTable>;
export type CodeRow = Selectable<OAuthCodesTable>;
export type TokenRow = Selectable<OAuthTokensTable>;

/** On every token request: prepared. */
export const findGrant: (
  db: Executor,
  applicationId: string,
  userId: string,
) => Promise<GrantRow | undefined> = prepared(2, (db, applicationId: string, userId: string) =>
  db
    .selectFrom('oauth_grants')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('user_id', '=', userId),
);

const upsertGrant = preparedWrite(
  5,
  (
    db,
    application_id: string,
    user_id: string,
    scopes: string,
    integration_type: number | null,
    created_at: number,
  ) =>
    db
      .insertInto('oauth_grants')
      .values({ application_id, user_id, scopes, integration_type, created_at })
      .onConflict((oc) =>
        oc.columns(['application_id', 'user_id']).doUpdateSet((eb) => ({
          scopes: eb.ref('excluded.scopes'),
          integration_type: eb.ref('excluded.integration_type'),
        })),
      ),
);

/** Records a grant, or replaces an existing one's scopes and integration type (its creation time stays). */
export async function saveGrant(db: Executor, row: Insertable<OAuthGrantsTable>): Promise<void> {
  await upsertGrant(
    db,
    row.application_id,
    row.user_id,
    row.scopes,
    row.integration_type ?? null,
    row.created_at,
  );
}

export async function deleteGrant(db: Executor, applicationId: string, userId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('oauth_grants')
    .where('application_id', '=', applicationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countGrants(
  db: Executor,
  applicationId: string,
): Promise<{ userInstalls: number; all: number }> {
  const row = await db
    .selectFrom('oauth_grants')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('all'),
      eb.fn
        .count<number | string>(eb.case().when('integration_type', '=', 1).then(1).end())
        .as('user_installs'),
    ])
    .where('application_id', '=', applicationId)
    .executeTakeFirstOrThrow();
  return { userInstalls: Number(row.user_installs), all: Number(row.all) };
}

export async function insertCode(db: Executor, row: Insertable<OAuthCodesTable>): Promise<void> {
  await db.insertInto('oauth_codes').values(row).execute();
}

export const findCode: (db: Executor, codeHash: string) => Promise<CodeRow | undefined> = prepared(
  1,
  (db, codeHash: string) => db.selectFrom('oauth_codes').selectAll().where('code_hash', '=', codeHash),
);

const spendCodeRow = preparedWrite(
  5,
  (db, codeHash: string, now: number, familyId: string, applicationId: string, userId: string) =>
    db
      .updateTable('oauth_codes')
      .set({ used_at: now, family_id: familyId })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('oauth_grants')
            .select('created_at')
            .where('application_id', '=', applicationId)
            .where('user_id', '=', userId),
        ),
      ),
);

/**
 * Spends a code for the token family it is exchanged for (revoked if the code comes back), in one
 * statement with the check that its grant still stands; false when it was already spent (a replay) or
 * the grant is gone, and then the code stays as it was.
 */
export async function spendCode(
  db: Executor,
  code: { codeHash: string; applicationId: string; userId: string },
  now: number,
  familyId: string,
): Promise<boolean> {
  return (await spendCodeRow(db, code.codeHash, now, familyId, code.applicationId, code.userId)) === 1;
}

/** The token row's columns, in the order the prepared insert takes their values. */
const TOKEN_COLUMNS = [
  'id',
  'access_hash',
  'refresh_hash',
  'refresh_spent',
  'refresh_expires_at',
  'family_id',
  'code_hash',
  'parent_family_id',
  'application_id',
  'user_id',
  'scopes',
  'expires_at',
  'created_at',
  'client_credentials',
] as const satisfies readonly (keyof OAuthTokensTable)[];

const insertTokenRow = preparedWrite(TOKEN_COLUMNS.length, (db, ...values: unknown[]) =>
  db
    .insertInto('oauth_tokens')
    .values(
      Object.fromEntries(
        TOKEN_COLUMNS.map((column, i) => [column, values[i]]),
      ) as Insertable<OAuthTokensTable>,
    ),
);

/** On every token issued: prepared, so every column is given (the counters 0, the rest null, when absent). */
export async function insertToken(db: Executor, row: Insertable<OAuthTokensTable>): Promise<void> {
  const complete: Required<Insertable<OAuthTokensTable>> = {
    ...row,
    refresh_hash: row.refresh_hash ?? null,
    refresh_spent: row.refresh_spent ?? 0,
    refresh_expires_at: row.refresh_expires_at ?? null,
    code_hash: row.code_hash ?? null,
    parent_family_id: row.parent_family_id ?? null,
    client_credentials: row.client_credentials ?? 0,
  };
  await insertTokenRow(db, ...TOKEN_COLUMNS.map((column) => complete[column]));
}

/** On every bearer request: prepared. */
export const findTokenByAccess: (db: Executor, accessHash: string) => Promise<TokenRow | undefined> =
  prepared(1, (db, accessHash: string) =>
    db.selectFrom('oauth_tokens').selectAll().where('access_hash', '=', accessHash),
  );

/**
 * On every bearer request: the token and, in the same read, its application's flags (null when the
 * application is gone), which decide the restricted scopes it still holds. Prepared.
 */
export const findGrantByAccess: (
  db: Executor,
  accessHash: string,
) => Promise<(TokenRow & { application_flags: number | null }) | undefined> = prepared(
  1,
  (db, accessHash: string) =>
    db
      .selectFrom('oauth_tokens')
      .leftJoin('applications', 'applications.id', 'oauth_tokens.application_id')
      .selectAll('oauth_tokens')
      .select('applications.flags as application_flags')
      .where('oauth_tokens.access_hash', '=', accessHash),
);

export function findTokenByRefresh(db: Executor, refreshHash: string): Promise<TokenRow | undefined> {
  return db.selectFrom('oauth_tokens').selectAll().where('refresh_hash', '=', refreshHash).executeTakeFirst();
}

/** Spends a refresh token; false when it was already spent (a replay). */
export async function spendRefresh(db: Executor, id: string): Promise<boolean> {
  const result = await db
    .updateTable('oauth_tokens')
    .set({ refresh_spent: 1 })
    .where('id', '=', id)
    .where('refresh_spent', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes the tokens matched by `where`, and every child token exchanged from them. */
async function deleteTokensWhere(
  db: Executor,
  column: 'family_id',
  value: string,
  extra?: { applicationId: string; userId: string },
): Promise<void> {
  let families = db.selectFrom('oauth_tokens').select('family_id').distinct();
  families = extra
    ? families.where('application_id', '=', extra.applicationId).where('user_id', '=', extra.userId)
    : families.where(column, '=', value);
  const ids = (await families.execute()).map((r) => r.family_id);
  if (ids.length === 0) return;
  await db.deleteFrom('oauth_tokens').where('parent_family_id', 'in', ids).execute();
  await db.deleteFrom('oauth_tokens').where('family_id', 'in', ids).execute();
}

export function deleteFamily(db: Executor, familyId: string): Promise<void> {
  return deleteTokensWhere(db, 'family_id', familyId);
}

/** Every token of one application for one user, with their children. */
export function deleteTokensOfGrant(db: Executor, applicationId: string, userId: string): Promise<void> {
  return deleteTokensWhere(db, 'family_id', '', { applicationId, userId });
}

/** Applications a user holds a grant or a token of. */
/** Which of these users hold a grant or a token of the application (in chunks the engines accept). */
export async function holdersOf(
  db: Executor,
  userIds: readonly string[],
  applicationId: string,
): Promise<Set<string>> {
  const holders = new Set<string>();
  for (let i = 0; i < userIds.length; i += 500) {
    const chunk = userIds.slice(i, i + 500);
    const grants = await db
      .selectFrom('oauth_grants')
      .select('user_id')
      .where('application_id', '=', applicationId)
      .where('user_id', 'in', chunk)
      .execute();
    const tokens = await db
      .selectFrom('oauth_tokens')
      .select('user_id')
      .distinct()
      .where('application_id', '=', applicationId)
      .where('user_id', 'in', chunk)
      // A client_credentials token is the owner testing the application, not a player of it.
      .where('client_credentials', '=', 0)
      .execute();
    for (const row of [...grants, ...tokens]) holders.add(row.user_id);
  }
  return holders;
}

export async function applicationsOfUser(db: Executor, userId: string): Promise<string[]> {
  const grants = await db
    .selectFrom('oauth_grants')
    .select('application_id')
    .where('user_id', '=', userId)
    .execute();
  const tokens = await db
    .selectFrom('oauth_tokens')
    .select('application_id')
    .distinct()
    .where('user_id', '=', userId)
    .execute();
  return [...new Set([...grants, ...tokens].map((row) => row.application_id))].sort();
}
