import { generateKeyPairSync, sign as signWith } from 'node:crypto';
import { InteractionCallbackTypes, InteractionLimits, InteractionTypes } from '@hearth/protocol';
import { type OutboundPolicy, outboundRequest } from '../../kernel/outbound.js';
import type { Signer } from '../webhooks/delivery.js';

/**
 * The app's interactions endpoint (DOCS interactions/overview, "Receiving an interaction"): each interaction
 * POSTed as JSON, signed with the app's Ed25519 key like its webhook events (`X-Signature-Ed25519` over
 * `X-Signature-Timestamp` + body); the answer's body is the initial response.
 */

/** An endpoint's answer: its status and JSON body (undefined when it sent none, or not JSON). */
export interface EndpointAnswer {
  status: number | null;
  body: unknown;
  error: string | null;
}

/** Bytes of an endpoint's answer read at most: a response with a modal or a message fits easily. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** Endpoint URLs may be `http:` on a development machine (kernel/outbound.ts), and carry a query. */
export const ENDPOINT_URL_RULES = { http: true, query: true } as const;

export async function postInteraction(
  url: string,
  body: string,
  sign: Signer,
  timestampSeconds: number,
  policy: OutboundPolicy,
): Promise<EndpointAnswer> {
  const timestamp = String(timestampSeconds);
  const answer = await outboundRequest(url, policy, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': 'Hearth-Interactions (https://github.com/hearth, 1)',
      'x-signature-ed25519': sign(Buffer.from(timestamp + body)),
      'x-signature-timestamp': timestamp,
    },
    body,
    // The endpoint has the 3 s of the first response to answer.
    timeoutMs: InteractionLimits.initialResponseMs,
    maxBytes: MAX_ANSWER_BYTES,
    rules: ENDPOINT_URL_RULES,
  });
  if (answer.error !== null) return { status: null, body: undefined, error: answer.error };
  let parsed: unknown;
  try {
    parsed = answer.body.length === 0 ? undefined : JSON.parse(answer.body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  return { status: answer.status, body: parsed, error: null };
}

/** A PING as the platform sends it to verify an endpoint: no user, no data. */
export function pingBody(applicationId: string, id: string, token: string): string {
  return JSON.stringify({
    id,
    application_id: applicationId,
    type: InteractionTypes.Ping,
    token,
    version: 1,
    user: null,
    entitlements: [],
  });
}

/** A key no application holds: a request signed with it must be refused by a correct endpoint. */
const stranger = generateKeyPairSync('ed25519').privateKey;
const strangerSigner: Signer = (message) => signWith(null, message, stranger).toString('hex');

/**
 * Endpoint verification (DOCS overview, "Setting Up an Endpoint"): a signed PING must be answered 200 with
 * `{type: 1}` (PONG), and the same PING under a bad signature must be refused with 401.
 */
export async function verifyEndpoint(
  url: string,
  body: string,
  sign: Signer,
  timestampSeconds: number,
  policy: OutboundPolicy,
): Promise<{ ok: boolean; problem?: string }> {
  const ping = await postInteraction(url, body, sign, timestampSeconds, policy);
  if (ping.error !== null) return { ok: false, problem: ping.error };
  const type = (ping.body as { type?: unknown } | undefined)?.type;
  if (ping.status !== 200 || type !== InteractionCallbackTypes.Pong)
    return { ok: false, problem: `PING answered ${ping.status} without a PONG` };
  const forged = await postInteraction(url, body, strangerSigner, timestampSeconds, policy);
  if (forged.status !== 401)
    return { ok: false, problem: `bad signature answered ${forged.status ?? forged.error}` };
  return { ok: true };
}
