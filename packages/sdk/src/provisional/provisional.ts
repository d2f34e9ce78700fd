import { ExternalAuthTypes, ProvisionalLimits } from '@hearth/protocol';
import { ClientResult, ErrorType, type ResultCallback } from '../client-result.js';
import type { FeatureContext } from '../feature.js';
import { snowflakeOf } from '../ids.js';
import { type RestAnswer, RestFailure, type RestRequest } from '../rest/rest-client.js';
import {
  noTokens,
  reportTokens,
  type TokenBody,
  type TokenExchangeCallback,
  type TokenOutcome,
  tokensOf,
} from '../tokens.js';

/**
 * AuthenticationExternalAuthType: the credential a provisional account is found or created by
 * (PROTOCOL.md §B.2). The numbers are the library's; the wire names are the platform's.
 */
export const AuthenticationExternalAuthType = {
  OIDC: 0,
  EpicOnlineServicesAccessToken: 1,
  EpicOnlineServicesIdToken: 2,
  SteamSessionTicket: 3,
  UnityServicesIdToken: 4,
  DiscordBotIssuedAccessToken: 5,
  AppleIdToken: 6,
  PlayStationNetworkIdToken: 7,
} as const;
export type AuthenticationExternalAuthType =
  (typeof AuthenticationExternalAuthType)[keyof typeof AuthenticationExternalAuthType];

const WIRE_NAMES: Record<AuthenticationExternalAuthType, string> = {
  0: ExternalAuthTypes.OIDC,
  1: ExternalAuthTypes.EpicOnlineServicesAccessToken,
  2: ExternalAuthTypes.EpicOnlineServicesIdToken,
  3: ExternalAuthTypes.SteamSessionTicket,
  4: ExternalAuthTypes.UnityServicesIdToken,
  5: ExternalAuthTypes.DiscordBotIssuedAccessToken,
  6: ExternalAuthTypes.AppleIdToken,
  7: ExternalAuthTypes.PlayStationNetworkIdToken,
};

/** What the provisional-account operations need of the client besides the feature context. */
export interface ProvisionalContext {
  feature: FeatureContext;
  /** A request without the player's token: these endpoints authenticate the game or nobody. */
  anonymous(request: RestRequest): Promise<RestAnswer>;
}

/**
 * Provisional accounts from the game's side (seed, Library operations; Authentication 5): tokens for players
 * without a platform account, the merge into a full account, the unmerge, and the display name.
 */
export class ProvisionalAccounts {
  readonly #context: ProvisionalContext;

  constructor(context: ProvisionalContext) {
    this.#context = context;
  }

  /** POST /partner-sdk/token (public clients: no secret). Re-run it when the token expires, then UpdateToken. */
  async getProvisionalToken(
    applicationId: bigint | string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
    callback?: TokenExchangeCallback,
  ): Promise<TokenOutcome> {
    this.#context.feature.logger.secret(externalAuthToken);
    const fields = this.#credential(applicationId, externalAuthType, externalAuthToken);
    const outcome =
      fields instanceof ClientResult
        ? noTokens(fields)
        : await this.#tokens({ method: 'POST', path: '/partner-sdk/token', json: fields });
    reportTokens(callback, outcome);
    return outcome;
  }

  /** The authorization-code exchange that also merges the provisional account into the player's (PROTOCOL.md §B.3). */
  async getTokenFromProvisionalMerge(
    applicationId: bigint | string,
    code: string,
    codeVerifier: string,
    redirectUri: string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
    callback?: TokenExchangeCallback,
  ): Promise<TokenOutcome> {
    this.#context.feature.logger.secret(externalAuthToken);
    const fields = this.#credential(applicationId, externalAuthType, externalAuthToken);
    const outcome =
      fields instanceof ClientResult
        ? noTokens(fields)
        : await this.#tokens({
            method: 'POST',
            path: '/oauth2/token',
            form: {
              grant_type: 'authorization_code',
              code,
              code_verifier: codeVerifier,
              redirect_uri: redirectUri,
              ...fields,
            },
          });
    reportTokens(callback, outcome);
    return outcome;
  }

  /** Severs the link: the identity gets a new provisional account; every token of the player ends. */
  async unmergeIntoProvisionalAccount(
    applicationId: bigint | string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
    callback?: ResultCallback,
  ): Promise<ClientResult> {
    this.#context.feature.logger.secret(externalAuthToken);
    const fields = this.#credential(applicationId, externalAuthType, externalAuthToken);
    const result =
      fields instanceof ClientResult
        ? fields
        : await this.#context
            .anonymous({ method: 'POST', path: '/partner-sdk/provisional-accounts/unmerge', json: fields })
            .then(
              (answer) => ClientResult.success(answer.status),
              (failure: unknown) => failureOf(failure),
            );
    callback?.(result);
    return result;
  }

  /** The provisional player's display name (1–32 characters), with the token given to UpdateToken. */
  async updateDisplayName(name: string, callback?: ResultCallback): Promise<ClientResult> {
    const length = [...name].length;
    const result =
      length < ProvisionalLimits.displayNameMinLength || length > ProvisionalLimits.displayNameMaxLength
        ? new ClientResult({
            type: ErrorType.ValidationError,
            error: `name must be ${ProvisionalLimits.displayNameMinLength}–${ProvisionalLimits.displayNameMaxLength} characters`,
          })
        : await this.#context.feature
            .call({ method: 'PATCH', path: '/users/@me/account', json: { global_name: name } })
            .then(
              (answer) => ClientResult.success(answer.status),
              (failure: unknown) => failureOf(failure),
            );
    callback?.(result);
    return result;
  }

  #credential(
    applicationId: bigint | string,
    externalAuthType: AuthenticationExternalAuthType,
    externalAuthToken: string,
  ): Record<string, string> | ClientResult {
    const clientId = snowflakeOf(applicationId, 'applicationId');
    if (clientId instanceof ClientResult) return clientId;
    const type = WIRE_NAMES[externalAuthType];
    if (type === undefined) {
      return new ClientResult({ type: ErrorType.ValidationError, error: 'unknown externalAuthType' });
    }
    if (
      externalAuthToken.length === 0 ||
      externalAuthToken.length > ProvisionalLimits.externalAuthTokenMaxLength
    ) {
      return new ClientResult({
        type: ErrorType.ValidationError,
        error: 'externalAuthToken is empty or too long',
      });
    }
    return { client_id: clientId, external_auth_type: type, external_auth_token: externalAuthToken };
  }

  async #tokens(request: RestRequest): Promise<TokenOutcome> {
    const answer = await this.#context.anonymous(request).catch((failure: unknown) => failureOf(failure));
    if (answer instanceof ClientResult) return noTokens(answer);
    return tokensOf(answer.body as TokenBody, answer.status, this.#context.feature.logger);
  }
}

function failureOf(failure: unknown): ClientResult {
  if (failure instanceof RestFailure) return failure.result;
  return new ClientResult({ type: ErrorType.NetworkError, error: String(failure), retryable: true });
}
