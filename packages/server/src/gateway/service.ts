import { GATEWAY_PATH, SESSION_START_LIMIT } from '@hearth/protocol';
import type { Clock } from '../kernel/clock.js';
import type { RateLimitStore } from '../ratelimit/store.js';

export interface SessionStartLimit {
  total: number;
  remaining: number;
  reset_after: number;
  max_concurrency: number;
}

/** Where clients find the gateway, and how many sessions a bot may still start (PROTOCOL.md §D.1). */
export class GatewayService {
  readonly #publicUrl: () => string;
  readonly #counters: RateLimitStore;
  readonly #clock: Clock;

  constructor(deps: { publicUrl: () => string; counters: RateLimitStore; clock: Clock }) {
    this.#publicUrl = deps.publicUrl;
    this.#counters = deps.counters;
    this.#clock = deps.clock;
  }

  /** The gateway URL without a query string: clients append their own `?v=…`. */
  url(): string {
    const url = new URL(this.#publicUrl());
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${GATEWAY_PATH}`;
    return url.toString();
  }

  async sessionStartLimit(userId: string): Promise<SessionStartLimit> {
    const now = this.#clock.now();
    const { count, resetAt } = await this.#counters.peek(
      sessionStartKey(userId),
      SESSION_START_LIMIT.windowMs,
      now,
    );
    return {
      total: SESSION_START_LIMIT.total,
      remaining: Math.max(0, SESSION_START_LIMIT.total - count),
      reset_after: resetAt - now,
      max_concurrency: SESSION_START_LIMIT.maxConcurrency,
    };
  }
}

/** The counter an Identify spends. */
export function sessionStartKey(userId: string): string {
  return `session-start:${userId}`;
}
