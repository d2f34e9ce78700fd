import { createHash, timingSafeEqual } from 'node:crypto';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  ALL_PERMISSIONS,
  ApplicationFlags,
  AUTHORIZATION_CODE_TTL_MS,
  BOT_AUTHORIZED_PATH,
  BOT_INSTALL_SCOPES,
  CLIENT_CREDENTIALS_ONLY_SCOPES,
  CLIENT_CREDENTIALS_SCOPES,
  CODE_CHALLENGE_METHOD,
  CODE_CHALLENGE_PATTERN,
  CODE_VERIFIER_PATTERN,
  DEFAULT_COMMUNICATION_SCOPES,
  defaultRedirectUri,
  expandScopes,
  FormErrors,
  GrantTypes,
  IntegrationTypes,
  isExternalAuthType,
  isScope,
  OAuth2ErrorCodes,
  OAuth2ErrorDescriptions,
  Prompts,
  parsePermissions,
  REFRESH_TOKEN_TTL_MS,
  RESTRICTED_SCOPES,
  type Scope,
  Scopes,
  scopeAvailable,
  scopeNamed,
  TARGETED_SCOPES,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { after, type MaybePromise } from '../../kernel/maybe.js';
import { generateSecret, generateToken, hashToken, type TokenLookup } from '../../kernel/secrets.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Executor, Storage } from '../../storage/database.js';
import { GroupCommit } from '../../storage/group-commit.js';
import { recordWebhookEvent } from '../../storage/outbox.js';
import { ReadCache, type ReadOptions } from '../../storage/read-cache.js';
import { type AccountsService, toUserObject } from '../accounts/service.js';
import { type Application, type ApplicationsService, hasFlag } from '../applications/service.js';
import type { BotInstalls } from '../guilds/bot-install.js';
import { AuthorizeError, OAuth2Error } from './errors.js';
import { accessTokenHash, type IdTokenSigner, type SigningKeys } from './keys.js';
import * as store from './store.js';

export interface OAuth2Deps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  keys: SigningKeys;
  accounts: AccountsService;
  applications: ApplicationsService;
  /** The issuer of ID tokens: this server's public URL. */
  issuer: () => string;
  /** The `bot` scope's install (the guilds domain); without it the scope is refused. */
  botInstalls?: BotInstalls;
  /** Provisional-account merges through the token endpoint (PROTOCOL.md §B.3); bound after construction. */
  provisionalMerge?: () => ProvisionalMerge | undefined;
}

/**
 * The accounts domain's side of a merge through `/oauth2/token`: checks the external credential and the
 * accounts before the token transaction (it may fetch a provider's key set), then moves the data inside it.
 */
export interface ProvisionalMerge {
  prepare(
    application: Application,
    externalAuthType: string,
    externalAuthToken: string,
    destinationUserId: string,
  ): Promise<(tx: Executor) => Promise<BusEvent[]>>;
}

/** A checked authorization request, ready for the player's decision. */
export interface AuthorizationRequest {
  application: Application;
  redirectUri: string;
  /** The redirect_uri parameter as given, or null when the registered one was used. */
  requestedRedirectUri: string | null;
  scopes: Scope[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  integrationType: number | undefined;
  prompt: string;
  /** `guild_id` and `permissions` of a `bot` authorization, as the URL preselects them. */
  guildId: string | undefined;
  permissions: bigint | undefined;
}

/** What the player chose on the consent page for a `bot` authorization, over the URL's values. */
export interface BotInstallChoice {
  guildId?: string | undefined;
  permissions?: string | undefined;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  id_token?: string;
}

/** Token rows written in a transaction, and the response they make, without its ID token yet. */
interface Issued {
  response: TokenResponse;
  applicationId: string;
  userId: string;
}

/** Provisional token rows written in a transaction, waiting for their ID token (`completeProvisional`). */
export interface IssuedProvisional {
  response: TokenResponse;
  applicationId: string;
  userId: string;
  authTime: number;
}

/** What an access token stands for. */
export interface AccessGrant {
  tokenId: string;
  familyId: string;
  applicationId: string;
  userId: string;
  scopes: readonly Scope[];
  /** Scopes an umbrella scope implies that the application is not approved for (SCOPE_APPROVALS). */
  withheld?: readonly Scope[];
  expiresAt: number;
  /**
   * The application's flags, read with the token (absent: the application is gone, or not read): as fresh as
   * the grant itself, which is kept only until a commit that may change it.
   */
  applicationFlags?: bigint;
}

const MAX_STATE_LENGTH = 2048;
const MAX_NONCE_LENGTH = 512;

/** The authorization server (RFC 6749, RFC 7636, RFC 7009, RFC 8252, OIDC Core). */
export class OAuth2Service {
  readonly #deps: OAuth2Deps;
  /** Access tokens' grants by token hash: until a commit that may change them; expiry checked on each use. */
  readonly #grants: ReadCache<AccessGrant>;
  /**
   * Code exchanges asked for in the same turn commit together: on SQLite each commit writes every page it
   * touched to the log again (the token table's indexes), and that, not the statements, was most of an
   * exchange's cost.
   */
  readonly #exchanges: GroupCommit;

  constructor(deps: OAuth2Deps) {
    this.#deps = deps;
    this.#exchanges = new GroupCommit(deps.storage, isRefusal);
    this.#grants = new ReadCache(deps.storage.changeStamps);
  }

  // ---- Authorization endpoint (RFC 6749 §4.1.1) ----

