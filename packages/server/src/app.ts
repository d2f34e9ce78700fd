import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import proxyaddr from '@fastify/proxy-addr';
import {
  expandScopes,
  HEARTBEAT_INTERVAL_MS,
  IDENTIFY_TIMEOUT_MS,
  InteractionContextTypes,
  LobbyDeleteReasons,
  PresenceStatuses,
  VOICE_ENCRYPTION_MODES,
  VOICE_HEARTBEAT_INTERVAL_MS,
  type VoiceEncryptionMode,
} from '@hearth/protocol';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { type Bus, type BusErrorReporter, MemoryBus } from './bus/bus.js';
import { DatabaseBus } from './bus/database-bus.js';
import { RedisWake } from './bus/redis-wake.js';
import { type Config, ConfigError } from './config.js';
import { cdnRoutes } from './domains/accounts/cdn-routes.js';
import { type AccountLinkParticipant, AccountLinkService } from './domains/accounts/link.js';
import { IdentityProvidersService } from './domains/accounts/providers.js';
import { provisionalRoutes } from './domains/accounts/provisional-routes.js';
import { accountsRoutes } from './domains/accounts/routes.js';
import { AccountsService, type User } from './domains/accounts/service.js';
import { ActivitiesService } from './domains/applications/activities.js';
import { activityProxyRoutes, shareLinkRoutes } from './domains/applications/activity-routes.js';
import { applicationCdnRoutes } from './domains/applications/cdn-routes.js';
import { applicationEmojiRoutes } from './domains/applications/emoji-routes.js';
import { ApplicationEmojisService } from './domains/applications/emojis.js';
import { applicationProfilesRoutes } from './domains/applications/profiles.js';
import { QuestsService } from './domains/applications/quests.js';
import { applicationsRoutes } from './domains/applications/routes.js';
import { type Application, ApplicationsService } from './domains/applications/service.js';
import { TeamsService } from './domains/applications/teams.js';
import { AutoModEnforcement } from './domains/automod/enforcement.js';
import { automodRoutes } from './domains/automod/routes.js';
import { AutoModService } from './domains/automod/service.js';
import { DiskAttachmentFiles } from './domains/channel-messages/attachment-files.js';
import { Attachments } from './domains/channel-messages/attachments.js';
import { attachmentsCdnRoutes } from './domains/channel-messages/attachments-routes.js';
import { channelIconRoutes } from './domains/channel-messages/cdn-routes.js';
import { DmChannels } from './domains/channel-messages/dm-channels.js';
import { Forwarding } from './domains/channel-messages/forwarding.js';
import { MessageActionsService } from './domains/channel-messages/message-actions.js';
import { messageActionsRoutes } from './domains/channel-messages/message-actions-routes.js';
import { PinsService } from './domains/channel-messages/pins.js';
import { pinsRoutes } from './domains/channel-messages/pins-routes.js';
import { placeOf } from './domains/channel-messages/places.js';
import { ReactionsService } from './domains/channel-messages/reactions.js';
import { reactionsRoutes } from './domains/channel-messages/reactions-routes.js';
import { MessageReading } from './domains/channel-messages/reading.js';
import { channelMessagesRoutes } from './domains/channel-messages/routes.js';
import { ChannelMessagesService } from './domains/channel-messages/service.js';
import { channelsRoutes } from './domains/channels/routes.js';
import { ChannelsService } from './domains/channels/service.js';
import { CommandIndex } from './domains/commands/command-index.js';
import { CommandPermissions } from './domains/commands/permissions.js';
import { commandPermissionsRoutes, commandsRoutes } from './domains/commands/routes.js';
import { CommandsService } from './domains/commands/service.js';
import { entitlementsRoutes } from './domains/entitlements/routes.js';
import { EntitlementsService } from './domains/entitlements/service.js';
import { GuildAccess } from './domains/guilds/access.js';
import { AuditLog } from './domains/guilds/audit-log.js';
import { BansService } from './domains/guilds/bans.js';
import { bansRoutes } from './domains/guilds/bans-routes.js';
import { BotInstalls } from './domains/guilds/bot-install.js';
import { MembersService } from './domains/guilds/members.js';
import { membersRoutes } from './domains/guilds/members-routes.js';
import { GuildOperators } from './domains/guilds/operators.js';
import { RolesService } from './domains/guilds/roles.js';
import { rolesRoutes } from './domains/guilds/roles-routes.js';
import { guildsRoutes } from './domains/guilds/routes.js';
import { GuildsService } from './domains/guilds/service.js';
import { GuildSnapshots } from './domains/guilds/snapshot.js';
import { VoiceStatesService } from './domains/guilds/voice-states.js';
import { voiceStatesRoutes } from './domains/guilds/voice-states-routes.js';
import { interactionsRoutes } from './domains/interactions/routes.js';
import { InteractionsService } from './domains/interactions/service.js';
import { invitesRoutes } from './domains/invites/routes.js';
import { InvitesService } from './domains/invites/service.js';
import { LobbyLinking } from './domains/lobbies/linking.js';
import { linkingRoutes } from './domains/lobbies/linking-routes.js';
import { lobbiesRoutes } from './domains/lobbies/routes.js';
import { LobbiesService } from './domains/lobbies/service.js';
import * as lobbiesStore from './domains/lobbies/store.js';
import { messagesRoutes } from './domains/messages/routes.js';
import { MessagesService, type ProvisionalAccounts } from './domains/messages/service.js';
import { SigningKeys } from './domains/oauth2/keys.js';
import { oauth2Pages } from './domains/oauth2/pages.js';
import { oauth2Routes } from './domains/oauth2/routes.js';
import { type AccessGrant, OAuth2Service } from './domains/oauth2/service.js';
import type { PresenceInput } from './domains/presence/schemas.js';
import { PresenceService } from './domains/presence/service.js';
import { relationshipsRoutes } from './domains/relationships/routes.js';
import { RelationshipsService } from './domains/relationships/service.js';
import { searchRoutes } from './domains/search/routes.js';
import { SearchIndex } from './domains/search/search-index.js';
import { SearchService } from './domains/search/service.js';
import { ThreadListing } from './domains/threads/listing.js';
import { ThreadMembersService } from './domains/threads/members.js';
import { threadsRoutes } from './domains/threads/routes.js';
import { ThreadsService } from './domains/threads/service.js';
import { callRoutes } from './domains/voice/call-routes.js';
import { DaveE2eeCalls } from './domains/voice/dave/e2ee.js';
import { DaveDeliveryService } from './domains/voice/dave/service.js';
import { DmCalls } from './domains/voice/dm-calls.js';
import { VoiceGateway } from './domains/voice/gateway.js';
import { LobbyCalls } from './domains/voice/lobby-calls.js';
import { UdpForwarder } from './domains/voice/media.js';
import { VoiceService } from './domains/voice/service.js';
import { transportCryptoReady } from './domains/voice/transport-crypto.js';
import { voiceStatusRoutes } from './domains/voice-status/routes.js';
import { VoiceStatusService } from './domains/voice-status/service.js';
import { WebhooksService } from './domains/webhooks/service.js';
import { DeliveryWorker } from './domains/webhooks/worker.js';
import { registerInteractionActions, registerUserActions, ScriptedActions } from './emulator/actions.js';
import { AdjustableClock } from './emulator/clock.js';
import { Emulator } from './emulator/emulator.js';
import { Faults } from './emulator/faults.js';
import { emulatorRoutes } from './emulator/routes.js';
import { Snapshots } from './emulator/snapshots.js';
import { GatewayServer } from './gateway/gateway-server.js';
import { gatewayRoutes } from './gateway/routes.js';
import { GatewayService } from './gateway/service.js';
import { DatabaseSessionStore, type SessionStore } from './gateway/session-store.js';
import type { Authenticators, Principal, RouteAuth } from './http/auth.js';
import { OpenApiDocuments, openApiRoutes } from './http/openapi.js';
import { createHttpServer, type ResponseObserver } from './http/server.js';
import { type Clock, startingAt, systemClock } from './kernel/clock.js';
import { createLogger, type Logger } from './kernel/logger.js';
import { after } from './kernel/maybe.js';
import type { OutboundPolicy } from './kernel/outbound.js';
import { SnowflakeGenerator } from './kernel/snowflake.js';
import { Sweeper } from './kernel/sweeper.js';
import { HearthMetrics } from './ops/metrics.js';
import { opsRoutes } from './ops/routes.js';
import { webhookQueueDepth } from './ops/store.js';
import { FailoverRateLimitStore } from './ratelimit/failover-store.js';
import { MemoryRateLimitStore } from './ratelimit/memory-store.js';
import { Quotas } from './ratelimit/quota.js';
import { RedisRateLimitStore } from './ratelimit/redis-store.js';
import type { RateLimitStore } from './ratelimit/store.js';
import { connectRedis } from './redis.js';
import { type Executor, openStorage, type Storage } from './storage/database.js';
import { portalPages } from './web/portal/routes.js';

