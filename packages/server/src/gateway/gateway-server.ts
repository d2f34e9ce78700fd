import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import proxyaddr from '@fastify/proxy-addr';
import {
  ALL_INTENTS,
  type ChannelInfoChannel,
  type ChannelInfoField,
  dispatchIntent,
  GATEWAY_PATH,
  GATEWAY_VERSIONS,
  GatewayCloseCodes,
  GatewayIntents,
  GatewayOpcodes,
  IDENTIFY_WINDOW_MS,
  isScope,
  LargeThreshold,
  Limits,
  MAX_CLIENT_PAYLOAD_BYTES,
  PRESENCE_UPDATES_LIMIT,
  PRIVILEGED_INTENT_FLAGS,
  PRIVILEGED_INTENTS,
  Scopes,
  SDK_VERSION_IDENTIFY_PROPERTY,
  SESSION_START_LIMIT,
  wireFlags,
} from '@hearth/protocol';
import { WebSocketServer } from 'ws';
import { type Bus, compareEventIds, type DeliveredEvent } from '../bus/bus.js';
import { type AccountsService, toUserObject, USER_SESSIONS_ENDED } from '../domains/accounts/service.js';
import type { ApplicationsService } from '../domains/applications/service.js';
import type { GuildsService } from '../domains/guilds/service.js';
import type { GuildSnapshots, MemberObject } from '../domains/guilds/snapshot.js';
import type { Authenticators, Principal } from '../http/auth.js';
import { judgeSdkVersion } from '../http/sdk-version.js';
import type { Clock } from '../kernel/clock.js';
import { HearthError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import { hashToken } from '../kernel/secrets.js';
import { currentRequestId } from '../ops/request-context.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { ZlibStream } from './compression.js';
import {
  type ClientPayload,
  Connection,
  type ConnectionContext,
  type DispatchFaults,
  GatewaySocket,
  HEARTBEAT_TICKS_PER_INTERVAL,
} from './connection.js';
import { type GatewayPort, route } from './dispatch.js';
import { GuildViews } from './guild-views.js';
import { readableBy } from './message-content.js';
import { type GatewayService, sessionStartKey } from './service.js';
import type { SessionStore, StoredSession } from './session-store.js';
import {
  guildSet,
  joinGuild,
  leaveGuild,
  missedSince,
  NO_DISPATCHES,
  RESUME_WINDOW_MS,
  record,
  type Sent,
  Session,
  type SessionInit,
  SessionRegistry,
  sharedApplicationId,
  sharedScopes,
} from './sessions.js';

export interface GatewayServerDeps {
  clock: Clock;
  logger: Logger;
  bus: Bus;
  counters: RateLimitStore;
  authenticators: Authenticators;
  accounts: AccountsService;
  applications: ApplicationsService;
  guilds: GuildsService;
  /** Whole guilds as GUILD_CREATE and Request Guild Members send them. */
  snapshots: GuildSnapshots;
  gateway: GatewayService;
  /** The lobbies a player is in, as READY lists them for the player's game (PROTOCOL.md §A.6). */
  lobbiesOf: (userId: string, applicationId: string) => Promise<unknown[]>;
  /** READY `private_channels` of a person's session: their DM channels and group DMs. */
  privateChannelsOf?: (userId: string) => Promise<unknown[]>;
  heartbeatIntervalMs: number;
  /** A socket without a session closes after this long (IDENTIFY_TIMEOUT_MS; shorter in tests). */
  identifyTimeoutMs: number;
  /** Open gateway sockets one remote address may hold; the next upgrade is refused with 429. */
  maxConnectionsPerAddress: number;
  /** Which hops' `X-Forwarded-For` to believe (`--trust-proxy`); none: the socket's own address counts. */
  trustProxy?: ((address: string, hop: number) => boolean) | undefined;
  /** Sessions shared with the other nodes, so a client may resume on any of them; none on a lone node. */
  store: SessionStore | undefined;
  /** This node's name in the store. */
  nodeId: string;
  /** Presence of the social layer: told of sessions starting, changing and ending. */
  presence?: PresenceHooks;
  /** Op 4: joins, moves or leaves a guild's voice (the guild domain's voice states); throws on a refusal. */
  updateVoiceState?: (userId: string, sessionId: string, payload: unknown) => Promise<unknown>;
  /**
   * After op 4 answered `state` (null: left): the VOICE_SERVER_UPDATE for that session (the voice domain's
   * token and the endpoint of the node hosting the call), or undefined when none is due.
   */
  voiceServerUpdate?: (
    userId: string,
    sessionId: string,
    request: { guild_id: string; channel_id?: unknown },
    state: unknown,
  ) => Promise<object | undefined>;
  /**
   * Op 4 with `guild_id: null`: a DM call or a lobby call joined or left (the voice domain's); answers the
   * dispatch for that session (VOICE_SERVER_UPDATE, LOBBY_VOICE_SERVER_UPDATE) or undefined; throws on a refusal.
   */
  privateVoiceStateUpdate?: (
    userId: string,
    sessionId: string,
    payload: unknown,
  ) => Promise<{ t: string; d: object } | undefined>;
  /** CALL_CREATE `d` of each call going on in the user's DMs, sent to a user's session after READY. */
  callsOf?: (userId: string) => Promise<object[]>;
  /** A session ended for good (not resumable): its voice states go (the guild domain's voice states). */
  voiceSessionEnded?: (userId: string, sessionId: string) => Promise<void>;
  /** Op 43: a guild's voice channel status and start time (the voice-status domain); throws on a refusal. */
  channelInfo?: (
    userId: string,
    guildId: string,
    fields: ReadonlySet<ChannelInfoField>,
  ) => Promise<ChannelInfoChannel[]>;
}

/** What presence needs of the gateway's sessions (PROTOCOL.md §B.8): parsing, lifecycle, READY extras. */
export interface PresenceHooks {
  /** Parses op 3 `d` (or Identify `presence`); throws on an invalid one. */
  parse(input: unknown): { status: string; activities: unknown[] };
  started(
    session: PresenceSessionRef,
    presence: ReturnType<PresenceHooks['parse']> | undefined,
  ): Promise<void>;
  updated(session: PresenceSessionRef, presence: ReturnType<PresenceHooks['parse']>): Promise<void>;
  ended(session: PresenceSessionRef): Promise<void>;
  /** READY `presences` of the session's friends. */
  readyPresences(userId: string, applicationId: string | undefined): Promise<unknown[]>;
}

export interface PresenceSessionRef {
  id: string;
  userId: string;
  applicationId: string | undefined;
}

/**
 * The WebSocket gateway of one node (PROTOCOL.md §D): sessions, Identify and Resume, and the fan-out of
 * bus events to the sessions they are for.
 */
export class GatewayServer implements ConnectionContext, GatewayPort {
  readonly registry = new SessionRegistry();
  readonly clock: Clock;
  readonly logger: Logger;
  readonly heartbeatIntervalMs: number;
  readonly identifyTimeoutMs: number;
  readonly clockOrigin: number;
  readonly #deps: GatewayServerDeps;
  // A frame over the limit is refused by ws before it is buffered; GatewaySocket closes it with 4002.
  readonly #wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CLIENT_PAYLOAD_BYTES,
    // Also what lets Connection write bus events' frames to the socket itself: ws then never queues a frame.
    perMessageDeflate: false,
    WebSocket: GatewaySocket,
    // `#connections` tracks the sockets; ws's own set would cost every idle session a closure and an entry.
    clientTracking: false,
    // Pings are answered by GatewaySocket, without ws's closure per socket.
    autoPong: false,
  });
  readonly #connections = new Set<Connection>();
  /** Dispatches sent by this node's connections since it started (metrics). */
  dispatchesSent = 0;
  /** Emulator mode's fault rules, set by the composition root; undefined otherwise. */
  faults: DispatchFaults | undefined;
  /** Open sockets (and upgrades under way) per remote address. */
  readonly #perAddress = new Map<string, number>();
  readonly #presence = new Map<string, { status: string; activities: unknown[] }>();
  readonly #presenceWindows = new Map<string, { start: number; count: number }>();
  /** When this node last served an all-members Request Guild Members, per bot and guild. */
  readonly #allMembersServedAt = new Map<string, number>();
  readonly #unsubscribe: () => void;
  readonly #sweeper: NodeJS.Timeout;
  readonly #heartbeats: NodeJS.Timeout;
  /** The heartbeat clock every connection's deadline is read off (connection.ts). */
  heartbeatTick = 0;
  #draining = false;
  /** The id of the last bus event this node saw: where a new session's history starts. */
  #lastEventId: string | undefined;
  /** Sessions being taken over from another node: their live events, kept until the merge. */
  readonly #capturing = new Map<string, { target: Matchable; events: DeliveredEvent[] }>();
  /** The permission data of the guilds this node's sessions are in. */
  readonly #views = new GuildViews();
  /** Sessions whose GUILD_CREATE for a guild they just joined is loading: that guild's events wait here. */
  readonly #joining = new Map<Session, Map<string, DeliveredEvent[]>>();
  #holdingWrites = false;
  #writeRun = 0;
  /** Whether the part of the run under way holds every socket's first frame too (see the bus listener). */
  #holdingFirstWrites = false;
  /** Events delivered in the current run: its writes are released every EVENTS_PER_WRITE_RUN. */
  #runEvents = 0;
  /** Events the bus's run has still to deliver, at most (`beforeDelivery`). */
  #runLeft = 0;
  /** The sockets corked during the current run of bus deliveries (connection.ts `hold`). */
  readonly #held: Duplex[] = [];

  constructor(deps: GatewayServerDeps) {
    this.#deps = deps;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.heartbeatIntervalMs = deps.heartbeatIntervalMs;
    this.identifyTimeoutMs = deps.identifyTimeoutMs;
    this.clockOrigin = deps.clock.now();
    this.#unsubscribe = deps.bus.subscribe(
      (event) => {
        if (!this.#holdingWrites) {
          this.#holdingWrites = true;
          this.#writeRun++;
          // A short burst (the messages of one group commit in a lobby) is built in well under a millisecond:
          // each socket then gets one write for all of it rather than one for its first frame and one for
          // the rest. A lone event, or the first parts of a long run, still go out at once.
          this.#holdingFirstWrites = this.#runLeft > 1 && this.#runLeft <= EVENTS_PER_WRITE_RUN;
        }
        this.#runLeft--;
        this.deliver(event);
        // A long run (a burst of events to every session) goes out in parts, so that clients read while
        // the rest is built, instead of all at its end.
        if (++this.#runEvents >= EVENTS_PER_WRITE_RUN) this.#releaseWrites();
      },
      {
        beforeDelivery: (events) => {
          this.#runLeft = events;
        },
        afterDelivery: () => this.#releaseWrites(),
      },
    );
    this.#sweeper = setInterval(() => this.#sweep(this.clock.now()), SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
    this.#heartbeats = setInterval(() => {
      const tick = ++this.heartbeatTick;
      for (const connection of this.#connections) connection.expireIfSilent(tick);
    }, this.heartbeatIntervalMs / HEARTBEAT_TICKS_PER_INTERVAL);
    this.#heartbeats.unref();
  }

  /** Serves WebSocket upgrades of GATEWAY_PATH on the HTTP server. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(request.url ?? '/', 'http://gateway');
      if (url.pathname.replace(/\/+$/, '') !== GATEWAY_PATH || this.#draining) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
        return;
      }
      const address = this.#deps.trustProxy
        ? proxyaddr(request, this.#deps.trustProxy)
        : (request.socket.remoteAddress ?? '');
      if (!this.#admitAddress(address)) {
        socket.end('HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      // Until the upgrade completes the socket gives its address back itself; after, its connection does.
      const release = (): void => this.#releaseAddress(address);
      socket.once('close', release);
      this.#wss.handleUpgrade(request, socket, head, (ws) => {
        socket.off('close', release);
        this.#open(ws as GatewaySocket, url.searchParams, address, socket);
      });
    });
  }

  /** Counts a socket against its address; false over the cap. */
  #admitAddress(address: string): boolean {
    const open = this.#perAddress.get(address) ?? 0;
    if (open >= this.#deps.maxConnectionsPerAddress) return false;
    this.#perAddress.set(address, open + 1);
    return true;
  }

  #releaseAddress(address: string): void {
    const left = (this.#perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.#perAddress.set(address, left);
    else this.#perAddress.delete(address);
  }

  #open(ws: GatewaySocket, query: URLSearchParams, address: string, transport: Duplex): void {
    const version = Number(query.get('v') ?? '10');
    const zlib = query.get('compress') === 'zlib-stream' ? new ZlibStream() : undefined;
    const connection = new Connection(ws, this, {
      version,
      address,
      transport,
      ...(zlib ? { zlib } : {}),
    });
    this.#connections.add(connection);
    if (!(GATEWAY_VERSIONS as readonly number[]).includes(version)) {
      connection.close(GatewayCloseCodes.InvalidAPIVersion, 'Invalid API version');
    } else if ((query.get('encoding') ?? 'json') !== 'json') {
      connection.close(GatewayCloseCodes.DecodeError, 'Only encoding=json is served');
    }
  }

  handle(connection: Connection, payload: ClientPayload): Promise<void> {
    return route(this, connection, payload);
  }

  /** A client's 1000/1001 ends its session; any other close keeps it resumable for a while (§D.3). */
  closed(connection: Connection, code: number): void {
    this.#connections.delete(connection);
    this.#releaseAddress(connection.address);
    const session = connection.session;
    if (!session || session.attached !== connection) return;
    session.attached = undefined;
    if (code === 1000 || code === 1001 || SESSION_ENDING_CLOSE_CODES.has(code)) {
      this.#endSession(session);
    } else {
      this.registry.awaitResume(session, this.clock.now() + RESUME_WINDOW_MS);
    }
  }

  // ---- Identify and Resume ----

  async identify(connection: Connection, d: unknown): Promise<void> {
    if (connection.session) {
      connection.close(GatewayCloseCodes.AlreadyAuthenticated, 'Already authenticated');
      return;
    }
    const identify = d as {
      token?: unknown;
      intents?: unknown;
      shard?: unknown;
      properties?: unknown;
      presence?: unknown;
      large_threshold?: unknown;
    } | null;
    if (typeof identify !== 'object' || identify === null || typeof identify.token !== 'string') {
      connection.close(GatewayCloseCodes.DecodeError, 'Identify needs a token');
      return;
    }
    // An SDK past its support window is refused for good: 4012 is fatal to every client (seed: Versioning).
    const sdk = judgeSdkVersion(sdkVersionOf(identify.properties), this.clock.now());
    if (sdk?.kind === 'end-of-life') {
      connection.close(GatewayCloseCodes.InvalidAPIVersion, sdk.error.message);
      return;
    }
    const principal = await this.#authenticate(identify.token);
    if (!principal) {
      connection.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed');
      return;
    }

    const intents = identify.intents ?? (principal.kind === 'bot' ? undefined : 0);
    // Compared as a number first: bitwise operators keep only the low 32 bits, so 2 ** 53 would pass.
    if (
      !Number.isInteger(intents) ||
      (intents as number) < 0 ||
      (intents as number) > ALL_INTENTS ||
      ((intents as number) & ~ALL_INTENTS) !== 0
    ) {
      connection.close(GatewayCloseCodes.InvalidIntents, 'Invalid intent(s)');
      return;
    }
    if (
      principal.kind === 'bot' &&
      !(await this.#mayUseIntents(principal.applicationId, intents as number))
    ) {
      connection.close(GatewayCloseCodes.DisallowedIntents, 'Disallowed intent(s)');
      return;
    }
    const shard = identify.shard ?? UNSHARDED;
    if (!isShard(shard)) {
      connection.close(GatewayCloseCodes.InvalidShard, 'Invalid shard');
      return;
    }

    if (!(await this.#spendIdentify(principal.userId, shard[0]))) {
      connection.sendOp(GatewayOpcodes.InvalidSession, false);
      return;
    }
    // The client left (or the identify timeout closed it) while its credential was checked.
    if (!connection.open) return;
    const session = new Session({
      id: randomBytes(16).toString('hex'),
      identity: {
        kind: principal.kind,
        userId: principal.userId,
        applicationId: principal.kind === 'user' ? undefined : sharedApplicationId(principal.applicationId),
        scopes: sharedScopes(principal.kind === 'bearer' ? principal.scopes : []),
        tokenHash: credentialHash(identify.token),
      },
      intents: intents as number,
      seq: 0,
      buffer: NO_DISPATCHES,
      attached: connection,
      guildIds: guildSet(await this.#deps.guilds.guildIdsOf(principal.userId)),
    });
    // Kept only when the client set them (bots): a player's session does without the fields.
    if (shard !== UNSHARDED) session.shard = shard;
    if (Number.isInteger(identify.large_threshold))
      session.largeThreshold = identify.large_threshold as number;
    const { store, nodeId } = this.#deps;
    if (store) {
      const since = this.#lastEventId ?? this.#deps.bus.lastId();
      await store.create(toStored(session, since), nodeId, this.clock.now());
      session.onRecord = (sent) => this.#persist(session, store, sent);
    }
    connection.session = session;
    this.registry.add(session);
    // Loaded before READY so that no guild event recorded after READY finds its view missing.
    const guildCreates = await this.#loadGuilds(session);
    // Calls already going on in its DMs follow READY, as if they started now; bots have no DM calls.
    const calls =
      session.identity.kind !== 'bot' && this.#deps.callsOf
        ? await this.#deps.callsOf(session.identity.userId)
        : [];
    const ready = await this.#ready(session, connection.version, principal);
    // From READY to the presence's start nothing waits: a request the client sends on READY (a DM to a
    // player "in the game") finds the presence this node already applied.
    record(session, 'READY', ready);
    // Each guild follows READY at once (gateway events, Guild Create): no client waits for it.
    for (const payload of guildCreates) record(session, 'GUILD_CREATE', payload);
    for (const call of calls) record(session, 'CALL_CREATE', call);
    await this.#presenceStarted(session, identify.presence);
  }

  /** Loads the permission views of a session taken over from another node. */
  async #loadViews(session: Session): Promise<void> {
    for (const guildId of session.guildIds) {
      const data = await this.#deps.snapshots.permissionData(guildId, session.identity.userId);
      if (data) this.#views.load(data);
    }
  }

  /**
   * Loads the permission views of a session's guilds and, for a bot with the GUILDS intent, the
   * GUILD_CREATE objects that follow its READY; user and player sessions keep READY's list alone.
   */
  async #loadGuilds(session: Session): Promise<Record<string, unknown>[]> {
    const sendsGuilds = session.identity.kind === 'bot' && wantsType(session, 'GUILD_CREATE');
    const payloads: Record<string, unknown>[] = [];
    for (const guildId of session.guildIds) {
      if (sendsGuilds) {
        const snapshot = await this.#deps.snapshots.guildCreatePayload(guildId, viewerOf(session));
        if (!snapshot) continue;
        this.#views.load(snapshot.permissions);
        payloads.push(snapshot.payload);
      } else {
        const data = await this.#deps.snapshots.permissionData(guildId, session.identity.userId);
        if (data) this.#views.load(data);
      }
    }
    return payloads;
  }

  /** Players and people have a presence; bots do not. Identify's `presence`, when invalid, is ignored. */
  async #presenceStarted(session: Session, input: unknown): Promise<void> {
    const hooks = this.#deps.presence;
    if (!hooks || session.identity.kind === 'bot') return;
    let presence: ReturnType<PresenceHooks['parse']> | undefined;
    try {
      presence = input === undefined || input === null ? undefined : hooks.parse(input);
    } catch {
      presence = undefined;
    }
    if (presence) this.#presence.set(session.id, presence);
    await hooks.started(presenceRef(session), presence);
  }

  /** Op 3, validated and within its rate: the session's new presence reaches the friends. */
  async updatePresence(session: Session, presence: ReturnType<PresenceHooks['parse']>): Promise<void> {
    this.setPresence(session.id, presence);
    if (session.identity.kind !== 'bot') await this.#deps.presence?.updated(presenceRef(session), presence);
  }

  /** Parses a presence with the social layer's rules, or with the bare shape check when none is wired. */
  parsePresence(input: unknown): ReturnType<PresenceHooks['parse']> | undefined {
    const hooks = this.#deps.presence;
    if (!hooks) return undefined;
    try {
      return hooks.parse(input);
    } catch {
      return undefined;
    }
  }

  get presenceWired(): boolean {
    return this.#deps.presence !== undefined;
  }

  async resume(connection: Connection, d: unknown): Promise<void> {
    if (connection.session) {
      connection.close(GatewayCloseCodes.AlreadyAuthenticated, 'Already authenticated');
      return;
    }
    const resume = d as { token?: unknown; session_id?: unknown; seq?: unknown } | null;
    if (
      typeof resume !== 'object' ||
      resume === null ||
      typeof resume.token !== 'string' ||
      typeof resume.session_id !== 'string' ||
      !(resume.seq === null || Number.isInteger(resume.seq))
    ) {
      connection.close(GatewayCloseCodes.DecodeError, 'Resume needs token, session_id and seq');
      return;
    }
    const session =
      this.registry.get(resume.session_id) ?? (await this.#takeOver(resume.session_id, resume.token));
    const sameCredential = session?.identity.tokenHash === credentialHash(resume.token);
    if (
      session &&
      sameCredential &&
      (resume.seq as number | null) !== null &&
      (resume.seq as number) > session.seq
    ) {
      connection.close(GatewayCloseCodes.InvalidSeq, 'Invalid seq');
      return;
    }
    const missed =
      session && sameCredential ? missedSince(session, (resume.seq as number | null) ?? 0) : undefined;
    if (!session || !sameCredential || !missed) {
      connection.sendOp(GatewayOpcodes.InvalidSession, false);
      return;
    }
    // The credential must still hold: a token revoked while the client was away cannot resume.
    const principal = await this.#authenticate(resume.token);
    if (principal?.userId !== session.identity.userId) {
      this.#endSession(session);
      connection.close(GatewayCloseCodes.AuthenticationFailed, 'Authentication failed');
      return;
    }
    // A newer connection takes the session over from an older one still open.
    session.attached?.close(GatewayCloseCodes.UnknownError, 'Resumed elsewhere');
    session.attached = connection;
    this.registry.resumed(session);
    connection.session = session;
    for (const sent of missed) connection.dispatch(sent);
    record(session, 'RESUMED', {});
  }

  async #authenticate(token: string): Promise<Principal | undefined> {
    const { authenticators } = this.#deps;
    // One lookup per connection: nothing to keep for a later one (`ReadOptions`).
    const once = { keep: false };
    if (/^Bearer\s+/i.test(token)) {
      const principal = await authenticators.bearer(token.replace(/^Bearer\s+/i, ''), once);
      // Players connect with `gateway.connect` (included in the SDK scopes, PROTOCOL.md §B.7).
      return principal?.kind === 'bearer' && principal.scopes.has(Scopes.GatewayConnect)
        ? principal
        : undefined;
    }
    // Tried as a bot token, then as a session token: one hash for both lookups.
    const bare = token.replace(/^Bot\s+/i, '');
    const hashed = { ...once, tokenHash: hashToken(bare) };
    return (await authenticators.bot(bare, hashed)) ?? (await authenticators.user(bare, hashed));
  }

  async #mayUseIntents(applicationId: string, intents: number): Promise<boolean> {
    if ((intents & PRIVILEGED_INTENTS) === 0) return true;
    const application = await this.#deps.applications.getApplication(applicationId);
    if (!application) return false;
    const flagged = PRIVILEGED_INTENT_FLAGS.every(
      ({ intent, flags }) =>
        (intents & intent) === 0 || flags.some((flag) => (application.flags & flag) === flag),
    );
    return flagged && (await this.#deps.applications.privilegedIntentsReviewed(application));
  }

  /** 1000 session starts a day, and `max_concurrency` identifies per 5 s per rate-limit key (§D.3). */
  async #spendIdentify(userId: string, shardId: number): Promise<boolean> {
    const { counters } = this.#deps;
    const now = this.clock.now();
    const key = shardId % SESSION_START_LIMIT.maxConcurrency;
    const burst = await counters.hit(identifyBurstKey(key, userId), IDENTIFY_WINDOW_MS, now);
    if (burst.count > SESSION_START_LIMIT.maxConcurrency) return false;
    const daily = await counters.hit(sessionStartKey(userId), SESSION_START_LIMIT.windowMs, now);
    return daily.count <= SESSION_START_LIMIT.total;
  }

  async #ready(session: Session, version: number, principal: Principal): Promise<Record<string, unknown>> {
    const { accounts, applications, gateway } = this.#deps;
    const user = await accounts.getUser(principal.userId);
    if (!user) throw new Error(`user ${principal.userId} vanished during Identify`);
    const application =
      session.identity.applicationId === undefined
        ? undefined
        : await applications.getApplication(session.identity.applicationId);
    const email =
      principal.kind === 'user' || (principal.kind === 'bearer' && principal.scopes.has(Scopes.Email));
    return {
      v: version,
      user: toUserObject(user, { email, premium: principal.kind === 'user' }),
      guilds: [...session.guildIds].map((id) => ({ id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: gateway.url(),
      shard: session.shard ?? UNSHARDED,
      // `application` is {id, flags, flags_new}, as discord-api-types' GatewayReadyDispatchData has it.
      ...(application ? { application: { id: application.id, ...wireFlags(application.flags) } } : {}),
      // A person's DMs and group DMs; bots (and game sessions) get the empty array the documents give.
      private_channels:
        principal.kind === 'user' ? ((await this.#deps.privateChannelsOf?.(principal.userId)) ?? []) : [],
      ...(principal.kind === 'bearer'
        ? {
            scopes: [...principal.scopes].filter(isScope),
            lobbies: await this.#deps.lobbiesOf(principal.userId, principal.applicationId),
          }
        : {}),
      ...(this.#deps.presence && principal.kind !== 'bot'
        ? {
            presences: await this.#deps.presence.readyPresences(
              principal.userId,
              session.identity.applicationId,
            ),
          }
        : {}),
    };
  }

  // ---- Fan-out ----

  get holdingWrites(): boolean {
    return this.#holdingWrites;
  }

  get writeRun(): number {
    return this.#writeRun;
  }

  get holdingFirstWrites(): boolean {
    return this.#holdingFirstWrites;
  }

  hold(transport: Duplex): void {
    this.#held.push(transport);
  }

  /** The bus's run of deliveries ended: every frame of it goes out now, in the order it was sent. */
  #releaseWrites(): void {
    this.#holdingWrites = false;
    this.#holdingFirstWrites = false;
    this.#runEvents = 0;
    const held = this.#held;
    for (let i = 0; i < held.length; i++) {
      const transport = held[i]!;
      // A socket ended meanwhile was uncorked by its end().
      if (transport.writableCorked > 0) transport.uncork();
    }
    held.length = 0;
  }

  /** Hands a bus event to every session of this node it is for, filtered by intents. */
  deliver(event: DeliveredEvent): void {
    if (event.type === 'APPLICATION_DEAUTHORIZED') this.#deauthorized(event.data);
    if (event.type === USER_SESSIONS_ENDED) this.#sessionsEnded(event.data);
    this.#lastEventId = event.id;
    const audience = event.audience;
    if (!audience) return;
    this.#views.apply(event);
    this.#membershipChanged(event);
    for (const capture of this.#capturing.values())
      if (wants(capture.target, event)) capture.events.push(event);
    const now = this.clock.now();
    let recorded = 0;
    for (const session of this.registry.candidates(audience)) {
      if (session.lastEventId !== undefined) {
        if (compareEventIds(event.id, session.lastEventId) <= 0) continue;
        // Live delivery has caught up with what the takeover read from the log: nothing more to skip.
        session.lastEventId = undefined;
      }
      const waiting =
        audience.guildId === undefined ? undefined : this.#joining.get(session)?.get(audience.guildId);
      if (waiting) waiting.push(event);
      else if (wants(session, event, true) && this.#views.permits(event, session.identity.userId, now)) {
        record(session, event.type, readableBy(session, event.type, event.data), event.id);
        recorded++;
      }
    }
    // The request that caused the event, when it was made on this node (its id links the two lines).
    if (recorded > 0 && this.logger.isLevelEnabled('debug')) {
      this.logger.debug(
        { reqId: currentRequestId(), eventId: event.id, type: event.type, sessions: recorded },
        'gateway dispatch',
      );
    }
    if (event.type === 'GUILD_DELETE' && audience.guildId !== undefined) {
      for (const session of this.registry.all()) leaveGuild(session, audience.guildId);
      this.#views.forget(audience.guildId);
    }
  }

  /**
   * Membership moves sessions (gateway events, Guild Create / Guild Delete): a user who joins gets the
   * guild's GUILD_CREATE; one removed, kicked or banned gets GUILD_DELETE without `unavailable`.
   */
  #membershipChanged(event: DeliveredEvent): void {
    const guildId = event.audience?.guildId;
    const userId = (event.data['user'] as { id?: unknown } | undefined)?.id;
    if (guildId === undefined || typeof userId !== 'string') return;
    const joined = event.type === 'GUILD_MEMBER_ADD';
    const left = event.type === 'GUILD_MEMBER_REMOVE' || event.type === 'GUILD_BAN_ADD';
    if (!joined && !left) return;
    for (const session of this.registry.candidates({ users: [userId] })) {
      if (joined && !session.guildIds.has(guildId)) void this.#join(session, guildId);
      if (left && leaveGuild(session, guildId)) {
        this.#joining.get(session)?.delete(guildId);
        if (wantsType(session, 'GUILD_DELETE')) record(session, 'GUILD_DELETE', { id: guildId });
      }
    }
    if (left) this.#views.forget(guildId, userId);
  }

  /** Adds a guild to a session: its GUILD_CREATE first, then the guild's events that came meanwhile. */
  async #join(session: Session, guildId: string): Promise<void> {
    let pending = this.#joining.get(session);
    if (!pending) {
      pending = new Map();
      this.#joining.set(session, pending);
    }
    if (pending.has(guildId)) return;
    const waiting: DeliveredEvent[] = [];
    pending.set(guildId, waiting);
    try {
      const snapshot = await this.#deps.snapshots.guildCreatePayload(guildId, viewerOf(session));
      if (!snapshot || pending.get(guildId) !== waiting || this.registry.get(session.id) !== session) return;
      this.#views.load(snapshot.permissions);
      joinGuild(session, guildId);
      if (wantsType(session, 'GUILD_CREATE')) record(session, 'GUILD_CREATE', snapshot.payload);
      const now = this.clock.now();
      for (const event of waiting) {
        if (wants(session, event) && this.#views.permits(event, session.identity.userId, now))
          record(session, event.type, readableBy(session, event.type, event.data), event.id);
      }
    } catch (error) {
      this.logger.error({ err: error, session: session.id, guild: guildId }, 'gateway guild join failed');
    } finally {
      if (pending.get(guildId) === waiting) pending.delete(guildId);
      if (pending.size === 0) this.#joining.delete(session);
    }
  }

  // ---- Sessions across nodes ----

  /**
   * Copies a dispatch to the shared store, which writes a session's copies in the order they are made (no
   * chain per session to wait on); losing ownership means another node has taken the session.
   */
  #persist(session: Session, store: SessionStore, sent: Sent): void {
    store
      .append(session.id, this.#deps.nodeId, sent)
      .then((owned) => {
        if (!owned && this.registry.get(session.id) === session) {
          this.registry.remove(session);
          session.attached?.close(GatewayCloseCodes.UnknownError, 'Session resumed on another node');
        }
      })
      // Also what the hand-over above throws: a rejection left unhandled would end the process.
      .catch((error: unknown) =>
        this.logger.error({ err: error, session: session.id }, 'gateway store append failed'),
      );
  }

  /**
   * Takes over a session another node owned (PROTOCOL.md §D.3: resume anywhere, miss nothing): capture
   * live events, claim, then merge the stored buffer, the bus history after it, and the captured events.
   */
  async #takeOver(sessionId: string, token: string): Promise<Session | undefined> {
    const { store, bus, nodeId } = this.#deps;
    if (!store) return undefined;
    const stored = await store.peek(sessionId);
    if (!stored || stored.identity.tokenHash !== credentialHash(token)) return undefined;
    const capture = { target: fromStored(stored), events: [] as DeliveredEvent[] };
    this.#capturing.set(sessionId, capture);
    try {
      const claimed = await store.claim(sessionId, nodeId, this.clock.now());
      if (!claimed) return undefined;
      const session = new Session({
        ...fromStored(claimed.session),
        seq: claimed.buffer.at(-1)?.seq ?? 0,
        buffer: claimed.buffer,
        attached: undefined,
      });
      session.shard = claimed.session.shard;
      const expiresAt = this.clock.now() + RESUME_WINDOW_MS;
      const lastRecorded = [...claimed.buffer].reverse().find((sent) => sent.eventId !== undefined)?.eventId;
      const after = lastRecorded ?? claimed.session.sinceEventId;
      const history = after === undefined ? [] : await bus.history(after);
      const merged = new Map<string, DeliveredEvent>();
      for (const event of [...history, ...capture.events]) {
        if (after === undefined || compareEventIds(event.id, after) > 0) merged.set(event.id, event);
      }
      session.onRecord = (sent) => this.#persist(session, store, sent);
      const missed = [...merged.values()].sort((a, b) => compareEventIds(a.id, b.id));
      for (const event of missed) {
        if (wants(session, event))
          record(session, event.type, readableBy(session, event.type, event.data), event.id);
      }
      // The log can be ahead of this node's live delivery: live events up to here are in the buffer already.
      session.lastEventId = missed.at(-1)?.id ?? after;
      await this.#loadViews(session);
      this.registry.add(session);
      this.registry.awaitResume(session, expiresAt);
      return session;
    } finally {
      this.#capturing.delete(sessionId);
    }
  }

  // ---- What handlers ask of the gateway ----

  allowPresenceUpdate(sessionId: string): boolean {
    const now = this.clock.now();
    let window = this.#presenceWindows.get(sessionId);
    if (!window || now - window.start >= PRESENCE_UPDATES_LIMIT.windowMs) {
      window = { start: now, count: 0 };
      this.#presenceWindows.set(sessionId, window);
    }
    window.count += 1;
    return window.count <= PRESENCE_UPDATES_LIMIT.limit;
  }

  setPresence(sessionId: string, presence: { status: string; activities: unknown[] }): void {
    this.#presence.set(sessionId, presence);
  }

  presenceOf(sessionId: string): { status: string; activities: unknown[] } | undefined {
    return this.#presence.get(sessionId);
  }

  /** Spends the all-members budget of a bot in a guild; answers seconds to wait when it is spent. */
  async spendAllMembersRequest(userId: string, guildId: string): Promise<number | undefined> {
    const now = this.clock.now();
    const key = `request-all-members:${userId}:${guildId}`;
    const windowMs = Limits.requestAllGuildMembersWindowMs;
    // The 30 s run from the request served (§D.6), which an epoch-aligned window alone would let through
    // twice across its edge; the shared counter adds the requests served by other nodes.
    const servedAt = this.#allMembersServedAt.get(key);
    if (servedAt !== undefined && now - servedAt < windowMs) return (servedAt + windowMs - now) / 1000;
    const { count, resetAt } = await this.#deps.counters.hit(key, windowMs, now);
    if (count > 1) return Math.max(0.001, (resetAt - now) / 1000);
    this.#allMembersServedAt.set(key, now);
    return undefined;
  }

  /** Member objects for Request Guild Members: roles, nick and the rest, as the REST member object. */
  async findMembers(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<Array<MemberObject & { user: { id: string } }>> {
    const members = await this.#deps.snapshots.members(guildId, filter);
    return members.filter((member): member is MemberObject & { user: { id: string } } => !!member.user);
  }

  /** Op 4 of a session in the guild; a refusal (unknown channel, no CONNECT, full) changes nothing. */
  async updateVoiceState(session: Session, d: { guild_id: string }): Promise<void> {
    const update = this.#deps.updateVoiceState;
    if (!update || !session.guildIds.has(d.guild_id)) return;
    try {
      const state = await update(session.identity.userId, session.id, d);
      const server = await this.#deps.voiceServerUpdate?.(session.identity.userId, session.id, d, state);
      // Only the session that asked learns where to connect, with a token bound to it.
      if (server) record(session, 'VOICE_SERVER_UPDATE', server);
    } catch (error) {
      if (!(error instanceof HearthError)) throw error;
      this.logger.debug({ session: session.id, code: error.code }, 'gateway voice state update refused');
    }
  }

  /** Op 4 for a DM or lobby call; a refusal (not a recipient, not a member of the lobby) changes nothing. */
  async updatePrivateVoiceState(session: Session, d: unknown): Promise<void> {
    const update = this.#deps.privateVoiceStateUpdate;
    if (!update) return;
    try {
      const dispatch = await update(session.identity.userId, session.id, d);
      if (dispatch) record(session, dispatch.t, dispatch.d);
    } catch (error) {
      if (!(error instanceof HearthError)) throw error;
      this.logger.debug(
        { session: session.id, code: error.code },
        'gateway private voice state update refused',
      );
    }
  }

  /** Op 43 of a session in the guild; a refusal (no longer a member) answers nothing. */
  async channelInfo(
    userId: string,
    guildId: string,
    fields: ReadonlySet<ChannelInfoField>,
  ): Promise<ChannelInfoChannel[] | undefined> {
    const channelInfo = this.#deps.channelInfo;
    if (!channelInfo) return undefined;
    try {
      return await channelInfo(userId, guildId, fields);
    } catch (error) {
      if (!(error instanceof HearthError)) throw error;
      this.logger.debug({ guild: guildId, code: error.code }, 'gateway channel info refused');
      return undefined;
    }
  }

  // ---- Lifecycle ----

  /** Draining: every client is told to reconnect (op 7) and resume elsewhere, then the sockets close. */
  async close(): Promise<void> {
    this.#draining = true;
    this.#unsubscribe();
    // Unsubscribed in the middle of a run, the bus would not end it for this gateway.
    this.#releaseWrites();
    clearInterval(this.#sweeper);
    clearInterval(this.#heartbeats);
    for (const connection of this.#connections) {
      connection.sendOp(GatewayOpcodes.Reconnect, null);
      connection.close(GatewayCloseCodes.UnknownError, 'Reconnect');
    }
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  /** Open sockets of this node and the addresses they come from (operators, tests of the bounds). */
  socketCounts(): { sockets: number; addresses: number } {
    return { sockets: this.#connections.size, addresses: this.#perAddress.size };
  }

  /** Open sockets of this node, and those with a session attached (metrics). */
  sessionCounts(): { open: number; identified: number } {
    let identified = 0;
    for (const connection of this.#connections) if (connection.session?.attached === connection) identified++;
    return { open: this.#connections.size, identified };
  }

  /** The players connected to this node (bearer sessions with a live socket), by application. */
  connectedPlayers(): Map<string, string[]> {
    const players = new Map<string, Set<string>>();
    for (const session of this.registry.all()) {
      const { kind, applicationId, userId } = session.identity;
      if (kind !== 'bearer' || !applicationId || !session.attached) continue;
      let users = players.get(applicationId);
      if (!users) {
        users = new Set();
        players.set(applicationId, users);
      }
      users.add(userId);
    }
    return new Map([...players].map(([applicationId, users]) => [applicationId, [...users]]));
  }

  /** Ends the sessions whose clients did not come back within the resume window, here and in the store. */
  sweep(): void {
    this.#sweep(this.clock.now());
  }

  #sweep(now: number): void {
    for (const session of this.registry.expired(now)) this.#endSession(session);
    this.#holdSessions(now);
    const inUse = new Set<string>();
    for (const session of this.registry.all()) for (const id of session.guildIds) inUse.add(id);
    this.#views.retain(inUse);
    for (const [key, servedAt] of this.#allMembersServedAt) {
      if (now - servedAt >= Limits.requestAllGuildMembersWindowMs) this.#allMembersServedAt.delete(key);
    }
  }

  /**
   * Tells the shared store this node still holds its sessions, and removes those of nodes that stopped
   * saying so a resume window ago (the node died; its clients had that window to resume elsewhere).
   */
  #holdSessions(now: number): void {
    const store = this.#deps.store;
    if (!store) return;
    const held = [...this.registry.all()].map((session) => session.id);
    void store
      .hold(this.#deps.nodeId, held, now)
      .then(() => store.removeAbandoned(now - RESUME_WINDOW_MS - SWEEP_INTERVAL_MS))
      .catch((error: unknown) => this.logger.error({ err: error }, 'gateway store sweep failed'));
  }

  /**
   * Ends every session of this node (the emulator restored a snapshot: what they saw is stale). Each client
   * is closed with a code it reconnects after; its Resume gets op 9 and it identifies afresh.
   */
  endAllSessions(reason: string): void {
    for (const session of [...this.registry.all()]) {
      const connection = session.attached;
      session.attached = undefined;
      connection?.close(GatewayCloseCodes.UnknownError, reason);
      this.#endSession(session);
    }
  }

  /**
   * Leaves a session waiting for a Resume while its socket stays open (emulator mode's resumable op 9):
   * the client may resume on that socket, as discord.js does, or on a new one.
   */
  detach(sessionId: string): void {
    const session = this.registry.get(sessionId);
    const connection = session?.attached;
    if (!session || !(connection instanceof Connection)) return;
    session.attached = undefined;
    this.registry.awaitResume(session, this.clock.now() + RESUME_WINDOW_MS);
    connection.session = undefined;
  }

  /** Ends a session everywhere (operators, tests): a later Resume of it gets op 9. */
  forget(sessionId: string): void {
    const session = this.registry.get(sessionId);
    if (session) this.#endSession(session);
    else void this.#deps.store?.remove(sessionId);
  }

  /** A revoked link ends the player's sessions of that game at once, live or waiting to resume. */
  #deauthorized(data: Record<string, unknown>): void {
    const userId = (data['user'] as { id?: unknown } | undefined)?.id;
    const applicationId = data['application_id'];
    if (typeof userId !== 'string' || typeof applicationId !== 'string') return;
    for (const session of [...this.registry.candidates({ users: [userId] })]) {
      if (session.identity.kind !== 'bearer' || session.identity.applicationId !== applicationId) continue;
      session.attached?.close(GatewayCloseCodes.AuthenticationFailed, 'Authorization revoked');
      this.#endSession(session);
    }
  }

  /**
   * Logout, a password change or a ban ended user sessions; a bot token reset (`bot`) ended every session
   * of that bot: their connections close, not resumable.
   */
  #sessionsEnded(data: Record<string, unknown>): void {
    const { token_hash: tokenHash, user_id: userId, keep_token_hash: keep, bot } = data;
    const sessions =
      typeof userId === 'string' ? this.registry.candidates({ users: [userId] }) : this.registry.all();
    for (const session of [...sessions]) {
      const { kind, tokenHash: hash } = session.identity;
      if (kind !== (bot === true ? 'bot' : 'user')) continue;
      if (typeof tokenHash === 'string' ? hash !== tokenHash : hash === keep) continue;
      session.attached?.close(GatewayCloseCodes.AuthenticationFailed, 'Session ended');
      this.#endSession(session);
    }
  }

  #endSession(session: Session): void {
    this.registry.remove(session);
    void this.#deps.store
      ?.remove(session.id)
      .catch((error: unknown) =>
        this.logger.error({ err: error, session: session.id }, 'gateway store remove failed'),
      );
    this.#presence.delete(session.id);
    this.#presenceWindows.delete(session.id);
    void this.#deps
      .voiceSessionEnded?.(session.identity.userId, session.id)
      .catch((error: unknown) =>
        this.logger.error({ err: error, session: session.id }, 'gateway voice leave failed'),
      );
    if (session.identity.kind !== 'bot') {
      void this.#deps.presence
        ?.ended(presenceRef(session))
        .catch((error: unknown) =>
          this.logger.error({ err: error, session: session.id }, 'gateway presence end failed'),
        );
    }
  }
}

function presenceRef(session: Session): PresenceSessionRef {
  return {
    id: session.id,
    userId: session.identity.userId,
    applicationId: session.identity.kind === 'bearer' ? session.identity.applicationId : undefined,
  };
}

/** How often a node ends expired sessions and tells the shared store which ones it still holds. */
const SWEEP_INTERVAL_MS = 30_000;
/** Events of one run of bus deliveries after which its held writes go out (see the bus listener). */
const EVENTS_PER_WRITE_RUN = 16;
/** The identify burst counters' key prefixes, one per rate-limit key (`max_concurrency` of them). */
const IDENTIFY_BURST_PREFIXES = Array.from(
  { length: SESSION_START_LIMIT.maxConcurrency },
  (_, key) => `identify:${key}:`,
);

/**
 * The counter an Identify's burst spends: a prefix made once joined to the user id, so that the key a
 * window keeps is one joined string, not two strings and a copy of the prefix.
 */
function identifyBurstKey(key: number, userId: string): string {
  return (IDENTIFY_BURST_PREFIXES[key] ?? `identify:${key}:`) + userId;
}

/** The shard of a client that names none, shared by every such session. */
const UNSHARDED: readonly [number, number] = [0, 1];

/** Server closes after which the client must identify afresh (PROTOCOL.md §D.4: DJS recovery mapping). */
const SESSION_ENDING_CLOSE_CODES = new Set<number>([
  GatewayCloseCodes.NotAuthenticated,
  GatewayCloseCodes.AuthenticationFailed,
  GatewayCloseCodes.AlreadyAuthenticated,
  GatewayCloseCodes.InvalidSeq,
  GatewayCloseCodes.RateLimited,
  GatewayCloseCodes.InvalidShard,
  GatewayCloseCodes.ShardingRequired,
  GatewayCloseCodes.InvalidAPIVersion,
  GatewayCloseCodes.InvalidIntents,
  GatewayCloseCodes.DisallowedIntents,
]);

/** What an event is matched against: a live session, or one being taken over. */
interface Matchable {
  identity: { kind: string; applicationId: string | undefined; userId: string };
  intents: number;
  guildIds: ReadonlySet<string>;
}

/**
 * Whether a bus event is for this session: its users or application, its guild, and (bots) its intents.
 * `candidate`: the session is one of `SessionRegistry.candidates` for the event's audience, so of its users
 * when it names users (a lobby message: its 100 members need not be looked up again, one by one).
 */
function wants(target: Matchable, event: DeliveredEvent, candidate = false): boolean {
  const audience = event.audience;
  if (!audience) return false;
  if (audience.users && !candidate && !names(audience.users, target.identity.userId)) return false;
  if (audience.applicationId && target.identity.applicationId !== audience.applicationId) return false;
  if (audience.guildId && !target.guildIds.has(audience.guildId)) return false;
  if (event.type === 'THREAD_MEMBERS_UPDATE' && !namesTarget(target, event)) {
    // Others' thread membership needs GUILD_MEMBERS too (Threads topic, Syncing for other users).
    if (target.identity.kind === 'bot' && (target.intents & GatewayIntents.GuildMembers) === 0) return false;
  }
  return wantsType(target, event.type, audience.guildId !== undefined);
}

/**
 * Sets of the long user lists of audiences, made once per event and gone with it: a presence change names up
 * to 1,000 friends, each of whose sessions is checked against the list.
 */
const audienceUserSets = new WeakMap<readonly string[], ReadonlySet<string>>();

function names(users: readonly string[], userId: string): boolean {
  if (users.length <= 16) return users.includes(userId);
  let set = audienceUserSets.get(users);
  if (!set) {
    set = new Set(users);
    audienceUserSets.set(users, set);
  }
  return set.has(userId);
}

/** Whether a THREAD_MEMBERS_UPDATE adds or removes the target's own user. */
function namesTarget(target: Matchable, event: DeliveredEvent): boolean {
  const userId = target.identity.userId;
  const added = event.data['added_members'];
  const removed = event.data['removed_member_ids'];
  return (
    (Array.isArray(added) && added.some((member) => (member as { user_id?: unknown })?.user_id === userId)) ||
    (Array.isArray(removed) && removed.includes(userId))
  );
}

/**
 * Whether a session's intents let it receive this dispatch type (bots only: people and players get all);
 * outside a guild some events need their DM intent instead (MESSAGE_CREATE: DIRECT_MESSAGES).
 */
function wantsType(target: Matchable, type: string, inGuild = true): boolean {
  const intent = dispatchIntent(type, inGuild);
  return intent === undefined || target.identity.kind !== 'bot' || (target.intents & intent) !== 0;
}

function viewerOf(session: Session) {
  return {
    userId: session.identity.userId,
    intents: session.intents,
    largeThreshold: session.largeThreshold ?? LargeThreshold.default,
  };
}

function toStored(session: Session, sinceEventId: string | undefined): StoredSession {
  return {
    id: session.id,
    identity: {
      kind: session.kind,
      userId: session.userId,
      applicationId: session.applicationId,
      scopes: [...session.scopes],
      tokenHash: session.tokenHash,
    },
    intents: session.intents,
    shard: session.shard ?? UNSHARDED,
    guildIds: [...session.guildIds],
    sinceEventId,
  };
}

/** A stored session's identity and subscriptions: what a session taken over starts from. */
function fromStored(stored: StoredSession): Omit<SessionInit, 'seq' | 'buffer' | 'attached'> {
  return {
    id: stored.id,
    identity: { ...stored.identity, scopes: sharedScopes(stored.identity.scopes.filter(isScope)) },
    intents: stored.intents,
    guildIds: guildSet(stored.guildIds),
  };
}

/** Identify `properties.sdk_version`, which only the SDK sends. */
function sdkVersionOf(properties: unknown): unknown {
  return typeof properties === 'object' && properties !== null
    ? (properties as Record<string, unknown>)[SDK_VERSION_IDENTIFY_PROPERTY]
    : undefined;
}

/** One credential however it is written: a bot token with or without its `Bot ` prefix. */
function credentialHash(token: string): string {
  return hashToken(token.replace(/^Bot\s+/i, ''));
}

function isShard(value: unknown): value is [number, number] {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    Number.isInteger(value[0]) &&
    Number.isInteger(value[1]) &&
    value[1] >= 1 &&
    value[0] >= 0 &&
    value[0] < value[1]
  );
}
