import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { EventWebhooksTable, OutboxTable, WebhookAttemptsTable } from '../../storage/schema.js';

export type OutboxRow = Selectable<OutboxTable>;
export type SettingsRow = Selectable<EventWebhooksTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export async function findSettings(db: Executor, applicationId: string): Promise<SettingsRow | undefined> {
  return db
    .selectFrom('event_webhooks')
    .selectAll()
    .where('application_id', '=', applicationId)
    .executeTakeFirst();
}

export async function findSettingsOf(db: Executor, applicationIds: string[]): Promise<SettingsRow[]> {
  if (applicationIds.length === 0) return [];
  return db.selectFrom('event_webhooks').selectAll().where('application_id', 'in', applicationIds).execute();
}

export async function saveSettings(db: Executor, row: SettingsRow): Promise<void> {
  await db
    .insertInto('event_webhooks')
    .values(row)
    .onConflict((oc) =>
      oc.column('application_id').doUpdateSet({
        url: row.url,
        status: row.status,
        types: row.types,
        disabled_reason: row.disabled_reason,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/** Sets status 3 unless the settings changed since the failing delivery read them (a new URL was set). */
export async function disableSettings(
  db: Executor,
  applicationId: string,
  url: string,
  reason: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('event_webhooks')
    .set({ status: 3, disabled_reason: reason, updated_at: now })
    .where('application_id', '=', applicationId)
    .where('url', '=', url)
    .where('status', '=', 2)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Leases up to `limit` due rows to `owner` until `leaseUntil`. The UPDATE re-checks each row's lease, so of
 * several nodes reading the same candidates only one wins each row, on either engine.
 */
export async function claimDue(
  db: Executor,
  input: { owner: string; now: number; leaseUntil: number; limit: number },
): Promise<OutboxRow[]> {
  const { owner, now, leaseUntil, limit } = input;
  const candidates = await db
    .selectFrom('outbox')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  if (candidates.length === 0) return [];
  const ids = candidates.map((row) => row.id);
  await db
    .updateTable('outbox')
    .set({ lease_owner: owner, lease_until: leaseUntil })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .execute();
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .execute();
}

/** Ends this node's lease with the outcome; a node whose lease was taken over changes nothing. */
export async function settle(
  db: Executor,
  id: string,
  owner: string,
  changes: Updateable<OutboxTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('outbox')
    .set({ ...changes, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertAttempt(db: Executor, row: AttemptRow): Promise<void> {
  await db.insertInto('webhook_attempts').values(row).execute();
}

export async function listEvents(db: Executor, applicationId: string, limit: number): Promise<OutboxRow[]> {
  return db
    .selectFrom('outbox')
    .selectAll()
    .where('application_id', '=', applicationId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function listAttempts(db: Executor, eventIds: string[]): Promise<AttemptRow[]> {
  if (eventIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('event_id', 'in', eventIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Puts finished events of the application back in the queue, due now, with a fresh attempt count. */
export async function requeue(
  db: Executor,
  applicationId: string,
  filter: { eventId?: string; statuses: string[] },
  now: number,
): Promise<number> {
  let query = db
    .updateTable('outbox')
    .set({
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      finished_at: null,
      last_error: null,
      lease_owner: null,
      lease_until: null,
    })
    .where('application_id', '=', applicationId)
    .where('status', 'in', filter.statuses);
  if (filter.eventId !== undefined) query = query.where('id', '=', filter.eventId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Forgets finished events (and, by cascade, their attempts) that finished before `before`. */
export async function pruneFinished(db: Executor, before: number): Promise<number> {
  const result = await db
    .deleteFrom('outbox')
    .where('status', '!=', 'pending')
    .where('finished_at', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
