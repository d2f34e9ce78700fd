import v8 from 'node:v8';
import vm from 'node:vm';
import { GatewayCloseCodes, GatewayOpcodes, MAX_CLIENT_PAYLOAD_BYTES } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GatewayClient, gatewayUrl } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';

/**
 * Issue 21, lifetimes and frame limits: a socket that never identifies is closed after the identify timeout
 * however often it heartbeats; one address holds a bounded number of sockets; intents beyond the defined
 * bits close 4013; a frame over the size limit, or one that cannot be decoded, closes its own session with
 * 4002 and no other.
 */

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
/** Short enough for the suite; the server's default is IDENTIFY_TIMEOUT_MS. */
const IDENTIFY_TIMEOUT_MS = 1_500;

let hearth: TestHearth;
let game: TestGame;

beforeAll(async () => {
  hearth = await startHearth(
    { rateLimitGlobal: 1_000_000, gatewayMaxConnectionsPerAddress: 10_000 },
    undefined,
    { gateway: { identifyTimeoutMs: IDENTIFY_TIMEOUT_MS } },
  );
  game = await createGame(hearth);
});

afterAll(async () => {
  await hearth?.close();
});

async function hello(url = hearth.url): Promise<GatewayClient> {
  const client = await GatewayClient.connect(url);
  await client.nextOp(GatewayOpcodes.Hello);
  return client;
}

/** A bot session; each identify of one bot spends its 5 s window, so every test uses a bot of its own. */
async function botSession(token: string): Promise<GatewayClient> {
  const client = await hello();
  client.send({ op: 2, d: { token, properties: PROPERTIES, intents: 0 } });
  await client.nextDispatch('READY');
  return client;
}

describe('a socket that never identifies', () => {
  it('is closed with 4003 after the identify timeout, although it heartbeats', async () => {
    const client = await hello();
    const heartbeats = setInterval(() => client.send({ op: 1, d: null }), IDENTIFY_TIMEOUT_MS / 5);
    try {
      await client.nextOp(GatewayOpcodes.HeartbeatAck);
      const close = await client.waitClose(IDENTIFY_TIMEOUT_MS + 10_000);
      expect(close).toEqual({ code: GatewayCloseCodes.NotAuthenticated, reason: 'Not authenticated' });
      // It was answered all along: the heartbeats were heard, and did not keep it open.
      expect(client.frames.filter((f) => f.op === GatewayOpcodes.HeartbeatAck).length).toBeGreaterThan(1);
    } finally {
      clearInterval(heartbeats);
    }
  });

  it('an identified session outlives the identify timeout', async () => {
    const other = await createGame(hearth);
    const client = await botSession(other.botToken);
    const heartbeats = setInterval(() => client.send({ op: 1, d: null }), IDENTIFY_TIMEOUT_MS / 5);
    try {
      // Past the timeout, counted in acknowledged heartbeats rather than by sleeping.
      for (let i = 0; i < 8; i++) await client.nextOp(GatewayOpcodes.HeartbeatAck);
      await hearth.bus.publish({ type: 'LIFETIME_EVENT', data: {}, audience: { applicationId: other.id } });
      await client.nextDispatch('LIFETIME_EVENT');
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      clearInterval(heartbeats);
      await client.close();
    }
  });

  it('5,000 of them, heartbeating, are all closed on time and leave nothing behind', async () => {
    const SOCKETS = 5_000;
    const WAVE = 250;
    const gc = exposedGc();
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const lifetimes: number[] = [];
    const codes = new Map<number, number>();
    const closed: Promise<void>[] = [];
    const url = gatewayUrl(hearth.url);
    for (let opened = 0; opened < SOCKETS; opened += WAVE) {
      const wave: Promise<void>[] = [];
      for (let i = 0; i < WAVE; i++) {
        const socket = new WebSocket(url);
        let openedAt = 0;
        wave.push(
          new Promise((resolve, reject) => {
            socket.once('open', () => {
              openedAt = performance.now();
              socket.send('{"op":1,"d":null}');
              resolve();
            });
            socket.once('error', reject);
          }),
        );
        closed.push(
          new Promise((resolve) => {
            socket.once('close', (code) => {
              lifetimes.push(performance.now() - openedAt);
              codes.set(code, (codes.get(code) ?? 0) + 1);
              resolve();
            });
          }),
        );
      }
      await Promise.all(wave);
    }
    const peak = process.memoryUsage().heapUsed;
    await Promise.all(closed);
    await expect
      .poll(() => hearth.gateway.socketCounts(), { timeout: 10_000 })
      .toEqual({
        sockets: 0,
        addresses: 0,
      });
    gc();
    const heapAfter = process.memoryUsage().heapUsed;
    const longest = Math.max(...lifetimes);
    const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
    console.log(
      `unidentified sockets: ${SOCKETS} opened, ${codes.get(GatewayCloseCodes.NotAuthenticated) ?? 0} closed ` +
        `with 4003 (all codes: ${JSON.stringify(Object.fromEntries(codes))}); longest lifetime ` +
        `${Math.round(longest)} ms for a timeout of ${IDENTIFY_TIMEOUT_MS} ms; heap ${mib(heapBefore)} MiB ` +
        `before, ${mib(peak)} MiB with all open, ${mib(heapAfter)} MiB after`,
    );
    expect(codes).toEqual(new Map([[GatewayCloseCodes.NotAuthenticated, SOCKETS]]));
    // None lived past its timeout by more than a busy machine's delay (none was left open).
    expect(longest).toBeLessThan(IDENTIFY_TIMEOUT_MS + 20_000);
    // What 5,000 closed sockets leave on the heap (both ends live in this process) stays small.
    expect(heapAfter - heapBefore).toBeLessThan(64 * 2 ** 20);
  }, 120_000);
});

