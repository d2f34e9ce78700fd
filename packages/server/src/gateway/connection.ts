import type { Duplex } from 'node:stream';
import {
  CLIENT_EVENTS_LIMIT,
  type GatewayCloseCode,
  GatewayCloseCodes,
  GatewayOpcodes,
  MAX_CLIENT_PAYLOAD_BYTES,
} from '@hearth/protocol';
import { type RawData, WebSocket } from 'ws';
import { type Clock, msAfter } from '../kernel/clock.js';
import type { Logger } from '../kernel/logger.js';
import type { ZlibStream } from './compression.js';
import { dataJson, isShared, type Sent, type Session, type SessionSink } from './sessions.js';

/**
 * Closes ws itself sends when a client frame cannot be read: 1009 (larger than `maxPayload`) and 1007
 * (text that is not UTF-8). The gateway answers both with 4002 Decode error (PROTOCOL.md §D.1: client
 * payloads over 4096 bytes close with 4002), which clients know how to recover from.
 */
const DECODE_FAILURES = new Set([1007, 1009]);

/**
 * Pongs written but not yet flushed after which a socket is cut off: what ws's own `maxPendingAutoPongs`
 * default does to a peer that pings and does not read.
 */
const MAX_PENDING_PONGS = 60;

/** Pongs handed to ws and not yet written, of the sockets that have any (see `GatewaySocket.emit`). */
const pendingPongs = new WeakMap<WebSocket, number>();

/** The server side of a gateway socket: ws's own read failures close with the gateway's code. */
export class GatewaySocket extends WebSocket {
  /** The connection it carries, which its listeners (functions shared by every socket) act on. */
  connection?: Connection;

  /**
   * Pings are answered here, as ws's `autoPong` would (the server is given `autoPong: false`): ws's gives
   * every socket a closure and three fields for it, about 130 bytes of every idle session.
   */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'ping' && this.readyState === WebSocket.OPEN) {
      const pending = pendingPongs.get(this) ?? 0;
      if (pending >= MAX_PENDING_PONGS) this.terminate();
      else {
        pendingPongs.set(this, pending + 1);
        this.pong(args[0] as Buffer, false, () => {
          const left = (pendingPongs.get(this) ?? 1) - 1;
          if (left > 0) pendingPongs.set(this, left);
          else pendingPongs.delete(this);
        });
      }
    }
    return super.emit(event, ...args);
  }

  override close(code?: number, data?: string | Buffer): void {
    if (code !== undefined && DECODE_FAILURES.has(code)) {
      super.close(GatewayCloseCodes.DecodeError, code === 1009 ? 'Payload too large' : 'Invalid UTF-8');
      return;
    }
    super.close(code, data);
  }
}

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
  /** The heartbeat clock: advanced HEARTBEAT_TICKS_PER_INTERVAL times an interval (see `expireIfSilent`). */
  readonly heartbeatTick: number;
  /** A socket with no session after this long closes with 4003 (IDENTIFY_TIMEOUT_MS by default). */
  identifyTimeoutMs: number;
  /** The clock's reading when the gateway started: per-connection times are kept after it (`msAfter`). */
  readonly clockOrigin: number;
  /** Handles one decoded frame; the one place every opcode is routed (see dispatch.ts). */
  handle(connection: Connection, payload: ClientPayload): Promise<void>;
  /** The connection ended: detach or end its session. */
  closed(connection: Connection, code: number): void;
  /** Dispatches sent on every connection of this node (metrics read it). */
  dispatchesSent: number;
  /** Emulator mode's fault rules (emulator/faults.ts); undefined otherwise, and then nothing is asked. */
  faults?: DispatchFaults | undefined;
  /**
   * True while the bus delivers a run of events (one synchronous loop): a connection written to then holds
   * its writes (corks its TCP socket) and is handed to `hold`; the gateway releases them all when the run
   * ends, before the bus settles a publish or yields, so nothing written later can overtake them.
   */
  readonly holdingWrites: boolean;
  /** Which run of deliveries is under way (a new number for each): a socket's first frame of a run goes out at once… */
  readonly writeRun: number;
  /** …unless this is set: the run is a short burst, and every frame of it waits for its end. */
  readonly holdingFirstWrites: boolean;
  hold(transport: Duplex): void;
}

