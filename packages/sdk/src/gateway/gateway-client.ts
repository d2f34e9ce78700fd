import { FATAL_CLOSE_CODES, GatewayCloseCodes, GatewayOpcodes } from '@hearth/protocol';
import { type Logger, LoggingSeverity } from '../logging.js';
import type { GatewayUser } from '../user-handle.js';
import { messageText, type SocketOpener, type WebSocketLike } from './socket.js';
import { ClientError, ClientStatus, nameOf } from './status.js';

const GATEWAY_VERSION = 10;
const OPEN = 1;
const CLOSING = 2;

/** Our own close when we leave a connection to resume elsewhere: any code but 1000/1001 keeps the session (§D.3). */
const RESUME_CLOSE_CODE = 4200;
/** Hello must arrive this long after the socket was created (discord.js waits as long for its handshake). */
const HELLO_TIMEOUT_MS = 30_000;
/** A Disconnect whose close handshake the server never answers is over after this. */
const CLOSE_TIMEOUT_MS = 2_000;
/** After an Identify refused with op 9 (identify concurrency, one per 5 s): wait 1–5 s, as the platform advises. */
const REIDENTIFY_DELAY_MS = { min: 1_000, max: 5_000 };

/** Reconnect delays: the first attempt at once, then exponential with jitter, capped. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}
export const DEFAULT_BACKOFF: Backoff = { baseMs: 1_000, maxMs: 30_000 };

const FATAL = new Set<number>(FATAL_CLOSE_CODES);
/** Closes after which the session is gone and a fresh Identify is needed (PROTOCOL.md §D.4, discord.js mapping). */
const IDENTIFY_AGAIN = new Set<number>([
  1000,
  1001,
  GatewayCloseCodes.NotAuthenticated,
  GatewayCloseCodes.AlreadyAuthenticated,
  GatewayCloseCodes.InvalidSeq,
  GatewayCloseCodes.RateLimited,
]);

type Timer = ReturnType<typeof setTimeout>;

export interface GatewayClientOptions {
  open: SocketOpener;
  logger: Logger;
  /** The gateway URL (GET /gateway), asked once per Connect. */
  locate: () => Promise<string>;
  /** The Identify token string (`Bearer <access token>`), or undefined when the client holds no token. */
  identifyToken: () => string | undefined;
  /** Identify `properties`; `sdk_version` names this library's version (seed: Versioning). */
  properties: { os: string; browser: string; device: string; sdk_version: string };
  onStatus: (status: ClientStatus, error: ClientError, errorDetail: number) => void;
  onDispatch: (event: string, data: unknown) => void;
  random?: () => number;
  backoff?: Backoff;
}

/** One WebSocket and what belongs to it alone. */
interface Link {
  socket: WebSocketLike;
  /** From Hello; 0 until it arrives. */
  interval: number;
  acked: boolean;
  /** READY or RESUMED arrived on this connection. */
  live: boolean;
  /** The token this connection identified with: a Resume must present the same one. */
  identifiedWith: string | undefined;
  heartbeat: Timer | undefined;
  /** Hello timeout, re-Identify delay or Disconnect timeout: at most one is pending. */
  timer: Timer | undefined;
}

interface SessionState {
  id: string;
  resumeUrl: string;
  token: string;
}

/**
 * The gateway connection of a Client (PROTOCOL.md §D): Hello → Identify → READY, heartbeats at the Hello
 * interval with jitter and ACK tracking, Resume after a drop, re-Identify when the session is gone, and no
 * retry after a fatal close. The socket comes from the entry (the `ws` package on Node, the browser's own).
 */
export class GatewayClient {
  readonly #options: GatewayClientOptions;
  readonly #random: () => number;
  readonly #backoff: Backoff;
  #status: ClientStatus = ClientStatus.Disconnected;
  /** Bumped by Connect, Disconnect and failures: an async step of an earlier run finds it changed and stops. */
  #run = 0;
  #link: Link | undefined;
  #gatewayUrl = '';
  #session: SessionState | undefined;
  #seq: number | null = null;
  /** This run reached Ready: from then on a lost connection is recovered, not reported as a failure. */
  #wasReady = false;
  #attempts = 0;
  #reconnectTimer: Timer | undefined;
  #user: GatewayUser | undefined;

