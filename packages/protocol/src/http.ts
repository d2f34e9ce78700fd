/** HTTP API versions served under `/api/v{n}` (PROTOCOL.md §E.1); the unversioned `/api` is the legacy alias. */
export const API_VERSIONS = [9, 10] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const DEFAULT_API_VERSION: ApiVersion = 10;

/** Request body content types the API accepts (PROTOCOL.md §E.1). */
export const ACCEPTED_CONTENT_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
] as const;

/** Rate-limit headers (PROTOCOL.md §E.3), spelled as clients read them. */
export const RateLimitHeaders = {
  Limit: 'x-ratelimit-limit',
  Remaining: 'x-ratelimit-remaining',
  Reset: 'x-ratelimit-reset',
  ResetAfter: 'x-ratelimit-reset-after',
  Bucket: 'x-ratelimit-bucket',
  Scope: 'x-ratelimit-scope',
  Global: 'x-ratelimit-global',
  RetryAfter: 'retry-after',
} as const;

export const RateLimitScopes = { User: 'user', Global: 'global', Shared: 'shared' } as const;
export type RateLimitScope = (typeof RateLimitScopes)[keyof typeof RateLimitScopes];

/** Global request limit per identity, 50 per second (PROTOCOL.md §E.3). */
export const GLOBAL_RATE_LIMIT = { limit: 50, windowMs: 1000 } as const;

/** Route parameters that make a per-route bucket distinct (PROTOCOL.md §E.3 "top-level resources"). */
export const MAJOR_PARAMETERS = ['channel_id', 'guild_id', 'webhook_id', 'lobby_id'] as const;

export const RATE_LIMITED_MESSAGE = 'You are being rate limited.';

/**
 * The `Via` header of every 429. The platform's 429s pass its proxy (`Via: 1.1 google`); clients read a 429
 * without one as a ban at the edge and give up (discord.py). Hearth names itself as the hop (RFC 9110 §7.6.3).
 */
export const RATE_LIMITED_VIA = '1.1 hearth';

/** The JSON media type exactly as the platform sends it: no charset parameter (discord.py compares the whole value). */
export const JSON_CONTENT_TYPE = 'application/json';