describe('WebSocket pings (RFC 6455 §5.5.2)', () => {
  it('a ping is answered with a pong carrying its data, before and after Identify', async () => {
    const game = await createGame(hearth);
    const client = await hello();
    const pong = (data: string) =>
      new Promise<string>((resolve) => {
        client.socket.once('pong', (payload: Buffer) => resolve(payload.toString()));
        client.socket.ping(data);
      });
    expect(await pong('before')).toBe('before');
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents: 0 } });
    await client.nextDispatch('READY');
    expect(await pong('after')).toBe('after');
    // Pings are no gateway frames: the session still answers its heartbeats.
    client.send({ op: 1, d: null });
    await client.nextOp(GatewayOpcodes.HeartbeatAck);
    await client.close();
  });
});

describe('sockets per address', () => {
  it('beyond the cap an upgrade is refused with 429, and a closed socket frees its place', async () => {
    const capped = await startHearth({ gatewayMaxConnectionsPerAddress: 3 });
    try {
      const open = [await hello(capped.url), await hello(capped.url), await hello(capped.url)];
      await expect(GatewayClient.connect(capped.url)).rejects.toThrow(/429/);
      // The HTTP API on the same address is not affected.
      expect((await capped.api('/gateway')).status).toBe(200);
      await open[0]!.close();
      await expect.poll(() => capped.gateway.socketCounts().sockets).toBe(2);
      const again = await hello(capped.url);
      expect(again.frames[0]?.op).toBe(GatewayOpcodes.Hello);
      for (const client of [...open.slice(1), again]) await client.close();
    } finally {
      await capped.close();
    }
  });
});

describe('intents beyond the defined bits', () => {
  it.each([
    ['2^53', 2 ** 53],
    ['2^32', 2 ** 32],
    ['2^31', 2 ** 31],
    ['an undefined bit (1 << 17)', 1 << 17],
    ['a negative number', -1],
    ['a fraction', 1.5],
  ])('%s closes with 4013', async (_name, intents) => {
    const client = await hello();
    client.send({ op: 2, d: { token: game.botToken, properties: PROPERTIES, intents } });
    expect(await client.waitClose()).toEqual({
      code: GatewayCloseCodes.InvalidIntents,
      reason: 'Invalid intent(s)',
    });
  });
});

describe('frames the gateway cannot take close their own session with 4002', () => {
  let witness: GatewayClient;
  let witnessGame: TestGame;

  beforeAll(async () => {
    witnessGame = await createGame(hearth);
    witness = await botSession(witnessGame.botToken);
  });

  afterAll(async () => {
    await witness?.close();
  });

  /** The other session on the node still hears its events and its heartbeats. */
  async function witnessUnharmed(n: number): Promise<void> {
    await hearth.bus.publish({
      type: 'WITNESS_EVENT',
      data: { n },
      audience: { applicationId: witnessGame.id },
    });
    const event = await witness.nextDispatch('WITNESS_EVENT');
    expect(event.d).toEqual({ n });
    witness.send({ op: 1, d: witness.frames.at(-1)?.s ?? null });
    await witness.nextOp(GatewayOpcodes.HeartbeatAck);
  }

  it.each<[string, () => string | Buffer]>([
    ['a frame of 100 KiB (over ws’s old 64 KiB bound)', () => `{"op":1,"d":"${'x'.repeat(100 * 1024)}"}`],
    ['a frame of 1 MiB', () => Buffer.alloc(2 ** 20, 0x20)],
    ['a frame one byte over the limit', () => padded(MAX_CLIENT_PAYLOAD_BYTES + 1)],
    ['text that is not UTF-8', () => Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ['text that is not JSON', () => '{"op":1,'],
    ['JSON that is not a payload', () => '[1,2,3]'],
  ])('%s', async (_name, frame) => {
    const client = await hello();
    const data = frame();
    // Text frames, as clients send them: ws would otherwise send a Buffer as binary.
    client.socket.send(data, { binary: false });
    const close = await client.waitClose();
    expect(close.code).toBe(GatewayCloseCodes.DecodeError);
    await witnessUnharmed(Math.random());
  });

  it('an identified session sending an oversized frame is closed with 4002 and may resume', async () => {
    const own = await createGame(hearth);
    const client = await botSession(own.botToken);
    const ready = client.frames.find((f) => f.t === 'READY')!;
    client.socket.send(`{"op":3,"d":"${'y'.repeat(70 * 1024)}"}`);
    expect((await client.waitClose()).code).toBe(GatewayCloseCodes.DecodeError);
    await witnessUnharmed(1);
    // 4002 is resumable (PROTOCOL.md §D.4): the session waits for its client.
    const back = await hello();
    back.send({
      op: 6,
      d: { token: own.botToken, session_id: (ready.d as { session_id: string }).session_id, seq: ready.s },
    });
    await back.nextDispatch('RESUMED');
    await back.close();
  });

  it('a frame exactly at the limit is read', async () => {
    const client = await hello();
    client.send(padded(MAX_CLIENT_PAYLOAD_BYTES));
    await client.nextOp(GatewayOpcodes.HeartbeatAck);
    await client.close();
  });
});

/** A heartbeat padded with spaces to `bytes` bytes. */
function padded(bytes: number): string {
  const heartbeat = '{"op":1,"d":null}';
  return heartbeat + ' '.repeat(bytes - heartbeat.length);
}

/** The collector, so that heap figures compare live objects rather than garbage not yet collected. */
function exposedGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
