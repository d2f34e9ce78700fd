import { WEBHOOK_TIMEOUT_MS, WEBHOOK_VERSION, WebhookPayloadType } from '@hearth/protocol';
import { type OutboundPolicy, outboundRequest } from '../../kernel/outbound.js';

/** Signs a message with an application's Ed25519 key; the hex signature (PROTOCOL.md §F.2). */
export type Signer = (message: Buffer) => string;

export interface PostOutcome {
  /** The receiver's HTTP status; null when it never answered (refused, timed out). */
  status: number | null;
  /** Why the attempt failed, or null. */
  error: string | null;
  durationMs: number;
}

/** The PING that verifies a URL (§F.2): no `event`. */
export function pingBody(applicationId: string): string {
  return JSON.stringify({
    version: WEBHOOK_VERSION,
    application_id: applicationId,
    type: WebhookPayloadType.Ping,
  });
}

/** The event envelope (§F.3). */
export function eventBody(event: {
  applicationId: string;
  type: string;
  createdAt: number;
  payload: string;
}): string {
  // The payload is stored as JSON text: splice it in rather than parse and serialize it again.
  const head = JSON.stringify({
    version: WEBHOOK_VERSION,
    application_id: event.applicationId,
    type: WebhookPayloadType.Event,
    event: { type: event.type, timestamp: eventTimestamp(event.createdAt), data: null },
  });
  return `${head.slice(0, -'null}}'.length)}${event.payload}}}`;
}

/**
 * `event.timestamp` as the platform writes it (§F.3 example `2024-10-18T18:41:21.109604`): UTC, with
 * microseconds and no zone suffix.
 */
export function eventTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, -1)}000`;
}

/** Bytes of a receiver's answer read at most; its status is all that counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs a signed body: `X-Signature-Ed25519` over `X-Signature-Timestamp` + body (§F.2), under the outbound
 * URL policy (destination checked when it is resolved, no redirects). An answer after WEBHOOK_TIMEOUT_MS is
 * no answer.
 */
export async function postSigned(
  url: string,
  body: string,
  sign: Signer,
  timestampSeconds: number,
  accept: (status: number) => boolean,
  policy: OutboundPolicy,
): Promise<PostOutcome> {
  const timestamp = String(timestampSeconds);
  const started = performance.now();
  const answer = await outboundRequest(url, policy, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': 'Hearth-Webhooks (https://github.com/hearth, 1)',
      'x-signature-ed25519': sign(Buffer.from(timestamp + body)),
      'x-signature-timestamp': timestamp,
    },
    body,
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    maxBytes: MAX_ANSWER_BYTES,
    rules: { http: true, query: true },
  });
  const durationMs = Math.round(performance.now() - started);
  if (answer.error !== null) return { status: null, error: answer.error, durationMs };
  return {
    status: answer.status,
    error: accept(answer.status) ? null : `answered ${answer.status}`,
    durationMs,
  };
}
