import { RATE_LIMITED_MESSAGE, RateLimitHeaders, type RateLimitScope } from '@hearth/protocol';
import type { WireError } from './errors.js';

/**
 * A 429 a service decides (limits of a rule rather than of a route, e.g. the pre-approval limits of the
 * communication features, PROTOCOL.md §A.3), in the shape of the route limiter's (§E.3).
 */
export class RateLimitedError extends Error implements WireError {
  readonly status = 429;
  readonly headers: Readonly<Record<string, string>>;
  readonly retryAfter: number;

  constructor(retryAfterSeconds: number, scope: RateLimitScope) {
    super(RATE_LIMITED_MESSAGE);
    this.name = 'RateLimitedError';
    this.retryAfter = Math.max(0.001, Number(retryAfterSeconds.toFixed(3)));
    this.headers = {
      [RateLimitHeaders.RetryAfter]: String(Math.ceil(this.retryAfter)),
      [RateLimitHeaders.Scope]: scope,
    };
  }

  body(): object {
    return { message: RATE_LIMITED_MESSAGE, retry_after: this.retryAfter, global: false, code: 0 };
  }
}
