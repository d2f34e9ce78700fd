import { ENDED_WINDOW_KEPT_MS, type RateLimitStore, type WindowCount, windowStart } from './store.js';

interface Window {
  resetAt: number;
  /** An ended window stays readable (a clock moved back reads it) one more length, at most a minute. */
  keptUntil: number;
  counts: Map<string, number>;
}

/**
 * The in-process store: one node, nothing to run. Counts are grouped by window (its length and start), so a
 * key costs one map entry of a number, not a slot string and an object, and an ended window goes whole.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, Window>();
  /** The window each length last counted in: most hits fall in it, found without making its id. */
  readonly #latest = new Map<number, Window>();

  async hit(key: string, windowMs: number, now: number, amount = 1): Promise<WindowCount> {
    return this.hitNow(key, windowMs, now, amount);
  }

  hitNow(key: string, windowMs: number, now: number, amount = 1): WindowCount {
    const window = this.#window(windowMs, now);
    const count = (window.counts.get(key) ?? 0) + amount;
    window.counts.set(key, count);
    return { count, resetAt: window.resetAt };
  }

  async peek(key: string, windowMs: number, now: number): Promise<WindowCount> {
    const start = windowStart(windowMs, now);
    const count = this.#windows.get(`${windowMs}:${start}`)?.counts.get(key) ?? 0;
    return { count, resetAt: start + windowMs };
  }

  /** Forgets every window (the emulator restored a snapshot: counts start afresh). */
  clear(): void {
    this.#windows.clear();
    this.#latest.clear();
  }

  async close(): Promise<void> {
    this.clear();
  }

  #window(windowMs: number, now: number): Window {
    const latest = this.#latest.get(windowMs);
    if (latest !== undefined && now < latest.resetAt && now >= latest.resetAt - windowMs) return latest;
    const start = windowStart(windowMs, now);
    const id = `${windowMs}:${start}`;
    let window = this.#windows.get(id);
    if (!window) {
      // Windows are few (about two per limit length): the long-ended ones go as each new one opens.
      for (const [ended, { keptUntil }] of this.#windows) if (keptUntil <= now) this.#windows.delete(ended);
      for (const [length, { keptUntil }] of this.#latest) if (keptUntil <= now) this.#latest.delete(length);
      const resetAt = start + windowMs;
      window = { resetAt, keptUntil: resetAt + Math.min(windowMs, ENDED_WINDOW_KEPT_MS), counts: new Map() };
      this.#windows.set(id, window);
    }
    this.#latest.set(windowMs, window);
    return window;
  }
}
