import { constants, createInflate, type Inflate } from 'node:zlib';
import { type RawData, WebSocket } from 'ws';

/**
 * A raw gateway client for protocol tests: no library between the test and the wire (PROTOCOL.md §D).
 * It keeps every frame, hands them out in order to `next(…)`, and reports the close code and reason.
 */

/** A server payload as sent: `{op, d, s, t}` (§D.1). */
export interface GatewayFrame {
  op: number;
  d: unknown;
  s: number | null;
  t: string | null;
}

export interface GatewayClose {
  code: number;
  reason: string;
}

/** One WebSocket message as it arrived, before inflating. */
export interface RawMessage {
  binary: boolean;
  bytes: Buffer;
}

export interface ConnectOptions {
  /** `v=`; default 10. */
  version?: number | string;
  /** `encoding=`; default json. */
  encoding?: string;
  /** `compress=zlib-stream`: frames are inflated with one context for the connection (§D.1). */
  compress?: 'zlib-stream';
}

const SYNC_FLUSH_SUFFIX = Buffer.from([0x00, 0x00, 0xff, 0xff]);

/** `${url}/gateway?v=10&encoding=json[&compress=zlib-stream]` for a server's HTTP address. */
export function gatewayUrl(httpUrl: string, options: ConnectOptions = {}): string {
  const query = new URLSearchParams({
    v: String(options.version ?? 10),
    encoding: options.encoding ?? 'json',
    ...(options.compress ? { compress: options.compress } : {}),
  });
  return `${httpUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/gateway?${query}`;
}

interface Waiter {
  match: (frame: GatewayFrame) => boolean;
  resolve: (frame: GatewayFrame) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

export class GatewayClient {
  /** Every frame received so far, decoded, in order. */
  readonly frames: GatewayFrame[] = [];
  /** Every WebSocket message received so far, as sent. */
  readonly messages: RawMessage[] = [];
  readonly socket: WebSocket;
  /** Settles when the socket has closed, with the code and reason the server gave. */
  readonly closed: Promise<GatewayClose>;
  #cursor = 0;
  #waiters: Waiter[] = [];
  #close: GatewayClose | undefined;
  #failure: Error | undefined;
  readonly #inflate: Inflate | undefined;
  /** Messages are decoded one after another: an inflate context must see them in order. */
  #decoding: Promise<void> = Promise.resolve();

  private constructor(socket: WebSocket, compressed: boolean) {
    this.socket = socket;
    this.#inflate = compressed ? createInflate() : undefined;
    socket.on('message', (data, isBinary) => this.#received(data, isBinary));
    this.closed = new Promise((resolve) => {
      socket.on('close', (code, reason) => {
        this.#decoding = this.#decoding.then(() => {
          this.#close = { code, reason: reason.toString('utf8') };
          this.#inflate?.close();
          this.#settle();
          resolve(this.#close);
        });
      });
    });
  }

  /** Opens a connection to the gateway of the server at `httpUrl`. */
  static connect(httpUrl: string, options: ConnectOptions = {}): Promise<GatewayClient> {
    const socket = new WebSocket(gatewayUrl(httpUrl, options));
    const client = new GatewayClient(socket, options.compress === 'zlib-stream');
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(client));
      socket.once('error', reject);
    });
  }

  /** Sends a payload as JSON text, or a string / bytes as they are. */
  send(payload: object | string | Buffer): void {
    this.socket.send(
      typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
    );
  }

  /**
   * The next frame (after those already handed out) that matches; frames skipped on the way are passed.
   * Rejects if the socket closes first or nothing matches within `timeoutMs`.
   */
  next(match: (frame: GatewayFrame) => boolean = () => true, timeoutMs = 5_000): Promise<GatewayFrame> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(new Error(`no matching frame within ${timeoutMs} ms; got ${this.#describe()}`));
        }, timeoutMs),
      };
      this.#waiters.push(waiter);
      this.#settle();
    });
  }

  /** The next frame with this opcode. */
  nextOp(op: number, timeoutMs?: number): Promise<GatewayFrame> {
    return this.next((frame) => frame.op === op, timeoutMs);
  }

  /** The next dispatch (op 0) of this type. */
  nextDispatch(t: string, timeoutMs?: number): Promise<GatewayFrame> {
    return this.next((frame) => frame.op === 0 && frame.t === t, timeoutMs);
  }

  /** Frames received and not yet handed out by `next`. */
  pending(): GatewayFrame[] {
    return this.frames.slice(this.#cursor);
  }

  /** The close the server made, waiting at most `timeoutMs`. */
  waitClose(timeoutMs = 5_000): Promise<GatewayClose> {
    return Promise.race([
      this.closed,
      new Promise<never>((_resolve, reject) =>
        setTimeout(
          () => reject(new Error(`not closed within ${timeoutMs} ms; got ${this.#describe()}`)),
          timeoutMs,
        ).unref(),
      ),
    ]);
  }

  /** Closes from the client side (1000 ends the session, other codes keep it resumable, §D.3). */
  async close(code = 1000, reason = ''): Promise<GatewayClose> {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) {
      this.socket.close(code, reason);
    }
    return this.closed;
  }

  #received(data: RawData, binary: boolean): void {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    this.messages.push({ binary, bytes });
    this.#decoding = this.#decoding
      .then(() => (this.#inflate ? inflateMessage(this.#inflate, bytes) : bytes.toString('utf8')))
      .then((text) => {
        this.frames.push(JSON.parse(text) as GatewayFrame);
        this.#settle();
      })
      .catch((error: unknown) => {
        this.#failure = error instanceof Error ? error : new Error(String(error));
        this.#settle();
      });
  }

  /** Hands matching frames to waiters in order; rejects them once nothing more can arrive. */
  #settle(): void {
    while (this.#waiters.length > 0) {
      const waiter = this.#waiters[0]!;
      const index = this.frames.findIndex((frame, i) => i >= this.#cursor && waiter.match(frame));
      if (index >= 0) {
        this.#cursor = index + 1;
        this.#waiters.shift();
        clearTimeout(waiter.timer);
        waiter.resolve(this.frames[index]!);
        continue;
      }
      if (!this.#failure && !this.#close) return;
      this.#waiters.shift();
      clearTimeout(waiter.timer);
      waiter.reject(
        this.#failure ??
          new Error(`closed ${this.#close?.code} ${this.#close?.reason} first; got ${this.#describe()}`),
      );
    }
  }

  #describe(): string {
    return JSON.stringify(this.pending()).slice(0, 2_000);
  }
}

/** Inflates one zlib-stream message; it must end with the Z_SYNC_FLUSH suffix 00 00 FF FF (§D.1). */
function inflateMessage(inflate: Inflate, bytes: Buffer): Promise<string> {
  if (!bytes.subarray(-4).equals(SYNC_FLUSH_SUFFIX)) {
    return Promise.reject(new Error(`zlib-stream message without 00 00 FF FF: ${bytes.toString('hex')}`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const collect = (chunk: Buffer) => chunks.push(chunk);
    inflate.on('data', collect);
    inflate.once('error', reject);
    inflate.write(bytes);
    inflate.flush(constants.Z_SYNC_FLUSH, () => {
      inflate.off('data', collect);
      inflate.off('error', reject);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}
