import WebSocket from 'ws';

/** One gateway frame as received: `{op, d, s, t}`. */
export interface GatewayFrame {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

interface Waiter {
  match: (frame: GatewayFrame) => boolean;
  resolve: (frame: GatewayFrame) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * A gateway session of a test (a bot's, a user's or a player's), kept alive with heartbeats, recording every
 * frame so that `waitForGatewayEvent` sees events that arrived before it was called.
 */
export class GatewayListener {
  readonly frames: GatewayFrame[] = [];
  readonly #socket: WebSocket;
  #cursor = 0;
  #waiters: Waiter[] = [];
  #heartbeat: NodeJS.Timeout | undefined;
  #seq: number | null = null;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on('message', (data) => this.#received(JSON.parse(String(data)) as GatewayFrame));
    socket.on('close', () => {
      clearInterval(this.#heartbeat);
      for (const waiter of this.#waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error('the gateway connection closed'));
      }
    });
  }

  /** Connects and identifies with `token` (`Bot …` is stripped) and `intents`; resolves once READY arrives. */
  static async open(baseUrl: string, token: string, intents: number): Promise<GatewayListener> {
    // Where the gateway is, as clients learn it: GET /gateway.
    const found = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v10/gateway`);
    const url = `${((await found.json()) as { url: string }).url}/?v=10&encoding=json`;
    const socket = new WebSocket(url);
    const listener = new GatewayListener(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const hello = await listener.next((f) => f.op === 10);
    const interval = (hello.d as { heartbeat_interval: number }).heartbeat_interval;
    listener.#heartbeat = setInterval(() => listener.#send({ op: 1, d: listener.#seq }), interval);
    listener.#heartbeat.unref();
    listener.#send({
      op: 2,
      d: {
        token: token.replace(/^Bot /, ''),
        intents,
        properties: { os: process.platform, browser: '@hearth/testing', device: '@hearth/testing' },
      },
    });
    await listener.next((f) => f.t === 'READY');
    return listener;
  }

  /** The next frame (after those already handed out) that `match` accepts; rejects after `timeoutMs`. */
  next(match: (frame: GatewayFrame) => boolean, timeoutMs = 5000): Promise<GatewayFrame> {
    for (; this.#cursor < this.frames.length; this.#cursor++) {
      const frame = this.frames[this.#cursor] as GatewayFrame;
      if (match(frame)) {
        this.#cursor++;
        return Promise.resolve(frame);
      }
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(new Error(`no matching gateway frame within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.#waiters.push(waiter);
    });
  }

  close(): void {
    clearInterval(this.#heartbeat);
    this.#socket.close(1000);
  }

  #send(payload: object): void {
    if (this.#socket.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify(payload));
  }

  #received(frame: GatewayFrame): void {
    if (frame.s !== null) this.#seq = frame.s;
    this.frames.push(frame);
    const waiter = this.#waiters.find((w) => w.match(frame));
    if (!waiter) return;
    // Handed out: later waits start after it.
    this.#cursor = this.frames.length;
    this.#waiters = this.#waiters.filter((w) => w !== waiter);
    clearTimeout(waiter.timer);
    waiter.resolve(frame);
  }
}

/**
 * Waits for a dispatch of type `t` (optionally one `match` accepts) on a listener's session, including
 * one that arrived before the call and was not handed out yet.
 */
export async function waitForGatewayEvent<D = Record<string, unknown>>(
  listener: GatewayListener,
  t: string,
  options: { match?: (d: D) => boolean; timeoutMs?: number } = {},
): Promise<D> {
  const frame = await listener.next(
    (f) => f.op === 0 && f.t === t && (options.match?.(f.d as D) ?? true),
    options.timeoutMs,
  );
  return frame.d as D;
}
