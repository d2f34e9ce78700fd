import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { ApplicationImagesTable, ApplicationsTable } from '../../storage/schema.js';

export type ApplicationRow = Selectable<ApplicationsTable>;

export async function insertApplication(db: Executor, row: Insertable<ApplicationsTable>): Promise<void> {
  await db.insertInto('applications').values(row).execute();
}

export const findApplicationById: (db: Executor, id: string) => Promise<ApplicationRow | undefined> =
  prepared(1, (db, id: string) => db.selectFrom('applications').selectAll().where('id', '=', id));

/** An application's flags alone (an approval checked inside a transaction): prepared. */
export const findApplicationFlags: (db: Executor, id: string) => Promise<{ flags: number } | undefined> =
  prepared(1, (db, id: string) => db.selectFrom('applications').select('flags').where('id', '=', id));

/** On every bot request: prepared. */
export const findApplicationByBotToken: (
  db: Executor,
  tokenHash: string,
) => Promise<ApplicationRow | undefined> = prepared(1, (db, tokenHash: string) =>
  db.selectFrom('applications').selectAll().where('bot_token_hash', '=', tokenHash),
);

/** The applications a developer owns alone, oldest first (the developer portal's list). */
export async function listApplicationsByOwner(db: Executor, ownerId: string): Promise<ApplicationRow[]> {
  return db
    .selectFrom('applications')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('team_id', 'is', null)
    .orderBy('id')
    .execute();
}

/** The applications of the teams `userId` belongs to, oldest first. */
export async function listApplicationsOfMember(db: Executor, userId: string): Promise<ApplicationRow[]> {
  return db
    .selectFrom('applications')
    .selectAll()
    .where('team_id', 'in', db.selectFrom('team_members').select('team_id').where('user_id', '=', userId))
    .orderBy('id')
    .execute();
}

export type ApplicationImageRow = Selectable<ApplicationImagesTable>;

/** Makes `row` the application's current image of its kind. */
export async function saveApplicationImage(
  db: Executor,
  row: Insertable<ApplicationImagesTable>,
): Promise<void> {
  await deleteApplicationImage(db, row.application_id, row.kind);
  await db.insertInto('application_images').values(row).execute();
}

export async function deleteApplicationImage(
  db: Executor,
  applicationId: string,
  kind: ApplicationImagesTable['kind'],
): Promise<void> {
  await db
    .deleteFrom('application_images')
    .where('application_id', '=', applicationId)
    .where('kind', '=', kind)
    .execute();
}

export function findApplicationImage(
  db: Executor,
  applicationId: string,
  hash: string,
): Promise<ApplicationImageRow | undefined> {
  return db
    .selectFrom('application_images')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('hash', '=', hash)
    .executeTakeFirst();
}

export async function updateApplication(
  db: Executor,
  id: string,
  changes: Updateable<ApplicationsTable>,
): Promise<void> {
  await db.updateTable('applications').set(changes).where('id', '=', id).execute();
}

/** Guilds the application's bot is in. */
export async function countBotGuilds(db: Executor, botUserId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', botUserId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Users in the guilds the application's bot is in, the bot aside, each once. */
export async function countGuildMembersReach(db: Executor, botUserId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_members')
    .select((eb) => eb.fn.count<number | string>('user_id').distinct().as('n'))
    .where(
      'guild_id',
      'in',
      db.selectFrom('guild_members').select('guild_id').where('user_id', '=', botUserId),
    )
    .where('user_id', '!=', botUserId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
