import { randomBytes } from 'node:crypto';
import { expandScopes, HEARTBEAT_INTERVAL_MS } from '@hearth/protocol';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { type Bus, type BusErrorReporter, MemoryBus } from './bus/bus.js';
import { RedisStreamsBus } from './bus/redis-bus.js';
import type { Config } from './config.js';
import { accountsRoutes } from './domains/accounts/routes.js';
import { AccountsService } from './domains/accounts/service.js';
import { applicationsRoutes } from './domains/applications/routes.js';
import { ApplicationsService } from './domains/applications/service.js';
import { guildsRoutes } from './domains/guilds/routes.js';
import { GuildsService } from './domains/guilds/service.js';
// ---- Social layer (issue 8) ----
import { messagesRoutes } from './domains/messages/routes.js';
import { MessagesService, type ProvisionalAccounts } from './domains/messages/service.js';
import { SigningKeys } from './domains/oauth2/keys.js';
import { oauth2Pages } from './domains/oauth2/pages.js';
import { oauth2Routes } from './domains/oauth2/routes.js';
import { OAuth2Service } from './domains/oauth2/service.js';
import type { PresenceInput } from './domains/presence/schemas.js';
import { PresenceService } from './domains/presence/service.js';
import { relationshipsRoutes } from './domains/relationships/routes.js';
import { RelationshipsService } from './domains/relationships/service.js';
import { GatewayServer } from './gateway/gateway-server.js';
import { gatewayRoutes } from './gateway/routes.js';
import { GatewayService } from './gateway/service.js';
import { RedisSessionStore, type SessionStore } from './gateway/session-store.js';
import type { Authenticators } from './http/auth.js';
import { createHttpServer } from './http/server.js';
import { type Clock, startingAt, systemClock } from './kernel/clock.js';
import { createLogger, type Logger } from './kernel/logger.js';
import { SnowflakeGenerator } from './kernel/snowflake.js';
import { MemoryRateLimitStore } from './ratelimit/memory-store.js';
import { RedisRateLimitStore } from './ratelimit/redis-store.js';
import type { RateLimitStore } from './ratelimit/store.js';
import { connectRedis } from './redis.js';
import { openStorage, type Storage } from './storage/database.js';

export interface HearthOptions {
  /** Gateway timing, for tests of heartbeats; default: the platform's 41250 ms. */
  gateway?: { heartbeatIntervalMs?: number };
  /**
   * Several nodes in one process (tests) share these in-process backends as they would share Redis;
   * with `redisUrl` set, Redis is used instead.
   */
  shared?: { bus?: Bus; sessions?: SessionStore };
  config: Config;
  /** Replaces the clock the config implies (tests). */
  clock?: Clock;
  /** Where log lines go; default stderr. */
  logDestination?: DestinationStream;
  /**
   * Which accounts are provisional, for the social layer (issue 8) until provisional accounts (issue 7)
   * are wired; tests pass their own.
   */
  provisionalAccounts?: ProvisionalAccounts;
}

export interface Services {
  accounts: AccountsService;
  applications: ApplicationsService;
  guilds: GuildsService;
  oauth2: OAuth2Service;
  keys: SigningKeys;
  gateway: GatewayService;
  // ---- Social layer (issue 8) ----
  relationships: RelationshipsService;
  presence: PresenceService;
  messages: MessagesService;
}

export interface Hearth {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly storage: Storage;
  readonly bus: Bus;
  readonly gateway: GatewayServer;
  readonly services: Services;
  readonly http: FastifyInstance;
  /** The address clients use; known after `listen`. */
  readonly url: string;
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish, then closes storage and connections. */
  close(): Promise<void>;
}