  /**
   * Checks an authorization request in the order RFC 6749 §4.1.2.1 demands: client and redirect URI first
   * (never redirecting to an untrusted place), then everything else as a redirectable error.
   */
  async checkAuthorizationRequest(params: Record<string, unknown>): Promise<AuthorizationRequest> {
    // Until the redirect URI is trusted, a refusal is shown on our page (the `field` it is about).
    const trusted = (
      name: 'client_id' | 'redirect_uri' | 'code_challenge',
      field: 'client_id' | 'redirect_uri',
    ) => {
      const value = params[name];
      if (value === undefined || typeof value === 'string') return value;
      throw new AuthorizeError('invalid_request', `"${name}" is given more than once`, undefined, field);
    };
    const clientId = trusted('client_id', 'client_id');
    const application =
      clientId && /^\d{1,20}$/.test(clientId)
        ? await this.#deps.applications.getApplication(clientId)
        : undefined;
    if (!application)
      throw new AuthorizeError('invalid_client', 'Unknown application', undefined, 'client_id');
    params = withInstallDefaults(application, params);

    const requestedRedirectUri = trusted('redirect_uri', 'redirect_uri') ?? null;
    const codeChallenge = trusted('code_challenge', 'redirect_uri');
    const botOnly = isBotOnly(params['scope']);
    // A bot-only authorization needs no redirect URI: it ends on the server's page (Bot Authorization Flow).
    const redirectUri =
      botOnly && requestedRedirectUri === null
        ? `${this.#deps.issuer()}${BOT_AUTHORIZED_PATH}`
        : resolveRedirectUri(application, requestedRedirectUri, codeChallenge !== undefined);

    const rawState = params['state'];
    const state = typeof rawState === 'string' && rawState.length <= MAX_STATE_LENGTH ? rawState : undefined;
    const fail = (error: string, description: string) =>
      new AuthorizeError(error, description, { redirectUri, state });
    if (rawState !== undefined && state === undefined) {
      throw fail(
        'invalid_request',
        typeof rawState === 'string' ? 'state is too long' : '"state" is given more than once',
      );
    }
    // From here every refusal goes back to the client, with its state (RFC 6749 §4.1.2.1).
    const single = (name: string): string | undefined => {
      const value = params[name];
      if (value === undefined || typeof value === 'string') return value;
      throw fail('invalid_request', `"${name}" is given more than once`);
    };
    const responseType = single('response_type');
    if (responseType !== 'code' && !(botOnly && responseType === undefined)) {
      throw fail(OAuth2ErrorCodes.UnsupportedResponseType, 'Only response_type=code is supported');
    }
    const scopes = parseScopes(single('scope') ?? '', application, fail);
    const method = single('code_challenge_method');
    if (codeChallenge !== undefined || method !== undefined) {
      if (method !== CODE_CHALLENGE_METHOD)
        throw fail('invalid_request', 'code_challenge_method must be S256');
      if (codeChallenge === undefined || !CODE_CHALLENGE_PATTERN.test(codeChallenge)) {
        throw fail('invalid_request', 'code_challenge must be a base64url SHA-256 digest');
      }
    }
    const nonce = single('nonce');
    if (nonce !== undefined && nonce.length > MAX_NONCE_LENGTH)
      throw fail('invalid_request', 'nonce is too long');
    const integration = single('integration_type');
    const integrationType = integration === undefined ? undefined : Number(integration);
    if (
      integrationType !== undefined &&
      integrationType !== IntegrationTypes.GuildInstall &&
      integrationType !== IntegrationTypes.UserInstall
    ) {
      throw fail('invalid_request', 'integration_type must be 0 or 1');
    }
    const prompt = single('prompt') ?? Prompts.Consent;
    if (prompt !== Prompts.Consent && prompt !== Prompts.None)
      throw fail('invalid_request', 'prompt must be consent or none');
    const guildId = single('guild_id');
    if (guildId !== undefined && !/^\d{1,20}$/.test(guildId))
      throw fail('invalid_request', 'Invalid guild_id');
    const rawPermissions = single('permissions');
    const permissions = rawPermissions === undefined ? undefined : parsePermissions(rawPermissions);
    if (rawPermissions !== undefined && permissions === undefined)
      throw fail('invalid_request', 'Invalid permissions');
    return {
      guildId,
      permissions,
      application,
      redirectUri,
      requestedRedirectUri,
      scopes,
      state,
      nonce,
      codeChallenge,
      integrationType,
      prompt,
    };
  }

  /** The published key set (GET /oauth2/keys). */
  jwks() {
    return this.#deps.keys.jwks();
  }

