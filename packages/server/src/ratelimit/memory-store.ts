import { type RateLimitStore, type WindowCount, windowOf } from './store.js';

/** The in-process store: one node, nothing to run. Ended windows are swept as the map grows. */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  #sweepAt = 1024;

  async hit(key: string, windowMs: number, now: number, amount = 1): Promise<WindowCount> {
    const { slot, resetAt } = windowOf(key, windowMs, now);
    const window = this.#windows.get(slot);
    if (window) {
      window.count += amount;
      return { count: window.count, resetAt };
    }
    this.#windows.set(slot, { count: amount, resetAt });
    if (this.#windows.size >= this.#sweepAt) this.#sweep(now);
    return { count: amount, resetAt };
  }

  async peek(key: string, windowMs: number, now: number): Promise<WindowCount> {
    const { slot, resetAt } = windowOf(key, windowMs, now);
    return { count: this.#windows.get(slot)?.count ?? 0, resetAt };
  }

  /** Forgets every window (the emulator restored a snapshot: counts start afresh). */
  clear(): void {
    this.#windows.clear();
  }

  async close(): Promise<void> {
    this.#windows.clear();
  }

  #sweep(now: number): void {
    for (const [slot, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(slot);
    this.#sweepAt = Math.max(1024, this.#windows.size * 2);
  }
}