/** The composition root: the only place where storage, counters, clock, services and transports meet. */
export async function createHearth(options: HearthOptions): Promise<Hearth> {
  const { config } = options;
  const logger = createLogger(config.logLevel, options.logDestination);
  const clock = options.clock ?? (config.now === undefined ? systemClock : startingAt(config.now));
  const storage = await openStorage(config.databaseUrl);
  await storage.migrate();
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, config.redisPrefix) : undefined;
  const counters: RateLimitStore = redis ? new RedisRateLimitStore(redis) : new MemoryRateLimitStore();
  const snowflakes = new SnowflakeGenerator(clock, config.workerId, config.processId);

  const onBusError: BusErrorReporter = (error, event) =>
    event
      ? logger.error({ err: error, eventId: event.id, eventType: event.type }, 'bus listener failed')
      : logger.error({ err: error }, 'bus transport failed');
  // Many nodes share one Redis stream on the rate-limit connection; one node needs nothing outside.
  const bus: Bus = redis
    ? await RedisStreamsBus.open(redis, { onError: onBusError })
    : (options.shared?.bus ?? new MemoryBus({ onError: onBusError }));
  // A lone node keeps its sessions to itself; a store is for nodes that share them.
  const sessions: SessionStore | undefined = redis ? new RedisSessionStore(redis) : options.shared?.sessions;

  let url = config.publicUrl ?? '';
  const publicUrl = () => url;
  const accounts = new AccountsService({ storage, clock, snowflakes });
  // The application object reports authorization counts the authorization server keeps; bound below.
  let oauth2: OAuth2Service | undefined;
  const applications = new ApplicationsService({
    storage,
    clock,
    snowflakes,
    accounts,
    authorizationCounts: (id) => oauth2!.authorizationCounts(id),
  });
  const keys = new SigningKeys({ storage, clock });
  await keys.ensure();
  oauth2 = new OAuth2Service({
    storage,
    clock,
    snowflakes,
    bus,
    keys,
    accounts,
    applications,
    issuer: publicUrl,
  });
  const guilds = new GuildsService({ storage, clock, snowflakes });
  const gateway = new GatewayService({ publicUrl, counters, clock });
  // ---- Social layer (issue 8) ----
  const nodeId = `${config.workerId}.${config.processId}.${randomBytes(4).toString('hex')}`;
  // Presence re-tells each side after a relationship change; it is built just below.
  let presence: PresenceService | undefined;
  const relationships = new RelationshipsService({
    storage,
    clock,
    bus,
    accounts,
    onChange: (change) => presence!.relationshipChanged(change),
  });
  presence = new PresenceService({ bus, clock, logger, relationships, nodeId });
  // Placeholder until provisional accounts (issue 7) land: the lead replaces it at merge with
  // `{ isProvisional: (userId) => accounts.isProvisional(userId) }`. Until then every account is full.
  const provisional: ProvisionalAccounts = options.provisionalAccounts ?? {
    isProvisional: async () => false,
  };
  const messages = new MessagesService({
    storage,
    clock,
    snowflakes,
    bus,
    counters,
    accounts,
    applications,
    relationships,
    presence,
    provisional,
  });
  const services: Services = {
    accounts,
    applications,
    guilds,
    oauth2,
    keys,
    gateway,
    relationships,
    presence,
    messages,
  };

  const authenticators: Authenticators = {
    async bot(token) {
      const application = await applications.authenticateBot(token);
      return application && { kind: 'bot', userId: application.botUserId, applicationId: application.id };
    },
    async user(token) {
      const session = await accounts.authenticateSession(token);
      if (!session) return undefined;
      const principal = { kind: 'user' as const, userId: session.user.id, authTime: session.authTime };
      accounts.remember(principal, session.user);
      return principal;
    },
    async bearer(token) {
      const grant = await oauth2!.authenticateAccessToken(token);
      return (
        grant && {
          kind: 'bearer',
          userId: grant.userId,
          applicationId: grant.applicationId,
          scopes: expandScopes(grant.scopes),
          grantedScopes: grant.scopes,
          tokenId: grant.tokenId,
          familyId: grant.familyId,
          expiresAt: grant.expiresAt,
        }
      );
    },
  };

  const http = createHttpServer(
    { logger, clock, rateLimits: counters, authenticators, globalPerSecond: config.rateLimitGlobal },
    [
      accountsRoutes(accounts),
      applicationsRoutes(applications),
      guildsRoutes(guilds),
      oauth2Routes(oauth2),
      gatewayRoutes(gateway),
      // ---- Social layer (issue 8) ----
      relationshipsRoutes(relationships),
      messagesRoutes(messages),
    ],
    [oauth2Pages(oauth2, publicUrl)],
  );
  const gatewayServer = new GatewayServer({
    clock,
    logger,
    bus,
    counters,
    authenticators,
    accounts,
    applications,
    guilds,
    gateway,
    heartbeatIntervalMs: options.gateway?.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
    store: sessions,
    nodeId,
    // ---- Social layer (issue 8) ----
    presence: {
      parse: (input) => presence.parse(input),
      started: (session, state) => presence.started(session, state as PresenceInput | undefined),
      updated: (session, state) => presence.updated(session, state as PresenceInput),
      ended: (session) => presence.ended(session),
      readyPresences: (userId, applicationId) => presence.readyPresences(userId, applicationId),
    },
  });
  gatewayServer.attach(http.server);

  return {
    config,
    clock,
    logger,
    storage,
    bus,
    gateway: gatewayServer,
    services,
    http,
    get url() {
      return url;
    },
    async listen() {
      await http.listen({ host: config.host, port: config.port });
      const address = http.server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      url ||= `http://${host}:${port}`;
      return `http://${host}:${port}`;
    },
    async close() {
      await gatewayServer.close();
      presence.close();
      await http.close();
      // A bus shared by several in-process nodes belongs to whoever made it.
      if (!options.shared?.bus) await bus.close();
      await counters.close();
      await redis?.quit();
      await storage.close();
    },
  };
}
