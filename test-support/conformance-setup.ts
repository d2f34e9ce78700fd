import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { conformance } from './conformance.js';
import { CONFORMANCE_TALLY_DIR } from './conformance-tally.js';

/**
 * Registered in vitest.config.ts `setupFiles`, so it runs in every test file: a response that does not
 * conform fails the test during which it was sent (or the file, for responses of `beforeAll`/`afterAll`).
 */
afterEach(() => conformance.assertClean());

afterAll(() => {
  const tally = conformance.takeTally();
  if (Object.keys(tally.operations).length > 0) {
    mkdirSync(CONFORMANCE_TALLY_DIR, { recursive: true });
    const name = `${basename(expect.getState().testPath ?? 'unknown')}-${randomUUID()}.json`;
    writeFileSync(`${CONFORMANCE_TALLY_DIR}/${name}`, JSON.stringify(tally));
  }
  conformance.assertClean();
});
