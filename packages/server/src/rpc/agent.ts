import {
  ActivityLimits,
  PRESENCE_UPDATES_LIMIT,
  RPC_VERSION,
  RpcCloseCodes,
  RpcErrorCodes,
  RpcEvents,
} from '@hearth/protocol';
import type { ActivityInput } from '../domains/presence/schemas.js';
import { type AgentPort, type ConsentRequest, serveCommand } from './commands.js';
import { forwardDispatch, subscribed } from './events.js';
import { IpcTransport, ipcDirectory } from './ipc.js';
import type { LaunchSettings } from './launch-commands.js';
import { type ActivityJoinOutcome, acceptActivityInvite } from './launch-join.js';
import { type GatewayDispatch, type GatewayLink, ServerLink } from './server-link.js';
import { type RpcApplication, RpcError, RpcSession, type RpcTransportConnection } from './session.js';
import { VoiceTracker } from './voice.js';
import { WebSocketTransport } from './websocket.js';

export interface RpcAgentOptions {
  /** The Hearth server the agent's user is signed in to (its HTTP base URL). */
  serverUrl: string;
  /** The user's session token (`hearth users create` prints one). */
  token: string;
  /** IPC: the directory of `discord-ipc-N` (default: as clients search it); false: no IPC. */
  ipc?: { directory?: string } | false;
  /** WebSocket: the first port tried (default 6463) and how many; false: no WebSocket. */
  websocket?: { portBase?: number; portCount?: number } | false;
  /** The environment the IPC directory is read from; default process.env. */
  env?: NodeJS.ProcessEnv;
  frameMaxBytes?: number;
  /** The player's answer to AUTHORIZE (the consent dialog); default: the signed-in player approves. */
  consent?: (request: ConsentRequest) => Promise<boolean> | boolean;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Wait before the gateway link reconnects; default 1 s. */
  reconnectDelayMs?: number;
  /** Launching games for accepted invites (RegisterLaunchCommand); default: on, every registered game. */
  launch?: LaunchSettings;
}

/** How long the agent waits for its gateway session at start. */
const GATEWAY_READY_TIMEOUT_MS = 15_000;

/**
 * `hearth rpc`: the local agent in the platform client's role (DESIGN.md). Signed in as one user, it talks
 * to the Hearth server through HTTP and its own gateway session, and serves games on the player's machine
 * over IPC and a loopback WebSocket (PROTOCOL.md §H).
 */
export class RpcAgent implements AgentPort {
  readonly link: ServerLink;
  readonly user: Record<string, unknown>;
  readonly voice: VoiceTracker;
  readonly #gateway: GatewayLink;
  readonly #options: RpcAgentOptions;
  readonly #sessions = new Set<RpcSession>();
  readonly #applications = new Map<string, Promise<RpcApplication | undefined>>();
  #ipc: IpcTransport | undefined;
  #ws: WebSocketTransport | undefined;
  #nextSession = 1;
  #presenceSent: number[] = [];
  #presenceTimer: NodeJS.Timeout | undefined;
  readonly #voiceWaiters = new Set<(channelId: string | null) => void>();

