import type { Transaction } from 'kysely';
import { captureRequest } from '../ops/request-context.js';
import type { Storage } from './database.js';
import type { Schema } from './schema.js';

type Work<T> = (tx: Transaction<Schema>) => Promise<T>;

interface Queued {
  work: Work<unknown>;
  /** Runs the work in the async context of the request that asked (its id names what it records). */
  inContext: <R>(fn: () => R) => R;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the works asked for in one turn of the event loop (requests read in the same poll) share
 * one transaction, committed once, instead of one transaction each; alone, a work runs as it would have.
 * A work may refuse (`isRefusal`) only before it writes anything: its caller gets the refusal and the
 * others commit. Any other error rolls the group back, and each work then runs in a transaction of its own.
 */
export class GroupCommit {
  readonly #storage: Storage;
  readonly #isRefusal: (error: unknown) => boolean;
  #queue: Queued[] = [];

  constructor(storage: Storage, isRefusal: (error: unknown) => boolean) {
    this.#storage = storage;
    this.#isRefusal = isRefusal;
  }

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        work,
        inContext: captureRequest(),
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (this.#queue.length === 1) setImmediate(() => void this.#commit());
    });
  }

  async #commit(): Promise<void> {
    const group = this.#queue;
    this.#queue = [];
    if (group.length === 1) return this.#alone(group[0] as Queued);
    let outcomes: ({ value: unknown } | { refusal: unknown })[];
    try {
      outcomes = await this.#storage.transaction(async (tx) => {
        const done: ({ value: unknown } | { refusal: unknown })[] = [];
        for (const queued of group) {
          try {
            done.push({ value: await queued.inContext(() => queued.work(tx)) });
          } catch (error) {
            if (!this.#isRefusal(error)) throw error;
            done.push({ refusal: error });
          }
        }
        return done;
      });
    } catch {
      // One work's failure must not fail the others: each runs again on its own.
      await Promise.all(group.map((queued) => this.#alone(queued)));
      return;
    }
    group.forEach((queued, i) => {
      const outcome = outcomes[i];
      if (outcome && 'value' in outcome) queued.resolve(outcome.value);
      else queued.reject(outcome?.refusal);
    });
  }

  async #alone(queued: Queued): Promise<void> {
    try {
      queued.resolve(await queued.inContext(() => this.#storage.transaction(queued.work)));
    } catch (error) {
      queued.reject(error);
    }
  }
}
