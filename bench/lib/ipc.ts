// The request/reply protocol between the bench and a server child started with `ipc` (`lib/children.ts`):
// the parent sends `{id, cmd, …}`, the child answers `{id, result}` or `{id, error}`.
import { getHeapSpaceStatistics } from 'node:v8';

/** What the parent asks a child: `cmd` names the command, the rest are its arguments. */
export interface IpcRequest {
  cmd: string;
  [argument: string]: unknown;
}

export type IpcReply = { id: number; result: unknown } | { id: number; error: string };

export function isIpcReply(message: unknown): message is IpcReply {
  return (
    typeof message === 'object' &&
    message !== null &&
    'id' in message &&
    typeof message.id === 'number' &&
    ('result' in message || ('error' in message && typeof message.error === 'string'))
  );
}

/**
 * In a child: answers every request from the parent with `handle`'s result (or its error), one at a time
 * in arrival order. The channel keeps the child alive until the parent stops it.
 */
export function answerRequests(handle: (request: IpcRequest) => Promise<unknown>): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('started without an IPC channel');
  let queue: Promise<void> = Promise.resolve();
  process.on('message', (message: unknown) => {
    if (
      typeof message !== 'object' ||
      message === null ||
      !('id' in message) ||
      typeof message.id !== 'number' ||
      !('cmd' in message) ||
      typeof message.cmd !== 'string'
    ) {
      return;
    }
    const id = message.id;
    const request = message as IpcRequest;
    queue = queue.then(async () => {
      let reply: IpcReply;
      try {
        reply = { id, result: (await handle(request)) ?? null };
      } catch (error) {
        reply = { id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
      }
      send(reply);
    });
  });
}

/** The server's memory after a forced full GC (the child runs with `--expose-gc`), as sent over IPC. */
export interface MemorySample {
  heapUsed: number;
  /** The heap V8 has reserved: pages it may fill before RSS grows. */
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  /** What the heap holds of compiled code (part of heapUsed): paid once per process, not per session. */
  codeSpace: number;
  /** Sessions (Hearth) or connections (bare ws) the server holds at the time. */
  held: number;
}

/** Collects garbage until the heap stops shrinking (at most a few passes), then samples memory. */
export async function sampleMemory(held: () => number): Promise<MemorySample> {
  const gc = globalThis.gc;
  if (!gc) throw new Error('memory samples need node --expose-gc');
  let last = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 5; pass++) {
    // Let pending callbacks and microtasks (closed sockets, timers) settle between passes.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    const used = process.memoryUsage().heapUsed;
    if (used >= last * 0.999) break;
    last = used;
  }
  const usage = process.memoryUsage();
  return {
    heapUsed: usage.heapUsed,
    heapTotal: usage.heapTotal,
    codeSpace:
      getHeapSpaceStatistics().find((space) => space.space_name === 'code_space')?.space_used_size ?? 0,
    rss: usage.rss,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    held: held(),
  };
}

export function isMemorySample(value: unknown): value is MemorySample {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return ['heapUsed', 'heapTotal', 'rss', 'external', 'arrayBuffers', 'codeSpace', 'held'].every(
    (k) => typeof fields[k] === 'number',
  );
}

/** The server's CPU time so far (user and system, µs) and when it was read (ms, performance.now()). */
export interface CpuSample {
  user: number;
  system: number;
  at: number;
}

export function sampleCpu(): CpuSample {
  const { user, system } = process.cpuUsage();
  return { user, system, at: performance.now() };
}

export function isCpuSample(value: unknown): value is CpuSample {
  if (typeof value !== 'object' || value === null) return false;
  const fields = value as Record<string, unknown>;
  return ['user', 'system', 'at'].every((k) => typeof fields[k] === 'number');
}
