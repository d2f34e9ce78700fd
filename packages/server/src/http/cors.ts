import { RateLimitHeaders } from '@hearth/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from '../ops/request-context.js';

/**
 * Cross-origin calls to the API (the platform's API answers them, discord-api-docs#1873): a web game, or
 * the SDK's browser build, calls it from its own origin with a Bearer token. Any origin is allowed and no
 * credentials: the API authenticates by the Authorization header only, never by cookies, so no page can
 * act for a visitor by sending the request alone. The pages (OAuth2 consent, the portal) are not opened.
 */
const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** Headers a browser client sends beyond the safelisted ones (its preflight lists what it wants). */
const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'x-audit-log-reason',
  'x-super-properties',
  'x-discord-locale',
  REQUEST_ID_HEADER,
].join(', ');
/** What a browser client may read of an answer: the rate-limit headers and the request id. */
const EXPOSED_HEADERS = [...Object.values(RateLimitHeaders), REQUEST_ID_HEADER].join(', ');
/** A day: preflights are answered the same for every route. */
const PREFLIGHT_MAX_AGE_S = 86_400;
const API_PATH = /^\/api(?:\/|$)/;

/**
 * On an API request carrying `Origin`: answers a preflight at once (204, before routing, authentication or
 * limits: a preflight carries no credential), or marks the answer readable by any origin. True when answered.
 */
export function answerCors(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.headers.origin === undefined || !API_PATH.test(request.url)) return false;
  reply.header('access-control-allow-origin', '*');
  if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) {
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    return false;
  }
  reply
    .code(204)
    .header('access-control-allow-methods', ALLOWED_METHODS)
    .header('access-control-allow-headers', ALLOWED_HEADERS)
    .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_S))
    .send();
  return true;
}
