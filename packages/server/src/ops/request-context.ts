import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * The request a piece of work is done for. HTTP requests run inside their context, so what they cause in
 * this process (a bus event delivered to this node's gateway, a webhook event recorded for the worker)
 * can name the request in its own log lines.
 */
export interface RequestContext {
  readonly requestId: string;
  /**
   * Cleared when the response is sent: a timer or loop first started by a request inherits its context
   * forever, and must not name that request in what it does later.
   */
  active: boolean;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The header a client or proxy may send its own request id in; Hearth answers with the id it used. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * An incoming id Hearth keeps: 1–128 printable characters of a safe set (UUIDs, ULIDs, hex, proxy ids such
 * as `Root=1-67891233-abcdef`). Anything else is replaced, so that no id can forge or break a log line.
 */
const WELL_FORMED_ID = /^[A-Za-z0-9][A-Za-z0-9._:=@+/-]{0,127}$/;

/** The client's id when it is well formed, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && WELL_FORMED_ID.test(header) ? header : randomUUID();
}

/** Runs `work` (and everything it starts) inside `context`, until its `active` is cleared. */
export function runInRequest<T>(context: RequestContext, work: () => T): T {
  return storage.run(context, work);
}

/** Runs `work` outside any request: long-lived loops started from a request must not claim it forever. */
export function runDetached<T>(work: () => T): T {
  return storage.exit(work);
}

/** The id of the request the current work is done for; undefined outside requests. */
export function currentRequestId(): string | undefined {
  const context = storage.getStore();
  return context?.active ? context.requestId : undefined;
}

const outsideRequests = <R>(work: () => R): R => work();

/**
 * What runs work later in the current request's context, as `AsyncLocalStorage.snapshot()` would for this
 * one store, at a fraction of its cost (a bound resource per call): outside a request, it runs work as is.
 */
export function captureRequest(): <R>(work: () => R) => R {
  const context = storage.getStore();
  return context === undefined ? outsideRequests : (work) => storage.run(context, work);
}
