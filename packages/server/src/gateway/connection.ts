import {
  CLIENT_EVENTS_LIMIT,
  type GatewayCloseCode,
  GatewayCloseCodes,
  GatewayOpcodes,
  MAX_CLIENT_PAYLOAD_BYTES,
} from '@hearth/protocol';
import type { RawData, WebSocket } from 'ws';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/logger.js';
import type { ZlibStream } from './compression.js';
import type { Sent, Session, SessionSink } from './sessions.js';

/** A client frame after decoding: `{op, d}` (PROTOCOL.md §D.1). */
export interface ClientPayload {
  op: number;
  d: unknown;
}

/** What a connection needs from the gateway around it. */
export interface ConnectionContext {
  clock: Clock;
  logger: Logger;
  heartbeatIntervalMs: number;
  /** A socket with no session after this long closes with 4003 (IDENTIFY_TIMEOUT_MS by default). */
  identifyTimeoutMs: number;
  /** Handles one decoded frame; the one place every opcode is routed (see dispatch.ts). */
  handle(connection: Connection, payload: ClientPayload): Promise<void>;
  /** The connection ended: detach or end its session. */
  closed(connection: Connection, code: number): void;
  /** Dispatches sent on every connection of this node (metrics read it). */
  dispatchesSent: number;
  /** Emulator mode's fault rules (emulator/faults.ts); undefined otherwise, and then nothing is asked. */
  faults?: DispatchFaults | undefined;
}

/** A hook on every dispatch a connection is about to send: true when it took the dispatch over. */
export interface DispatchFaults {
  onDispatch(connection: Connection, session: Session, sent: Sent): boolean;
}

/** Where every connection's queues start: one settled promise shared, not two per idle connection. */
const SETTLED: Promise<void> = Promise.resolve();

/**
 * The JSON text of each bus event's dispatch body: one event goes to every session of its audience and is
 * serialized once; each frame splices its own `s` around it. Keyed by the body object but held for one
 * event only: a service may publish the same object again, changed, as a later event (an edited message).
 */
const bodies = new WeakMap<object, { eventId: string; body: string }>();

/** The frame of a dispatch, byte for byte what `JSON.stringify({op, d, s, t})` gives. */
function dispatchFrame(sent: Sent): string {
  const { d, eventId } = sent;
  // Only bus events' bodies are shared by many sessions; other dispatches are one-offs.
  if (eventId === undefined || typeof d !== 'object' || d === null) {
    return JSON.stringify({ op: GatewayOpcodes.Dispatch, d, s: sent.seq, t: sent.t });
  }
  let cached = bodies.get(d);
  if (cached?.eventId !== eventId) {
    cached = { eventId, body: JSON.stringify(d) };
    bodies.set(d, cached);
  }
  return `{"op":${GatewayOpcodes.Dispatch},"d":${cached.body},"s":${sent.seq},"t":${JSON.stringify(sent.t)}}`;
}

/**
 * One WebSocket of the gateway: framing, compression, heartbeats and the per-connection limits. What a
 * frame means is decided by the opcode table, not here.
 */
export class Connection implements SessionSink {
  readonly #socket: WebSocket;
  readonly #context: ConnectionContext;
  readonly #zlib: ZlibStream | undefined;
  readonly version: number;
  #session: Session | undefined;
  #closed = false;
  /** The code this side closed with: it, not the client's echo, decides whether the session lives on. */
  #closeCode: number | undefined;
  #heartbeatDeadline: NodeJS.Timeout | undefined;
  #identifyDeadline: NodeJS.Timeout | undefined;
  #windowStart = 0;
  #windowCount = 0;
  /** Frames are handled one at a time, in order: an Identify finishes before the next frame is read. */
  #queue: Promise<void> = SETTLED;
  #sending: Promise<void> = SETTLED;

