import {
  type ErrorBody,
  type FormErrorLeaf,
  type FormErrorTree,
  type JSONErrorName,
  JSONErrors,
  RATE_LIMITED_MESSAGE,
  RateLimitHeaders,
  RateLimitScopes,
} from '@hearth/protocol';

/** An error that knows its wire form. HearthError is one; the OAuth2 endpoints have their own RFC shape. */
export interface WireError extends Error {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  body(): object;
}

export function isWireError(error: unknown): error is WireError {
  return (
    error instanceof Error &&
    typeof (error as Partial<WireError>).status === 'number' &&
    typeof (error as Partial<WireError>).body === 'function'
  );
}

/**
 * The one error class a client can cause. Its name picks the wire triple from the catalogue in
 * `@hearth/protocol`; `extra` adds the documented extra fields some errors carry (530010); `values` fills
 * the `{name}` slots of a message (530100).
 */
export class HearthError extends Error implements WireError {
  readonly error: JSONErrorName;
  readonly status: number;
  readonly code: number;
  readonly errors: FormErrorTree | undefined;
  readonly extra: Readonly<Record<string, unknown>> | undefined;

  constructor(
    error: JSONErrorName,
    options: {
      errors?: FormErrorTree;
      extra?: Record<string, unknown>;
      values?: Record<string, string>;
    } = {},
  ) {
    const entry = JSONErrors[error];
    const { values } = options;
    super(
      values
        ? entry.message.replace(/\{(\w+)\}/g, (slot, name: string) => values[name] ?? slot)
        : entry.message,
    );
    this.name = 'HearthError';
    this.error = error;
    this.status = entry.status;
    this.code = entry.code;
    this.errors = options.errors;
    this.extra = options.extra;
  }

  body(): ErrorBody & Record<string, unknown> {
    return {
      ...this.extra,
      code: this.code,
      message: this.message,
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

/** Invalid Form Body (50035) with one error at a dotted field path, e.g. `invalidForm('members.3.id', leaf)`. */
export function invalidForm(path: string, leaf: FormErrorLeaf): HearthError {
  return new HearthError('InvalidFormBody', {
    errors: formErrorTree([[path.split('.').filter(Boolean), leaf]]),
  });
}

/** Builds the nested `errors` tree from (field path, leaf) pairs; the empty path is the request itself. */
export function formErrorTree(entries: Iterable<readonly [readonly string[], FormErrorLeaf]>): FormErrorTree {
  const root: FormErrorTree = {};
  for (const [path, leaf] of entries) {
    let node = root;
    for (const key of path) {
      const child = node[key];
      if (child === undefined || Array.isArray(child)) {
        const created: FormErrorTree = {};
        node[key] = created;
        node = created;
      } else {
        node = child;
      }
    }
    node._errors = [...(node._errors ?? []), leaf];
  }
  return root;
}

/** 429 from a limit a service keeps (the pre-approval limits): the body and headers of the HTTP limiter. */
export class RateLimitedError extends Error implements WireError {
  readonly status = 429;
  readonly headers: Readonly<Record<string, string>>;
  readonly retryAfter: number;

  constructor(retryAfterSeconds: number) {
    super(RATE_LIMITED_MESSAGE);
    this.name = 'RateLimitedError';
    this.retryAfter = Math.max(0.001, Number(retryAfterSeconds.toFixed(3)));
    this.headers = {
      [RateLimitHeaders.RetryAfter]: String(Math.ceil(this.retryAfter)),
      [RateLimitHeaders.Scope]: RateLimitScopes.Shared,
    };
  }

  body(): object {
    return { message: this.message, retry_after: this.retryAfter, global: false, code: 0 };
  }
}
