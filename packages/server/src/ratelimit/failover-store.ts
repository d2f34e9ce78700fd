import {
  type GatedCounts,
  type GatedHit,
  gatedHit,
  type Hit,
  type RateLimitStore,
  type WindowCount,
} from './store.js';

export interface FailoverOptions {
  /** Whether the shared store can answer now (a Redis connection that is `ready`); false goes local at once. */
  available: () => boolean;
  /** How long one shared call may take before the local store answers instead (ms). */
  timeoutMs?: number;
  /** Told when counting moves to the local store (with the error) and back (without). */
  onSwitch?: (local: boolean, error?: unknown) => void;
}

/**
 * Shared counters with a local stand-in: while the shared store is away (Redis restarting, a network
 * partition), each node counts on its own, so the limits hold per node instead of every request failing
 * with 500. Counts made locally are not carried back: a window in flight restarts from the shared count.
 */
export class FailoverRateLimitStore implements RateLimitStore {
  readonly #shared: RateLimitStore;
  readonly #local: RateLimitStore;
  readonly #options: FailoverOptions;
  readonly #timeoutMs: number;
  #usingLocal = false;

  constructor(shared: RateLimitStore, local: RateLimitStore, options: FailoverOptions) {
    this.#shared = shared;
    this.#local = local;
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? 1000;
  }

  hit(key: string, windowMs: number, now: number): Promise<WindowCount> {
    return this.#either((store) => store.hit(key, windowMs, now));
  }

  hitGated(gate: GatedHit, next: Hit, now: number): Promise<GatedCounts> {
    return this.#either((store) => gatedHit(store, gate, next, now));
  }

  peek(key: string, windowMs: number, now: number): Promise<WindowCount> {
    return this.#either((store) => store.peek(key, windowMs, now));
  }

  async close(): Promise<void> {
    await Promise.all([this.#shared.close(), this.#local.close()]);
  }

  async #either<T>(call: (store: RateLimitStore) => Promise<T>): Promise<T> {
    if (!this.#options.available()) {
      this.#switch(true, new Error('the shared rate-limit store is not connected'));
      return call(this.#local);
    }
    try {
      const count = await withTimeout(call(this.#shared), this.#timeoutMs);
      this.#switch(false);
      return count;
    } catch (error) {
      this.#switch(true, error);
      return call(this.#local);
    }
  }

  #switch(local: boolean, error?: unknown): void {
    if (this.#usingLocal === local) return;
    this.#usingLocal = local;
    this.#options.onSwitch?.(local, error);
  }
}

function withTimeout<T>(pending: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the shared rate-limit store took over ${ms} ms`)), ms);
  });
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}