export interface HearthOptions {
  /** Gateway timing, for tests of heartbeats; default: the platform's 41250 ms and IDENTIFY_TIMEOUT_MS. */
  gateway?: { heartbeatIntervalMs?: number; identifyTimeoutMs?: number };
  /** Voice gateway heartbeat interval announced in op 8 Hello (VOICE_HEARTBEAT_INTERVAL_MS). */
  voice?: { heartbeatIntervalMs?: number; modes?: readonly VoiceEncryptionMode[] };
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
  /** Runs the webhook delivery worker (default); one-shot CLI commands leave delivery to the servers. */
  deliverWebhooks?: boolean;
  /** Data of an embedder's (or a test's) own that moves on merge and unmerge, after the built-in participants. */
  accountLinkParticipants?: readonly AccountLinkParticipant[];
  /** Told of every HTTP response as sent: tests check each against the reference description. */
  observeResponse?: ResponseObserver;
}

export interface Services {
  accounts: AccountsService;
  botInstalls: BotInstalls;
  guildOperators: GuildOperators;
  applications: ApplicationsService;
  teams: TeamsService;
  applicationEmojis: ApplicationEmojisService;
  quests: QuestsService;
  activities: ActivitiesService;
  guilds: GuildsService;
  members: MembersService;
  bans: BansService;
  voiceStates: VoiceStatesService;
  /** Calls in DMs: ringing, its timeout (a sweep), one voice connection per user. */
  dmCalls: DmCalls;
  channels: ChannelsService;
  invites: InvitesService;
  channelMessages: ChannelMessagesService;
  threads: ThreadsService;
  dmChannels: DmChannels;
  reactions: ReactionsService;
  messageActions: MessageActionsService;
  pins: PinsService;
  automod: AutoModService;
  lobbies: LobbiesService;
  lobbyLinking: LobbyLinking;
  oauth2: OAuth2Service;
  keys: SigningKeys;
  gateway: GatewayService;
  webhooks: WebhooksService;
  entitlements: EntitlementsService;
  identityProviders: IdentityProvidersService;
  accountLink: AccountLinkService;
  relationships: RelationshipsService;
  presence: PresenceService;
  messages: MessagesService;
  search: SearchService;
  searchIndex: SearchIndex;
  interactions: InteractionsService;
  commands: CommandsService;
  commandPermissions: CommandPermissions;
  /** The commands a user may use in a guild, a bot DM or a private channel (interactions read it). */
  commandIndex: CommandIndex;
}

export interface Hearth {
  readonly config: Config;
  readonly clock: Clock;
  /** Emulator mode (`--emulator`): the test clock, fixtures, snapshots, faults and scripted users. */
  readonly emulator: Emulator | undefined;
  readonly logger: Logger;
  readonly storage: Storage;
  readonly bus: Bus;
  readonly gateway: GatewayServer;
  /** The voice gateway of this node (PROTOCOL.md §G); its endpoint is known after `listen`. */
  readonly voice: VoiceGateway;
  /** This node's DAVE delivery service (the MLS external sender of the calls it hosts). */
  readonly dave: DaveDeliveryService;
  readonly services: Services;
  readonly http: FastifyInstance;
  /** Every route as registered, with who it admits: read by the suites that sweep every route. */
  readonly routes: readonly RegisteredRoute[];
  /** The address clients use; known after `listen`. */
  readonly url: string;
  listen(): Promise<string>;
  /** Stops accepting, lets in-flight requests finish, then closes storage and connections. */
  close(): Promise<void>;
}

/** One registered route and method: its template (with the `/api/v{N}` prefix), `auth` config and schemas. */
export interface RegisteredRoute {
  method: string;
  url: string;
  auth: RouteAuth | undefined;
  schema: { body?: unknown; querystring?: unknown; params?: unknown; response?: unknown } | undefined;
}

/**
 * Guild events after which a member's permissions in a voice channel may differ: roles, overwrites, a
 * member's roles or timeout, the owner. Open voice sessions are re-checked on each (voiceStateChanged's twin).
 */
const PERMISSION_EVENTS: ReadonlySet<string> = new Set([
  'GUILD_ROLE_UPDATE',
  'GUILD_ROLE_DELETE',
  'GUILD_MEMBER_UPDATE',
  'CHANNEL_UPDATE',
  'GUILD_UPDATE',
]);
/** How often each node marks its players' lobbies active and deletes idle ones (shortest timeout: 5 s). */
const LOBBY_SWEEP_INTERVAL_MS = 1000;
const RING_SWEEP_INTERVAL_MS = 1000;
/** How often each node looks for due batches of guild search indexes being built. */
const SEARCH_INDEX_INTERVAL_MS = 250;
/** How often interactions nobody answered within 3 s are failed for their users (the clock decides). */
const INTERACTION_SWEEP_INTERVAL_MS = 250;
/** How often threads whose auto-archive time has come are archived (each read also archives them lazily). */
const THREAD_SWEEP_INTERVAL_MS = 60_000;
/** Emulator mode: how often subscriptions whose period ended renew (a clock jump runs it at once). */
const RENEWAL_SWEEP_INTERVAL_MS = 60_000;

