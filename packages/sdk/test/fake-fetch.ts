import type { FetchLike } from '@hearth/sdk';

/** One request as it left the library through the injected `fetch`. */
export interface RecordedRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  signal: AbortSignal | undefined;
}

/** Answers the `index`-th request (from 0). */
export type Answer = (request: RecordedRequest, index: number) => Response | Promise<Response>;

export interface FakeFetch {
  fetch: FetchLike;
  requests: RecordedRequest[];
}

/** A `fetch` that records every request and answers with canned Responses. */
export function fakeFetch(answer: Answer): FakeFetch {
  const requests: RecordedRequest[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request: RecordedRequest = {
      url: input,
      method: init.method ?? 'GET',
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? init.body : '',
      signal: init.signal ?? undefined,
    };
    requests.push(request);
    return answer(request, requests.length - 1);
  };
  return { fetch, requests };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** An answer that never comes: the Promise rejects only when the request's AbortSignal fires, as fetch does. */
export function untilAborted(request: RecordedRequest): Promise<Response> {
  return new Promise((_resolve, reject) => {
    const signal = request.signal;
    if (!signal) return;
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** The fields of an `application/x-www-form-urlencoded` body. */
export function form(request: RecordedRequest): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(request.body));
}
