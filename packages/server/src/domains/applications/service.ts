import { createPrivateKey, generateKeyPairSync, sign, timingSafeEqual } from 'node:crypto';
import {
  ApplicationFlags,
  FormErrors,
  Limits,
  Scopes,
  SELF_SETTABLE_APPLICATION_FLAGS,
  scopeAvailable,
  TARGETED_SCOPES,
  type TeamRole,
  wireFlags,
} from '@hearth/protocol';
import type { Static } from 'typebox';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { MaybePromise } from '../../kernel/maybe.js';
import { generateSecret, generateToken, hashToken, type TokenLookup } from '../../kernel/secrets.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { ReadCache, type ReadOptions } from '../../storage/read-cache.js';
import { type Image, parseImageData } from '../accounts/images.js';
import type { AccountsService, StoredImage, User } from '../accounts/service.js';
import { toUserObject } from '../accounts/service.js';
import {
  type IntegrationTypesConfig,
  parseInstallParams,
  parseIntegrationTypesConfig,
} from './install-settings.js';
import {
  AdminApplicationUpdate,
  type ApplicationObject,
  ModifyCurrentApplication,
  NewApplication,
  type RpcApplicationObject,
} from './schemas.js';
import * as store from './store.js';
import { type TeamsService, teamPseudoUser } from './teams.js';

export interface Application {
  id: string;
  name: string;
  description: string;
  ownerId: string | null;
  botUserId: string;
  publicClient: boolean;
  redirectUris: string[];
  flags: bigint;
  /** Ed25519 public key of the application's signed events, hex (PROTOCOL.md §F.2). */
  verifyKey: string;
  parentApplicationId: string | null;
  tags: string[];
  customInstallUrl: string | null;
  createdAt: number;
  /** When an operator last approved its privileged intents review, or null (seed, Limits). */
  intentsReviewApprovedAt: number | null;
  /** Origins allowed on the local RPC WebSocket (PROTOCOL.md §H). */
  rpcOrigins: string[];
  /** Hashes of the icon and cover image served under `/app-icons/{id}/`, or null. */
  icon: string | null;
  coverImage: string | null;
  /** Default install parameters per install type; `install_params` is the guild install's. */
  integrationTypesConfig: IntegrationTypesConfig;
  roleConnectionsVerificationUrl: string | null;
  botPublic: boolean;
  botRequireCodeGrant: boolean;
  /** The team that owns it, or null when its owner develops it alone. */
  teamId: string | null;
}

export interface CreatedApplication {
  application: Application;
  botUser: User;
  /** Shown once; only hashes are stored. */
  clientSecret: string;
  botToken: string;
}

/** How many users authorized the application, told by the authorization server. */
export type AuthorizationCounts = (
  applicationId: string,
) => Promise<{ userInstalls: number; authorizations: number }>;

/** The event webhook settings the webhooks domain keeps (PROTOCOL.md §F.1), as PATCH and GET show them. */
export interface EventWebhooksPort {
  describe(applicationId: string): Promise<{
    event_webhooks_url: string | null;
    event_webhooks_status: number;
    event_webhooks_types: string[];
  }>;
  /** Checks (and PINGs) the changes without writing; answers the write, run in the caller's transaction. */
  prepare(
    applicationId: string,
    changes: {
      event_webhooks_url?: string | null | undefined;
      event_webhooks_status?: 1 | 2 | undefined;
      event_webhooks_types?: string[] | undefined;
    },
  ): Promise<(db: Executor) => Promise<void>>;
}

/** The interactions endpoint URL the interactions domain keeps and verifies (DOCS interactions/overview). */
export interface InteractionsEndpointPort {
  describe(applicationId: string): Promise<string | null>;
  /** Verifies a new URL (PING, bad signature) without writing; answers the write for the caller's transaction. */
  prepare(applicationId: string, url: string | null): Promise<(db: Executor) => Promise<void>>;
}

