import {
  ApplicationFlags,
  BOT_PROVIDER_TYPE,
  ExternalAuthTypes,
  isExternalAuthType,
  Scopes,
  USER_MERGE_OPERATION_COMPLETED,
} from '@hearth/protocol';
import type { BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { GroupCommit } from '../../storage/group-commit.js';
import { type Application, type ApplicationsService, hasFlag } from '../applications/service.js';
import type { IssuedProvisional, OAuth2Service, ProvisionalMerge, TokenResponse } from '../oauth2/service.js';
import * as store from './identities-store.js';
import type { ExternalIdentity, IdentityProvidersService } from './providers.js';
import {
  BanRequest,
  BotTokenRequest,
  BotUnmergeRequest,
  ExternalTokenRequest,
  ModifyCurrentUserAccount,
} from './provisional-schemas.js';
import type { AccountsService, User } from './service.js';

/**
 * The seam through which a merge or an unmerge moves data other domains own (lobby memberships, friends,
 * DM history). Each participant is called inside the merge/unmerge transaction, through `tx` only; a
 * participant that throws rolls the whole operation back. Registered in app.ts.
 */
export interface AccountLinkParticipant {
  /** For logs and errors. */
  readonly name: string;
  /** Moves what the provisional account holds in this application to the full account (merge). */
  mergeInto(
    tx: Executor,
    provisionalUserId: string,
    fullUserId: string,
    applicationId: string,
  ): Promise<void>;
  /**
   * Copies or moves what the new provisional account keeps after an unmerge or a ban (in-game friends,
   * active lobby memberships…); absent when nothing of this participant follows the identity.
   */
  unmergeInto?(
    tx: Executor,
    fullUserId: string,
    newProvisionalUserId: string,
    applicationId: string,
  ): Promise<void>;
}

export interface AccountLinkDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  accounts: AccountsService;
  applications: ApplicationsService;
  oauth2: OAuth2Service;
  providers: IdentityProvidersService;
  participants: readonly AccountLinkParticipant[];
}

/** A provisional token response (SPEC ProvisionalTokenResponse). */
export type ProvisionalTokenResponse = TokenResponse & { id_token: string };

/**
 * Provisional accounts and the account-link lifecycle (seed, States: account link; PROTOCOL.md §B.1–B.3):
 * find-or-create by external identity, merge into a full account, unmerge, bans.
 */
export class AccountLinkService implements ProvisionalMerge {
  readonly #deps: AccountLinkDeps;
  /**
   * Provisional token requests of the same turn commit together: on SQLite a commit writes every page it
   * touched to the log again (the token table's indexes), most of what a request cost.
   */
  readonly #tokens: GroupCommit;

  constructor(deps: AccountLinkDeps) {
    this.#deps = deps;
    this.#tokens = new GroupCommit(deps.storage, (error) => error instanceof HearthError);
  }

  // ---- Tokens ----

  /** POST /partner-sdk/token/bot: the game's server vouches for its player's id. */
  async botToken(applicationId: string, input: unknown): Promise<ProvisionalTokenResponse> {
    const body = parse(BotTokenRequest, input);
    const identity: ExternalIdentity = {
      providerType: BOT_PROVIDER_TYPE,
      providerId: '',
      externalUserId: body.external_user_id,
      displayName: body.preferred_global_name ?? undefined,
    };
    // The application (its approval) is read in the token transaction: one read fewer, and as fresh.
    return this.#findOrCreate(applicationId, identity, false);
  }

