import type { Executor } from './database.js';

/** An event that must reach an application's webhook (PROTOCOL.md §F), recorded with its cause. */
export interface OutboxEvent {
  id: string;
  type: string;
  applicationId: string;
  data: Record<string, unknown>;
  createdAt: number;
  /** Delivered here instead of the application's URL: a lobby's `override_event_webhooks_url`. */
  overrideUrl?: string;
}

/** Transactions that recorded an event: the delivery worker of this node starts at once when they commit. */
const recordedIn = new WeakSet<object>();

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
      next_attempt_at: event.createdAt,
      override_url: event.overrideUrl ?? null,
    })
    .execute();
  recordedIn.add(tx);
}

/** Whether `tx` recorded a webhook event (asked after it committed). */
export function recordedWebhookEvent(tx: object): boolean {
  return recordedIn.has(tx);
}