  constructor(options: GatewayClientOptions) {
    this.#options = options;
    this.#random = options.random ?? (() => Math.random());
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  get status(): ClientStatus {
    return this.#status;
  }

  /** The user of the session, while it is Ready. */
  get user(): GatewayUser | undefined {
    return this.#status === ClientStatus.Ready ? this.#user : undefined;
  }

  connect(): void {
    if (this.#status !== ClientStatus.Disconnected) {
      this.#log(
        LoggingSeverity.Warning,
        `Connect ignored: the client is ${nameOf(ClientStatus, this.#status)}`,
      );
      return;
    }
    if (this.#options.identifyToken() === undefined) {
      this.#log(LoggingSeverity.Error, 'Connect needs a token: call UpdateToken first');
      this.#set(ClientStatus.Disconnected, ClientError.ConnectionFailed, 0);
      return;
    }
    const run = ++this.#run;
    this.#wasReady = false;
    this.#attempts = 0;
    this.#set(ClientStatus.Connecting);
    this.#options.locate().then(
      (url) => {
        if (run !== this.#run) return;
        this.#gatewayUrl = url;
        this.#open(url);
      },
      (error: unknown) => {
        if (run !== this.#run) return;
        this.#fail(
          ClientError.ConnectionFailed,
          0,
          `the gateway address could not be read: ${describe(error)}`,
        );
      },
    );
  }

  disconnect(): void {
    if (this.#status === ClientStatus.Disconnected || this.#status === ClientStatus.Disconnecting) return;
    this.#run += 1;
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    this.#set(ClientStatus.Disconnecting);
    this.#forgetSession();
    this.#wasReady = false;
    const link = this.#link;
    if (!link || link.socket.readyState >= CLOSING) {
      if (link) this.#detach(link);
      this.#set(ClientStatus.Disconnected);
      return;
    }
    // The link stays attached: its close event finishes the Disconnect, or the timeout does.
    clearTimeout(link.heartbeat);
    clearTimeout(link.timer);
    link.timer = setTimeout(() => {
      if (this.#link !== link) return;
      this.#detach(link);
      this.#set(ClientStatus.Disconnected);
    }, CLOSE_TIMEOUT_MS);
    // 1000 ends the session on the server too: a Disconnect is not a drop to resume (§D.3).
    link.socket.close(1000, 'Disconnect');
  }

  // ---- Connections ----

  #open(base: string): void {
    const url = new URL(base);
    url.searchParams.set('v', String(GATEWAY_VERSION));
    url.searchParams.set('encoding', 'json');
    let socket: WebSocketLike;
    try {
      socket = this.#options.open(url.toString());
    } catch (error) {
      this.#lost(0, `no connection to ${url.origin}: ${describe(error)}`);
      return;
    }
    const link: Link = {
      socket,
      interval: 0,
      acked: true,
      live: false,
      identifiedWith: undefined,
      heartbeat: undefined,
      timer: undefined,
    };
    this.#link = link;
    link.timer = setTimeout(() => {
      if (this.#link !== link) return;
      this.#abandon(link);
      this.#lost(0, `no Hello within ${HELLO_TIMEOUT_MS} ms`);
    }, HELLO_TIMEOUT_MS);
    socket.addEventListener('message', (event) => {
      if (this.#link === link) this.#receive(link, event.data);
    });
    socket.addEventListener('close', (event) => {
      if (this.#link !== link) return;
      this.#detach(link);
      this.#lost(event.code, `closed with ${event.code}${event.reason ? ` (${event.reason})` : ''}`);
    });
    // The close event that follows an error says what happened; listening keeps `ws` from throwing it.
    socket.addEventListener('error', () => undefined);
  }

  /** Stops a link's timers and forgets it: its later events are ignored. */
  #detach(link: Link): void {
    clearTimeout(link.heartbeat);
    clearTimeout(link.timer);
    if (this.#link === link) this.#link = undefined;
  }

  /** Leaves a connection we no longer trust, keeping the session resumable on the server. */
  #abandon(link: Link): void {
    this.#detach(link);
    try {
      link.socket.close(RESUME_CLOSE_CODE, 'Reconnecting');
    } catch {
      // Already closed, or never opened: nothing to end.
    }
  }

  /** A connection ended without us asking: stop, or recover with a Resume or a fresh Identify. */
  #lost(code: number, why: string): void {
    if (this.#status === ClientStatus.Disconnecting) {
      this.#set(ClientStatus.Disconnected);
      return;
    }
    if (FATAL.has(code)) {
      this.#fail(this.#wasReady ? ClientError.UnexpectedClose : ClientError.ConnectionFailed, code, why);
      return;
    }
    // A first connection that never became Ready is a failed Connect, reported rather than retried forever.
    if (!this.#wasReady) {
      this.#fail(ClientError.ConnectionFailed, code, why);
      return;
    }
    if (IDENTIFY_AGAIN.has(code)) this.#forgetSession();
    this.#reconnect(ClientError.UnexpectedClose, code, why);
  }

  #reconnect(error: ClientError, detail: number, why: string): void {
    const delay = this.#nextDelay();
    this.#log(
      LoggingSeverity.Warning,
      `gateway connection lost (${why}); ${this.#session ? 'resuming' : 'identifying again'} in ${Math.round(delay)} ms`,
    );
    // Reported once per drop: the failed attempts that may follow are in the log, not in the callback.
    if (this.#status !== ClientStatus.Reconnecting) this.#set(ClientStatus.Reconnecting, error, detail);
    const run = this.#run;
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (run !== this.#run) return;
      this.#open(this.#session?.resumeUrl ?? this.#gatewayUrl);
    }, delay);
  }

