import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test files wait on sockets and child processes most of the time: two at once on two cores take 0.67 of the time.
    maxWorkers: 2,
    // Every response of every test server is checked against reference/openapi.json (STYLE 17).
    setupFiles: ['./test-support/conformance-setup.ts'],
    reporters: ['default', './test-support/summary-reporter.ts'],
  },
});