  /** True when the player already granted every requested scope: prompt=none may skip the screen. */
  async alreadyAuthorized(userId: string, request: AuthorizationRequest): Promise<boolean> {
    const grant = await store.findGrant(this.#deps.storage.db, request.application.id, userId);
    if (!grant) return false;
    const granted = new Set(grant.scopes.split(' '));
    return request.scopes.every((scope) => granted.has(scope));
  }

  /**
   * The player's answer. Approval records the grant (and its webhook event, in the same transaction) and
   * issues a single-use code; refusal is `access_denied`. Answers where to send the player.
   */
  async decide(
    user: { id: string; authTime: number },
    request: AuthorizationRequest,
    approve: boolean,
    choice: BotInstallChoice = {},
  ): Promise<string> {
    if (!approve) {
      return redirectWith(request, {
        error: OAuth2ErrorCodes.AccessDenied,
        error_description: OAuth2ErrorDescriptions.accessDenied,
      });
    }
    const install = request.scopes.includes(Scopes.Bot) ? this.#botInstallOf(request, choice) : undefined;
    // `applications.commands` without `bot` into a guild: a commands-only guild install.
    const commandsGuildId =
      !install &&
      request.scopes.includes(Scopes.ApplicationsCommands) &&
      request.integrationType !== IntegrationTypes.UserInstall
        ? (choice.guildId ?? request.guildId)
        : undefined;
    if (install && request.scopes.every((scope) => BOT_INSTALL_SCOPES.includes(scope))) {
      return this.#installBot(user.id, request, install);
    }
    const { storage, clock } = this.#deps;
    const now = clock.now();
    const code = generateSecret(24);
    const events: BusEvent[] = [];
    let guild: Record<string, unknown> | undefined;
    await storage.transaction(async (tx) => {
      if (install) {
        const installed = await this.#botInstalls().installIn(tx, request.application, {
          ...install,
          actorId: user.id,
        });
        guild = installed.guild;
        events.push(...installed.events);
      }
      if (commandsGuildId !== undefined)
        guild = await this.#botInstalls().installCommandsIn(tx, request.application, {
          guildId: commandsGuildId,
          actorId: user.id,
        });
      const previous = await store.findGrant(tx, request.application.id, user.id);
      const previousScopes = new Set(previous?.scopes.split(' ') ?? []);
      const scopes = [...new Set([...previousScopes, ...request.scopes])];
      await store.saveGrant(tx, {
        application_id: request.application.id,
        user_id: user.id,
        scopes: scopes.join(' '),
        integration_type: request.integrationType ?? previous?.integration_type ?? null,
        created_at: previous?.created_at ?? now,
      });
      if (!previous || request.scopes.some((s) => !previousScopes.has(s)) || guild) {
        events.push(await this.#recordAuthorized(tx, request, user.id, scopes, guild));
      }
      await store.insertCode(tx, {
        code_hash: hashToken(code),
        application_id: request.application.id,
        user_id: user.id,
        redirect_uri: request.requestedRedirectUri,
        scopes: request.scopes.join(' '),
        nonce: request.nonce ?? null,
        code_challenge: request.codeChallenge ?? null,
        integration_type: request.integrationType ?? null,
        auth_time: user.authTime,
        expires_at: now + AUTHORIZATION_CODE_TTL_MS,
        used_at: null,
        created_at: now,
      });
    });
    await this.#publish(events);
    return redirectWith(request, {
      code,
      ...(install ? { guild_id: install.guildId, permissions: install.permissions.toString() } : {}),
    });
  }

  /** The guild and permissions of a `bot` authorization: the page's choice over the URL's. */
  #botInstallOf(
    request: AuthorizationRequest,
    choice: BotInstallChoice,
  ): { guildId: string; permissions: bigint } {
    const guildId = choice.guildId ?? request.guildId;
    if (guildId === undefined) throw invalidForm('guild_id', FormErrors.required());
    const permissions =
      choice.permissions === undefined ? (request.permissions ?? 0n) : parsePermissions(choice.permissions);
    if (permissions === undefined || (permissions & ~ALL_PERMISSIONS) !== 0n)
      throw invalidForm('permissions', FormErrors.integer(choice.permissions));
    return { guildId, permissions };
  }

  #botInstalls(): BotInstalls {
    const installs = this.#deps.botInstalls;
    if (!installs) throw new HearthError('MissingAccess');
    return installs;
  }

  /**
   * A bot-only authorization: the bot joins the guild, APPLICATION_AUTHORIZED (integration_type 0, with the
   * guild) is queued with it, and no code is issued; the redirect carries `guild_id` and `permissions`.
   */
  async #installBot(
    userId: string,
    request: AuthorizationRequest,
    install: { guildId: string; permissions: bigint },
  ): Promise<string> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const installed = await this.#botInstalls().installIn(tx, request.application, {
        ...install,
        actorId: userId,
      });
      events.push(...installed.events);
      events.push(
        await this.#recordAuthorized(
          tx,
          { ...request, integrationType: IntegrationTypes.GuildInstall },
          userId,
          request.scopes,
          installed.guild,
        ),
      );
    });
    await this.#publish(events);
    return redirectWith(request, {
      guild_id: install.guildId,
      permissions: install.permissions.toString(),
    });
  }

  // ---- Token endpoint (RFC 6749 §3.2) ----

  async token(form: Record<string, unknown>, authorization: string | undefined): Promise<TokenResponse> {
    const fields = singleValued(form);
    switch (fields['grant_type']) {
      case GrantTypes.AuthorizationCode:
        return this.#authorizationCodeGrant(fields, authorization);
      case GrantTypes.RefreshToken:
        return this.#refreshTokenGrant(fields, authorization);
      case GrantTypes.ClientCredentials:
        return this.#clientCredentialsGrant(fields, authorization);
      default:
        throw new OAuth2Error(OAuth2ErrorCodes.UnsupportedGrantType);
    }
  }

  async #authorizationCodeGrant(fields: Fields, authorization: string | undefined): Promise<TokenResponse> {
    const invalidCode = () =>
      new OAuth2Error(OAuth2ErrorCodes.InvalidGrant, OAuth2ErrorDescriptions.invalidCode);
    const verifier = fields['code_verifier'];
    const application = await this.#authenticateClient(fields, authorization, verifier !== undefined);
    const code = fields['code'];
    if (!code) throw new OAuth2Error(OAuth2ErrorCodes.InvalidRequest, 'Missing "code" in request.');
    const { storage, clock } = this.#deps;
    const now = clock.now();
    const codeHash = hashToken(code);
    const row = await store.findCode(storage.db, codeHash);
    if (!row || row.application_id !== application.id) throw invalidCode();
    if (row.used_at !== null) {
      // RFC 6749 §4.1.2: a replayed code revokes every token it produced (its family, and their children).
      const family = row.family_id;
      if (family !== null) await storage.transaction((tx) => store.deleteFamily(tx, family));
      throw invalidCode();
    }
    if (row.expires_at <= now) throw invalidCode();
    const redirectUri = fields['redirect_uri'];
    if (
      row.redirect_uri !== null
        ? redirectUri !== row.redirect_uri
        : redirectUri !== undefined && !isRegistered(application, redirectUri)
    ) {
      throw invalidCode();
    }
    checkProofKey(row.code_challenge, verifier, invalidCode);
    const merge = await this.#prepareMerge(fields, application, row.user_id);
    const sign = await this.#deps.keys.signer();
    const events: BusEvent[] = [];
    // The refusals (code spent, grant gone) come before the first write, as a grouped commit requires
    // (storage/group-commit.ts): the spend is that write, and changes nothing when it refuses.
    const exchange = async (tx: Executor): Promise<Issued> => {
      // The token's id, which is also its new family's: the code records it.
      const id = this.#deps.snowflakes.next();
      const code = { codeHash, applicationId: application.id, userId: row.user_id };
      if (!(await store.spendCode(tx, code, now, id))) throw invalidCode();
      if (merge) events.push(...(await merge(tx)));
      return this.#issue(tx, {
        id,
        applicationId: application.id,
        userId: row.user_id,
        scopes: row.scopes.split(' ') as Scope[],
        codeHash,
        withRefresh: true,
      });
    };
    // A merge moves another domain's data and may refuse after writing: it keeps a transaction of its own.
    const issued = await (merge ? storage.transaction(exchange) : this.#exchanges.run(exchange));
    await this.#publish(events);
    return this.#withIdToken(issued, { sign, nonce: row.nonce, authTime: Number(row.auth_time) });
  }

  /** `external_auth_type` and `external_auth_token` turn a code exchange into a merge (PROTOCOL.md §B.3). */
  async #prepareMerge(
    fields: Fields,
    application: Application,
    destinationUserId: string,
  ): Promise<((tx: Executor) => Promise<BusEvent[]>) | undefined> {
    const type = fields['external_auth_type'];
    const token = fields['external_auth_token'];
    if (type === undefined && token === undefined) return undefined;
    const merge = this.#deps.provisionalMerge?.();
    if (!type || !token || !merge || !isExternalAuthType(type)) {
      throw new OAuth2Error(
        OAuth2ErrorCodes.InvalidRequest,
        'external_auth_type and external_auth_token must be given together',
      );
    }
    return merge.prepare(application, type, token, destinationUserId);
  }

  async #refreshTokenGrant(fields: Fields, authorization: string | undefined): Promise<TokenResponse> {
    const invalid = () =>
      new OAuth2Error(OAuth2ErrorCodes.InvalidGrant, OAuth2ErrorDescriptions.invalidRefreshToken);
    const application = await this.#authenticateClient(fields, authorization, true);
    const refresh = fields['refresh_token'];
    if (!refresh)
      throw new OAuth2Error(OAuth2ErrorCodes.InvalidRequest, 'Missing "refresh_token" in request.');
    const { storage, clock } = this.#deps;
    const row = await store.findTokenByRefresh(storage.db, hashToken(refresh));
    if (!row || row.application_id !== application.id) throw invalid();
    if (row.refresh_spent === 1) {
      // A spent refresh token presented again means it leaked: end the whole family (OAuth 2.0 Security BCP §4.14).
      await storage.transaction((tx) => store.deleteFamily(tx, row.family_id));
      throw invalid();
    }
    if (row.refresh_expires_at !== null && row.refresh_expires_at <= clock.now()) throw invalid();
    const granted = row.scopes.split(' ') as Scope[];
    const requested = fields['scope'] === undefined ? granted : parseRequestedScopes(fields['scope']);
    if (requested.some((scope) => !granted.includes(scope)))
      throw new OAuth2Error(OAuth2ErrorCodes.InvalidScope);
    const sign = await this.#deps.keys.signer();
    const issued = await storage.transaction(async (tx) => {
      if (!(await store.spendRefresh(tx, row.id))) throw invalid();
      if (!(await store.findGrant(tx, application.id, row.user_id))) throw invalid();
      return this.#issue(tx, {
        applicationId: application.id,
        userId: row.user_id,
        scopes: requested,
        familyId: row.family_id,
        withRefresh: true,
      });
    });
    return this.#withIdToken(issued, { sign, nonce: null, authTime: null });
  }

  async #clientCredentialsGrant(fields: Fields, authorization: string | undefined): Promise<TokenResponse> {
    const application = await this.#authenticateClient(fields, authorization, false);
    const scopes = parseRequestedScopes(fields['scope'] ?? '');
    if (
      scopes.length === 0 ||
      scopes.some(
        (s) =>
          !CLIENT_CREDENTIALS_SCOPES.includes(s) ||
          TARGETED_SCOPES.includes(s) ||
          !eligibleFor(application, s),
      )
    ) {
      throw new OAuth2Error(OAuth2ErrorCodes.InvalidScope);
    }
    // The token stands for the application's owner, or for its bot user when it has none.
    const userId = application.ownerId ?? application.botUserId;
    const issued = await this.#deps.storage.transaction((tx) =>
      this.#issue(tx, {
        applicationId: application.id,
        userId,
        scopes,
        withRefresh: false,
        clientCredentials: true,
      }),
    );
    return issued.response;
  }

  async #issue(
    tx: Executor,
    options: {
      /** Drawn by the caller when it must know it first. */
      id?: string;
      applicationId: string;
      userId: string;
      scopes: Scope[];
      familyId?: string;
      codeHash?: string;
      withRefresh: boolean;
      clientCredentials?: boolean;
    },
  ): Promise<Issued> {
    const { clock, snowflakes } = this.#deps;
    const now = clock.now();
    const id = options.id ?? snowflakes.next();
    const accessToken = generateToken(options.userId, now);
    const refreshToken = options.withRefresh ? generateSecret(32) : undefined;
    await store.insertToken(tx, {
      id,
      access_hash: hashToken(accessToken),
      refresh_hash: refreshToken ? hashToken(refreshToken) : null,
      refresh_spent: 0,
      refresh_expires_at: refreshToken ? now + REFRESH_TOKEN_TTL_MS : null,
      family_id: options.familyId ?? id,
      code_hash: options.codeHash ?? null,
      parent_family_id: null,
      application_id: options.applicationId,
      user_id: options.userId,
      scopes: options.scopes.join(' '),
      expires_at: now + ACCESS_TOKEN_TTL_SECONDS * 1000,
      created_at: now,
      client_credentials: options.clientCredentials ? 1 : 0,
    });
    const response: TokenResponse = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      scope: options.scopes.join(' '),
    };
    return { response, applicationId: options.applicationId, userId: options.userId };
  }

  /**
   * The response with its ID token when `openid` was granted. Signed after the commit: an RSA signature
   * inside the transaction would hold the database's only writer for its whole duration.
   */
  async #withIdToken(
    issued: Issued,
    context: { sign: IdTokenSigner; nonce: string | null; authTime: number | null },
  ): Promise<TokenResponse> {
    const { response } = issued;
    if (!response.scope.split(' ').includes(Scopes.OpenId)) return response;
    const claims = this.#idTokenClaims(issued.applicationId, issued.userId, response.access_token, context);
    return { ...response, id_token: await context.sign(claims) };
  }

  /** OIDC Core §2 claims of an ID token for this access token. */
  #idTokenClaims(
    applicationId: string,
    userId: string,
    accessToken: string,
    context: { nonce: string | null; authTime: number | null },
  ): Parameters<IdTokenSigner>[0] {
    return {
      iss: this.#deps.issuer(),
      sub: userId,
      aud: [applicationId],
      at_hash: accessTokenHash(accessToken),
      ...(context.authTime !== null ? { auth_time: Math.floor(context.authTime / 1000) } : {}),
      ...(context.nonce !== null ? { nonce: context.nonce } : {}),
    };
  }

  /** RFC 6749 §2.3: one method only; a public client may omit its secret where `publicAllowed`. */
  async #authenticateClient(
    fields: Fields,
    authorization: string | undefined,
    publicAllowed: boolean,
  ): Promise<Application> {
    const invalidClient = () => new OAuth2Error(OAuth2ErrorCodes.InvalidClient);
    const basic = parseBasic(authorization);
    if (basic === null) throw invalidClient();
    if (basic && fields['client_secret'] !== undefined) {
      throw new OAuth2Error(OAuth2ErrorCodes.InvalidRequest, 'Use one client authentication method');
    }
    if (basic && fields['client_id'] !== undefined && fields['client_id'] !== basic.id) throw invalidClient();
    const clientId = basic?.id ?? fields['client_id'];
    const secret = basic?.secret ?? fields['client_secret'];
    if (!clientId || !/^\d{1,20}$/.test(clientId)) throw invalidClient();
    if (secret !== undefined) {
      const application = await this.#deps.applications.authenticateClient(clientId, secret);
      if (!application) throw invalidClient();
      return application;
    }
    const application = await this.#deps.applications.getApplication(clientId);
    if (!application?.publicClient || !publicAllowed) throw invalidClient();
    return application;
  }

  // ---- Revocation (RFC 7009) ----

  /**
   * Revokes the token and, as the platform does, every token of that application for that user (PROTOCOL.md
   * §C.6). Unknown tokens and tokens of other clients are answered the same way, revealing nothing.
   */
  async revoke(form: Record<string, unknown>, authorization: string | undefined): Promise<void> {
    const fields = singleValued(form);
    const application = await this.#authenticateClient(fields, authorization, true);
    const token = fields['token'];
    if (!token) throw new OAuth2Error(OAuth2ErrorCodes.InvalidRequest, 'Missing "token" in request.');
    const hint = fields['token_type_hint'];
    if (hint !== undefined && hint !== 'access_token' && hint !== 'refresh_token') {
      throw new OAuth2Error(OAuth2ErrorCodes.UnsupportedTokenType);
    }
    const { storage } = this.#deps;
    const hash = hashToken(token);
    const row =
      hint === 'refresh_token'
        ? ((await store.findTokenByRefresh(storage.db, hash)) ??
          (await store.findTokenByAccess(storage.db, hash)))
        : ((await store.findTokenByAccess(storage.db, hash)) ??
          (await store.findTokenByRefresh(storage.db, hash)));
    if (!row || row.application_id !== application.id) return;
    await this.deauthorize(application.id, row.user_id);
  }

  /** Ends an application's link with a user: tokens, child tokens, grant; emits APPLICATION_DEAUTHORIZED. */
  async deauthorize(applicationId: string, userId: string): Promise<void> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      await store.deleteTokensOfGrant(tx, applicationId, userId);
      if (await store.deleteGrant(tx, applicationId, userId)) {
        events.push(await this.#recordDeauthorized(tx, applicationId, userId));
      }
    });
    await this.#publish(events);
  }

  // ---- Provisional accounts: tokens the accounts domain mints and ends ----

  /** A signer for the ID tokens of provisional token responses; get it before opening a transaction. */
  signer(): Promise<IdTokenSigner> {
    return this.#deps.keys.signer();
  }

  /**
   * A provisional account's token rows (PROTOCOL.md §B.2): scope `sdk.social_layer`, 7 days; a refresh token
   * only where the reference still gives one (OIDC on confidential clients, deprecated). The grant is recorded
   * quietly: a provisional account is not "authorized" by a person. `completeProvisional` signs after commit.
   */
  async issueProvisional(
    tx: Executor,
    applicationId: string,
    userId: string,
    options: { withRefresh: boolean },
  ): Promise<IssuedProvisional> {
    const now = this.#deps.clock.now();
    if (!(await store.findGrant(tx, applicationId, userId))) {
      await store.saveGrant(tx, {
        application_id: applicationId,
        user_id: userId,
        scopes: Scopes.SdkSocialLayer,
        integration_type: null,
        created_at: now,
      });
    }
    const { response } = await this.#issue(tx, {
      applicationId,
      userId,
      scopes: [Scopes.SdkSocialLayer, Scopes.OpenId],
      withRefresh: options.withRefresh,
    });
    return {
      response: { ...response, scope: Scopes.SdkSocialLayer },
      applicationId,
      userId,
      authTime: now,
    };
  }

  /**
   * The provisional token response with its ID token. Signing runs after the commit, so that the one SQLite
   * connection is not held while a worker thread signs.
   */
  async completeProvisional(
    issued: IssuedProvisional,
    sign: IdTokenSigner,
  ): Promise<TokenResponse & { id_token: string }> {
    const idToken = await sign(
      this.#idTokenClaims(issued.applicationId, issued.userId, issued.response.access_token, {
        nonce: null,
        authTime: issued.authTime,
      }),
    );
    return { ...issued.response, id_token: idToken };
  }

  /**
   * Ends a user's link with an application inside the caller's transaction: every token (and child token)
   * and the grant. Answers the APPLICATION_DEAUTHORIZED event to publish after commit, recorded for the
   * webhook in this transaction, when a grant existed; with `quiet`, no webhook (a merge is not an unlink).
   */
  async endLinkIn(
    tx: Executor,
    applicationId: string,
    userId: string,
    options: { quiet?: boolean } = {},
  ): Promise<BusEvent | undefined> {
    await store.deleteTokensOfGrant(tx, applicationId, userId);
    const existed = await store.deleteGrant(tx, applicationId, userId);
    if (!existed) return undefined;
    if (options.quiet) {
      return {
        type: 'APPLICATION_DEAUTHORIZED',
        data: { application_id: applicationId, user: { id: userId } },
      };
    }
    return this.#recordDeauthorized(tx, applicationId, userId);
  }

  /** Every application a user holds tokens or a grant of (a ban ends them all). */
  /** Which of these users play the application (hold its authorization), inside the caller's transaction. */
  async playersOf(tx: Executor, userIds: readonly string[], applicationId: string): Promise<Set<string>> {
    return store.holdersOf(tx, userIds, applicationId);
  }

  async linkedApplications(tx: Executor, userId: string): Promise<string[]> {
    return store.applicationsOfUser(tx, userId);
  }

  /** Publishes events after their transaction committed. */
  async publish(events: BusEvent[]): Promise<void> {
    await this.#publish(events);
  }

  // ---- Publisher-level linking (PROTOCOL.md §B.3) ----

  async exchangeChildToken(input: {
    parent_access_token: string;
    child_application_id: string;
    parent_client_secret?: string | undefined;
  }): Promise<TokenResponse> {
    const { storage, clock, snowflakes, applications } = this.#deps;
    const parent = await this.authenticateAccessToken(input.parent_access_token);
    if (!parent) throw new HearthError('InvalidOAuth2AccessToken');
    const parentApp = await applications.requireApplication(parent.applicationId);
    if (input.parent_client_secret !== undefined) {
      if (!(await applications.authenticateClient(parentApp.id, input.parent_client_secret))) {
        throw new HearthError('GeneralUnauthorized');
      }
    } else if (!parentApp.publicClient) {
      throw new HearthError('GeneralUnauthorized');
    }
    if (!hasFlag(parentApp, ApplicationFlags.PublisherLinkingApproved))
      throw new HearthError('MissingAccess');
    const child = await applications.getApplication(input.child_application_id);
    if (!child || child.parentApplicationId !== parentApp.id) throw new HearthError('UnknownApplication');
    // Parent and children share confidentiality (PROTOCOL.md §B.3).
    if (child.publicClient !== parentApp.publicClient) throw new HearthError('MissingAccess');
    const now = clock.now();
    const accessToken = generateToken(parent.userId, now);
    const id = snowflakes.next();
    await store.insertToken(storage.db, {
      id,
      access_hash: hashToken(accessToken),
      refresh_hash: null,
      refresh_spent: 0,
      refresh_expires_at: null,
      family_id: id,
      code_hash: null,
      parent_family_id: parent.familyId,
      application_id: child.id,
      user_id: parent.userId,
      scopes: parent.scopes.join(' '),
      expires_at: parent.expiresAt,
      created_at: now,
    });
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.floor((parent.expiresAt - now) / 1000)),
      scope: parent.scopes.join(' '),
    };
  }

  // ---- Authorization requests from the platform client (seed, Events: AUTHORIZE_REQUEST) ----

  /**
   * An entry point inside the platform client asks a game to authorize the player: the player's gateway
   * sessions of that game (its SDK) receive AUTHORIZE_REQUEST, and the game calls Authorize. Nothing is
   * stored: a request missed by a game that is not running is not an authorization left pending.
   */
  async requestAuthorization(
    userId: string,
    input: { application_id: string; scopes?: string | undefined },
  ): Promise<void> {
    const application = await this.#deps.applications.getApplication(input.application_id);
    if (!application) throw new HearthError('UnknownApplication');
    const names = (input.scopes ?? DEFAULT_COMMUNICATION_SCOPES).split(/\s+/).filter(Boolean);
    // The game passes these to Authorize as they are: refuse what the authorization endpoint would refuse.
    if (names.length === 0 || !names.every(isScope)) throw invalidForm('scopes', FormErrors.invalid());
    await this.#publish([
      {
        type: 'AUTHORIZE_REQUEST',
        data: { application_id: application.id, scopes: names.join(' ') },
        audience: { users: [userId], applicationId: application.id },
      },
    ]);
  }

  // ---- Resource server side ----

  /**
   * The grant behind a live access token, or undefined (unknown, expired or revoked). Every request of a
   * Bearer token asks: the answer is kept until a commit that may change it (`ReadCache`), its expiry checked
   * on each use.
   */
  authenticateAccessToken(
    token: string,
    options?: ReadOptions & TokenLookup,
  ): MaybePromise<AccessGrant | undefined> {
    const tokenHash = options?.tokenHash ?? hashToken(token);
    const now = this.#deps.clock.now();
    return after(
      this.#grants.get(tokenHash, () => this.#accessGrant(tokenHash), options),
      (grant) => (grant === undefined || grant.expiresAt <= now ? undefined : grant),
    );
  }

  /** What an access token grants, read from storage; its expiry is the caller's to check. */
  async #accessGrant(tokenHash: string): Promise<AccessGrant | undefined> {
    const row = await store.findGrantByAccess(this.#deps.storage.db, tokenHash);
    if (!row) return undefined;
    let scopes = row.scopes.split(' ').filter(isScope);
    // A client_credentials token holds only that grant's scopes, whatever it was once issued with.
    if (row.client_credentials === 1)
      scopes = scopes.filter((scope) => CLIENT_CREDENTIALS_SCOPES.includes(scope));
    let withheld: Scope[] = [];
    // The application's flags come with the token (one read): a revoked approval applies at once.
    const flags = row.application_flags === null ? undefined : BigInt(row.application_flags);
    // A restricted scope holds only while the application is still approved for it (seed, Records: User;
    // Authentication 2), whether granted by name or through an umbrella scope.
    const expanded = expandScopes(scopes);
    if (RESTRICTED_SCOPES.some((scope) => expanded.has(scope))) {
      if (flags === undefined) return undefined;
      scopes = scopes.filter((scope) => scopeAvailable(scope, flags));
      withheld = RESTRICTED_SCOPES.filter((scope) => !scopeAvailable(scope, flags));
    }
    return Object.freeze({
      tokenId: row.id,
      familyId: row.family_id,
      applicationId: row.application_id,
      userId: row.user_id,
      scopes: Object.freeze(scopes),
      withheld: Object.freeze(withheld),
      expiresAt: Number(row.expires_at),
      ...(flags === undefined ? {} : { applicationFlags: flags }),
    });
  }

  /** The authorize page (outside `/api`) with `search` (`?…` or empty) as it came. */
  authorizePageUrl(search: string): string {
    return `${this.#deps.issuer()}/oauth2/authorize${search}`;
  }

  /** GET /oauth2/@me (SPEC OAuth2GetAuthorizationResponse). */
  async describeAuthorization(grant: AccessGrant): Promise<Record<string, unknown>> {
    const { applications, accounts } = this.#deps;
    const application = await applications.requireApplication(grant.applicationId);
    const user = expandScopes(grant.scopes).has(Scopes.Identify)
      ? await accounts.getUser(grant.userId)
      : undefined;
    return {
      application: {
        id: application.id,
        name: application.name,
        icon: null,
        description: application.description,
        type: null,
        bot_public: true,
        bot_require_code_grant: false,
        verify_key: application.verifyKey,
        flags: Number(BigInt.asUintN(32, application.flags)),
        flags_new: application.flags.toString(),
      },
      scopes: grant.scopes,
      expires: new Date(grant.expiresAt).toISOString(),
      ...(user ? { user: toUserObject(user) } : {}),
    };
  }

  /** GET /oauth2/userinfo (OIDC Core §5.3; SPEC OAuth2GetOpenIDConnectUserInfoResponse). */
  async userinfo(grant: AccessGrant): Promise<Record<string, unknown>> {
    const scopes = expandScopes(grant.scopes);
    const user = await this.#deps.accounts.getUser(grant.userId);
    if (!user) throw new HearthError('GeneralUnauthorized');
    // OIDC Core §5.3.2: a claim with no value is left out, never null (relying parties type them as strings).
    return {
      sub: user.id,
      ...(scopes.has(Scopes.Email) && user.email !== null ? { email: user.email, email_verified: true } : {}),
      ...(scopes.has(Scopes.Identify)
        ? {
            preferred_username: user.username,
            ...(user.globalName !== null ? { nickname: user.globalName } : {}),
            ...(user.avatar !== null
              ? { picture: `${this.#deps.issuer()}/avatars/${user.id}/${user.avatar}.png` }
              : {}),
            locale: 'en-US',
          }
        : {}),
    };
  }

  async authorizationCounts(
    applicationId: string,
  ): Promise<{ userInstalls: number; authorizations: number }> {
    const counts = await store.countGrants(this.#deps.storage.db, applicationId);
    return { userInstalls: counts.userInstalls, authorizations: counts.all };
  }

  // ---- Events ----

  async #recordAuthorized(
    tx: Executor,
    request: AuthorizationRequest,
    userId: string,
    scopes: string[],
    guild?: Record<string, unknown>,
  ): Promise<BusEvent> {
    const user = await this.#deps.accounts.getUserIn(tx, userId);
    // A bot install is a guild install (integration_type 0) and names its guild (webhook events, Application Authorized).
    const integrationType = guild ? IntegrationTypes.GuildInstall : request.integrationType;
    const data = {
      ...(integrationType !== undefined ? { integration_type: integrationType } : {}),
      user: user ? toUserObject(user) : { id: userId },
      scopes,
      ...(guild ? { guild } : {}),
    };
    return this.#record(tx, 'APPLICATION_AUTHORIZED', request.application.id, data);
  }

  async #recordDeauthorized(tx: Executor, applicationId: string, userId: string): Promise<BusEvent> {
    const user = await this.#deps.accounts.getUserIn(tx, userId);
    return this.#record(tx, 'APPLICATION_DEAUTHORIZED', applicationId, {
      user: user ? toUserObject(user) : { id: userId },
    });
  }

  async #record(
    tx: Executor,
    type: string,
    applicationId: string,
    data: Record<string, unknown>,
  ): Promise<BusEvent> {
    await recordWebhookEvent(tx, {
      id: this.#deps.snowflakes.next(),
      type,
      applicationId,
      data,
      createdAt: this.#deps.clock.now(),
    });
    return { type, data: { application_id: applicationId, ...data } };
  }

  async #publish(events: BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}

