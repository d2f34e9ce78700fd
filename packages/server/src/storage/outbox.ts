import { currentRequestId } from '../ops/request-context.js';
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
  const requestId = currentRequestId();
  if (requestId !== undefined) rememberCause(event.id, requestId);
}

/**
 * The request that recorded each event on this node, until its delivery is logged: the delivery lines
 * name it. Bounded; an event recorded elsewhere (another node, a CLI command) has none.
 */
const causes = new Map<string, string>();
const MAX_CAUSES = 10_000;

function rememberCause(eventId: string, requestId: string): void {
  if (causes.size >= MAX_CAUSES) causes.delete(causes.keys().next().value as string);
  causes.set(eventId, requestId);
}

/** The id of the request that recorded the event on this node, if known. */
export function requestIdOfEvent(eventId: string): string | undefined {
  return causes.get(eventId);
}

/** The event is settled: its cause is no longer needed. */
export function forgetEventCause(eventId: string): void {
  causes.delete(eventId);
}

/** Whether `tx` recorded a webhook event (asked after it committed). */
export function recordedWebhookEvent(tx: object): boolean {
  return recordedIn.has(tx);
}