/** A hook on every dispatch a connection is about to send: true when it took the dispatch over. */
export interface DispatchFaults {
  onDispatch(connection: Connection, session: Session, sent: Sent): boolean;
}

/**
 * Heartbeat deadlines are read off one ticking clock per server rather than a timer per connection (a
 * timer and its closure cost about 250 bytes of every idle session). A client silent for more than
 * SILENT_TICKS_ALLOWED ticks, 1.5 intervals, closes at the next tick: between 1.5 and 1.75 intervals.
 */
export const HEARTBEAT_TICKS_PER_INTERVAL = 4;
const SILENT_TICKS_ALLOWED = 6;

/** Where every connection's queues start: one settled promise shared, not two per idle connection. */
const SETTLED: Promise<void> = Promise.resolve();

/** Compression of a connection that asked for it: its frames are compressed, one after another, in order. */
interface Compression {
  zlib: ZlibStream;
  sending: Promise<void>;
}

/**
 * The identify deadlines of connections that have no session yet: here rather than a field of each
 * connection, which every identified session would carry for nothing.
 */
const identifyDeadlines = new Map<Connection, NodeJS.Timeout>();

/**
 * The last bus event's dispatch frame up to its `s`, and after it: one event goes to every session of its
 * audience one after another and is serialized and encoded once; each frame splices its own `s` between the
 * two. One slot, as `dataJson`'s: nothing of an event is kept once the next one is sent.
 */
let lastParts: { d: object; eventId: string; t: string; head: Buffer; tail: Buffer } | undefined;

/**
 * The first byte of every frame the gateway writes itself (RFC 6455 §5.2): FIN, opcode 1 (text). Server
 * frames are never masked, so the second byte is the payload length, or 126 / 127 before a 16 / 64-bit one.
 */
const FIN_TEXT = 0x81;
const LENGTH_16 = 126;
const LENGTH_64 = 127;
/** Payloads from this many bytes on take the 64-bit length. */
const LONG_PAYLOAD = 0x10000;

/**
 * A bus event's dispatch as a whole WebSocket text frame, its payload byte for byte what
 * `JSON.stringify({op, d, s, t})` gives: header and payload in one buffer, the payload copied from the event's
 * shared parts (one event reaches a whole lobby or guild, and is serialized and encoded once).
 */
function eventFrame(sent: Sent & { d: object; eventId: string }): Buffer {
  const { d, eventId } = sent;
  let parts = lastParts;
  if (parts?.d !== d || parts.eventId !== eventId || parts.t !== sent.t) {
    parts = {
      d,
      eventId,
      t: sent.t,
      head: Buffer.from(`{"op":${GatewayOpcodes.Dispatch},"d":${dataJson(d, eventId)},"s":`),
      tail: Buffer.from(`,"t":${JSON.stringify(sent.t)}}`),
    };
    lastParts = parts;
  }
  const { head, tail } = parts;
  const seq = String(sent.seq);
  const length = head.length + seq.length + tail.length;
  const at = length < LENGTH_16 ? 2 : length < LONG_PAYLOAD ? 4 : 10;
  const frame = Buffer.allocUnsafe(at + length);
  frame[0] = FIN_TEXT;
  if (at === 2) frame[1] = length;
  else if (at === 4) {
    frame[1] = LENGTH_16;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = LENGTH_64;
    frame.writeUInt16BE(0, 2);
    frame.writeUIntBE(length, 4, 6);
  }
  head.copy(frame, at);
  // A sequence number is ASCII digits: one byte each.
  frame.write(seq, at + head.length, 'latin1');
  tail.copy(frame, at + head.length + seq.length);
  return frame;
}

/** The payload of a frame made by `eventFrame`: what a compressed connection deflates instead. */
function payloadOf(frame: Buffer): Buffer {
  const length = frame[1]!;
  return frame.subarray(length === LENGTH_64 ? 10 : length === LENGTH_16 ? 4 : 2);
}

/**
 * One WebSocket of the gateway: framing, compression, heartbeats and the per-connection limits. What a
 * frame means is decided by the opcode table, not here.
 */