/** The composition root: the only place where storage, counters, clock, services and transports meet. */
export async function createHearth(options: HearthOptions): Promise<Hearth> {
  const { config } = options;
  const logger = createLogger(config.logLevel, options.logDestination);
  const baseClock = options.clock ?? (config.now === undefined ? systemClock : startingAt(config.now));
  // Emulator mode: the one clock every service holds can be set and advanced at runtime.
  const testClock = config.emulator ? new AdjustableClock(baseClock) : undefined;
  const clock: Clock = testClock ?? baseClock;
  // Read before anything is opened: a bad file stops the start with nothing to clean up.
  const providerCa = config.providerCaFile ? readCaFile(config.providerCaFile) : undefined;
  // Every URL Hearth calls goes through one policy (kernel/outbound.ts).
  const outbound: OutboundPolicy = { allowLoopback: config.allowLoopbackUrls, extraCa: providerCa };
  const storage = await openStorage(config.databaseUrl);
  await storage.migrate();
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, config.redisPrefix) : undefined;
  // ioredis reports each failed reconnection; what depends on Redis logs its own switch to and from it.
  redis?.on('error', (error: unknown) => logger.debug({ err: error }, 'redis connection error'));
  // While Redis is away each node counts on its own: limits hold per node, requests never fail on it.
  const counters: RateLimitStore = redis
    ? new FailoverRateLimitStore(new RedisRateLimitStore(redis), new MemoryRateLimitStore(), {
        available: () => redis.status === 'ready',
        onSwitch: (local, error) =>
          local
            ? logger.warn({ err: error }, 'rate limits: Redis unavailable, counting per node')
            : logger.info('rate limits: Redis is back, counting across nodes'),
      })
    : new MemoryRateLimitStore();
  const snowflakes = new SnowflakeGenerator(clock, config.workerId, config.processId);
  const quotas = new Quotas(counters, clock);

  const onBusError: BusErrorReporter = (error, event) =>
    event
      ? logger.error({ err: error, eventId: event.id, eventType: event.type }, 'bus listener failed')
      : logger.error({ err: error }, 'bus transport failed');
  // The processes of one database (servers, `hearth` commands) share its event log, which is what makes an
  // event durable; Redis, when there is one, only wakes the other nodes to read it at once. Only an
  // in-memory database without Redis keeps its events to itself.
  const bus: Bus = redis
    ? await DatabaseBus.open(storage, {
        onError: onBusError,
        pollMs: config.eventPollMs,
        wake: new RedisWake(redis),
      })
    : (options.shared?.bus ??
      (isInMemory(config.databaseUrl)
        ? // History is read only by a node taking over a session of another node sharing its sessions.
          new MemoryBus({ onError: onBusError, history: options.shared?.sessions !== undefined })
        : await DatabaseBus.open(storage, { onError: onBusError, pollMs: config.eventPollMs })));
  // A lone node keeps its sessions to itself; nodes that share them (the deployments with Redis) keep them
  // in the database, so that neither a Redis restart nor a node's death ends them.
  const sessions: SessionStore | undefined = redis
    ? new DatabaseSessionStore(storage)
    : options.shared?.sessions;

  // Metrics read what they report when scraped (gateway counts, queue depth, pool); hot paths only count.
  const metrics =
    config.metrics || config.metricsToken !== undefined
      ? new HearthMetrics({
          gatewaySessions: () => gatewayServer.sessionCounts(),
          dispatchesSent: () => gatewayServer.dispatchesSent,
          webhookQueueDepth: () => webhookQueueDepth(storage.db),
          databasePool: () => storage.pool(),
          voice: () => {
            const media = voiceGateway.mediaStats;
            return {
              ...voiceGateway.counts,
              forwarded: media.forwarded,
              dropped: media.dropped,
              decryptFailures: media.decryptFailures,
              daveEpochs: daveService.epochTransitions,
            };
          },
        })
      : undefined;
  const stopBusMetrics = metrics?.observeBus(bus);

  let url = config.publicUrl ?? '';
  const publicUrl = () => url;
  const accounts = new AccountsService({
    storage,
    clock,
    snowflakes,
    bus,
    quotas,
    sessionLifetimeMs: config.sessionLifetimeDays * 24 * 60 * 60 * 1000,
  });
  // The application object reports authorization counts the authorization server keeps; bound below.
  let oauth2: OAuth2Service | undefined;
  // Applications show the webhook settings; webhooks sign with the application's key: bound below.
  let webhooks: WebhooksService | undefined;
  // Applications show and verify the interactions endpoint the interactions domain keeps: bound below.
  let interactions: InteractionsService | undefined;
  const teams = new TeamsService({ storage, clock, snowflakes, accounts });
  const applications = new ApplicationsService({
    storage,
    clock,
    snowflakes,
    accounts,
    teams,
    authorizationCounts: (id) => oauth2!.authorizationCounts(id),
    eventWebhooks: {
      describe: async (id) => {
        const settings = await webhooks!.settings(id);
        return {
          event_webhooks_url: settings.url,
          event_webhooks_status: settings.status,
          event_webhooks_types: settings.types,
        };
      },
      prepare: (id, changes) => webhooks!.prepareSettings(id, changes),
    },
    interactionsEndpoint: {
      describe: (id) => interactions!.endpointOf(id),
      prepare: (id, url) => interactions!.prepareEndpoint(id, url),
    },
  });
  const applicationEmojis = new ApplicationEmojisService({
    storage,
    clock,
    snowflakes,
    accounts,
    applications,
  });
  const activities = new ActivitiesService({ storage, clock, applications, outbound, publicUrl });
  webhooks = new WebhooksService({
    storage,
    clock,
    snowflakes,
    logger,
    signerFor: (id) => applications.eventSigner(id),
    outbound,
    ...(metrics ? { onOutcome: (outcome) => metrics.webhookDelivery(outcome) } : {}),
  });
  const deliveryWorker = new DeliveryWorker({
    storage,
    clock,
    logger,
    webhooks,
    pollMs: config.webhookPollMs,
  });
  const keys = new SigningKeys({ storage, clock });
  await keys.ensure();
  const botInstalls = new BotInstalls({
    storage,
    clock,
    snowflakes,
    bus,
    access: new GuildAccess({ clock }),
    auditLog: new AuditLog({ clock, snowflakes }),
    application: (id) => applications.getApplication(id),
    user: (db, id) => accounts.getUserIn(db, id),
  });
  oauth2 = new OAuth2Service({
    botInstalls,
    storage,
    clock,
    snowflakes,
    bus,
    keys,
    accounts,
    applications,
    issuer: publicUrl,
    provisionalMerge: () => accountLink,
  });
  const guilds = new GuildsService({
    storage,
    clock,
    snowflakes,
    bus,
    users: accounts,
    isOnline: (userId) =>
      presence !== undefined && presence.presenceOf(userId).status !== PresenceStatuses.Offline,
    channelDeleted: (tx, channelId) => channelDeleted(tx, channelId),
  });
  const roles = new RolesService({
    storage,
    clock,
    snowflakes,
    bus,
    accessChanging: (tx, guildId) => threads.roleChanging(tx, guildId),
  });
  const guildAccess = new GuildAccess({ clock });
  // Application commands: the applications domain tells who an application and its bot are.
  const commands = new CommandsService({
    storage,
    clock,
    snowflakes,
    bus,
    access: guildAccess,
    application: (db, id) => applications.getApplicationIn(db, id),
  });
  const commandPermissions = new CommandPermissions(commands);
  const commandIndex = new CommandIndex(commands);
  const auditLog = new AuditLog({ clock, snowflakes });
  // Voice status keeps each voice channel's start time as the guild's voice states change (PROTOCOL.md §D.7).
  const voiceStatus: VoiceStatusService = new VoiceStatusService({
    storage,
    clock,
    bus,
    access: guildAccess,
    auditLog,
    connectedChannel: (db, guildId, userId) => voiceStates.connectedChannel(db, guildId, userId),
  });
  const moderation = {
    storage,
    clock,
    bus,
    accounts,
    access: guildAccess,
    auditLog,
    voiceChannels: voiceStatus,
  };
  const members = new MembersService({
    ...moderation,
    rolesChanging: (tx, guildId, userId) => threads.rolesChanging(tx, guildId, userId),
    tokens: { authenticateAccessToken: async (token) => oauth2!.authenticateAccessToken(token) },
    applications: { flagsOf: async (id) => (await applications.getApplication(id))?.flags },
  });
  const bans = new BansService({ ...moderation, members });
  const voiceStates = new VoiceStatesService({ ...moderation, members });
  const attachments = new Attachments({
    clock,
    snowflakes,
    files: new DiskAttachmentFiles(config.dataDir),
    publicUrl,
  });
  // AutoMod checks every guild message the message core stores, and posts its alerts through it.
  const automodEnforcement: AutoModEnforcement = new AutoModEnforcement({
    storage,
    clock,
    snowflakes,
    bus,
    access: guildAccess,
    auditLog,
    counters,
    alerts: { postAlert: (tx, alert) => channelMessages.postAlert(tx, alert) },
    timeouts: members,
  });
  const applicationFlags = async (db: Executor, id: string) =>
    (await applications.getApplicationIn(db, id))?.flags;
  const searchIndex = new SearchIndex({ storage, clock, users: accounts, attachments });
  const channelMessages: ChannelMessagesService = new ChannelMessagesService({
    storage,
    clock,
    snowflakes,
    bus,
    access: guildAccess,
    users: accounts,
    attachments,
    applicationFlags,
    forwarding: new Forwarding({
      access: guildAccess,
      quotas,
    }),
    guards: [automodEnforcement.messageGuard()],
    // A message in a linked channel reaches the lobby (PROTOCOL.md §A.5); the linking is built below.
    observers: [
      {
        messageCreated: (row) => lobbyLinking.channelMessageCreated(row),
        messageUpdated: (row) => lobbyLinking.channelMessageUpdated(row),
        messageDeleted: (channelId, messageId) => lobbyLinking.channelMessageDeleted(channelId, messageId),
      },
    ],
    searchIndex,
    threads: {
      messageCreated: (tx, place, messageId) => threads.messageCreated(tx, place, messageId),
      messagesDeleted: (tx, place, ids) => threads.messagesDeleted(tx, place, ids),
      threadsOf: (db, ids) => threads.threadsOf(db, ids),
    },
  });
  const search = new SearchService({
    storage,
    clock,
    access: guildAccess,
    index: searchIndex,
    reading: new MessageReading({ storage, users: accounts, applicationFlags, attachments }),
    threads: { ofResults: (userId, ids) => threadListing.ofResults(userId, ids) },
  });
  // Threads: sub-channels whose messages the message core stores (it tells them of each one above).
  const threads: ThreadsService = new ThreadsService({
    storage,
    clock,
    snowflakes,
    bus,
    access: guildAccess,
    auditLog,
    users: accounts,
    messages: channelMessages,
    titles: { screen: (title) => automodEnforcement.screenTitle(title) },
  });
  const threadMembers = new ThreadMembersService({
    storage,
    clock,
    bus,
    access: guildAccess,
    users: accounts,
    events: threads.events,
    archiveDue: (guildId) => threads.archiveDue(guildId),
    applicationFlags: async (db, id) => (await applications.getApplicationIn(db, id))?.flags,
  });
  const threadListing = new ThreadListing({
    storage,
    access: guildAccess,
    archiveDue: (guildId) => threads.archiveDue(guildId),
  });
  const reactions = new ReactionsService({ storage, clock, bus, access: guildAccess, users: accounts });
  const messageActions = new MessageActionsService({
    storage,
    clock,
    bus,
    access: guildAccess,
    users: accounts,
    auditLog,
    messages: channelMessages,
    attachments,
  });
  const pins = new PinsService({
    storage,
    clock,
    snowflakes,
    bus,
    access: guildAccess,
    auditLog,
    messages: channelMessages,
  });
  const dmChannels: DmChannels = new DmChannels({
    storage,
    clock,
    snowflakes,
    bus,
    users: accounts,
    friends: (db, userId, otherId) => relationships.areFriends(db, userId, otherId),
    messages: channelMessages,
    tokens: { authenticateAccessToken: async (token) => oauth2!.authenticateAccessToken(token) },
    // Taken out of a group DM, a recipient is taken out of its call too.
    recipientRemoved: (channelId, userId): Promise<void> => dmCalls.leaveChannel(userId, channelId),
  });
  const channels = new ChannelsService({
    storage,
    clock,
    snowflakes,
    bus,
    access: guildAccess,
    auditLog,
    channelDeleted: (tx, channelId) => channelDeleted(tx, channelId),
    privateChannel: (userId, channelId) => dmChannels.find(userId, channelId),
    modifyPrivateChannel: (userId, channelId, input) => dmChannels.modify(userId, channelId, input),
    threads,
  });
  const invites: InvitesService = new InvitesService({
    storage,
    clock,
    bus,
    access: guildAccess,
    auditLog,
    users: accounts,
    applications,
    members,
    isOnline: (userId) =>
      presence !== undefined && presence.presenceOf(userId).status !== PresenceStatuses.Offline,
  });
  const automod = new AutoModService({ storage, clock, snowflakes, bus, access: guildAccess, auditLog });
  const gateway = new GatewayService({ publicUrl, counters, clock });
  const nodeId = `${config.workerId}.${config.processId}.${randomBytes(4).toString('hex')}`;
  // Presence re-tells each side after a relationship change; it is built just below.
  let presence: PresenceService | undefined;
  const relationships = new RelationshipsService({
    storage,
    clock,
    bus,
    accounts,
    onChange: (change) => presence!.relationshipChanged(change),
    playersOf: (tx, userIds, applicationId) => oauth2!.playersOf(tx, userIds, applicationId),
  });
  presence = new PresenceService({
    bus,
    clock,
    logger,
    relationships,
    nodeId,
    lastSessionEnded: (userId) => invites.userDisconnected(userId),
  });
  const provisional: ProvisionalAccounts = { isProvisional: (userId) => accounts.isProvisional(userId) };
  const messages = new MessagesService({
    storage,
    clock,
    snowflakes,
    bus,
    quotas,
    accounts,
    applications,
    relationships,
    presence,
    provisional,
  });
  const entitlements = new EntitlementsService({
    storage,
    clock,
    snowflakes,
    bus,
    applications,
    accounts,
    guilds,
  });
  const identityProviders = new IdentityProvidersService({
    storage,
    clock,
    snowflakes,
    fetch: outbound,
  });

  // A credential's kept answer (frozen, shared until the next commit) keeps its principal too: one object
  // per credential read, not per request, so that what is kept per principal (its user, its rate-limit keys)
  // is found again by the next request.
  const sessionPrincipals = new WeakMap<User, Extract<Principal, { kind: 'user' }>>();
  const botPrincipals = new WeakMap<Application, Principal>();
  const bearerPrincipals = new WeakMap<AccessGrant, Principal>();
  const authenticators: Authenticators = {
    bot: (token, options) =>
      after(
        applications.authenticateBot(token, options),
        (application) =>
          application &&
          keptFor(botPrincipals, application, () =>
            Object.freeze({
              kind: 'bot' as const,
              userId: application.botUserId,
              applicationId: application.id,
            }),
          ),
      ),
    user: (token, options) =>
      after(accounts.authenticateSession(token, options), (session) => {
        if (!session) return undefined;
        const kept = sessionPrincipals.get(session.user);
        if (kept !== undefined && kept.authTime === session.authTime) return kept;
        const principal = Object.freeze({
          kind: 'user' as const,
          userId: session.user.id,
          authTime: session.authTime,
        });
        sessionPrincipals.set(session.user, principal);
        accounts.remember(principal, session.user);
        return principal;
      }),
    bearer: (token, options) =>
      after(
        oauth2!.authenticateAccessToken(token, options),
        (grant) =>
          grant &&
          keptFor(bearerPrincipals, grant, () =>
            Object.freeze({
              kind: 'bearer' as const,
              userId: grant.userId,
              applicationId: grant.applicationId,
              scopes: expandScopes(grant.scopes, grant.withheld),
              grantedScopes: grant.scopes,
              tokenId: grant.tokenId,
              familyId: grant.familyId,
              expiresAt: grant.expiresAt,
              ...(grant.applicationFlags === undefined ? {} : { applicationFlags: grant.applicationFlags }),
            }),
          ),
      ),
  };

  // One trust rule for both transports, so the HTTP rate limits and the gateway cap see the same client.
  const trustProxy = config.trustProxy ? proxyaddr.compile([...config.trustProxy]) : undefined;
  // Voice (PROTOCOL.md §G): this node's voice gateway and UDP forwarder; calls are placed on nodes through
  // the database, so VOICE_SERVER_UPDATE names the same node whichever gateway node answers op 4.
  const voiceTls = readVoiceTls(config.voiceTlsCert, config.voiceTlsKey);
  await transportCryptoReady;
  let voiceMedia: UdpForwarder | undefined;
  const voicePublicHost = config.voicePublicHost ?? config.voiceHost;
  const voiceService: VoiceService = new VoiceService({
    storage,
    clock,
    nodeId,
    endpoint: (): string => voiceGateway.endpoint,
    memberships: {
      membership: async (serverId, userId) =>
        (await voiceStates.voiceMembership(serverId, userId)) ??
        (await lobbyCalls.membership(serverId, userId)) ??
        dmCalls.membership(serverId, userId),
      // Lobby and DM calls have no CONNECT to lose: only guild voice states are ever disconnected this way.
      disconnect: (serverId, userId, sessionId) => voiceStates.disconnect(serverId, userId, sessionId),
    },
  });
  const lobbyCalls = new LobbyCalls({
    storage,
    bus,
    lobby: async (db, lobbyId) => {
      const lobby = await lobbiesStore.findLobby(db, lobbyId);
      if (!lobby) return undefined;
      const members = await lobbiesStore.listMembers(db, lobbyId);
      return { applicationId: lobby.application_id, members: members.map((member) => member.user_id) };
    },
  });
  // DM calls: a DM's recipients are its call's; its CALL message lives with the channel's messages.
  const dmCalls: DmCalls = new DmCalls({
    storage,
    bus,
    clock,
    channel: (db, channelId) => dmChannels.recipientsOf(db, channelId),
    channelsOf: (db, userId) => dmChannels.channelIdsOf(db, userId),
    messages: channelMessages,
    visibleGuildChannel: async (db, userId, channelId) => {
      await placeOf(db, guildAccess, { userId, bot: false }, channelId);
    },
    ringTimeoutMs: config.voiceRingTimeoutSeconds * 1000,
  });
  // DAVE's delivery service: this node's MLS external sender for the calls it hosts (domains/voice/dave/).
  const daveService = await DaveDeliveryService.create({
    clock,
    identity: nodeId,
    onError: (error, callId) => logger.error({ err: error, callId }, 'dave delivery failed'),
  });
  const voiceGateway: VoiceGateway = new VoiceGateway({
    service: voiceService,
    e2ee: new DaveE2eeCalls(daveService),
    logger,
    clock,
    publicHost: voicePublicHost,
    webrtc: { host: config.voiceHost, publicHost: voicePublicHost },
    heartbeatIntervalMs: options.voice?.heartbeatIntervalMs ?? VOICE_HEARTBEAT_INTERVAL_MS,
    modes: options.voice?.modes ?? VOICE_ENCRYPTION_MODES,
  });
  const stopVoiceStates = bus.subscribe((event) => {
    const failed = (error: unknown) =>
      logger.error({ err: error, eventId: event.id }, 'voice session update failed');
    switch (event.type) {
      case 'VOICE_STATE_UPDATE':
      case 'LOBBY_VOICE_STATE_UPDATE':
        voiceGateway.voiceStateChanged(event.data).catch(failed);
        return;
      case 'CHANNEL_DELETE':
        // A guild channel deleted; a group DM's CHANNEL_DELETE goes to one recipient who left it alone.
        if (typeof event.data['id'] === 'string' && event.audience?.guildId !== undefined)
          voiceGateway.callTerminated(event.data['id']);
        return;
      case 'GUILD_DELETE':
        // With the guild as audience the guild itself was deleted (a member removed gets its own).
        if (event.audience?.guildId !== undefined && event.audience.guildId === event.data['id'])
          voiceGateway.serverTerminated(event.audience.guildId);
        return;
      case 'LOBBY_DELETE':
        // Sent with `removed` to a member taken out alone (its lobby voice state ended its session).
        if (event.data['reason'] === LobbyDeleteReasons.Deleted && typeof event.data['id'] === 'string')
          voiceGateway.callTerminated(event.data['id']);
        return;
      default: {
        // What can change a member's permissions in a voice channel applies to open voice sessions now.
        const guildId = event.audience?.guildId;
        if (!PERMISSION_EVENTS.has(event.type) || typeof guildId !== 'string') return;
        const user =
          event.type === 'GUILD_MEMBER_UPDATE' ? (event.data['user'] as { id?: unknown }) : undefined;
        const userId = typeof user?.id === 'string' ? user.id : undefined;
        voiceGateway.permissionsChanged(guildId, userId).catch(failed);
      }
    }
  });

  /** One voice connection per person: the user's DM call and lobby calls are left, their tokens revoked. */
  const leavePrivateCalls = async (userId: string, sessionId: string, keep: 'dm' | 'lobby' | 'none') => {
    const left = keep === 'dm' ? [] : [await dmCalls.leave(userId)];
    if (keep !== 'lobby') left.push(...(await lobbyCalls.leave(userId)));
    for (const serverId of left)
      if (serverId !== undefined) await voiceService.serverUpdate(userId, sessionId, serverId, null);
  };
  /** The user's guild voice states are left for a DM or lobby call, their tokens revoked. */
  const leaveGuildVoice = async (userId: string, sessionId: string) => {
    for (const guildId of await voiceStates.leaveAll(userId))
      await voiceService.serverUpdate(userId, sessionId, guildId, null);
  };
  /** Op 4 in a guild; one voice connection per person: joining a guild's voice leaves their DM and lobby calls. */
  const updateGuildVoiceState = async (userId: string, sessionId: string, payload: unknown) => {
    const state = await voiceStates.updateVoiceState(userId, sessionId, payload);
    if (state !== null) await leavePrivateCalls(userId, sessionId, 'none');
    return state;
  };
  const gatewayServer: GatewayServer = new GatewayServer({
    clock,
    logger,
    bus,
    counters,
    authenticators,
    accounts,
    applications,
    guilds,
    updateVoiceState: updateGuildVoiceState,
    voiceServerUpdate: async (userId, sessionId, request, state) => {
      const channelId = (state as { channel_id?: string } | null)?.channel_id ?? null;
      const server = await voiceService.serverUpdate(userId, sessionId, request.guild_id, channelId);
      return server && { token: server.token, guild_id: request.guild_id, endpoint: server.endpoint };
    },
    privateVoiceStateUpdate: async (userId, sessionId, payload) => {
      const named = (payload as { channel_id?: unknown } | null)?.channel_id;
      if (named === null) {
        // Leaving without naming the call: whichever this session is in, DM or lobby.
        const dm = await dmCalls.update(userId, sessionId, payload);
        if (dm) await voiceService.serverUpdate(userId, sessionId, dm.channelId, null);
      } else if (typeof named === 'string' && (await dmCalls.isPrivateChannel(named))) {
        const change = await dmCalls.update(userId, sessionId, payload);
        if (!change?.joined) return undefined;
        // Its token for the DM call it moved from goes, as on leaving.
        if (change.left !== undefined) await voiceService.serverUpdate(userId, sessionId, change.left, null);
        // One voice connection per person: a DM call leaves the guild voice channel and lobby calls they were in.
        await leaveGuildVoice(userId, sessionId);
        await leavePrivateCalls(userId, sessionId, 'dm');
        const server = await voiceService.serverUpdate(userId, sessionId, change.channelId, change.channelId);
        if (!server) return undefined;
        const d = {
          token: server.token,
          guild_id: null,
          channel_id: change.channelId,
          endpoint: server.endpoint,
        };
        return { t: 'VOICE_SERVER_UPDATE', d };
      }
      const change = await lobbyCalls.update(userId, sessionId, payload);
      if (!change) return undefined;
      if (change.joined) {
        // One voice connection per person: a lobby call leaves the DM call and guild voice they were in.
        await leaveGuildVoice(userId, sessionId);
        await leavePrivateCalls(userId, sessionId, 'lobby');
      }
      const channelId = change.joined ? change.lobbyId : null;
      const server = await voiceService.serverUpdate(userId, sessionId, change.lobbyId, channelId);
      if (!server) return undefined;
      const d = { token: server.token, lobby_id: change.lobbyId, endpoint: server.endpoint };
      return { t: 'LOBBY_VOICE_SERVER_UPDATE', d };
    },
    callsOf: (userId) => dmCalls.callsOf(userId),
    voiceSessionEnded: async (userId, sessionId) => {
      await voiceStates.sessionEnded(userId, sessionId);
      await lobbyCalls.sessionEnded(userId, sessionId);
      await dmCalls.sessionEnded(userId, sessionId);
    },
    channelInfo: (userId, guildId, fields) => voiceStatus.channelInfo(userId, guildId, fields),
    snapshots: new GuildSnapshots({
      storage,
      clock,
      users: (ids) => accounts.getUsers(ids),
      presenceOf: (userId) => presence!.presenceOf(userId),
      threadsOf: (guildId, userId) => threadListing.guildCreateThreads(guildId, userId),
    }),
    gateway,
    lobbiesOf: (userId, applicationId) => lobbies.lobbiesOf(userId, applicationId),
    privateChannelsOf: (userId) => dmChannels.privateChannelsOf(userId),
    heartbeatIntervalMs: options.gateway?.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
    identifyTimeoutMs: options.gateway?.identifyTimeoutMs ?? IDENTIFY_TIMEOUT_MS,
    maxConnectionsPerAddress: config.gatewayMaxConnectionsPerAddress,
    trustProxy,
    store: sessions,
    nodeId,
    presence: {
      parse: (input) => presence.parse(input),
      started: (session, state) => presence.started(session, state as PresenceInput | undefined),
      updated: (session, state) => presence.updated(session, state as PresenceInput),
      ended: (session) => presence.ended(session),
      readyPresences: (userId, applicationId) => presence.readyPresences(userId, applicationId),
    },
  });
  const lobbyLinking: LobbyLinking = new LobbyLinking({
    storage,
    clock,
    bus,
    logger,
    access: guildAccess,
    accounts,
    applications,
    quotas,
    postToChannel: (copy) => channelMessages.postFromLobby(copy),
    invites,
  });
  const lobbies: LobbiesService = new LobbiesService({
    storage,
    clock,
    snowflakes,
    bus,
    logger,
    accounts,
    applications,
    quotas,
    connectedPlayers: () => gatewayServer.connectedPlayers(),
    playersOf: (tx, userIds, applicationId) => oauth2!.playersOf(tx, userIds, applicationId),
    verifyWebhookUrl: (applicationId, field, url) => webhooks!.verifyUrl(applicationId, field, url),
    links: lobbyLinking,
    calls: { memberRemoved: (tx, lobbyId, userId) => lobbyCalls.memberRemoved(tx, lobbyId, userId) },
  });
  // What other domains own and a merge or an unmerge moves (PROTOCOL.md §B.3), each domain's before the
  // embedder's; all run inside the merge/unmerge/ban transaction.
  const accountLink = new AccountLinkService({
    storage,
    clock,
    snowflakes,
    accounts,
    applications,
    oauth2,
    providers: identityProviders,
    participants: [
      {
        name: 'lobbies',
        mergeInto: (tx, from, to, applicationId) => lobbies.mergeInto(tx, from, to, applicationId),
        unmergeInto: (tx, from, to, applicationId) => lobbies.unmergeInto(tx, from, to, applicationId),
      },
      {
        name: 'relationships',
        mergeInto: (tx, from, to, applicationId) => relationships.mergeInto(tx, from, to, applicationId),
        unmergeInto: (tx, from, to, applicationId) => relationships.unmergeInto(tx, from, to, applicationId),
      },
      { name: 'messages', mergeInto: (tx, from, to) => messages.mergeInto(tx, from, to) },
      ...(options.accountLinkParticipants ?? []),
    ],
  });
  interactions = new InteractionsService({
    storage,
    clock,
    snowflakes,
    bus,
    logger,
    access: guildAccess,
    users: accounts,
    applications,
    messages: channelMessages,
    userInstalled: async (db, applicationId, userId) =>
      (await oauth2!.playersOf(db, [userId], applicationId)).has(userId),
    outbound,
    attachmentSizeLimit: () => attachments.maxFileBytes(),
    attachments,
    commands: {
      getCommand: (applicationId, commandId) => commands.getCommand(applicationId, commandId),
      commandsInstalled: (db, applicationId, guildId) =>
        commands.commandsInstalled(db, applicationId, guildId),
    },
  });
  const services: Services = {
    accounts,
    botInstalls,
    guildOperators: new GuildOperators({
      storage,
      clock,
      bus,
      user: (db, id) => accounts.getUserIn(db, id),
    }),
    applications,
    teams,
    applicationEmojis,
    quests: new QuestsService({ storage, clock, snowflakes, accounts, applications }),
    activities,
    guilds,
    members,
    bans,
    voiceStates,
    dmCalls,
    channels,
    invites,
    channelMessages,
    threads,
    dmChannels,
    reactions,
    messageActions,
    pins,
    automod,
    lobbies,
    lobbyLinking,
    oauth2,
    keys,
    gateway,
    webhooks,
    entitlements,
    identityProviders,
    accountLink,
    relationships,
    presence,
    messages,
    search,
    searchIndex,
    interactions,
    commands,
    commandPermissions,
    commandIndex,
  };

  // Routes load when the server starts; a root hook (below) sees each of them, in every prefix scope.
  const routes: RegisteredRoute[] = [];
  const faults = config.emulator ? new Faults({ clock, logger }) : undefined;
  // The served OpenAPI documents describe those routes; built once they are all registered.
  const openapi = new OpenApiDocuments(routes);
  const emulator =
    testClock && faults
      ? new Emulator({
          clock: testClock,
          logger,
          faults,
          snapshots: new Snapshots({
            storage,
            dir: join(config.dataDir, 'snapshots'),
            reindex: (tx, messageId) => searchIndex.index(tx, messageId),
          }),
          actions: scriptedActions(),
          seed: {
            storage,
            clock,
            accounts,
            applications,
            accountLink,
            oauth2,
            guilds,
            roles,
            channels,
            botInstalls,
            lobbies,
            relationships,
            entitlements,
          },
          // Everything periodic, so that what the jump made due has happened when the call answers.
          sweep: async () => {
            await renewals?.runNow();
            await sweeping.runNow();
            await threadSweeping.runNow();
            await ringSweeping.runNow();
            gatewayServer.sweep();
          },
          dropLiveState: () => {
            gatewayServer.endAllSessions('State restored');
            if (counters instanceof MemoryRateLimitStore) counters.clear();
          },
        })
      : undefined;
  const emulatorPlugin = emulator ? emulatorRoutes(emulator, config.adminToken) : undefined;
  /** The scripted users' actions: the calls a user's own requests and gateway frames make. */
  function scriptedActions(): ScriptedActions {
    const actions = new ScriptedActions();
    const startedPresence = new Set<string>();
    registerUserActions(actions, {
      createMessage: (actor, channelId, body) => channelMessages.create(actor, channelId, body),
      addReaction: (actor, channelId, messageId, emoji) => reactions.add(actor, channelId, messageId, emoji),
      updateVoiceState: (userId, sessionId, payload) => updateGuildVoiceState(userId, sessionId, payload),
      acceptInvite: (userId, code) => invites.acceptInvite(userId, code),
      befriend: (userId, targetId) => relationships.befriend(userId, targetId),
      setPresence: async (session, input) => {
        const parsed = presence!.parse(input);
        if (startedPresence.has(session.id)) return presence!.updated(session, parsed);
        startedPresence.add(session.id);
        return presence!.started(session, parsed);
      },
    });
    registerInteractionActions(actions, {
      invoke: (userId, body) => interactions!.invoke(userId, body),
      offeredChoices: (userId, interactionId) => interactions!.offeredChoices(userId, interactionId),
      findCommand: async (userId, applicationId, channelId, name, type) => {
        const channel = (await channels.getChannel(userId, channelId)) as { guild_id?: string };
        const place = channel.guild_id
          ? { context: InteractionContextTypes.Guild, guildId: channel.guild_id, channelId }
          : { context: InteractionContextTypes.PrivateChannel };
        const usable = await commandIndex.usableCommands(userId, place);
        return usable
          .map(({ command }) => command)
          .find((c) => c.application_id === applicationId && c.name === name && c.type === type);
      },
      openModal: (userId, applicationId, customId) =>
        interactions!.openModal(userId, applicationId, customId),
    });
    return actions;
  }
  const http = createHttpServer(
    {
      logger,
      clock,
      rateLimits: counters,
      authenticators,
      globalPerSecond: config.rateLimitGlobal,
      observeResponse: options.observeResponse,
      timeouts: { headersMs: config.httpHeadersTimeoutMs, requestMs: config.httpRequestTimeoutMs },
      trustProxy,
      faults,
    },
    [
      accountsRoutes(accounts),
      applicationsRoutes(applications),
      applicationEmojiRoutes(applicationEmojis),
      shareLinkRoutes(activities),
      applicationProfilesRoutes({
        accounts,
        identitiesOf: (userId, applicationId) => identityProviders.identitiesOf(userId, applicationId),
      }),
      guildsRoutes(guilds),
      rolesRoutes(roles),
      membersRoutes(members),
      bansRoutes(bans),
      voiceStatesRoutes(voiceStates),
      voiceStatusRoutes(voiceStatus),
      callRoutes(dmCalls),
      channelsRoutes(channels),
      invitesRoutes(invites),
      channelMessagesRoutes(channelMessages, dmChannels),
      reactionsRoutes(reactions),
      messageActionsRoutes(messageActions),
      pinsRoutes(pins),
      threadsRoutes(threads, threadMembers, threadListing, channelMessages.uploads),
      automodRoutes(automod),
      lobbiesRoutes(lobbies),
      linkingRoutes(lobbyLinking),
      oauth2Routes(oauth2),
      gatewayRoutes(gateway),
      entitlementsRoutes(entitlements),
      provisionalRoutes({ link: accountLink, providers: identityProviders, adminToken: config.adminToken }),
      relationshipsRoutes(relationships),
      messagesRoutes(messages),
      searchRoutes(search),
      interactionsRoutes(interactions, channelMessages.uploads),
      commandsRoutes(commands),
      commandPermissionsRoutes(commandPermissions, commandIndex),
      openApiRoutes(openapi),
    ],
    [
      oauth2Pages(oauth2, publicUrl),
      cdnRoutes(accounts),
      applicationCdnRoutes(applications, applicationEmojis),
      channelIconRoutes(dmChannels),
      activityProxyRoutes(activities),
      attachmentsCdnRoutes(attachments, storage),
      portalPages({
        accounts,
        applications,
        webhooks,
        identityProviders,
        entitlements,
        commands,
        teams,
        activities,
        uploads: channelMessages.uploads,
        counters,
        clock,
        publicUrl,
      }),
      opsRoutes({ storage, redis, metrics, metricsToken: config.metricsToken }),
      ...(emulatorPlugin ? [emulatorPlugin] : []),
    ],
  );
  metrics?.observeHttp(http);
  /** A channel's deletion, alone or in its guild's: its threads, messages and lobby link go with it. */
  async function channelDeleted(tx: Executor, channelId: string) {
    await threads.parentDeleted(tx, channelId);
    await channelMessages.channelDeleted(tx, channelId);
    const voiceLeft = await voiceStates.channelDeleted(tx, channelId);
    const unlinked = await lobbyLinking.channelDeleted(tx, channelId);
    if (!voiceLeft || !unlinked) return voiceLeft ?? unlinked;
    return async () => {
      await voiceLeft();
      await unlinked();
    };
  }
  http.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const auth = (route.config as { auth?: RouteAuth } | undefined)?.auth;
      routes.push({ method, url: route.url, auth, schema: route.schema });
    }
  });
  // A one-shot CLI command never serves: closing a Fastify that never booted would boot it first, compiling
  // every route's schemas (most of such a command's cost) only to close it.
  let httpBooted = false;
  http.addHook('onReady', async () => {
    httpBooted = true;
    openapi.build();
  });
  gatewayServer.attach(http.server);
  const sweeping = new Sweeper(
    () => lobbies.sweep(),
    LOBBY_SWEEP_INTERVAL_MS,
    (error) => logger.error({ err: error }, 'lobby sweep failed'),
  );
  // Guilds whose index is being built (older messages, operator rebuilds) get their batches in the background.
  // One-shot commands (which skip webhook delivery too) leave that work to the servers.
  const indexing =
    options.deliverWebhooks === false
      ? undefined
      : new Sweeper(
          () => searchIndex.runBatches(),
          SEARCH_INDEX_INTERVAL_MS,
          (error) => logger.error({ err: error }, 'search index batch failed'),
        );
  // Rings nobody answered stop after the ring timeout.
  const ringSweeping = new Sweeper(
    () => dmCalls.expireRings(),
    RING_SWEEP_INTERVAL_MS,
    (error) => logger.error({ err: error }, 'call ring sweep failed'),
  );
  const threadSweeping = new Sweeper(
    () => threads.archiveDue(),
    THREAD_SWEEP_INTERVAL_MS,
    (error) => logger.error({ err: error }, 'thread auto-archive sweep failed'),
  );
  const renewals = testClock
    ? new Sweeper(
        () => entitlements.renewDue(),
        RENEWAL_SWEEP_INTERVAL_MS,
        (error) => logger.error({ err: error }, 'subscription renewal sweep failed'),
      )
    : undefined;
  if (faults) {
    gatewayServer.faults = faults;
    faults.forgetSession = (session) => gatewayServer.forget(session.id);
    faults.detachSession = (session) => gatewayServer.detach(session.id);
  }
  const interactionSweeping = new Sweeper(
    () => interactions.sweep(),
    INTERACTION_SWEEP_INTERVAL_MS,
    (error) => logger.error({ err: error }, 'interaction sweep failed'),
  );
  if (options.deliverWebhooks !== false) deliveryWorker.start();

  return {
    config,
    clock,
    emulator,
    logger,
    storage,
    bus,
    gateway: gatewayServer,
    voice: voiceGateway,
    dave: daveService,
    services,
    http,
    routes,
    get url() {
      return url;
    },
    async listen() {
      await http.listen({ host: config.host, port: config.port });
      // Sockets open only for a server: one-shot commands build the same app without them.
      voiceMedia = await UdpForwarder.bind(config.voiceHost, config.voiceUdpPorts);
      await voiceGateway.listen(voiceMedia, config.voiceHost, config.voicePort, voiceTls);
      const address = http.server.address();
      const port = typeof address === 'object' && address ? address.port : config.port;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      url ||= `http://${host}:${port}`;
      return `http://${host}:${port}`;
    },
    async close() {
      await sweeping.stop();
      await renewals?.stop();
      await indexing?.stop();
      await threadSweeping.stop();
      await ringSweeping.stop();
      await interactionSweeping.stop();
      await interactions.close();
      await deliveryWorker.stop();
      await gatewayServer.close();
      stopVoiceStates();
      await voiceGateway.close();
      await voiceMedia?.close();
      daveService.close();
      stopBusMetrics?.();
      presence.close();
      if (httpBooted) await http.close();
      // A bus shared by several in-process nodes belongs to whoever made it.
      if (!options.shared?.bus) await bus.close();
      await sessions?.flush();
      await counters.close();
      // QUIT needs Redis to answer; while it is away, drop the connection instead.
      await redis?.quit().catch(() => redis.disconnect());
      await storage.close();
    },
  };
}

