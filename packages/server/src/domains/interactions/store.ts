import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type {
  InteractionMessagesTable,
  InteractionModalsTable,
  InteractionsTable,
} from '../../storage/schema.js';

export type InteractionRow = Selectable<InteractionsTable>;
export type ModalRow = Selectable<InteractionModalsTable>;
export type InteractionMessageRow = Selectable<InteractionMessagesTable>;

// ---- Interactions ----

export async function insertInteraction(db: Executor, row: Insertable<InteractionsTable>): Promise<void> {
  await db.insertInto('interactions').values(row).execute();
}

export function findInteraction(db: Executor, id: string): Promise<InteractionRow | undefined> {
  return db.selectFrom('interactions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The application's interaction whose token hashes to `tokenHash` (the webhook routes name no id). */
export function findInteractionByToken(
  db: Executor,
  applicationId: string,
  tokenHash: string,
): Promise<InteractionRow | undefined> {
  return db
    .selectFrom('interactions')
    .selectAll()
    .where('application_id', '=', applicationId)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function updateInteraction(
  db: Executor,
  id: string,
  changes: Updateable<InteractionsTable>,
): Promise<void> {
  await db.updateTable('interactions').set(changes).where('id', '=', id).execute();
}

/**
 * Marks the first response: true when this call made it (a concurrent second response finds it taken and
 * answers 40060).
 */
export async function claimResponse(db: Executor, id: string, responseType: number): Promise<boolean> {
  const result = await db
    .updateTable('interactions')
    .set({ response_type: responseType })
    .where('id', '=', id)
    .where('response_type', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Interactions whose user has not been told the outcome and whose first response is overdue. */
export function overdue(db: Executor, before: number, limit: number): Promise<InteractionRow[]> {
  return db
    .selectFrom('interactions')
    .selectAll()
    .where('settled', '=', 0)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Sets `settled`; true when this call did (each outcome is told once, whichever node finds it). */
export async function settle(db: Executor, id: string): Promise<boolean> {
  const result = await db
    .updateTable('interactions')
    .set({ settled: 1 })
    .where('id', '=', id)
    .where('settled', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Counts one follow-up unless `max` are already counted; false when the cap is reached. */
export async function countFollowup(db: Executor, id: string, max: number | undefined): Promise<boolean> {
  let query = db
    .updateTable('interactions')
    .set((eb) => ({ followups: eb('followups', '+', 1) }))
    .where('id', '=', id);
  if (max !== undefined) query = query.where('followups', '<', max);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ---- Modals ----

export async function insertModal(db: Executor, row: Insertable<InteractionModalsTable>): Promise<void> {
  await db.insertInto('interaction_modals').values(row).execute();
}

export function findModal(db: Executor, id: string): Promise<ModalRow | undefined> {
  return db.selectFrom('interaction_modals').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The newest modal shown to a user by an application under `customId` that is still open. */
export function findOpenModal(
  db: Executor,
  userId: string,
  applicationId: string,
  customId: string,
): Promise<ModalRow | undefined> {
  return db
    .selectFrom('interaction_modals')
    .selectAll()
    .where('user_id', '=', userId)
    .where('application_id', '=', applicationId)
    .where('custom_id', '=', customId)
    .where('submitted', '=', 0)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** A modal is submitted once; true when this call did. */
export async function submitModal(db: Executor, id: string): Promise<boolean> {
  const result = await db
    .updateTable('interaction_modals')
    .set({ submitted: 1 })
    .where('id', '=', id)
    .where('submitted', '=', 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

// ---- Messages of interactions ----

export async function insertInteractionMessage(
  db: Executor,
  row: Insertable<InteractionMessagesTable>,
): Promise<void> {
  await db.insertInto('interaction_messages').values(row).execute();
}

export function findInteractionMessage(
  db: Executor,
  interactionId: string,
  messageId: string,
): Promise<InteractionMessageRow | undefined> {
  return db
    .selectFrom('interaction_messages')
    .selectAll()
    .where('interaction_id', '=', interactionId)
    .where('message_id', '=', messageId)
    .executeTakeFirst();
}

export async function deleteInteractionMessage(db: Executor, messageId: string): Promise<void> {
  await db.deleteFrom('interaction_messages').where('message_id', '=', messageId).execute();
}

// ---- Endpoints ----

export async function findEndpoint(db: Executor, applicationId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('interaction_endpoints')
    .select('url')
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
  return row?.url;
}

export async function saveEndpoint(db: Executor, applicationId: string, url: string | null): Promise<void> {
  await db.deleteFrom('interaction_endpoints').where('application_id', '=', applicationId).execute();
  if (url !== null)
    await db.insertInto('interaction_endpoints').values({ application_id: applicationId, url }).execute();
}
