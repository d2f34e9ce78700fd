import { EventWebhooksStatus } from '@hearth/protocol';
import { currentRequestId } from '../ops/request-context.js';
import type { Executor } from './database.js';
import { prepared, preparedInsert } from './prepared.js';

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

/** Transactions that recorded an event to deliver: the delivery worker of this node starts at once when they commit. */
const recordedIn = new WeakSet<object>();
/** Events a transaction recorded as skipped at once: reported (metrics, log) once it commits. */
const skippedIn = new WeakMap<object, SkippedEvent[]>();

/** An event recorded as skipped, since the application would not have been sent it (§F.1). */
export interface SkippedEvent {
  id: string;
  type: string;
  applicationId: string;
  reason: string;
  /** The request that recorded it, if any. */
  requestId: string | undefined;
}

/** What decides whether an application is sent an event type: its event webhook settings (§F.1). */
export interface WebhookSubscription {
  url: string | null;
  status: number;
  types: readonly string[];
}

/**
 * Why an application with these settings is not sent `type`, or undefined when it is: no URL, delivery
 * not enabled, or the type not subscribed. The one rule of both the recorder and the delivery worker.
 */
export function skipReason(settings: WebhookSubscription | undefined, type: string): string | undefined {
  if (!settings || settings.url === null) return 'no event webhooks URL';
  if (settings.status !== EventWebhooksStatus.Enabled) return `event webhooks status ${settings.status}`;
  if (!settings.types.includes(type)) return `${type} not subscribed`;
  return undefined;
}

const findSubscription = prepared(1, (db, applicationId: string) =>
  db
    .selectFrom('event_webhooks')
    .select(['url', 'status', 'types'])
    .where('application_id', '=', applicationId),
);
const insertEvent = preparedInsert('outbox', [
  'id',
  'type',
  'application_id',
  'payload',
  'created_at',
  'next_attempt_at',
  'override_url',
  'status',
  'finished_at',
  'last_error',
]);

/**
 * Records the event in the caller's transaction: it commits with the change, or not at all. An event the
 * application's settings (read in the same transaction) would not send is recorded already skipped, as the
 * worker would have settled it: it stays in the log and can be replayed, but costs no delivery round.
 */
export async function recordWebhookEvent(tx: Executor, event: OutboxEvent): Promise<void> {
  const row = await findSubscription(tx, event.applicationId);
  const reason = skipReason(row && { ...row, types: JSON.parse(row.types) as string[] }, event.type);
  await insertEvent(tx, {
    id: event.id,
    type: event.type,
    application_id: event.applicationId,
    payload: JSON.stringify(event.data),
    created_at: event.createdAt,
    next_attempt_at: event.createdAt,
    override_url: event.overrideUrl ?? null,
    status: reason === undefined ? 'pending' : 'skipped',
    finished_at: reason === undefined ? null : event.createdAt,
    last_error: reason ?? null,
  });
  const requestId = currentRequestId();
  if (reason !== undefined) {
    const skipped = skippedIn.get(tx);
    const entry = { id: event.id, type: event.type, applicationId: event.applicationId, reason, requestId };
    if (skipped) skipped.push(entry);
    else skippedIn.set(tx, [entry]);
    return;
  }
  recordedIn.add(tx);
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

/** Whether `tx` recorded a webhook event to deliver (asked after it committed). */
export function recordedWebhookEvent(tx: object): boolean {
  return recordedIn.has(tx);
}

/** The events `tx` recorded already skipped (asked after it committed). */
export function skippedWebhookEvents(tx: object): readonly SkippedEvent[] {
  return skippedIn.get(tx) ?? [];
}