export interface ApplicationsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  accounts: AccountsService;
  authorizationCounts: AuthorizationCounts;
  eventWebhooks: EventWebhooksPort;
  interactionsEndpoint?: InteractionsEndpointPort;
  teams: TeamsService;
}

/** Applications (games), their credentials, their bot users and their approvals. */
export class ApplicationsService {
  readonly #deps: ApplicationsDeps;
  /** Bot tokens' applications by token hash: until a commit that may change them. */
  readonly #bots: ReadCache<Application>;

  constructor(deps: ApplicationsDeps) {
    this.#deps = deps;
    this.#bots = new ReadCache(deps.storage.changeStamps);
  }

  async createApplication(input: unknown): Promise<CreatedApplication> {
    const { name, redirect_uris = [], public_client = false, owner_id = null } = parse(NewApplication, input);
    const { storage, clock, snowflakes, accounts } = this.#deps;
    const id = snowflakes.next();
    const clientSecret = generateSecret(24);
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const verifyKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
    const signingKey = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    if (owner_id !== null && !(await accounts.getUser(owner_id))) throw new HearthError('UnknownUser');
    return storage.transaction(async (tx) => {
      const botUser = await accounts.createBotUser(tx, name);
      // The application's `owner` is its developer (seed: application object), never its bot user.
      const ownerId = owner_id ?? (await accounts.createDeveloperUser(tx, name)).id;
      const botToken = generateToken(botUser.id, clock.now());
      const row = {
        id,
        name,
        description: '',
        owner_id: ownerId,
        bot_user_id: botUser.id,
        bot_token_hash: hashToken(botToken),
        client_secret_hash: hashToken(clientSecret),
        public_client: public_client ? 1 : 0,
        redirect_uris: JSON.stringify(redirect_uris),
        flags: 0,
        verify_key: verifyKey,
        signing_key: signingKey,
        created_at: clock.now(),
        parent_application_id: null,
        tags: '[]',
        custom_install_url: null,
        intents_review_approved_at: null,
        rpc_origins: '[]',
        icon: null,
        cover_image: null,
        integration_types_config: JSON.stringify(DEFAULT_INTEGRATION_TYPES_CONFIG),
        role_connections_verification_url: null,
        bot_public: 1,
        bot_require_code_grant: 0,
        team_id: null,
      };
      await store.insertApplication(tx, row);
      return { application: toApplication(row), botUser, clientSecret, botToken };
    });
  }

  /**
   * The application whose bot token this is, or undefined. Every request of a bot asks: the answer is kept
   * until a commit that may change it (`ReadCache`).
   */
  authenticateBot(token: string, options?: ReadOptions & TokenLookup): MaybePromise<Application | undefined> {
    const tokenHash = options?.tokenHash ?? hashToken(token);
    return this.#bots.get(
      tokenHash,
      async () => {
        const row = await store.findApplicationByBotToken(this.#deps.storage.db, tokenHash);
        // Shared by the requests the entry answers: frozen, so that none can change what the next one sees.
        return row && Object.freeze(toApplication(row));
      },
      options,
    );
  }

