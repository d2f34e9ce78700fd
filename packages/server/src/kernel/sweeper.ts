/** A periodic task that never overlaps itself; `stop` waits for a pass in progress. */
export class Sweeper {
  readonly #timer: NodeJS.Timeout;
  #running: Promise<void> | undefined;

  constructor(task: () => Promise<unknown>, intervalMs: number, onError: (error: unknown) => void) {
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = task()
        .then(() => undefined, onError)
        .finally(() => {
          this.#running = undefined;
        });
    }, intervalMs);
    // Background work must not keep a process (or a test runner) alive.
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
