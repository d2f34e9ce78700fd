import { EventEmitter } from 'node:events';
import { GatewayIntents, GatewayOpcodes } from '@hearth/protocol';
import { WebSocket } from 'ws';

/** An answer of the Hearth server: its status and its body, parsed when it is JSON. */
export interface ServerAnswer {
  status: number;
  body: unknown;
}

export interface ApiRequest {
  method?: string;
  /** The Authorization header; the agent's own session token when omitted. */
  authorization?: string | null;
  /** Sent as JSON, or as a form when a URLSearchParams. */
  body?: unknown;
}

/**
 * The agent's link to one Hearth server through its public interface only (DESIGN.md: the RPC transport is
 * served by a process in the platform-client role): HTTP under `/api/v10` and the gateway.
 */
export class ServerLink {
  readonly serverUrl: string;
  readonly #token: string;

  constructor(serverUrl: string, token: string) {
    this.serverUrl = serverUrl.replace(/\/+$/, '');
    this.#token = token;
  }

  /**
   * Signs in as the platform client does, with the user's login and password (POST /auth/login), and
   * answers the session token; throws with the server's message when refused.
   */
  static async signIn(serverUrl: string, login: string, password: string): Promise<string> {
    const link = new ServerLink(serverUrl, '');
    const answer = await link.api('/auth/login', {
      method: 'POST',
      authorization: null,
      body: { login, password },
    });
    const token = (answer.body as { token?: unknown } | null)?.token;
    if (answer.status !== 200 || typeof token !== 'string') {
      const body = answer.body as {
        message?: unknown;
        errors?: { login?: { _errors?: Array<{ message?: unknown }> } };
      } | null;
      const message = body?.errors?.login?._errors?.[0]?.message ?? body?.message;
      throw new Error(
        `rpc: sign-in refused: ${typeof message === 'string' ? message : `HTTP ${answer.status}`}`,
      );
    }
    return token;
  }

  /** The API base clients are told of in READY `config.api_endpoint` (`//host/api`, as the platform gives). */
  get apiEndpoint(): string {
    return `${this.serverUrl.replace(/^https?:/, '')}/api`;
  }

  async api(path: string, request: ApiRequest = {}): Promise<ServerAnswer> {
    const headers: Record<string, string> = {};
    const authorization = request.authorization === undefined ? this.#token : request.authorization;
    if (authorization !== null) headers['authorization'] = authorization;
    let body: string | undefined;
    if (request.body instanceof URLSearchParams) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = request.body.toString();
    } else if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.body);
    }
    const response = await fetch(`${this.serverUrl}/api/v10${path}`, {
      method: request.method ?? 'GET',
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : (JSON.parse(text) as unknown);
    } catch {
      // Not JSON: the text as it came.
    }
    return { status: response.status, body: parsed };
  }

  /** A gateway session as the agent's user, opened now. */
  openGateway(options: GatewayLinkOptions = {}): GatewayLink {
    return new GatewayLink(this, this.#token, options);
  }
}

/** One gateway dispatch: its type and data. */
export interface GatewayDispatch {
  t: string;
  d: Record<string, unknown>;
}

export interface GatewayLinkOptions {
  /** Wait before reconnecting after an unexpected close; default 1 s. */
  reconnectDelayMs?: number;
}

/** What the platform client reads: guilds, voice, messages and DMs with their content. */
const AGENT_INTENTS =
  GatewayIntents.Guilds |
  GatewayIntents.GuildVoiceStates |
  GatewayIntents.GuildMessages |
  GatewayIntents.DirectMessages |
  GatewayIntents.MessageContent;

/**
 * The agent's own gateway session (PROTOCOL.md §D): Identify with the user's token, heartbeats, and a new
 * session after an unexpected close. Emits `dispatch` (GatewayDispatch), `ready` and `fatal` (a close code).
 */