  /** The application if `secret` is its client secret; compared in constant time. */
  async authenticateClient(id: string, secret: string): Promise<Application | undefined> {
    const row = await store.findApplicationById(this.#deps.storage.db, id);
    if (!row) return undefined;
    const presented = Buffer.from(hashToken(secret));
    const stored = Buffer.from(row.client_secret_hash);
    return presented.length === stored.length && timingSafeEqual(presented, stored)
      ? toApplication(row)
      : undefined;
  }

  async getApplication(id: string): Promise<Application | undefined> {
    return this.getApplicationIn(this.#deps.storage.db, id);
  }

  /** An application's flags read through `db`, or undefined for an unknown application. */
  async flagsIn(db: Executor, id: string): Promise<bigint | undefined> {
    const row = await store.findApplicationFlags(db, id);
    return row && BigInt(row.flags);
  }

  /** The application read through `db`: inside a caller's transaction (one SQLite connection). */
  async getApplicationIn(db: Executor, id: string): Promise<Application | undefined> {
    const row = await store.findApplicationById(db, id);
    return row && toApplication(row);
  }

  /** The applications `ownerId` develops (the developer portal lists only a user's own). */
  async listOwnedBy(ownerId: string): Promise<Application[]> {
    return (await store.listApplicationsByOwner(this.#deps.storage.db, ownerId)).map(toApplication);
  }

  /** A new client secret, answered once; the old one stops working at once (only hashes are stored). */
  async resetClientSecret(id: string): Promise<string> {
    await this.requireApplication(id);
    const clientSecret = generateSecret(24);
    await store.updateApplication(this.#deps.storage.db, id, { client_secret_hash: hashToken(clientSecret) });
    return clientSecret;
  }

  /** A new bot token, answered once; the old one stops authenticating at once. */
  async resetBotToken(id: string): Promise<string> {
    const application = await this.requireApplication(id);
    const botToken = generateToken(application.botUserId, this.#deps.clock.now());
    await store.updateApplication(this.#deps.storage.db, id, { bot_token_hash: hashToken(botToken) });
    await this.#deps.accounts.botSessionsEnded(application.botUserId);
    return botToken;
  }

  async requireApplication(id: string): Promise<Application> {
    const application = await this.getApplication(id);
    if (!application) throw new HearthError('UnknownApplication');
    return application;
  }

  /** PATCH /applications/@me: only the self-service fields, and only the limited intent flags. */
  async modifyApplication(id: string, input: unknown): Promise<Application> {
    const changes = parse(ModifyCurrentApplication, input);
    const current = await this.requireApplication(id);
    const update: Parameters<typeof store.updateApplication>[2] = {};
    if (changes.description !== undefined) update.description = changes.description ?? '';
    if (changes.tags !== undefined) update.tags = JSON.stringify(changes.tags ?? []);
    if (changes.custom_install_url !== undefined) update.custom_install_url = changes.custom_install_url;
    if (changes.rpc_origins !== undefined) update.rpc_origins = JSON.stringify(changes.rpc_origins ?? []);
    if (changes.role_connections_verification_url !== undefined)
      update.role_connections_verification_url = changes.role_connections_verification_url;
    if (changes.bot_public !== undefined) update.bot_public = changes.bot_public ? 1 : 0;
    if (changes.bot_require_code_grant !== undefined)
      update.bot_require_code_grant = changes.bot_require_code_grant ? 1 : 0;
    if (changes.flags !== undefined) {
      const requested = BigInt(changes.flags ?? 0);
      if ((requested & ~SELF_SETTABLE_APPLICATION_FLAGS) !== 0n)
        throw invalidForm('flags', FormErrors.invalid());
      const kept = current.flags & ~SELF_SETTABLE_APPLICATION_FLAGS;
      update.flags = Number(kept | requested);
    }
    const config = installChanges(current, changes);
    if (config) update.integration_types_config = JSON.stringify(config);
    const images = decodeApplicationImages(changes);
    for (const [kind, image] of images) update[kind] = image?.hash ?? null;
    // The whole request is checked before anything is written; the PING of a new URL comes last, so a
    // refused field costs no request to the game's server. Then both writes commit together or not at all.
    const { event_webhooks_url, event_webhooks_status, event_webhooks_types } = changes;
    const saveWebhooks =
      event_webhooks_url !== undefined || event_webhooks_status !== undefined || event_webhooks_types
        ? await this.#deps.eventWebhooks.prepare(id, {
            event_webhooks_url,
            event_webhooks_status,
            event_webhooks_types,
          })
        : undefined;
    const saveEndpoint =
      changes.interactions_endpoint_url !== undefined && this.#deps.interactionsEndpoint
        ? await this.#deps.interactionsEndpoint.prepare(id, changes.interactions_endpoint_url)
        : undefined;
    const now = this.#deps.clock.now();
    await this.#deps.storage.transaction(async (tx) => {
      await saveWebhooks?.(tx);
      await saveEndpoint?.(tx);
      for (const [kind, image] of images) {
        if (image === null) await store.deleteApplicationImage(tx, id, kind);
        else
          await store.saveApplicationImage(tx, {
            application_id: id,
            kind,
            hash: image.hash,
            content_type: image.type,
            bytes: image.bytes,
            created_at: now,
          });
      }
      if (Object.keys(update).length > 0) await store.updateApplication(tx, id, update);
    });
    return this.requireApplication(id);
  }

  /** The bytes behind `/app-icons/{application}/{hash}.…`: its current icon or cover image of that hash. */
  async applicationImage(applicationId: string, hash: string): Promise<StoredImage | undefined> {
    const row = await store.findApplicationImage(this.#deps.storage.db, applicationId, hash);
    return row && { contentType: row.content_type, bytes: Buffer.from(row.bytes) };
  }

  /**
   * The role `userId` holds on the application: `owner` of an application they develop alone, their team
   * role on a team's, or undefined when they have none (the portal shows them nothing).
   */
  async roleOn(application: Application, userId: string): Promise<TeamRole | undefined> {
    if (application.teamId === null) return application.ownerId === userId ? 'owner' : undefined;
    return this.#deps.teams.roleOf(application.teamId, userId);
  }

  /** The applications `userId` may open in the portal: their own and their teams'. */
  async listAccessibleBy(userId: string): Promise<Application[]> {
    const db = this.#deps.storage.db;
    const rows = [
      ...(await store.listApplicationsByOwner(db, userId)),
      ...(await store.listApplicationsOfMember(db, userId)),
    ];
    rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    return rows.map(toApplication);
  }

  /** Operator changes (CLI): approvals, parent application, redirect URIs, client type. */
  async adminUpdate(id: string, input: unknown): Promise<Application> {
    const changes = parse(AdminApplicationUpdate, input);
    const current = await this.requireApplication(id);
    const update: Parameters<typeof store.updateApplication>[2] = {};
    if (changes.redirect_uris !== undefined) update.redirect_uris = JSON.stringify(changes.redirect_uris);
    if (changes.public_client !== undefined) update.public_client = changes.public_client ? 1 : 0;
    if (changes.rpc_origins !== undefined) update.rpc_origins = JSON.stringify(changes.rpc_origins);
    if (changes.parent_application_id !== undefined) {
      const parentId = changes.parent_application_id;
      if (parentId !== null) {
        const parent = await this.requireApplication(parentId);
        if (parent.id === id || parent.parentApplicationId !== null) {
          throw invalidForm('parent_application_id', FormErrors.invalid());
        }
      }
      update.parent_application_id = parentId;
    }
    let flags = current.flags;
    for (const name of changes.grant_flags ?? []) flags |= flagNamed(name);
    for (const name of changes.revoke_flags ?? []) flags &= ~flagNamed(name);
    if (flags !== current.flags) update.flags = Number(flags);
    if (Object.keys(update).length > 0) await store.updateApplication(this.#deps.storage.db, id, update);
    return this.requireApplication(id);
  }

  /**
   * Privileged intents need a review once the application can reach 10,000 users, reapplied for yearly
   * (seed, Limits). Reach: players who installed it plus the members of the guilds its bot is in.
   */
  async privilegedIntentsReviewed(application: Application): Promise<boolean> {
    const { storage, clock, authorizationCounts } = this.#deps;
    const approvedAt = application.intentsReviewApprovedAt;
    if (approvedAt !== null && clock.now() - approvedAt < Limits.privilegedIntentReviewValidMs) return true;
    const { userInstalls } = await authorizationCounts(application.id);
    const members = await store.countGuildMembersReach(storage.db, application.botUserId);
    return userInstalls + members < Limits.privilegedIntentReviewUsers;
  }

  /** The operator approves the privileged intents review (CLI): valid for a year from now. */
  async approveIntentsReview(id: string): Promise<Application> {
    await this.requireApplication(id);
    const now = this.#deps.clock.now();
    await store.updateApplication(this.#deps.storage.db, id, { intents_review_approved_at: now });
    return this.requireApplication(id);
  }

  /** The application object of GET /applications/@me (SPEC PrivateApplicationResponse). */
  async toApplicationObject(application: Application): Promise<Static<typeof ApplicationObject>> {
    const { accounts, storage, authorizationCounts } = this.#deps;
    const bot = await accounts.getUser(application.botUserId);
    if (!bot) throw new Error(`application ${application.id} has lost its bot user`);
    // Only a row older than developer accounts, or whose owner was deleted, has none: its bot stands in.
    const developer = (application.ownerId && (await accounts.getUser(application.ownerId))) || bot;
    // A team's application is owned by the team, which answers as its pseudo-user (DOCS application: owner).
    const team = application.teamId === null ? undefined : await this.#deps.teams.get(application.teamId);
    const counts = await authorizationCounts(application.id);
    const installParams = application.integrationTypesConfig['0']?.oauth2_install_params;
    return {
      id: application.id,
      name: application.name,
      icon: application.icon,
      description: application.description,
      type: null,
      ...(application.coverImage ? { cover_image: application.coverImage } : {}),
      bot: toUserObject(bot),
      bot_public: application.botPublic,
      bot_require_code_grant: application.botRequireCodeGrant,
      ...(application.customInstallUrl ? { custom_install_url: application.customInstallUrl } : {}),
      ...(installParams ? { install_params: installParams } : {}),
      integration_types_config: application.integrationTypesConfig,
      verify_key: application.verifyKey,
      ...wireFlags(application.flags),
      tags: application.tags,
      redirect_uris: application.redirectUris,
      rpc_origins: application.rpcOrigins,
      interactions_endpoint_url: (await this.#deps.interactionsEndpoint?.describe(application.id)) ?? null,
      role_connections_verification_url: application.roleConnectionsVerificationUrl,
      owner: team ? teamPseudoUser(team) : toUserObject(developer),
      approximate_guild_count: await store.countBotGuilds(storage.db, application.botUserId),
      approximate_user_install_count: counts.userInstalls,
      approximate_user_authorization_count: counts.authorizations,
      explicit_content_filter: 0,
      team: team ? await this.#deps.teams.toTeamObject(team) : null,
      eligible_oauth2_scopes: eligibleScopes(application),
      ...(await this.#deps.eventWebhooks.describe(application.id)),
    };
  }

  /** GET /applications/{id}/rpc: what anyone may read of an application, with its RPC origins. */
  async toRpcApplicationObject(id: string): Promise<Static<typeof RpcApplicationObject>> {
    const application = await this.requireApplication(id);
    return {
      id: application.id,
      name: application.name,
      icon: application.icon,
      description: application.description,
      summary: '',
      type: null,
      verify_key: application.verifyKey,
      flags: wireFlags(application.flags).flags,
      rpc_origins: application.rpcOrigins,
    };
  }

  /**
   * Signs with the application's Ed25519 key (PROTOCOL.md §F.2), or undefined for an unknown application.
   * The private key stays in this domain; callers get only the signing function.
   */
  async eventSigner(id: string): Promise<((message: Buffer) => string) | undefined> {
    const row = await store.findApplicationById(this.#deps.storage.db, id);
    if (!row) return undefined;
    const key = createPrivateKey({
      key: Buffer.from(row.signing_key, 'base64'),
      format: 'der',
      type: 'pkcs8',
    });
    return (message) => sign(null, message, key).toString('hex');
  }
}

export function hasFlag(application: Application, flag: bigint): boolean {
  return (application.flags & flag) === flag;
}

/** Scopes a player may grant this application. */
export function eligibleScopes(application: Application): string[] {
  return Object.values(Scopes).filter(
    (scope) => !TARGETED_SCOPES.includes(scope) && scopeAvailable(scope, application.flags),
  );
}

function flagNamed(name: string): bigint {
  const entry = Object.entries(ApplicationFlags).find(([key]) => key.toLowerCase() === name.toLowerCase());
  if (!entry) {
    throw invalidForm('flags', FormErrors.choices(Object.keys(ApplicationFlags)));
  }
  return entry[1];
}

function toApplication(row: store.ApplicationRow): Application {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ownerId: row.owner_id,
    botUserId: row.bot_user_id,
    publicClient: row.public_client === 1,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    flags: BigInt(row.flags),
    verifyKey: row.verify_key,
    parentApplicationId: row.parent_application_id,
    tags: JSON.parse(row.tags) as string[],
    customInstallUrl: row.custom_install_url,
    createdAt: Number(row.created_at),
    intentsReviewApprovedAt:
      row.intents_review_approved_at === null ? null : Number(row.intents_review_approved_at),
    rpcOrigins: JSON.parse(row.rpc_origins ?? '[]') as string[],
    icon: row.icon ?? null,
    coverImage: row.cover_image ?? null,
    integrationTypesConfig: JSON.parse(
      row.integration_types_config ?? JSON.stringify(DEFAULT_INTEGRATION_TYPES_CONFIG),
    ) as IntegrationTypesConfig,
    roleConnectionsVerificationUrl: row.role_connections_verification_url ?? null,
    botPublic: (row.bot_public ?? 1) === 1,
    botRequireCodeGrant: (row.bot_require_code_grant ?? 0) === 1,
    teamId: row.team_id ?? null,
  };
}

/** A new application can be installed both ways, with no default install parameters. */
const DEFAULT_INTEGRATION_TYPES_CONFIG: IntegrationTypesConfig = { '0': {}, '1': {} };

/**
 * The install settings after a PATCH, or undefined when it changes none: `install_params` is the guild
 * install's parameters, and a custom install URL excludes both (DOCS application: Install Links).
 */
function installChanges(
  current: Application,
  changes: Static<typeof ModifyCurrentApplication>,
): IntegrationTypesConfig | undefined {
  let config: IntegrationTypesConfig | undefined;
  if (changes.integration_types_config !== undefined && changes.integration_types_config !== null) {
    config = parseIntegrationTypesConfig(changes.integration_types_config, current.integrationTypesConfig);
  }
  if (changes.install_params !== undefined) {
    const params = parseInstallParams(changes.install_params);
    const base = config ?? current.integrationTypesConfig;
    config = { ...base, '0': params ? { oauth2_install_params: params } : {} };
  }
  const customUrl =
    changes.custom_install_url === undefined ? current.customInstallUrl : changes.custom_install_url;
  const effective = config ?? current.integrationTypesConfig;
  const hasParams = Object.values(effective).some((entry) => entry?.oauth2_install_params !== undefined);
  if (customUrl && hasParams) {
    const field = changes.custom_install_url ? 'custom_install_url' : 'install_params';
    throw invalidForm(field, FormErrors.installParamsExclusive());
  }
  return config;
}

/** The icon and cover image of a PATCH: decoded and checked, or null to remove. */
function decodeApplicationImages(changes: {
  icon?: string | null | undefined;
  cover_image?: string | null | undefined;
}): Map<'icon' | 'cover_image', Image | null> {
  const images = new Map<'icon' | 'cover_image', Image | null>();
  for (const kind of ['icon', 'cover_image'] as const) {
    const value = changes[kind];
    if (value !== undefined) images.set(kind, value === null ? null : parseImageData(kind, value));
  }
  return images;
}