  /** POST /partner-sdk/token: an identity provider's credential, from the game's client or server. */
  async externalToken(input: unknown): Promise<ProvisionalTokenResponse> {
    const body = parse(ExternalTokenRequest, input);
    const application = await this.#authenticateClient(body.client_id, body.client_secret);
    const type = body.external_auth_type;
    if (type === ExternalAuthTypes.DiscordBotIssuedAccessToken) {
      // A provisional account's own token: a fresh one for the same account.
      const user = await this.#provisionalBehind(application, body.external_auth_token);
      const { oauth2, storage } = this.#deps;
      const sign = await oauth2.signer();
      const issued = await storage.transaction((tx) =>
        oauth2.issueProvisional(tx, application.id, user.id, { withRefresh: false }),
      );
      return oauth2.completeProvisional(issued, sign);
    }
    const identity = await this.#deps.providers.verify(application.id, type, body.external_auth_token);
    // The refresh grant survives only for OIDC on confidential clients, and is deprecated (seed, Authentication 5).
    const withRefresh = type === ExternalAuthTypes.OIDC && !application.publicClient;
    return this.#findOrCreate(application.id, identity, withRefresh);
  }

  /**
   * Finds or creates the identity's provisional account and issues its token, in one transaction shared with
   * the other token requests of the same turn (`#tokens`): every refusal comes before the first write.
   */
  async #findOrCreate(
    applicationId: string,
    identity: ExternalIdentity,
    withRefresh: boolean,
  ): Promise<ProvisionalTokenResponse> {
    const { accounts, oauth2, clock, snowflakes } = this.#deps;
    const sign = await oauth2.signer();
    const key = {
      applicationId,
      providerType: identity.providerType,
      providerId: identity.providerId,
      externalUserId: identity.externalUserId,
    };
    const attempt = () =>
      this.#tokens.run(async (tx) => {
        await this.#assertEnabledIn(tx, applicationId);
        const existing = await store.findIdentityAccount(tx, key);
        let userId: string;
        if (existing) {
          if (existing.provisional !== 1) {
            throw new HearthError('ProvisionalAccountNonProvisional', {
              extra: {
                user_id: existing.user_id,
                provider_type: identity.providerType,
                provider_id: identity.providerId === '' ? null : identity.providerId,
                provider_issued_user_id: identity.externalUserId,
              },
            });
          }
          if (identity.displayName !== undefined && identity.displayName !== existing.global_name) {
            await accounts.setDisplayName(tx, existing.user_id, identity.displayName);
          }
          userId = existing.user_id;
        } else {
          const user = await accounts.createProvisionalUser(tx, identity.displayName ?? null);
          await store.insertIdentity(tx, {
            id: snowflakes.next(),
            application_id: applicationId,
            provider_type: identity.providerType,
            provider_id: identity.providerId,
            external_user_id: identity.externalUserId,
            user_id: user.id,
            restricted_by: null,
            created_at: clock.now(),
          });
          userId = user.id;
        }
        return oauth2.issueProvisional(tx, applicationId, userId, { withRefresh });
      });
    let issued: IssuedProvisional;
    try {
      issued = await attempt();
    } catch (error) {
      // Two first requests for one identity raced: the unique key decided, the second finds the account.
      if (!isUniqueViolation(error)) throw error;
      issued = await attempt();
    }
    return oauth2.completeProvisional(issued, sign);
  }

  /** PATCH /users/@me/account: a provisional account's display name (UpdateProvisionalAccountDisplayName). */
  async updateDisplayName(
    principal: { userId: string; scopes: ReadonlySet<string> },
    input: unknown,
  ): Promise<User> {
    const body = parse(ModifyCurrentUserAccount, input);
    const { accounts, storage } = this.#deps;
    const user = await accounts.getUser(principal.userId);
    if (!user) throw new HearthError('UnknownUser');
    // A full account's name belongs to its owner: only the approved scope may change it from a game.
    if (!user.provisional && !principal.scopes.has(Scopes.AccountGlobalNameUpdate)) {
      throw new HearthError('InvalidUserType');
    }
    await accounts.setDisplayName(storage.db, user.id, body.global_name);
    return { ...user, globalName: body.global_name };
  }

  // ---- Merge (through /oauth2/token, PROTOCOL.md §B.3) ----

  async prepare(
    application: Application,
    externalAuthType: string,
    externalAuthToken: string,
    destinationUserId: string,
  ): Promise<(tx: Executor) => Promise<BusEvent[]>> {
    const { accounts, storage, clock } = this.#deps;
    if (!isExternalAuthType(externalAuthType)) throw new HearthError('InvalidOAuth2AccessToken');
    if (!hasFlag(application, ApplicationFlags.ProvisionalAccountsEnabled)) {
      throw new HearthError('ProvisionalAccountsNotEnabled');
    }
    const destination = await accounts.getUser(destinationUserId);
    if (!destination) throw new HearthError('UnknownUser');
    if (destination.provisional) throw new HearthError('MergeDestinationProvisional');

    let identity: store.IdentityRow | undefined;
    let external: ExternalIdentity | undefined;
    if (externalAuthType === ExternalAuthTypes.DiscordBotIssuedAccessToken) {
      const source = await this.#provisionalBehind(
        application,
        externalAuthToken,
        'MergeSourceNotProvisional',
      );
      [identity] = await store.identitiesOfUserIn(storage.db, source.id, application.id);
    } else {
      external = await this.#deps.providers.verify(application.id, externalAuthType, externalAuthToken);
      identity = await store.findIdentity(storage.db, keyOf(application.id, external));
    }
    if (identity) {
      if (identity.user_id === destination.id) throw new HearthError('MergeSourceNotProvisional');
      if (!(await accounts.isProvisional(identity.user_id)))
        throw new HearthError('MergeSourceNotProvisional');
      if (identity.restricted_by !== null) {
        const ban = await store.findBan(storage.db, identity.restricted_by);
        if (ban && (ban.expires_at === null || ban.expires_at > clock.now())) {
          throw new HearthError('MergeSourceBanned');
        }
      }
    }
    const held = await store.identitiesOfUserIn(storage.db, destination.id, application.id);
    if (held.length > 0) throw new HearthError('MergeExternalIdentityExists');

    const sourceId = identity?.user_id;
    const identityId = identity?.id;
    return async (tx) => {
      if (sourceId === undefined || identityId === undefined) {
        // No provisional account yet: the identity links straight to the full account; nothing moves.
        if (external) await this.#link(tx, application.id, external, destination.id);
        return [];
      }
      return this.#merge(tx, application.id, sourceId, destination.id);
    };
  }

  async #link(
    tx: Executor,
    applicationId: string,
    external: ExternalIdentity,
    userId: string,
  ): Promise<void> {
    await store.insertIdentity(tx, {
      id: this.#deps.snowflakes.next(),
      application_id: applicationId,
      provider_type: external.providerType,
      provider_id: external.providerId,
      external_user_id: external.externalUserId,
      user_id: userId,
      restricted_by: null,
      created_at: this.#deps.clock.now(),
    });
  }

  /** Inside the token transaction: identities, other domains' data, then the provisional account goes. */
  async #merge(
    tx: Executor,
    applicationId: string,
    sourceId: string,
    destinationId: string,
  ): Promise<BusEvent[]> {
    const { accounts, oauth2, snowflakes } = this.#deps;
    const source = await accounts.getUserIn(tx, sourceId);
    if (!source?.provisional) throw new HearthError('MergeSourceNotProvisional');
    for (const identity of await store.identitiesOfUserIn(tx, sourceId, applicationId)) {
      await store.moveIdentity(tx, identity.id, destinationId, null);
    }
    for (const participant of this.#deps.participants) {
      await participant.mergeInto(tx, sourceId, destinationId, applicationId);
    }
    // The provisional account's tokens end; its SDK sessions are closed. No webhook: the player is still linked.
    const ended = await oauth2.endLinkIn(tx, applicationId, sourceId, { quiet: true });
    await accounts.deleteProvisionalUser(tx, sourceId);
    return [
      ...(ended ? [ended] : []),
      {
        type: USER_MERGE_OPERATION_COMPLETED,
        data: { merge_operation_id: snowflakes.next(), source_user_id: sourceId },
        audience: { users: [destinationId], applicationId },
      },
    ];
  }

  // ---- Unmerge ----

  /** POST /partner-sdk/provisional-accounts/unmerge/bot. */
  async unmergeBot(applicationId: string, input: unknown): Promise<void> {
    const body = parse(BotUnmergeRequest, input);
    const application = await this.#enabledApplication(applicationId);
    const identity = await store.findIdentity(this.#deps.storage.db, {
      applicationId: application.id,
      providerType: BOT_PROVIDER_TYPE,
      providerId: '',
      externalUserId: body.external_user_id,
    });
    if (!identity) throw new HearthError('UnknownUser');
    await this.#unmerge(application.id, identity.user_id);
  }

  /** POST /partner-sdk/provisional-accounts/unmerge (public clients: UnmergeIntoProvisionalAccount). */
  async unmergeExternal(input: unknown): Promise<void> {
    const body = parse(ExternalTokenRequest, input);
    const application = await this.#authenticateClient(body.client_id, body.client_secret);
    const { storage, oauth2, providers } = this.#deps;
    let userId: string | undefined;
    if (body.external_auth_type === ExternalAuthTypes.DiscordBotIssuedAccessToken) {
      // After a merge the player's token is the full account's: it names the linked user.
      const grant = await oauth2.authenticateAccessToken(body.external_auth_token);
      if (!grant || grant.applicationId !== application.id) throw new HearthError('InvalidOAuth2AccessToken');
      const [identity] = await store.identitiesOfUserIn(storage.db, grant.userId, application.id);
      userId = identity?.user_id;
    } else {
      const external = await providers.verify(
        application.id,
        body.external_auth_type,
        body.external_auth_token,
      );
      userId = (await store.findIdentity(storage.db, keyOf(application.id, external)))?.user_id;
    }
    if (userId === undefined) throw new HearthError('UnknownUser');
    await this.#unmerge(application.id, userId);
  }

  /**
   * Severs the link (PROTOCOL.md §B.3): a new provisional account with a new id takes the identity and the
   * global name; every token of the full account for this application ends (APPLICATION_DEAUTHORIZED,
   * SDK sessions closed).
   */
  async #unmerge(applicationId: string, fullUserId: string): Promise<void> {
    const { storage, accounts, oauth2 } = this.#deps;
    const events: BusEvent[] = [];
    await storage.transaction(async (tx) => {
      const full = await accounts.getUserIn(tx, fullUserId);
      if (!full) throw new HearthError('UnknownUser');
      if (full.provisional) throw new HearthError('InvalidUserType');
      await this.#split(tx, full, applicationId, null);
      const ended = await oauth2.endLinkIn(tx, applicationId, full.id);
      if (ended) events.push(ended);
    });
    await oauth2.publish(events);
  }

  /** Moves a full account's identities in one application to a new provisional account. */
  async #split(tx: Executor, full: User, applicationId: string, restrictedBy: string | null): Promise<void> {
    const identities = await store.identitiesOfUserIn(tx, full.id, applicationId);
    if (identities.length === 0) return;
    const created = await this.#deps.accounts.createProvisionalUser(tx, full.globalName);
    for (const identity of identities) await store.moveIdentity(tx, identity.id, created.id, restrictedBy);
    for (const participant of this.#deps.participants) {
      await participant.unmergeInto?.(tx, full.id, created.id, applicationId);
    }
  }

  // ---- Bans (operator: CLI and admin API) ----

  /**
   * Bans a platform account (seed, States: account link): each link becomes a restricted provisional account
   * carrying the external identity; every token, grant and session ends at once; APPLICATION_DEAUTHORIZED
   * for every application. `durationSeconds` absent: permanent.
   */
  async ban(userId: string, input: unknown): Promise<{ userId: string; expiresAt: number | null }> {
    const body = parse(BanRequest, input ?? {});
    const { storage, accounts, oauth2, clock } = this.#deps;
    const now = clock.now();
    const expiresAt = body.duration_seconds ? now + body.duration_seconds * 1000 : null;
    const events: BusEvent[] = [];
    await storage.transaction(async (tx) => {
      const user = await accounts.getUserIn(tx, userId);
      if (!user) throw new HearthError('UnknownUser');
      if (user.provisional || user.bot) throw new HearthError('InvalidUserType');
      await store.saveBan(tx, {
        user_id: userId,
        reason: body.reason ?? null,
        expires_at: expiresAt,
        created_at: now,
      });
      const applications = new Set(
        (await store.identitiesOfUser(tx, userId)).map((row) => row.application_id),
      );
      for (const applicationId of applications) await this.#split(tx, user, applicationId, userId);
      for (const applicationId of await oauth2.linkedApplications(tx, userId)) {
        const ended = await oauth2.endLinkIn(tx, applicationId, userId);
        if (ended) events.push(ended);
      }
      await accounts.deleteSessions(tx, userId);
    });
    await oauth2.publish(events);
    await accounts.sessionsEndedFor(userId);
    return { userId, expiresAt };
  }

  /** Lifts a ban: restricted provisional accounts it made may merge again. */
  async unban(userId: string): Promise<void> {
    if (!(await store.deleteBan(this.#deps.storage.db, userId))) throw new HearthError('UnknownUser');
  }

  // ---- Shared checks ----

  async #enabledApplication(applicationId: string): Promise<Application> {
    const application = await this.#deps.applications.requireApplication(applicationId);
    if (!hasFlag(application, ApplicationFlags.ProvisionalAccountsEnabled)) {
      throw new HearthError('ProvisionalAccountsNotEnabled');
    }
    return application;
  }

  /** The approval read in the token transaction: only the flags, and as fresh as the rows written with it. */
  async #assertEnabledIn(tx: Executor, applicationId: string): Promise<void> {
    const flags = await this.#deps.applications.flagsIn(tx, applicationId);
    if (flags === undefined) throw new HearthError('UnknownApplication');
    const enabled = ApplicationFlags.ProvisionalAccountsEnabled;
    if ((flags & enabled) !== enabled) throw new HearthError('ProvisionalAccountsNotEnabled');
  }

  /** Client authentication of the unauthenticated endpoints: the secret, unless the client is public (530007). */
  async #authenticateClient(clientId: string, secret: string | undefined): Promise<Application> {
    const { applications } = this.#deps;
    const application =
      secret !== undefined
        ? await applications.authenticateClient(clientId, secret)
        : await applications.getApplication(clientId);
    if (!application || (secret === undefined && !application.publicClient)) {
      throw new HearthError('ProvisionalInvalidClientSecret');
    }
    return this.#enabledApplication(application.id);
  }

  /** The provisional account a bot-issued access token of this application stands for. */
  async #provisionalBehind(
    application: Application,
    token: string,
    notProvisional: 'InvalidOAuth2AccessToken' | 'MergeSourceNotProvisional' = 'InvalidOAuth2AccessToken',
  ): Promise<User> {
    const grant = await this.#deps.oauth2.authenticateAccessToken(token);
    if (!grant || grant.applicationId !== application.id) throw new HearthError('InvalidOAuth2AccessToken');
    const user = await this.#deps.accounts.getUser(grant.userId);
    if (!user) throw new HearthError('InvalidOAuth2AccessToken');
    if (!user.provisional) throw new HearthError(notProvisional);
    return user;
  }
}

function keyOf(applicationId: string, external: ExternalIdentity): store.IdentityKey {
  return {
    applicationId,
    providerType: external.providerType,
    providerId: external.providerId,
    externalUserId: external.externalUserId,
  };
}