export class GatewayLink extends EventEmitter<{
  dispatch: [GatewayDispatch];
  ready: [Record<string, unknown>];
  fatal: [number];
}> {
  readonly #link: ServerLink;
  readonly #token: string;
  readonly #reconnectDelayMs: number;
  #socket: WebSocket | undefined;
  #sequence: number | null = null;
  #heartbeat: NodeJS.Timeout | undefined;
  #reconnect: NodeJS.Timeout | undefined;
  #closed = false;
  #ready: Promise<Record<string, unknown>>;
  /** The latest op 3 presence, sent again on a new session. */
  #presence: Record<string, unknown> | undefined;

  constructor(link: ServerLink, token: string, options: GatewayLinkOptions) {
    super();
    this.#link = link;
    this.#token = token;
    this.#reconnectDelayMs = options.reconnectDelayMs ?? 1000;
    this.#ready = this.#waitReady();
    void this.#open();
  }

  /** READY of the current session (settles once the first session is up, rejects on a fatal close). */
  ready(): Promise<Record<string, unknown>> {
    return this.#ready;
  }

  /** Op 3: the user's status and activities (the agent aggregates every game's activity into one). */
  updatePresence(presence: Record<string, unknown>): void {
    this.#presence = presence;
    this.#send(GatewayOpcodes.PresenceUpdate, presence);
  }

  /** Op 4: join, move within or leave (channel null) a guild's voice. */
  updateVoiceState(state: {
    guild_id: string;
    channel_id: string | null;
    self_mute: boolean;
    self_deaf: boolean;
  }) {
    this.#send(GatewayOpcodes.VoiceStateUpdate, state);
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    clearTimeout(this.#reconnect);
    if (this.#socket && this.#socket.readyState <= WebSocket.OPEN) this.#socket.close(1000);
  }

  #waitReady(): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const onReady = (data: Record<string, unknown>) => {
        this.off('fatal', onFatal);
        resolve(data);
      };
      const onFatal = (code: number) => {
        this.off('ready', onReady);
        reject(new Error(`the gateway refused the agent's session (close ${code})`));
      };
      this.once('ready', onReady);
      this.once('fatal', onFatal);
    });
  }

  async #open(): Promise<void> {
    let url: string;
    try {
      const answer = await this.#link.api('/gateway', { authorization: null });
      url = (answer.body as { url: string }).url;
    } catch {
      this.#scheduleReconnect();
      return;
    }
    if (this.#closed) return;
    const socket = new WebSocket(`${url}?v=10&encoding=json`);
    this.#socket = socket;
    socket.on('message', (raw) => this.#received(raw.toString()));
    socket.on('error', () => {
      // A close follows; it decides what comes next.
    });
    socket.on('close', (code) => {
      clearInterval(this.#heartbeat);
      if (this.#closed) return;
      // 4004 (authentication failed) and the other fatal codes end the agent's link for good (§D.4).
      if (
        code === 4004 ||
        code === 4010 ||
        code === 4011 ||
        code === 4012 ||
        code === 4013 ||
        code === 4014
      ) {
        this.emit('fatal', code);
        return;
      }
      this.#scheduleReconnect();
    });
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    this.#reconnect = setTimeout(() => void this.#open(), this.#reconnectDelayMs);
    this.#reconnect.unref();
  }

  #received(text: string): void {
    let frame: { op: number; d: unknown; s: number | null; t: string | null };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    if (frame.s !== null && frame.s !== undefined) this.#sequence = frame.s;
    switch (frame.op) {
      case GatewayOpcodes.Hello: {
        const interval = (frame.d as { heartbeat_interval: number }).heartbeat_interval;
        this.#heartbeat = setInterval(() => this.#send(GatewayOpcodes.Heartbeat, this.#sequence), interval);
        this.#heartbeat.unref();
        this.#send(GatewayOpcodes.Identify, {
          token: this.#token,
          intents: AGENT_INTENTS,
          properties: { os: process.platform, browser: 'hearth-rpc', device: 'hearth-rpc' },
          ...(this.#presence ? { presence: this.#presence } : {}),
        });
        return;
      }
      case GatewayOpcodes.Heartbeat:
        this.#send(GatewayOpcodes.Heartbeat, this.#sequence);
        return;
      case GatewayOpcodes.Reconnect:
      case GatewayOpcodes.InvalidSession:
        this.#socket?.close(4900);
        return;
      case GatewayOpcodes.Dispatch: {
        const dispatch = { t: frame.t ?? '', d: (frame.d ?? {}) as Record<string, unknown> };
        if (dispatch.t === 'READY') this.emit('ready', dispatch.d);
        this.emit('dispatch', dispatch);
        return;
      }
      default:
        return;
    }
  }

  #send(op: number, d: unknown): void {
    if (this.#socket?.readyState === WebSocket.OPEN) this.#socket.send(JSON.stringify({ op, d }));
  }
}
