// Paced publishing, for the server children of cross-node (servers/hearth-gateway.ts and
// baseline/minimal-cross-node.ts): nothing of the bench's client code, which those children must not load.

/** How a paced stream went: each event's time from due until its publish returned, and the pacing's lag. */
export interface PacedStream {
  publishP50Ms: number;
  publishP99Ms: number;
  /** How far the pacing fell behind (ms): the event loop was that late at worst. */
  lateMs: number;
  /** How long after the last event was due every publish had returned (ms). */
  publishedAfterMs: number;
  pacedMs: number;
}

/**
 * Calls `publish(i, dueAt)` for events 0 … count − 1 at `rate` a second, paced on the event loop (every
 * millisecond, the events due by then), and waits until every publish has returned.
 */
export async function paceStream(
  rate: number,
  count: number,
  publish: (i: number, dueAt: number) => Promise<void>,
): Promise<PacedStream> {
  const published: Promise<void>[] = [];
  const publishMs = new Float64Array(count);
  const start = performance.now();
  let late = 0;
  for (let next = 0; next < count; ) {
    const now = performance.now();
    const due = Math.min(count, Math.floor(((now - start) * rate) / 1000) + 1);
    for (; next < due; next++) {
      const i = next;
      const dueAt = start + (i * 1000) / rate;
      late = Math.max(late, now - dueAt);
      published.push(
        publish(i, dueAt).then(() => {
          publishMs[i] = performance.now() - dueAt;
        }),
      );
    }
    if (next < count) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const pacedMs = performance.now() - start;
  await Promise.all(published);
  publishMs.sort();
  const at = (p: number) => publishMs[Math.min(count - 1, Math.ceil(p * count) - 1)]!;
  return {
    publishP50Ms: at(0.5),
    publishP99Ms: at(0.99),
    lateMs: late,
    publishedAfterMs: performance.now() - start - ((count - 1) * 1000) / rate,
    pacedMs,
  };
}

/**
 * Event `seq` of run `run`: `base` with the run, the number and the due time (ms since the epoch) in its
 * metadata, at fixed widths, so that every event on every side is the same number of bytes.
 */
export function streamEvent(base: Record<string, unknown>, run: string, seq: number, dueAt: number) {
  const metadata = (base['metadata'] ?? {}) as Record<string, unknown>;
  return {
    ...base,
    metadata: {
      ...metadata,
      run,
      seq: String(seq).padStart(9, '0'),
      sent_at: (performance.timeOrigin + dueAt).toFixed(3),
    },
  };
}
