import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from './config.js';
import { accountsRoutes } from './domains/accounts/routes.js';
import { AccountsService } from './domains/accounts/service.js';
import { ApplicationsService } from './domains/applications/service.js';
import { gatewayRoutes } from './gateway/routes.js';
import { GatewayService } from './gateway/service.js';
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
  config: Config;
  /** Replaces the clock the config implies (tests). */
  clock?: Clock;
  /** Where log lines go; default stderr. */
  logDestination?: DestinationStream;
}

export interface Services {
  accounts: AccountsService;
  applications: ApplicationsService;
  gateway: GatewayService;
}

export interface Hearth {
  readonly config: Config;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly storage: Storage;
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

  let url = config.publicUrl ?? '';
  const accounts = new AccountsService({ storage, clock, snowflakes });
  const applications = new ApplicationsService({ storage, clock, snowflakes, accounts });
  const gateway = new GatewayService({ publicUrl: () => url, counters, clock });
  const services: Services = { accounts, applications, gateway };

  const authenticators: Authenticators = {
    async bot(token) {
      const application = await applications.authenticateBot(token);
      return application && { kind: 'bot', userId: application.botUserId, applicationId: application.id };
    },
    async user(token) {
      const user = await accounts.authenticateSession(token);
      return user && { kind: 'user', userId: user.id };
    },
    // OAuth2 access tokens arrive with the authorization server; until then no bearer token is valid.
    bearer: async () => undefined,
  };

  const http = createHttpServer(
    { logger, clock, rateLimits: counters, authenticators, globalPerSecond: config.rateLimitGlobal },
    [accountsRoutes(accounts), gatewayRoutes(gateway)],
  );

  return {
    config,
    clock,
    logger,
    storage,
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
      await http.close();
      await counters.close();
      await redis?.quit();
      await storage.close();
    },
  };
}