  constructor(
    socket: WebSocket,
    context: ConnectionContext,
    options: { version: number; zlib?: ZlibStream },
  ) {
    this.#socket = socket;
    this.#context = context;
    this.#zlib = options.zlib;
    this.version = options.version;
    socket.on('message', (data, isBinary) => this.#receive(data, isBinary));
    socket.on('close', (code) => this.#ended(code));
    socket.on('error', (error) => context.logger.debug({ err: error }, 'gateway socket error'));
    this.#send({
      op: GatewayOpcodes.Hello,
      d: { heartbeat_interval: context.heartbeatIntervalMs },
      s: null,
      t: null,
    });
    this.#armHeartbeat();
    // Heartbeats keep a session's socket alive, never a socket without one.
    this.#identifyDeadline = setTimeout(() => {
      if (!this.session) this.close(GatewayCloseCodes.NotAuthenticated, 'Not authenticated');
    }, context.identifyTimeoutMs);
    this.#identifyDeadline.unref();
  }

  get open(): boolean {
    return !this.#closed;
  }

  get session(): Session | undefined {
    return this.#session;
  }

  /** Set once Identify or Resume succeeds: the identify deadline is then dropped, not left to fire. */
  set session(session: Session | undefined) {
    this.#session = session;
    if (session && this.#identifyDeadline) {
      clearTimeout(this.#identifyDeadline);
      this.#identifyDeadline = undefined;
    }
  }

  /** Sends a dispatch recorded in the session. */
  dispatch(sent: Sent): void {
    const faults = this.#context.faults;
    if (faults !== undefined && this.session && faults.onDispatch(this, this.session, sent)) return;
    this.sendDispatch(sent);
  }

  /** Sends a dispatch as it is, past the fault hook. */
  sendDispatch(sent: Sent): void {
    this.#context.dispatchesSent++;
    this.#sendText(dispatchFrame(sent));
  }

  /** Sends a non-dispatch payload (`s` and `t` are null unless op is 0). */
  sendOp(op: number, d: unknown): void {
    this.#send({ op, d, s: null, t: null });
  }

  heartbeatReceived(): void {
    this.#armHeartbeat();
    this.sendOp(GatewayOpcodes.HeartbeatAck, null);
  }

  close(code: GatewayCloseCode | 1000 | 1001, reason = ''): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeCode = code;
    clearTimeout(this.#heartbeatDeadline);
    clearTimeout(this.#identifyDeadline);
    // Let queued frames (an Invalid Session, a Reconnect) go out before the close frame.
    void this.#sending.then(() => this.#socket.close(code, reason.slice(0, 120)));
  }

  #receive(data: RawData, isBinary: boolean): void {
    if (this.#closed) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (bytes.length > MAX_CLIENT_PAYLOAD_BYTES) {
      this.close(GatewayCloseCodes.DecodeError, 'Payload too large');
      return;
    }
    if (!this.#countEvent()) {
      this.close(GatewayCloseCodes.RateLimited, 'Rate limited');
      return;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(bytes.toString('utf8'));
    } catch {
      this.close(GatewayCloseCodes.DecodeError, isBinary ? 'Binary frames must hold JSON' : 'Invalid JSON');
      return;
    }
    if (
      typeof payload !== 'object' ||
      payload === null ||
      !Number.isInteger((payload as { op?: unknown }).op)
    ) {
      this.close(GatewayCloseCodes.DecodeError, 'A payload is {op, d}');
      return;
    }
    const frame = payload as ClientPayload;
    this.#queue = this.#queue
      .then(() => (this.#closed ? undefined : this.#context.handle(this, { op: frame.op, d: frame.d })))
      .catch((error: unknown) => {
        this.#context.logger.error({ err: error, op: frame.op }, 'gateway frame failed');
        this.close(GatewayCloseCodes.UnknownError, 'Unknown error');
      });
  }

  /** 120 client events per 60 s per connection (PROTOCOL.md §D.6). */
  #countEvent(): boolean {
    const now = this.#context.clock.now();
    if (now - this.#windowStart >= CLIENT_EVENTS_LIMIT.windowMs) {
      this.#windowStart = now;
      this.#windowCount = 0;
    }
    this.#windowCount += 1;
    return this.#windowCount <= CLIENT_EVENTS_LIMIT.limit;
  }

  /** A client silent for 1.5 heartbeat intervals is a zombie: close so it resumes (PROTOCOL.md §D.3). */
  #armHeartbeat(): void {
    if (this.#closed) return;
    // One timer for the connection's life, pushed back by each heartbeat rather than made anew.
    if (this.#heartbeatDeadline) {
      this.#heartbeatDeadline.refresh();
      return;
    }
    this.#heartbeatDeadline = setTimeout(
      () => this.close(GatewayCloseCodes.SessionTimedOut, 'Session timed out'),
      this.#context.heartbeatIntervalMs * 1.5,
    );
    this.#heartbeatDeadline.unref();
  }

  #send(payload: { op: number; d: unknown; s: number | null; t: string | null }): void {
    this.#sendText(JSON.stringify(payload));
  }

  #sendText(text: string): void {
    // After close() nothing more goes out: a dispatch stays in the session buffer for the Resume.
    if (this.#closed || this.#socket.readyState !== this.#socket.OPEN) return;
    const zlib = this.#zlib;
    // Plain frames are handed to ws at once and in order; only compression is asynchronous and needs the queue.
    if (!zlib) {
      this.#socket.send(text);
      return;
    }
    this.#sending = this.#sending.then(async () => {
      if (this.#socket.readyState !== this.#socket.OPEN) return;
      this.#socket.send(await zlib.compress(text));
    });
  }

  #ended(code: number): void {
    this.#closed = true;
    clearTimeout(this.#heartbeatDeadline);
    clearTimeout(this.#identifyDeadline);
    this.#zlib?.close();
    this.#context.closed(this, this.#closeCode ?? code);
  }
}
