/**
 * A result now or later. The hot paths (a request's kept credential, its in-process rate limits) answer
 * synchronously when they can: each promise and `await` costs a microtask turn per request, as Fastify's
 * own hook runner avoids for callback hooks.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)` at once when `value` is here, else when it settles; a throw of `next` rejects or throws. */
export function after<T, R>(value: MaybePromise<T>, next: (value: T) => MaybePromise<R>): MaybePromise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