type Fields = Record<string, string | undefined>;

/** An answer to the client, not a failure of the storage: its work wrote nothing, the others may commit. */
function isRefusal(error: unknown): boolean {
  return error instanceof OAuth2Error || error instanceof HearthError;
}

/** RFC 6749 §3.1: parameters must not repeat. */
function singleValued(form: Record<string, unknown>): Fields {
  const fields: Fields = {};
  for (const [key, value] of Object.entries(form)) {
    if (typeof value !== 'string') {
      throw new OAuth2Error(OAuth2ErrorCodes.InvalidRequest, `"${key}" must be given once, as a string`);
    }
    fields[key] = value;
  }
  return fields;
}

/** `Authorization: Basic base64(id:secret)`, each part form-urlencoded (RFC 6749 §2.3.1); null when malformed. */
function parseBasic(header: string | undefined): { id: string; secret: string } | undefined | null {
  // Another scheme is no client credential: the RPC clients send `Bot this-is-a-dummy` (@xhayper/discord-rpc)
  // or `Bearer null` (discord-rpc) with their form credentials, and the platform takes them (VOICE-RPC.md §5).
  if (header === undefined || !/^Basic(\s|$)/i.test(header)) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return null;
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return null;
  }
}

/** RFC 7636 §4.6. A verifier sent for a code issued without a challenge is refused too. */
function checkProofKey(
  challenge: string | null,
  verifier: string | undefined,
  invalid: () => OAuth2Error,
): void {
  if (challenge === null) {
    if (verifier !== undefined) throw invalid();
    return;
  }
  if (verifier === undefined || !CODE_VERIFIER_PATTERN.test(verifier)) throw invalid();
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  if (computed.length !== expected.length || !timingSafeEqual(computed, expected)) throw invalid();
}

