/** A periodic task that never overlaps itself; `stop` waits for a pass in progress. */
export class Sweeper {
  readonly #timer: NodeJS.Timeout;
  readonly #task: () => Promise<unknown>;
  readonly #onError: (error: unknown) => void;
  #running: Promise<void> | undefined;

  constructor(task: () => Promise<unknown>, intervalMs: number, onError: (error: unknown) => void) {
    this.#task = task;
    this.#onError = onError;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      void this.#pass();
    }, intervalMs);
    // Background work must not keep a process (or a test runner) alive.
    this.#timer.unref();
  }

  /** One pass now, after the one in progress (a clock jump must be seen at once, not at the next tick). */
  async runNow(): Promise<void> {
    while (this.#running) await this.#running;
    await this.#pass();
  }

  #pass(): Promise<void> {
    this.#running = this.#task()
      .then(() => undefined, this.#onError)
      .finally(() => {
        this.#running = undefined;
      });
    return this.#running;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
