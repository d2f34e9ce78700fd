/** Provisional accounts and external identities (PROTOCOL.md §B.1–B.3). */

/** `external_auth_type` values of the token, merge and unmerge endpoints (SPEC ApplicationIdentityProviderAuthType). */
export const ExternalAuthTypes = {
  OIDC: 'OIDC',
  SteamSessionTicket: 'STEAM_SESSION_TICKET',
  EpicOnlineServicesAccessToken: 'EPIC_ONLINE_SERVICES_ACCESS_TOKEN',
  EpicOnlineServicesIdToken: 'EPIC_ONLINE_SERVICES_ID_TOKEN',
  UnityServicesIdToken: 'UNITY_SERVICES_ID_TOKEN',
  AppleIdToken: 'APPLE_ID_TOKEN',
  PlayStationNetworkIdToken: 'PLAYSTATION_NETWORK_ID_TOKEN',
  DiscordBotIssuedAccessToken: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
} as const;
export type ExternalAuthType = (typeof ExternalAuthTypes)[keyof typeof ExternalAuthTypes];

export function isExternalAuthType(value: unknown): value is ExternalAuthType {
  return (Object.values(ExternalAuthTypes) as unknown[]).includes(value);
}

/** Types verified as signed ID tokens against an issuer's key set (generic OIDC and the JWT-based providers). */
export const JWT_AUTH_TYPES: readonly ExternalAuthType[] = [
  ExternalAuthTypes.OIDC,
  ExternalAuthTypes.EpicOnlineServicesIdToken,
  ExternalAuthTypes.UnityServicesIdToken,
  ExternalAuthTypes.AppleIdToken,
  ExternalAuthTypes.PlayStationNetworkIdToken,
];

/** Types checked by asking the provider's verification endpoint (opaque tickets and access tokens). */
export const VERIFIED_AUTH_TYPES: readonly ExternalAuthType[] = [
  ExternalAuthTypes.SteamSessionTicket,
  ExternalAuthTypes.EpicOnlineServicesAccessToken,
];

/** `provider_type` of an identity minted by the bot endpoint (the 530010 body names it). */
export const BOT_PROVIDER_TYPE = 'DISCORD_BOT';

/** ID-token signing algorithms an OIDC provider may use (PROTOCOL.md §B.2); others are ignored, HS* never. */
export const OIDC_SIGNING_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
] as const;

export const ProvisionalLimits = {
  externalUserIdMaxLength: 1024,
  externalAuthTokenMaxLength: 10240,
  clientSecretMaxLength: 1024,
  displayNameMinLength: 1,
  displayNameMaxLength: 32,
  /** An ID token issued longer ago than this is refused with 530004. */
  idTokenMaxAgeMs: 7 * 24 * 60 * 60 * 1000,
} as const;

/** The only scope a provisional token carries. */
export const PROVISIONAL_SCOPE = 'sdk.social_layer';

/** Gateway dispatch to the full account once a merge moved the provisional account's data (UDOC; PROTOCOL.md §B.3). */
export const USER_MERGE_OPERATION_COMPLETED = 'USER_MERGE_OPERATION_COMPLETED';