  private constructor(
    options: RpcAgentOptions,
    link: ServerLink,
    user: Record<string, unknown>,
    gateway: GatewayLink,
  ) {
    this.#options = options;
    this.link = link;
    this.user = user;
    this.voice = new VoiceTracker(String(user['id']));
    this.#gateway = gateway;
    gateway.on('dispatch', (dispatch) => this.#received(dispatch));
  }

  /** Signs in (GET /users/@me), opens the gateway session, then listens on IPC and WebSocket. */
  static async start(options: RpcAgentOptions): Promise<RpcAgent> {
    const link = new ServerLink(options.serverUrl, options.token);
    const me = await link.api('/users/@me');
    if (me.status !== 200) {
      throw new Error(`rpc: the server refused the user token (HTTP ${me.status}); sign in again`);
    }
    const gateway = link.openGateway(
      options.reconnectDelayMs === undefined ? {} : { reconnectDelayMs: options.reconnectDelayMs },
    );
    const agent = new RpcAgent(options, link, me.body as Record<string, unknown>, gateway);
    try {
      await withTimeout(gateway.ready(), GATEWAY_READY_TIMEOUT_MS, 'rpc: no gateway session');
      await agent.#listen();
    } catch (error) {
      await agent.close();
      throw error;
    }
    return agent;
  }

  /** The socket path of the IPC transport, when it listens. */
  get userId(): string {
    return String(this.user['id']);
  }

  get ipcPath(): string | undefined {
    return this.#ipc?.path;
  }

  /** The port of the WebSocket transport, when it listens. */
  get wsPort(): number | undefined {
    return this.#ws?.port;
  }

  async close(): Promise<void> {
    clearTimeout(this.#presenceTimer);
    for (const session of this.#sessions) session.connection.close(RpcCloseCodes.Normal, 'Agent closing');
    await Promise.all([this.#ipc?.close(), this.#ws?.close()]);
    this.#gateway.close();
  }

  async #listen(): Promise<void> {
    const { ipc = {}, websocket = {}, frameMaxBytes, log } = this.#options;
    if (ipc !== false) {
      const directory = ipc.directory ?? ipcDirectory(this.#options.env ?? process.env);
      this.#ipc = await IpcTransport.listen(
        { directory, ...(frameMaxBytes ? { frameMaxBytes } : {}), ...(log ? { log } : {}) },
        { handshake: (connection, hello) => this.#handshake(connection, hello.client_id) },
      );
    }
    if (websocket !== false) {
      this.#ws = await WebSocketTransport.listen(
        { ...websocket, ...(frameMaxBytes ? { frameMaxBytes } : {}), ...(log ? { log } : {}) },
        {
          application: (clientId) => this.#application(clientId),
          open: (connection, application) => this.#open(connection, application),
          tokenExchange: (body, headers) => this.#tokenExchange(body, headers),
        },
      );
    }
  }

  // ---- Connections ----

  async #handshake(connection: RpcTransportConnection, clientId: unknown) {
    const application =
      typeof clientId === 'string' && /^\d{1,20}$/.test(clientId)
        ? await this.#application(clientId)
        : undefined;
    if (!application) return { code: RpcCloseCodes.InvalidClientId, message: 'Invalid Client ID' };
    return this.#open(connection, application);
  }

  /** A game connected: READY with the server's endpoints and the user, then its commands. */
  #open(connection: RpcTransportConnection, application: RpcApplication) {
    const session = new RpcSession(this.#nextSession++, application, connection);
    this.#sessions.add(session);
    this.#options.log?.('rpc connection', {
      session: session.id,
      transport: connection.transport,
      application: application.id,
    });
    session.dispatch(RpcEvents.Ready, {
      v: RPC_VERSION,
      config: {
        cdn_host: new URL(this.link.serverUrl).host,
        api_endpoint: this.link.apiEndpoint,
        environment: 'production',
      },
      user: this.user,
    });
    // Commands of one connection are served in order, as a client that awaits each reply expects.
    let queue = Promise.resolve();
    return {
      frame: (payload: unknown) => {
        queue = queue.then(() => serveCommand(this, session, payload));
      },
      closed: () => {
        session.markClosed();
        this.#sessions.delete(session);
        if (session.activity) this.#sendPresence();
      },
    };
  }

  /** GET /applications/{id}/rpc, remembered while it exists. */
  #application(clientId: string): Promise<RpcApplication | undefined> {
    let known = this.#applications.get(clientId);
    if (!known) {
      known = this.link
        .api(`/applications/${clientId}/rpc`, { authorization: null })
        .then((answer) => (answer.status === 200 ? (answer.body as RpcApplication) : undefined));
      this.#applications.set(clientId, known);
      // Only a found application is kept; a refusal is asked again next time (it may be created meanwhile).
      void known.then(
        (found) => {
          if (!found) this.#applications.delete(clientId);
        },
        () => this.#applications.delete(clientId),
      );
    }
    return known;
  }

