import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';

/**
 * Issue 21, slow clients: a client that trickles its request headers (slowloris) or its body holds a socket
 * only until the configured timeout, and while many do, everyone else is served.
 */

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const SLOW_CLIENTS = 200;

let hearth: TestHearth;
let address: { host: string; port: number };

beforeAll(async () => {
  hearth = await startHearth({
    rateLimitGlobal: 1_000_000,
    httpHeadersTimeoutMs: HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  const bound = hearth.http.server.address();
  if (!bound || typeof bound === 'string') throw new Error('no TCP address');
  address = { host: '127.0.0.1', port: bound.port };
});

afterAll(async () => {
  await hearth?.close();
});

interface SlowClient {
  /** Settles when the server has closed the socket, with what it answered first (if anything). */
  ended: Promise<{ answer: string; keptBytes: number; lifetimeMs: number }>;
  stop(): void;
}

/** Sends `head` one byte at a time, every `everyMs`, for as long as the socket stays open, then `rest`. */
function trickle(head: string, everyMs: number): SlowClient {
  const socket = net.connect(address);
  let sent = 0;
  let answer = '';
  const started = performance.now();
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return;
    // Never finishes: after the request line, header lines forever.
    const text = sent < head.length ? head[sent]! : 'a';
    socket.write(text);
    sent += 1;
  }, everyMs);
  socket.on('data', (chunk) => {
    answer += chunk.toString('latin1');
  });
  socket.on('error', () => {});
  const ended = new Promise<{ answer: string; keptBytes: number; lifetimeMs: number }>((resolve) => {
    socket.once('close', () => {
      clearInterval(timer);
      resolve({ answer, keptBytes: sent, lifetimeMs: performance.now() - started });
    });
  });
  return {
    ended,
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

describe('slow-header clients (slowloris)', () => {
  it(`${SLOW_CLIENTS} of them are cut off after the headers timeout, and others are served meanwhile`, async () => {
    const slow = Array.from({ length: SLOW_CLIENTS }, () =>
      trickle(`GET /api/v10/gateway HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: `, 100),
    );
    try {
      // While they hold their sockets, ordinary requests are answered.
      let served = 0;
      for (let i = 0; i < 20; i++) {
        const response = await hearth.api('/gateway');
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        served += 1;
      }
      const ends = await Promise.all(slow.map((client) => client.ended));
      const longest = Math.max(...ends.map((end) => end.lifetimeMs));
      const answered408 = ends.filter((end) => end.answer.startsWith('HTTP/1.1 408')).length;
      console.log(
        `slowloris: ${SLOW_CLIENTS} slow-header clients all disconnected (${answered408} answered 408), ` +
          `longest held ${Math.round(longest)} ms for a headers timeout of ${HEADERS_TIMEOUT_MS} ms; ` +
          `${served} other requests served meanwhile`,
      );
      expect(ends).toHaveLength(SLOW_CLIENTS);
      expect(answered408).toBe(SLOW_CLIENTS);
    } finally {
      for (const client of slow) client.stop();
    }
  }, 60_000);

  it('a request whose body trickles is cut off after the request timeout', async () => {
    const head =
      'POST /api/v10/oauth2/token HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n';
    const socket = net.connect(address);
    socket.on('error', () => {});
    socket.write(head);
    const timer = setInterval(() => socket.writable && socket.write('a'), 100);
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    try {
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(timer);
      socket.destroy();
    }
  }, 30_000);

  it('a client that sends its request at an ordinary pace is unaffected', async () => {
    const socket = net.connect(address);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    for (const part of [
      'GET /api/v10/gateway HTTP/1.1\r\n',
      'Host: 127.0.0.1\r\n',
      'Connection: close\r\n\r\n',
    ]) {
      socket.write(part);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await answer).toMatch(/^HTTP\/1\.1 200/);
    socket.destroy();
  });
});
