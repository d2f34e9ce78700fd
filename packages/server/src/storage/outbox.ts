import type { Executor } from './database.js';

/** An event that must reach an application's webhook (PROTOCOL.md §F), recorded with its cause. */
export interface OutboxEvent {
  id: string;
  type: string;
  applicationId: string;
  data: Record<string, unknown>;
  createdAt: number;
}

/** Records the event in the caller's transaction: it commits with the change, or not at all. */
export async function recordWebhookEvent(tx: Executor, event: OutboxEvent): Promise<void> {
  await tx
    .insertInto('outbox')
    .values({
      id: event.id,
      type: event.type,
      application_id: event.applicationId,
      payload: JSON.stringify(event.data),
      created_at: event.createdAt,
    })
    .execute();
}
