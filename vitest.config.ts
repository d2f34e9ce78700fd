import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/*/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Test files wait on sockets and child processes most of the time: two at once on two cores take 0.67 of the time.
    maxWorkers: 2,
    // Files share each worker's module graph: evaluating the server's imports once per worker, not once per
    // file, took the import phase of a sample of 8 files from 92 s to 30 s. Files restore what they change.
    isolate: false,
    // Every response of every test server is checked against reference/openapi.json (STYLE 17).
    // The second registers a resolve hook before @discordjs/voice loads (see voice-client-hooks.mjs).
    setupFiles: ['./test-support/conformance-setup.ts', './test-support/voice-client-crypto.ts'],
    // A self-signed certificate the workers trust, for voice gateways under test (wss:// only); the CLI bundled once.
    globalSetup: ['./test-support/voice-tls-setup.ts', './test-support/cli-bundle-setup.ts'],
    reporters: ['default', './test-support/summary-reporter.ts'],
  },
});