function parseRequestedScopes(raw: string): Scope[] {
  const names = [...new Set(raw.split(' ').filter(Boolean))];
  if (!names.every(isScope)) throw new OAuth2Error(OAuth2ErrorCodes.InvalidScope);
  return names;
}

function eligibleFor(application: Application, scope: Scope): boolean {
  return scopeAvailable(scope, application.flags);
}

/** Scopes a player may be asked for by this application (seed, Authentication 2; PROTOCOL.md §C.7). */
function parseScopes(
  raw: string,
  application: Application,
  fail: (error: string, description: string) => AuthorizeError,
): Scope[] {
  const invalid = (description: string) => fail(OAuth2ErrorCodes.InvalidScope, description);
  const requested = raw.split(' ').filter(Boolean);
  for (const name of requested) if (!scopeNamed(name)) throw invalid(`Invalid scope: ${name}`);
  const names = [...new Set(requested.map((name) => scopeNamed(name) as Scope))];
  if (names.length === 0) throw invalid('No scope was requested');
  for (const name of names) {
    if (CLIENT_CREDENTIALS_ONLY_SCOPES.includes(name) || TARGETED_SCOPES.includes(name)) {
      throw invalid(`Scope ${name} cannot be granted here`);
    }
    if (!eligibleFor(application, name)) throw invalid(`Scope ${name} needs approval`);
  }
  return names as Scope[];
}