/** A database no other process can open: its events need no log. */
function isInMemory(databaseUrl: string): boolean {
  return databaseUrl === 'sqlite::memory:' || databaseUrl === 'sqlite:';
}

/** The voice gateway's certificate and key: both or neither; unreadable or non-PEM files stop the start. */
function readVoiceTls(certPath: string | undefined, keyPath: string | undefined) {
  if (certPath === undefined && keyPath === undefined) return undefined;
  if (certPath === undefined || keyPath === undefined) {
    throw new ConfigError('--voice-tls-cert and --voice-tls-key go together');
  }
  const read = (path: string, flag: string, marker: string) => {
    let pem: string;
    try {
      pem = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(`${flag}: cannot read ${path} (${(error as Error).message})`);
    }
    if (!pem.includes(marker)) throw new ConfigError(`${flag}: ${path} holds no PEM ${marker.toLowerCase()}`);
    return pem;
  };
  return {
    cert: read(certPath, '--voice-tls-cert', 'CERTIFICATE'),
    key: read(keyPath, '--voice-tls-key', 'PRIVATE KEY'),
  };
}

/** The extra CA of provider fetches; an unreadable or non-PEM file stops the start with the setting named. */
function readCaFile(path: string): string {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`--provider-ca-file: cannot read ${path} (${(error as Error).message})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(`--provider-ca-file: ${path} holds no PEM certificate`);
  }
  return pem;
}

/** The value kept for `key`, made by `make` the first time it is asked for. */
function keptFor<K extends object, V>(kept: WeakMap<K, V>, key: K, make: () => V): V {
  let value = kept.get(key);
  if (value === undefined) {
    value = make();
    kept.set(key, value);
  }
  return value;
}
