import { ManualClock } from '@hearth/server';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { gatewayUrl } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';

/**
 * Issue 22, behind a reverse proxy: `--trust-proxy` names the proxies whose X-Forwarded-For is believed, so
 * per-address limits count the client behind the proxy. Unset, a forged header changes nothing.
 */

let hearth: TestHearth | undefined;

afterEach(async () => {
  await hearth?.close();
  hearth = undefined;
});

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

async function statuses(server: TestHearth, address: string, count: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await server.api('/gateway', from(address))).status);
  return seen;
}

/** Resolves with the upgrade's HTTP status: 101 when admitted (the socket stays open until the test ends). */
function upgrade(server: TestHearth, address: string, open: WebSocket[]): Promise<number> {
  const socket = new WebSocket(gatewayUrl(server.url), from(address));
  socket.on('error', () => {}); // a refused upgrade, or terminate() before the handshake ended
  open.push(socket);
  return new Promise((resolve) => {
    socket.once('upgrade', (response) => resolve(response.statusCode ?? 0));
    socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
  });
}

describe('the global rate limit of an anonymous caller behind a proxy', () => {
  it('counts each forwarded client on its own when the proxy is trusted', async () => {
    hearth = await startHearth({ rateLimitGlobal: 2, trustProxy: ['loopback'] }, new ManualClock());
    expect(await statuses(hearth, '203.0.113.1', 3)).toEqual([200, 200, 429]);
    expect(await statuses(hearth, '203.0.113.2', 2)).toEqual([200, 200]);
    // The client is the left-most address the trusted hops vouch for.
    expect(await statuses(hearth, '203.0.113.1, 127.0.0.1', 1)).toEqual([429]);
  });

  it('ignores X-Forwarded-For when no proxy is trusted: every caller shares the socket address', async () => {
    hearth = await startHearth({ rateLimitGlobal: 2 }, new ManualClock());
    expect(await statuses(hearth, '203.0.113.1', 2)).toEqual([200, 200]);
    expect(await statuses(hearth, '203.0.113.2', 1)).toEqual([429]);
  });

  it('does not believe a header from an address outside the trusted list', async () => {
    hearth = await startHearth({ rateLimitGlobal: 2, trustProxy: ['10.0.0.0/8'] }, new ManualClock());
    expect(await statuses(hearth, '203.0.113.1', 2)).toEqual([200, 200]);
    expect(await statuses(hearth, '203.0.113.2', 1)).toEqual([429]);
  });
});

describe('the gateway cap per address behind a proxy', () => {
  it('counts sockets per forwarded client when the proxy is trusted', async () => {
    hearth = await startHearth({ gatewayMaxConnectionsPerAddress: 1, trustProxy: ['127.0.0.1'] });
    const open: WebSocket[] = [];
    try {
      expect(await upgrade(hearth, '198.51.100.7', open)).toBe(101);
      expect(await upgrade(hearth, '198.51.100.8', open)).toBe(101);
      expect(await upgrade(hearth, '198.51.100.7', open)).toBe(429);
    } finally {
      for (const socket of open) socket.terminate();
    }
  });

  it('counts the socket address when no proxy is trusted', async () => {
    hearth = await startHearth({ gatewayMaxConnectionsPerAddress: 1 });
    const open: WebSocket[] = [];
    try {
      expect(await upgrade(hearth, '198.51.100.7', open)).toBe(101);
      expect(await upgrade(hearth, '198.51.100.8', open)).toBe(429);
    } finally {
      for (const socket of open) socket.terminate();
    }
  });
});
