import { EventWebhooksStatus, MAX_EVENT_WEBHOOKS_URL_LENGTH, WebhookEventTypes } from '@hearth/protocol';
import { Type } from 'typebox';

/**
 * The `event_webhooks_*` fields of PATCH /applications/@me (PROTOCOL.md §F.1). An application may set
 * status 1 or 2; 3 (DISABLED_BY_DISCORD) is the platform's own verdict.
 */
export const EventWebhooksChanges = {
  event_webhooks_url: Type.Optional(
    Type.Union([Type.String({ format: 'uri', maxLength: MAX_EVENT_WEBHOOKS_URL_LENGTH }), Type.Null()]),
  ),
  event_webhooks_status: Type.Optional(
    Type.Union([Type.Literal(EventWebhooksStatus.Disabled), Type.Literal(EventWebhooksStatus.Enabled)]),
  ),
  event_webhooks_types: Type.Optional(
    Type.Array(Type.Union(WebhookEventTypes.map((type) => Type.Literal(type))), {
      maxItems: WebhookEventTypes.length,
      uniqueItems: true,
    }),
  ),
};

/** The same fields as the application object shows them. */
export const EventWebhooksFields = {
  event_webhooks_url: Type.Union([Type.String(), Type.Null()]),
  event_webhooks_status: Type.Integer(),
  event_webhooks_types: Type.Array(Type.String()),
};