  async #tokenExchange(body: string, headers: { contentType?: string; authorization?: string }) {
    const response = await fetch(`${this.link.serverUrl}/api/v10/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': headers.contentType ?? 'application/x-www-form-urlencoded',
        ...(headers.authorization ? { authorization: headers.authorization } : {}),
      },
      body,
    });
    return { status: response.status, body: await response.text() };
  }

  // ---- AgentPort ----

  async consent(request: ConsentRequest): Promise<boolean> {
    return this.#options.consent ? await this.#options.consent(request) : true;
  }

  setActivity(session: RpcSession, activity: ActivityInput | null): void {
    session.activity = activity ?? undefined;
    this.#sendPresence();
  }

  selectVoiceChannel(guildId: string, channelId: string | null, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = (now: string | null) => {
        if (now !== channelId) return;
        clearTimeout(timer);
        this.#voiceWaiters.delete(waiter);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#voiceWaiters.delete(waiter);
        reject(
          new RpcError(RpcErrorCodes.SelectChannelTimedOut, 'Request to select voice channel timed out'),
        );
      }, timeoutMs);
      this.#voiceWaiters.add(waiter);
      this.#gateway.updateVoiceState({
        guild_id: guildId,
        channel_id: channelId,
        self_mute: this.voice.settings.mute,
        self_deaf: this.voice.settings.deaf,
      });
    });
  }

  /**
   * Delivers ACTIVITY_JOIN or ACTIVITY_SPECTATE `{secret}` to the connected sessions of a game that
   * subscribed (the platform client does this when the player joins a friend's party).
   */
  deliverActivitySecret(applicationId: string, kind: 'join' | 'spectate', secret: string): number {
    return this.dispatchToGame(
      applicationId,
      kind === 'join' ? RpcEvents.ActivityJoin : RpcEvents.ActivitySpectate,
      { secret },
    );
  }

  /** DISPATCHes `evt` to every connection of the game subscribed to it; answers how many got it. */
  dispatchToGame(
    applicationId: string,
    evt: string,
    data: unknown,
    args: Record<string, unknown> = {},
  ): number {
    let delivered = 0;
    for (const session of this.#sessions) {
      if (session.application.id !== applicationId || !subscribed(session, evt, args)) continue;
      session.dispatch(evt, data);
      delivered++;
    }
    return delivered;
  }

  /**
   * The player's "Join" on a friend's activity invite in the platform client (§B.9), accepted with the
   * agent's own session: a connected game that subscribed gets ACTIVITY_JOIN, else its launch command runs.
   */
  joinActivityInvite(invite: { inviterId: string; messageId: string }): Promise<ActivityJoinOutcome> {
    const { log } = this.#options;
    return acceptActivityInvite(
      {
        link: this.link,
        settings: this.#options.launch ?? { enabled: true },
        deliverActivityJoin: (applicationId, secret) =>
          this.deliverActivitySecret(applicationId, 'join', secret),
        ...(log ? { log: (line: string) => log(line) } : {}),
      },
      invite,
    );
  }

  /** Every dispatch of the agent's gateway session, for features built beside the agent (launching games). */
  onGatewayDispatch(listener: (dispatch: GatewayDispatch) => void): () => void {
    this.#gateway.on('dispatch', listener);
    return () => this.#gateway.off('dispatch', listener);
  }

  // ---- Gateway ----

  #received(dispatch: GatewayDispatch): void {
    const changes = this.voice.received(dispatch);
    for (const change of changes) {
      if (change.after.user_id !== String(this.user['id'])) continue;
      for (const waiter of [...this.#voiceWaiters]) waiter(change.after.channel_id);
    }
    forwardDispatch(
      {
        userId: String(this.user['id']),
        voice: this.voice,
        sessions: this.#sessions,
        serverUrl: this.link.serverUrl,
      },
      dispatch,
      changes,
    );
  }

  /** Op 3 with every connected game's activity; spaced to the gateway's 5 per 20 s, the latest wins. */
  #sendPresence(): void {
    if (this.#presenceTimer) return;
    const now = Date.now();
    this.#presenceSent = this.#presenceSent.filter((at) => now - at < PRESENCE_UPDATES_LIMIT.windowMs);
    if (this.#presenceSent.length >= PRESENCE_UPDATES_LIMIT.limit) {
      const wait = PRESENCE_UPDATES_LIMIT.windowMs - (now - (this.#presenceSent[0] ?? now));
      this.#presenceTimer = setTimeout(() => {
        this.#presenceTimer = undefined;
        this.#sendPresence();
      }, wait);
      this.#presenceTimer.unref();
      return;
    }
    this.#presenceSent.push(now);
    // The newest games' activities, as many as a presence holds (§B.8).
    const activities = [...this.#sessions]
      .flatMap((session) => (session.activity ? [session.activity] : []))
      .slice(-ActivityLimits.activitiesMax);
    this.#gateway.updatePresence({ status: 'online', since: null, afk: false, activities });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
