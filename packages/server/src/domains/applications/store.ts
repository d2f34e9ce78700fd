import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ApplicationsTable } from '../../storage/schema.js';

export type ApplicationRow = Selectable<ApplicationsTable>;

export async function insertApplication(db: Executor, row: Insertable<ApplicationsTable>): Promise<void> {
  await db.insertInto('applications').values(row).execute();
}

export function findApplicationById(db: Executor, id: string): Promise<ApplicationRow | undefined> {
  return db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findApplicationByBotToken(
  db: Executor,
  tokenHash: string,
): Promise<ApplicationRow | undefined> {
  return db.selectFrom('applications').selectAll().where('bot_token_hash', '=', tokenHash).executeTakeFirst();
}
