import { describe, expect, it } from 'vitest';
import { ReadCache } from '../src/storage/read-cache.js';

/** The cache's rules (credential-cache.test.ts proves the caches built on it through HTTP). */
describe('ReadCache', () => {
  const counting = () => {
    let reads = 0;
    const read = async () => `value ${++reads}`;
    return { read, reads: () => reads };
  };

  it('keeps a value read until the stamp moves', async () => {
    let stamp = 'a';
    const cache = new ReadCache<string>(() => stamp);
    const { read, reads } = counting();
    const first = cache.get('k', read);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe('value 1');
    // Kept: answered at once, not as a promise (the request's credential lookup takes no microtask turn).
    expect(cache.get('k', read)).toBe('value 1');
    stamp = 'b';
    expect(await cache.get('k', read)).toBe('value 2');
    expect(reads()).toBe(2);
  });

  it('keeps nothing without a stamp', async () => {
    const cache = new ReadCache<string>(() => undefined);
    const { read, reads } = counting();
    await cache.get('k', read);
    await cache.get('k', read);
    expect(reads()).toBe(2);
  });

  it('{ keep: false } (a gateway Identify) answers a kept value but keeps none of its own reads', async () => {
    const cache = new ReadCache<string>(() => 'a');
    const { read, reads } = counting();
    expect(await cache.get('once', read, { keep: false })).toBe('value 1');
    expect(await cache.get('once', read, { keep: false })).toBe('value 2');
    // Nothing was kept: a kept lookup reads again, and keeps that.
    expect(await cache.get('once', read)).toBe('value 3');
    expect(await cache.get('once', read, { keep: false })).toBe('value 3');
    expect(reads()).toBe(3);
  });
});
