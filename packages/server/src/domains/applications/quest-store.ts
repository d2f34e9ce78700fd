import type { Insertable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { QuestEnrollmentsTable } from '../../storage/schema.js';

export async function isEnrolled(
  db: Executor,
  applicationId: string,
  questId: string,
  userId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('quest_enrollments')
    .select('user_id')
    .where('application_id', '=', applicationId)
    .where('quest_id', '=', questId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertEnrollment(db: Executor, row: Insertable<QuestEnrollmentsTable>): Promise<void> {
  await db.insertInto('quest_enrollments').values(row).execute();
}