export class Connection implements SessionSink {
  readonly #socket: GatewaySocket;
  /** The last run of bus deliveries this connection wrote in (`ConnectionContext.writeRun`). */
  #writeRun = -1;
  /** The TCP socket under the WebSocket: corked while the bus delivers a run of events (see `hold`). */
  readonly #transport: Duplex;
  readonly #context: ConnectionContext;
  readonly #compression: Compression | undefined;
  readonly version: number;
  /** The client's address, counted against the per-address socket cap while the connection is open. */
  readonly address: string;
  #session: Session | undefined;
  /**
   * Set once the connection is closed or closing: the code this side closed with (it, not the client's
   * echo, decides whether the session lives on), else the code the socket closed with.
   */
  #closeCode: number | undefined;
  /** The heartbeat tick of the last heartbeat (or of Hello). */
  #beatTick: number;
  /** When the client-event window started, in ms after `clockOrigin`. */
  #windowStart = 0;
  #windowCount = 0;
  /**
   * Frames are handled one at a time, in order: an Identify finishes before the next frame is read. Back to
   * the shared settled promise once the last queued frame is handled.
   */
  #queue: Promise<void> = SETTLED;

  // The socket's listeners are shared by every connection (`this` is the socket): no closures per socket.
  static readonly #onMessage = function (this: GatewaySocket, data: RawData, isBinary: boolean): void {
    const connection = this.connection;
    if (connection) connection.#receive(data, isBinary);
  };

  static readonly #onClose = function (this: GatewaySocket, code: number): void {
    const connection = this.connection;
    if (connection) connection.#ended(code);
  };

  static readonly #onError = function (this: GatewaySocket, error: Error): void {
    const connection = this.connection;
    if (connection) connection.#context.logger.debug({ err: error }, 'gateway socket error');
  };

  constructor(
    socket: GatewaySocket,
    context: ConnectionContext,
    options: { version: number; address: string; transport: Duplex; zlib?: ZlibStream },
  ) {
    this.#socket = socket;
    this.#transport = options.transport;
    this.#context = context;
    this.#compression = options.zlib ? { zlib: options.zlib, sending: SETTLED } : undefined;
    this.version = options.version;
    this.address = options.address;
    this.#beatTick = context.heartbeatTick;
    socket.connection = this;
    socket.on('message', Connection.#onMessage);
    socket.on('close', Connection.#onClose);
    socket.on('error', Connection.#onError);
    this.#send({
      op: GatewayOpcodes.Hello,
      d: { heartbeat_interval: context.heartbeatIntervalMs },
      s: null,
      t: null,
    });
    // Heartbeats keep a session's socket alive, never a socket without one.
    const deadline = setTimeout(() => {
      if (!this.session) this.close(GatewayCloseCodes.NotAuthenticated, 'Not authenticated');
    }, context.identifyTimeoutMs);
    deadline.unref();
    identifyDeadlines.set(this, deadline);
  }

  get open(): boolean {
    return this.#closeCode === undefined;
  }

  get session(): Session | undefined {
    return this.#session;
  }

  /** Set once Identify or Resume succeeds: the identify deadline is then dropped, not left to fire. */
  set session(session: Session | undefined) {
    this.#session = session;
    if (session) this.#dropIdentifyDeadline();
  }

  #dropIdentifyDeadline(): void {
    clearTimeout(identifyDeadlines.get(this));
    identifyDeadlines.delete(this);
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
    if (isShared(sent)) this.#sendFrame(eventFrame(sent));
    else this.#send({ op: GatewayOpcodes.Dispatch, d: sent.d, s: sent.seq, t: sent.t });
  }

  /** Sends a non-dispatch payload (`s` and `t` are null unless op is 0). */
  sendOp(op: number, d: unknown): void {
    this.#send({ op, d, s: null, t: null });
  }

  heartbeatReceived(): void {
    this.#beatTick = this.#context.heartbeatTick;
    this.sendOp(GatewayOpcodes.HeartbeatAck, null);
  }

  /** A client silent for 1.5 heartbeat intervals is a zombie: close so it resumes (PROTOCOL.md §D.3). */
  expireIfSilent(tick: number): void {
    if (tick - this.#beatTick > SILENT_TICKS_ALLOWED) {
      this.close(GatewayCloseCodes.SessionTimedOut, 'Session timed out');
    }
  }

  close(code: GatewayCloseCode | 1000 | 1001, reason = ''): void {
    if (this.#closeCode !== undefined) return;
    this.#closeCode = code;
    this.#dropIdentifyDeadline();
    // Let queued frames (an Invalid Session, a Reconnect) go out before the close frame.
    void (this.#compression?.sending ?? SETTLED).then(() => this.#socket.close(code, reason.slice(0, 120)));
  }

  #receive(data: RawData, isBinary: boolean): void {
    if (this.#closeCode !== undefined) return;
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
    const frame: ClientPayload = { op: (payload as ClientPayload).op, d: (payload as ClientPayload).d };
    const queued: Promise<void> = this.#queue
      .then(() => this.#handle(frame))
      .then(() => {
        // An idle connection holds the shared settled promise, not the last frame's.
        if (this.#queue === queued) this.#queue = SETTLED;
      });
    this.#queue = queued;
  }

  async #handle(frame: ClientPayload): Promise<void> {
    try {
      if (this.#closeCode === undefined) await this.#context.handle(this, frame);
    } catch (error) {
      this.#context.logger.error({ err: error, op: frame.op }, 'gateway frame failed');
      this.close(GatewayCloseCodes.UnknownError, 'Unknown error');
    }
  }

  /** 120 client events per 60 s per connection (PROTOCOL.md §D.6). */
  #countEvent(): boolean {
    const now = msAfter(this.#context.clockOrigin, this.#context.clock.now());
    // The first event opens the first window (a start of 0 would be the gateway's own start).
    if (this.#windowCount === 0 || now - this.#windowStart >= CLIENT_EVENTS_LIMIT.windowMs) {
      this.#windowStart = now;
      this.#windowCount = 0;
    }
    this.#windowCount += 1;
    return this.#windowCount <= CLIENT_EVENTS_LIMIT.limit;
  }

  #send(payload: { op: number; d: unknown; s: number | null; t: string | null }): void {
    this.#sendText(JSON.stringify(payload));
  }

  /** After close() nothing more goes out: a dispatch stays in the session buffer for the Resume. */
  get #sendable(): boolean {
    return this.#closeCode === undefined && this.#socket.readyState === this.#socket.OPEN;
  }

  /** Sends one text frame through ws. */
  #sendText(text: string): void {
    if (!this.#sendable) return;
    const compression = this.#compression;
    if (compression) this.#sendCompressed(compression, text);
    else {
      this.#holdWrite();
      this.#socket.send(text);
    }
  }

  /**
   * Sends a whole frame made by `eventFrame`, written to the TCP socket at once: one write of one buffer
   * instead of ws's header buffer, options objects and two writes (a lobby message is 100 frames). ws never
   * queues a frame of its own on this server (no permessage-deflate, no Blobs), so the socket's writes keep
   * the order in which the two were asked for, and ws's close frame comes after every frame sent before it.
   */
  #sendFrame(frame: Buffer): void {
    if (!this.#sendable) return;
    const compression = this.#compression;
    if (compression) this.#sendCompressed(compression, payloadOf(frame));
    else {
      this.#holdWrite();
      this.#transport.write(frame);
    }
  }

  /**
   * During a run of bus deliveries a socket gets one write system call for all of the run's frames instead
   * of one each; ws's own cork around each frame nests inside this one. The first frame of a run is written
   * at once: a socket that gets one frame (a presence change to 1,000 friends) would gain nothing by
   * waiting, and its client can read while the rest are built.
   */
  #holdWrite(): void {
    const transport = this.#transport;
    if (!this.#context.holdingWrites) return;
    if (this.#writeRun !== this.#context.writeRun && !this.#context.holdingFirstWrites)
      this.#writeRun = this.#context.writeRun;
    else if (transport.writableCorked === 0) {
      transport.cork();
      this.#context.hold(transport);
    }
  }

  /** Compressed frames go one after another, in order: compression is asynchronous. */
  #sendCompressed(compression: Compression, message: string | Buffer): void {
    const { zlib } = compression;
    compression.sending = compression.sending.then(async () => {
      if (this.#socket.readyState !== this.#socket.OPEN) return;
      this.#socket.send(await zlib.compress(message));
    });
  }

  #ended(code: number): void {
    this.#closeCode ??= code;
    this.#dropIdentifyDeadline();
    this.#compression?.zlib.close();
    this.#context.closed(this, this.#closeCode);
  }
}
