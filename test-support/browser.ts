import { access, constants } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';

/** The Chromium the browser suites drive; `HEARTH_TEST_CHROMIUM` points elsewhere. */
export const CHROMIUM_PATH = process.env['HEARTH_TEST_CHROMIUM'] ?? '/usr/bin/chromium';

/** Headless, and quiet: no sandbox (containers), no GPU, no calls home that could slow a test. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether Chromium is installed. A missing browser skips the browser suites with a notice, except under
 * HEARTH_REQUIRE_SERVICES=1 (CI), where it fails them, as for PostgreSQL and Redis.
 */
export async function chromiumAvailable(): Promise<boolean> {
  try {
    await access(CHROMIUM_PATH, constants.X_OK);
    return true;
  } catch {
    if (process.env['HEARTH_REQUIRE_SERVICES'] === '1') {
      throw new Error(`Chromium is required (HEARTH_REQUIRE_SERVICES=1) but ${CHROMIUM_PATH} is missing`);
    }
    console.warn(`\n  ⚠ Chromium at ${CHROMIUM_PATH} is missing: the browser suites are SKIPPED\n`);
    return false;
  }
}

/** A headless Chromium; give each test its own `browser.newContext()`. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** The game's side of a loopback redirect (RFC 8252 §7.3): records each query it receives. */
export interface CallbackServer {
  /** `http://127.0.0.1:<port>/callback` */
  readonly url: string;
  /** The query of every request to /callback, in arrival order. */
  readonly received: URLSearchParams[];
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1 and a random port, answering /callback with a small page. */
export async function startCallbackServer(): Promise<CallbackServer> {
  const received: URLSearchParams[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    received.push(url.searchParams);
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', connection: 'close' })
      .end('<!doctype html><title>Game</title><p id="done">You can return to the game.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    received,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
