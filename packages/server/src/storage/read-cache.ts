import type { MaybePromise } from '../kernel/maybe.js';
import type { ChangeStamps } from './change-stamp.js';

/** How a lookup uses the cache. */
export interface ReadOptions {
  /**
   * Whether a value read is kept for the lookups after it (default true). A one-off lookup, such as a gateway
   * Identify (one per connection), takes a kept value but keeps none: kept, it would cost every idle session
   * its credential's entry for no later hit.
   */
  keep?: boolean;
}

/**
 * Values read from the database, kept only until the next commit that may change them (`ChangeStamps`: any
 * other process's, and this one's but those that wrote only tables no cached read reads, such as a lobby
 * message's): a hit answers what the read would have answered, whichever process or node wrote since. It pays
 * where reads repeat between such commits (the credential lookup of every authenticated request).
 */
export class ReadCache<V> {
  readonly #stamps: ChangeStamps;
  readonly #max: number;
  readonly #entries = new Map<string, V>();
  /** The stamp under which every entry was read. */
  #stamp: string | undefined;

  constructor(stamps: ChangeStamps, max = 10_000) {
    this.#stamps = stamps;
    this.#max = max;
  }

  /**
   * The value of `key`: kept (answered at once), or read by `read` and kept if nothing was committed since
   * before the read began (a commit in between leaves the entry under the older stamp, which the next use
   * then drops).
   */
  get(key: string, read: () => Promise<V | undefined>, options?: ReadOptions): MaybePromise<V | undefined> {
    const before = this.#stamps();
    if (before !== undefined) {
      if (before === this.#stamp) {
        const kept = this.#entries.get(key);
        if (kept !== undefined) return kept;
      } else {
        this.#entries.clear();
        this.#stamp = before;
      }
    }
    return this.#read(key, read, before, options?.keep ?? true);
  }

  async #read(
    key: string,
    read: () => Promise<V | undefined>,
    before: string | undefined,
    keep: boolean,
  ): Promise<V | undefined> {
    const value = await read();
    if (keep && value !== undefined && before !== undefined && before === this.#stamp) {
      if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
      this.#entries.set(key, value);
    }
    return value;
  }

  /** Forgets `key` (an entry that answered something no longer true without a commit: an expiry). */
  delete(key: string): void {
    this.#entries.delete(key);
  }
}