/** Whether a raw `scope` parameter asks only for a bot install (no code grant, no redirect needed). */
function isBotOnly(raw: unknown): boolean {
  if (typeof raw !== 'string') return false;
  const names = raw.split(' ').filter(Boolean).map(scopeNamed);
  return (
    names.includes(Scopes.Bot) &&
    names.every((scope) => scope !== undefined && BOT_INSTALL_SCOPES.includes(scope))
  );
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * RFC 6749 §3.1.2 with the platform's exceptions: a loopback IP redirect matches a registered one on any port
 * (RFC 8252 §7.3), and with PKCE the default mobile scheme needs no registration (seed rule 5).
 */
function resolveRedirectUri(application: Application, requested: string | null, pkce: boolean): string {
  const refuse = (description: string) =>
    new AuthorizeError('invalid_request', description, undefined, 'redirect_uri');
  if (requested === null) {
    const first = application.redirectUris[0];
    if (!first) throw refuse('No redirect URI is registered for this application');
    return first;
  }
  let url: URL;
  try {
    url = new URL(requested);
  } catch {
    throw refuse('Invalid redirect_uri');
  }
  if (url.hash !== '' || requested.includes('#')) throw refuse('redirect_uri must not have a fragment');
  const custom = url.protocol !== 'http:' && url.protocol !== 'https:';
  if (custom && !pkce) throw refuse('A custom scheme redirect needs PKCE');
  if (isRegistered(application, requested)) return requested;
  if (pkce && requested === defaultRedirectUri(application.id)) return requested;
  throw refuse('Mismatching redirect URI.');
}

function isRegistered(application: Application, requested: string): boolean {
  if (application.redirectUris.includes(requested)) return true;
  let url: URL;
  try {
    url = new URL(requested);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return false;
  // Only the plain form: no userinfo, no other spelling of the address, no dot segments.
  const canonical = `http://${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}${url.search}`;
  if (canonical !== requested) return false;
  return application.redirectUris.some((registered) => {
    try {
      const candidate = new URL(registered);
      return (
        candidate.protocol === 'http:' &&
        candidate.hostname === url.hostname &&
        candidate.pathname === url.pathname &&
        candidate.search === url.search
      );
    } catch {
      return false;
    }
  });
}

/** Appends the response to the redirect URI, with `state` echoed (RFC 6749 §4.1.2). */
function redirectWith(request: AuthorizationRequest, params: Record<string, string>): string {
  const url = new URL(request.redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  if (request.state !== undefined) url.searchParams.set('state', request.state);
  return url.toString();
}

/**
 * The application's default install link (DOCS application: Install Links): a request without `scope` takes
 * the install parameters of its install type (guild install when none is named), and their permissions
 * when it names none.
 */
function withInstallDefaults(
  application: Application,
  params: Record<string, unknown>,
): Record<string, unknown> {
  if (params['scope'] !== undefined) return params;
  const type = params['integration_type'] === '1' ? '1' : '0';
  const install = application.integrationTypesConfig[type]?.oauth2_install_params;
  if (!install) return params;
  return {
    ...params,
    scope: install.scopes.join(' '),
    ...(params['permissions'] === undefined && install.scopes.includes('bot')
      ? { permissions: install.permissions }
      : {}),
  };
}
