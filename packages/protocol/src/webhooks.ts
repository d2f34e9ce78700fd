/**
 * Outgoing webhook events (PROTOCOL.md §F): what an application subscribes to, how a delivery is framed,
 * and how long Hearth keeps trying.
 */

/** The event types an application may subscribe to (SPEC `event_webhooks_types` enum). */
export const WebhookEventTypes = [
  'APPLICATION_AUTHORIZED',
  'APPLICATION_DEAUTHORIZED',
  'ENTITLEMENT_CREATE',
  'ENTITLEMENT_UPDATE',
  'ENTITLEMENT_DELETE',
  'QUEST_USER_ENROLLMENT',
  'LOBBY_MESSAGE_CREATE',
  'LOBBY_MESSAGE_UPDATE',
  'LOBBY_MESSAGE_DELETE',
  'GAME_DIRECT_MESSAGE_CREATE',
  'GAME_DIRECT_MESSAGE_UPDATE',
  'GAME_DIRECT_MESSAGE_DELETE',
] as const;

export type WebhookEventType = (typeof WebhookEventTypes)[number];

/** `event_webhooks_status` (§F.1). An application sets 1 or 2; only the platform sets 3. */
export const EventWebhooksStatus = {
  Disabled: 1,
  Enabled: 2,
  DisabledByDiscord: 3,
} as const;

export type EventWebhooksStatusValue = (typeof EventWebhooksStatus)[keyof typeof EventWebhooksStatus];

/** The envelope's `type` (§F.3): 0 PING (URL verification), 1 an event. */
export const WebhookPayloadType = { Ping: 0, Event: 1 } as const;

/** The envelope's `version` (§F.3). */
export const WEBHOOK_VERSION = 1;

/** `event_webhooks_url` is at most this long (§F.1). */
export const MAX_EVENT_WEBHOOKS_URL_LENGTH = 2048;

/** A receiver answers within this time, or the attempt failed (§F.2). */
export const WEBHOOK_TIMEOUT_MS = 3_000;

/**
 * Retries after a failed attempt, with exponential backoff: 5 s, 10 s, … 320 s, 635 s in all, beyond the
 * platform's "up to 10 minutes" (§F.2). When the last one fails, delivery is disabled (status 3).
 */
export const WEBHOOK_RETRY_BASE_MS = 5_000;
export const WEBHOOK_MAX_ATTEMPTS = 8;

/** The wait before attempt `attempt + 1` after `attempt` failed attempts (1-based). */
export function webhookRetryDelay(attempt: number): number {
  return WEBHOOK_RETRY_BASE_MS * 2 ** (attempt - 1);
}
