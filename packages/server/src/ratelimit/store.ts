/**
 * Fixed-window counters behind every rate limit (HTTP buckets, gateway identify budgets, pre-approval
 * limits). Windows are computed from the caller's clock, so every store agrees with a test clock.
 */
export interface RateLimitStore {
  /**
   * Counts one hit (or `amount`, for limits by size) in the window of `windowMs` containing `now`; answers
   * the count after the hit.
   */
  hit(key: string, windowMs: number, now: number, amount?: number): Promise<WindowCount>;
  /** Reads the window's count without counting. */
  peek(key: string, windowMs: number, now: number): Promise<WindowCount>;
  close(): Promise<void>;
}

export interface WindowCount {
  count: number;
  /** When the window ends (ms since the Unix epoch). */
  resetAt: number;
}

export function windowOf(key: string, windowMs: number, now: number): { slot: string; resetAt: number } {
  const start = Math.floor(now / windowMs) * windowMs;
  return { slot: `${key}:${windowMs}:${start}`, resetAt: start + windowMs };
}