  #nextDelay(): number {
    const attempt = this.#attempts++;
    if (attempt === 0) return 0;
    const cap = Math.min(this.#backoff.baseMs * 2 ** (attempt - 1), this.#backoff.maxMs);
    return cap / 2 + (this.#random() * cap) / 2;
  }

  /** The end of this run: Disconnected with the reason, and no retry. */
  #fail(error: ClientError, detail: number, why: string): void {
    this.#log(LoggingSeverity.Error, `gateway: ${why}`);
    this.#run += 1;
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    const link = this.#link;
    if (link) {
      this.#detach(link);
      if (link.socket.readyState < CLOSING) link.socket.close(1000, 'Disconnect');
    }
    this.#forgetSession();
    this.#wasReady = false;
    this.#set(ClientStatus.Disconnected, error, detail);
  }

  #forgetSession(): void {
    this.#session = undefined;
    this.#seq = null;
  }

  // ---- Payloads ----

  #receive(link: Link, data: unknown): void {
    const text = messageText(data);
    let payload: { op?: unknown; d?: unknown; s?: unknown; t?: unknown };
    try {
      payload = JSON.parse(text ?? '') as typeof payload;
    } catch {
      this.#log(LoggingSeverity.Warning, 'gateway: a message that is not JSON was ignored');
      return;
    }
    if (typeof payload !== 'object' || payload === null) return;
    switch (payload.op) {
      case GatewayOpcodes.Hello:
        this.#hello(link, payload.d);
        return;
      case GatewayOpcodes.HeartbeatAck:
        link.acked = true;
        return;
      case GatewayOpcodes.Heartbeat:
        // The server may ask for a beat: answer at once, the schedule stays as it is (§D.2).
        this.#send(link, GatewayOpcodes.Heartbeat, this.#seq);
        return;
      case GatewayOpcodes.Dispatch:
        this.#dispatch(link, payload.t, payload.d, payload.s);
        return;
      case GatewayOpcodes.Reconnect:
        this.#abandon(link);
        this.#reconnect(ClientError.None, 0, 'the gateway asked for a reconnect (op 7)');
        return;
      case GatewayOpcodes.InvalidSession:
        this.#invalidSession(link, payload.d === true);
        return;
      default:
        this.#log(LoggingSeverity.Verbose, `gateway: op ${String(payload.op)} ignored`);
    }
  }

  #hello(link: Link, d: unknown): void {
    const interval = (d as { heartbeat_interval?: unknown } | null)?.heartbeat_interval;
    if (typeof interval !== 'number' || !(interval > 0)) {
      this.#abandon(link);
      this.#lost(0, 'a Hello without a heartbeat interval');
      return;
    }
    clearTimeout(link.timer);
    link.timer = undefined;
    link.interval = interval;
    // The first beat at a random point of the interval, so that clients do not beat in step (§D.3).
    this.#scheduleHeartbeat(link, interval * this.#random());
    if (this.#status === ClientStatus.Connecting) this.#set(ClientStatus.Connected);
    const session = this.#session;
    if (session) {
      this.#send(link, GatewayOpcodes.Resume, {
        token: session.token,
        session_id: session.id,
        seq: this.#seq,
      });
    } else {
      this.#identify(link);
    }
  }

  #scheduleHeartbeat(link: Link, delay: number): void {
    clearTimeout(link.heartbeat);
    link.heartbeat = setTimeout(() => {
      if (this.#link !== link) return;
      // No ACK since the last beat: the connection is a zombie; leave it and resume (§D.3).
      if (!link.acked) {
        this.#abandon(link);
        this.#lost(0, 'no heartbeat ACK');
        return;
      }
      link.acked = false;
      this.#send(link, GatewayOpcodes.Heartbeat, this.#seq);
      this.#scheduleHeartbeat(link, link.interval);
    }, delay);
  }

  #identify(link: Link): void {
    const token = this.#options.identifyToken();
    if (token === undefined) {
      this.#fail(ClientError.ConnectionFailed, 0, 'no token to identify with: call UpdateToken');
      return;
    }
    link.identifiedWith = token;
    this.#send(link, GatewayOpcodes.Identify, { token, properties: this.#options.properties, intents: 0 });
  }

  #dispatch(link: Link, t: unknown, d: unknown, s: unknown): void {
    if (typeof s === 'number') this.#seq = s;
    if (typeof t !== 'string') return;
    if (t === 'READY') {
      const ready = d as { session_id?: unknown; resume_gateway_url?: unknown; user?: unknown } | null;
      const user = asUser(ready?.user);
      if (typeof ready?.session_id !== 'string' || !user) {
        this.#fail(ClientError.ConnectionFailed, 0, 'a READY without session_id or user');
        return;
      }
      this.#session = {
        id: ready.session_id,
        resumeUrl: typeof ready.resume_gateway_url === 'string' ? ready.resume_gateway_url : this.#gatewayUrl,
        token: link.identifiedWith ?? '',
      };
      this.#user = user;
      this.#becameReady(link);
    } else if (t === 'RESUMED') {
      this.#becameReady(link);
    } else if (t === 'USER_UPDATE') {
      const user = asUser(d);
      if (user && user.id === this.#user?.id) this.#user = user;
    }
    this.#options.onDispatch(t, d);
  }

  #becameReady(link: Link): void {
    link.live = true;
    this.#wasReady = true;
    this.#attempts = 0;
    this.#set(ClientStatus.Ready);
  }

  /** Op 9: resume when told it may; otherwise the session is gone and the client identifies again. */
  #invalidSession(link: Link, resumable: boolean): void {
    if (resumable && this.#session) {
      this.#abandon(link);
      this.#reconnect(ClientError.None, 0, 'invalid session, resumable (op 9)');
      return;
    }
    const refusedResume = this.#session !== undefined;
    this.#forgetSession();
    if (link.live) {
      this.#abandon(link);
      this.#reconnect(ClientError.None, 0, 'invalid session (op 9)');
    } else if (refusedResume) {
      // The Resume was refused on a connection that is still open: Identify on it now.
      this.#identify(link);
    } else {
      // The Identify itself was refused (identify concurrency): ask again after a while, on this connection.
      const { min, max } = REIDENTIFY_DELAY_MS;
      clearTimeout(link.timer);
      link.timer = setTimeout(
        () => {
          if (this.#link === link) this.#identify(link);
        },
        min + this.#random() * (max - min),
      );
    }
  }

  /** Sends a command (op 3 presence…) on the live connection; false when there is none to send on. */
  send(op: number, d: unknown): boolean {
    const link = this.#link;
    if (!link || this.#status !== ClientStatus.Ready || link.socket.readyState !== OPEN) return false;
    this.#send(link, op, d);
    return true;
  }

  #send(link: Link, op: number, d: unknown): void {
    if (link.socket.readyState !== OPEN) return;
    // Identify and Resume carry the token: the log names the opcode only.
    this.#log(LoggingSeverity.Verbose, `gateway → op ${op}`);
    link.socket.send(JSON.stringify({ op, d }));
  }

  #set(status: ClientStatus, error: ClientError = ClientError.None, detail = 0): void {
    const changed = status !== this.#status;
    this.#status = status;
    if (!changed && error === ClientError.None) return;
    this.#log(
      error === ClientError.None ? LoggingSeverity.Info : LoggingSeverity.Warning,
      `status ${nameOf(ClientStatus, status)}${error === ClientError.None ? '' : ` (${nameOf(ClientError, error)}${detail ? ` ${detail}` : ''})`}`,
    );
    this.#options.onStatus(status, error, detail);
  }

  #log(severity: LoggingSeverity, message: string): void {
    this.#options.logger.log(severity, message);
  }
}

function asUser(value: unknown): GatewayUser | undefined {
  const user = value as
    | { id?: unknown; username?: unknown; global_name?: unknown; provisional?: unknown }
    | null
    | undefined;
  if (typeof user?.id !== 'string' || typeof user.username !== 'string') return undefined;
  return {
    id: user.id,
    username: user.username,
    global_name: typeof user.global_name === 'string' ? user.global_name : null,
    ...(user.provisional === true ? { provisional: true } : {}),
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
