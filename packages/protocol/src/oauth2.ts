/** OAuth2 and OpenID Connect facts (PROTOCOL.md §C). */
export const GrantTypes = {
  AuthorizationCode: 'authorization_code',
  RefreshToken: 'refresh_token',
  ClientCredentials: 'client_credentials',
} as const;
export type GrantType = (typeof GrantTypes)[keyof typeof GrantTypes];

/** RFC 6749 §5.2 and §4.1.2.1 error codes. */
export const OAuth2ErrorCodes = {
  InvalidRequest: 'invalid_request',
  InvalidClient: 'invalid_client',
  InvalidGrant: 'invalid_grant',
  UnauthorizedClient: 'unauthorized_client',
  UnsupportedGrantType: 'unsupported_grant_type',
  UnsupportedResponseType: 'unsupported_response_type',
  InvalidScope: 'invalid_scope',
  AccessDenied: 'access_denied',
  UnsupportedTokenType: 'unsupported_token_type',
  ConsentRequired: 'consent_required',
  LoginRequired: 'login_required',
  ServerError: 'server_error',
} as const;
export type OAuth2ErrorCode = (typeof OAuth2ErrorCodes)[keyof typeof OAuth2ErrorCodes];

/** The token endpoint's error descriptions as the platform words them (PROTOCOL.md §C.5). */
export const OAuth2ErrorDescriptions = {
  invalidCode: 'Invalid "code" in request.',
  invalidRefreshToken: 'Invalid "refresh_token" in request',
  accessDenied: 'The resource owner or authorization server denied the request',
} as const;

/** POST /partner-sdk/child-token: the parent's token and secret (PROTOCOL.md §B.3). */
export const ChildTokenLimits = {
  parentAccessTokenMaxLength: 10240,
  parentClientSecretMaxLength: 1024,
} as const;

/** Access tokens live 7 days (PROTOCOL.md §C.4, §B.1). */
export const ACCESS_TOKEN_TTL_SECONDS = 604800;
/** Codes are single-use and short-lived (PROTOCOL.md §C.4; RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const AUTHORIZATION_CODE_TTL_MS = 10 * 60 * 1000;
/** How long an unused refresh token stays valid. */
export const REFRESH_TOKEN_TTL_MS = 90 * 24 * 60 * 60 * 1000;

/** RFC 7636 §4.1: 43–128 characters of the unreserved set. */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
/** The only challenge method accepted (PROTOCOL.md §C.2). */
export const CODE_CHALLENGE_METHOD = 'S256';
export const CODE_CHALLENGE_PATTERN = /^[A-Za-z0-9\-_]{43}$/;

/** Installation contexts (PROTOCOL.md §C.2). */
export const IntegrationTypes = { GuildInstall: 0, UserInstall: 1 } as const;
export type IntegrationType = (typeof IntegrationTypes)[keyof typeof IntegrationTypes];

export const Prompts = { Consent: 'consent', None: 'none' } as const;

/** The default redirect scheme of mobile games: `discord-<application id>:/authorize/callback` (seed rule 5). */
export const DEFAULT_REDIRECT_SCHEME_PREFIX = 'discord';
export const CUSTOM_SCHEME_REDIRECT_PATH = ':/authorize/callback';

export function defaultRedirectUri(applicationId: string): string {
  return `${DEFAULT_REDIRECT_SCHEME_PREFIX}-${applicationId}${CUSTOM_SCHEME_REDIRECT_PATH}`;
}

/** ID tokens are signed with RS256 and published as RSA JWKs (PROTOCOL.md §C.1). */
export const ID_TOKEN_SIGNING_ALG = 'RS256';

/** Where a bot authorization without a redirect URI ends: the server's own "authorized" page. */
export const BOT_AUTHORIZED_PATH = '/oauth2/authorized';
