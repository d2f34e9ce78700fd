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
  /**
   * `hit`, answered at once by a store that needs no I/O (the in-process one), so that every request's two
   * counts cost no promise; a shared store has none.
   */
  hitNow?(key: string, windowMs: number, now: number, amount?: number): WindowCount;
  /**
   * Counts `gate`, and `next` only if the gate's count stayed within `gate.limit` (a request's global count,
   * then its route's: a request refused globally spends nothing of its route). A shared store answers both in
   * one round trip; `next` is undefined when it was not counted.
   */
  hitGated?(gate: GatedHit, next: Hit, now: number): Promise<GatedCounts>;
  /** Reads the window's count without counting. */
  peek(key: string, windowMs: number, now: number): Promise<WindowCount>;
  close(): Promise<void>;
}

export interface Hit {
  key: string;
  windowMs: number;
}

export interface GatedHit extends Hit {
  limit: number;
}

export interface GatedCounts {
  gate: WindowCount;
  next: WindowCount | undefined;
}

export interface WindowCount {
  count: number;
  /** When the window ends (ms since the Unix epoch). */
  resetAt: number;
}

/** How long an ended window stays readable (a clock moved back reads it), in every store. */
export const ENDED_WINDOW_KEPT_MS = 60_000;

export function windowStart(windowMs: number, now: number): number {
  return Math.floor(now / windowMs) * windowMs;
}

export function windowOf(key: string, windowMs: number, now: number): { slot: string; resetAt: number } {
  const start = windowStart(windowMs, now);
  return { slot: `${key}:${windowMs}:${start}`, resetAt: start + windowMs };
}

/** `store.hitGated` where the store has it, else its two hits one after the other (same answer). */
export async function gatedHit(
  store: RateLimitStore,
  gate: GatedHit,
  next: Hit,
  now: number,
): Promise<GatedCounts> {
  if (store.hitGated) return store.hitGated(gate, next, now);
  const gateCount = await store.hit(gate.key, gate.windowMs, now);
  if (gateCount.count > gate.limit) return { gate: gateCount, next: undefined };
  return { gate: gateCount, next: await store.hit(next.key, next.windowMs, now) };
}
