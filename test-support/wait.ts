/**
 * Polls `condition` every 5 ms until it holds; fails naming `what` after `timeoutMs` (a function: what was
 * seen by then, for a failure that says why).
 */
export async function until(
  condition: () => boolean,
  what: string | (() => string),
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
