import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ApplicationEmojisTable } from '../../storage/schema.js';

export type EmojiRow = Omit<Selectable<ApplicationEmojisTable>, 'bytes'>;

const COLUMNS = [
  'id',
  'application_id',
  'name',
  'user_id',
  'animated',
  'content_type',
  'created_at',
] as const;

export function listEmojis(db: Executor, applicationId: string): Promise<EmojiRow[]> {
  return db
    .selectFrom('application_emojis')
    .select(COLUMNS)
    .where('application_id', '=', applicationId)
    .orderBy('id')
    .execute();
}

export function findEmoji(db: Executor, applicationId: string, id: string): Promise<EmojiRow | undefined> {
  return db
    .selectFrom('application_emojis')
    .select(COLUMNS)
    .where('application_id', '=', applicationId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function findEmojiByName(
  db: Executor,
  applicationId: string,
  name: string,
): Promise<EmojiRow | undefined> {
  return db
    .selectFrom('application_emojis')
    .select(COLUMNS)
    .where('application_id', '=', applicationId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** The image behind `/emojis/{id}.{ext}`. */
export function findEmojiImage(
  db: Executor,
  id: string,
): Promise<{ content_type: string; bytes: Buffer } | undefined> {
  return db
    .selectFrom('application_emojis')
    .select(['content_type', 'bytes'])
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function countEmojis(db: Executor, applicationId: string): Promise<number> {
  const row = await db
    .selectFrom('application_emojis')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('application_id', '=', applicationId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertEmoji(db: Executor, row: Insertable<ApplicationEmojisTable>): Promise<void> {
  await db.insertInto('application_emojis').values(row).execute();
}

export async function renameEmoji(db: Executor, id: string, name: string): Promise<void> {
  await db.updateTable('application_emojis').set({ name }).where('id', '=', id).execute();
}

export async function deleteEmoji(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('application_emojis').where('id', '=', id).execute();
}

/** Serializes emoji creation per application on PostgreSQL (SQLite's single writer already does). */
export async function lockApplication(db: Executor, applicationId: string): Promise<void> {
  await db.selectFrom('applications').select('id').where('id', '=', applicationId).forUpdate().execute();
}
