import { ClientResult, ErrorType } from '../client-result.js';
import { type Logger, LoggingSeverity } from '../logging.js';

/** How requests leave the process: `fetch` of Node or of the browser, or one a test injects. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RestRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the versioned API base, e.g. `/oauth2/token`. */
  path: string;
  /** The route template that shares one rate-limit bucket, e.g. `POST /lobbies/:id/messages`. */
  route?: string;
  json?: unknown;
  form?: Record<string, string>;
  authorization?: string;
}

export interface RestAnswer {
  status: number;
  body: unknown;
}

export interface RestClientOptions {
  apiBase: string;
  fetch: FetchLike;
  timeoutMs: () => number;
  logger: Logger;
  /** Sent with every request: the library's version (seed: Versioning). */
  headers?: Readonly<Record<string, string>>;
}

const MAX_RATE_LIMIT_RETRIES = 3;

/**
 * The library's HTTP plumbing: one queue per rate-limit bucket, waiting when the bucket is spent and
 * retrying a 429 after `retry_after`, every request bounded by the client's timeout.
 */
export class RestClient {
  readonly #options: RestClientOptions;
  /** Route → the server's bucket hash, learned from `X-RateLimit-Bucket`. */
  readonly #routeBuckets = new Map<string, string>();
  readonly #buckets = new Map<string, { remaining: number; resetAt: number; queue: Promise<unknown> }>();
  #globalUntil = 0;
  #deprecationNoticed = false;

  constructor(options: RestClientOptions) {
    this.#options = options;
  }

  /** Answers the response, or throws a {@link RestFailure} carrying the ClientResult to report. */
  request(request: RestRequest): Promise<RestAnswer> {
    const route = request.route ?? `${request.method} ${request.path}`;
    const key = this.#routeBuckets.get(route) ?? route;
    const bucket = this.#bucket(key);
    const run = bucket.queue.then(() => this.#send(request, route, 0));
    bucket.queue = run.catch(() => undefined);
    return run;
  }

  async #send(request: RestRequest, route: string, attempt: number): Promise<RestAnswer> {
    await this.#waitForBudget(route);
    const { apiBase, fetch, timeoutMs, logger } = this.#options;
    const headers: Record<string, string> = { ...this.#options.headers };
    let body: string | undefined;
    if (request.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(request.form).toString();
    } else if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    }
    if (request.authorization) headers['authorization'] = request.authorization;
    logger.log(LoggingSeverity.Verbose, `→ ${request.method} ${request.path}${body ? ` ${body}` : ''}`);

    let response: Response;
    try {
      response = await fetch(`${apiBase}${request.path}`, {
        method: request.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(timeoutMs()),
      });
    } catch (error) {
      const timedOut =
        error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      const message = timedOut
        ? `timed out after ${timeoutMs()} ms`
        : String((error as Error).message ?? error);
      logger.log(LoggingSeverity.Warning, `${request.method} ${request.path} failed: ${message}`);
      throw new RestFailure(
        new ClientResult({ type: ErrorType.NetworkError, error: message, retryable: true }),
      );
    }
    const text = await response.text();
    logger.log(LoggingSeverity.Verbose, `← ${response.status} ${request.method} ${request.path} ${text}`);
    this.#learn(route, response);
    this.#noticeDeprecation(response);

    if (response.status === 429) {
      const parsed = parseJson(text) as { retry_after?: number; global?: boolean } | undefined;
      const retryAfter = Number(parsed?.retry_after ?? response.headers.get('retry-after') ?? 1);
      if (parsed?.global) this.#globalUntil = Date.now() + retryAfter * 1000;
      // A wait longer than the request timeout (e.g. the pre-approval limits, 2 h, PROTOCOL.md §A.3) is the
      // game's to schedule: it surfaces at once as retryable with RetryAfter.
      if (attempt < MAX_RATE_LIMIT_RETRIES && retryAfter * 1000 <= timeoutMs()) {
        logger.log(LoggingSeverity.Info, `rate limited on ${route}; retrying in ${retryAfter} s`);
        await sleep(retryAfter * 1000);
        return this.#send(request, route, attempt + 1);
      }
      throw new RestFailure(failureOf(response.status, text, { retryable: true, retryAfter }));
    }
    if (response.status >= 400) throw new RestFailure(failureOf(response.status, text, {}));
    return { status: response.status, body: parseJson(text) };
  }

  /** A supported but superseded SDK is answered with RFC 9745 `Deprecation` and a `Sunset`: warn once. */
  #noticeDeprecation(response: Response): void {
    if (this.#deprecationNoticed || !response.headers.has('deprecation')) return;
    this.#deprecationNoticed = true;
    const sunset = response.headers.get('sunset');
    this.#options.logger.log(
      LoggingSeverity.Warning,
      `the server deprecates this SDK version${sunset ? `; its support ends ${sunset}` : ''}: upgrade the SDK`,
    );
  }

  #bucket(key: string) {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      bucket = { remaining: 1, resetAt: 0, queue: Promise.resolve() };
      this.#buckets.set(key, bucket);
    }
    return bucket;
  }

  async #waitForBudget(route: string): Promise<void> {
    const now = Date.now();
    if (this.#globalUntil > now) await sleep(this.#globalUntil - now);
    const bucket = this.#buckets.get(this.#routeBuckets.get(route) ?? route);
    if (bucket && bucket.remaining <= 0 && bucket.resetAt > Date.now())
      await sleep(bucket.resetAt - Date.now());
  }

  /**
   * Reads X-RateLimit-Bucket/Remaining/Reset-After (PROTOCOL.md §E.3). Remaining and Reset-After bind
   * even without a bucket hash: the route is then its own bucket.
   */
  #learn(route: string, response: Response): void {
    const hash = response.headers.get('x-ratelimit-bucket');
    const remaining = response.headers.get('x-ratelimit-remaining');
    const resetAfter = response.headers.get('x-ratelimit-reset-after');
    if (remaining === null || resetAfter === null) return;
    if (hash && !this.#routeBuckets.has(route)) {
      this.#routeBuckets.set(route, hash);
      const existing = this.#buckets.get(route);
      if (existing && !this.#buckets.has(hash)) this.#buckets.set(hash, existing);
    }
    const bucket = this.#bucket(this.#routeBuckets.get(route) ?? route);
    bucket.remaining = Number(remaining);
    bucket.resetAt = Date.now() + Number(resetAfter) * 1000;
  }
}

/** A request that did not succeed, with what to report. */
export class RestFailure extends Error {
  readonly result: ClientResult;

  constructor(result: ClientResult) {
    super(result.Error());
    this.name = 'RestFailure';
    this.result = result;
  }
}

/** The platform's `{code, message}` or the OAuth2 `{error, error_description}` body, as a ClientResult. */
function failureOf(
  status: number,
  text: string,
  extra: { retryable?: boolean; retryAfter?: number },
): ClientResult {
  const body = parseJson(text) as { code?: number; message?: string; error?: string } | undefined;
  return new ClientResult({
    type: ErrorType.HTTPError,
    status,
    error: body?.error ?? body?.message ?? `HTTP ${status}`,
    errorCode: typeof body?.code === 'number' ? body.code : 0,
    responseBody: text,
    retryable: extra.retryable ?? status >= 500,
    retryAfter: extra.retryAfter ?? 0,
  });
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
