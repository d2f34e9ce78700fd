import { ExternalAuthTypes, ProvisionalLimits } from '@hearth/protocol';
import { Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });
const ExternalUserId = Type.String({ minLength: 1, maxLength: ProvisionalLimits.externalUserIdMaxLength });
const DisplayName = Type.String({
  minLength: ProvisionalLimits.displayNameMinLength,
  maxLength: ProvisionalLimits.displayNameMaxLength,
});
const AuthType = Type.Union(Object.values(ExternalAuthTypes).map((value) => Type.Literal(value)));
const AuthToken = Type.String({ minLength: 1, maxLength: ProvisionalLimits.externalAuthTokenMaxLength });
const ClientSecret = Type.String({ maxLength: ProvisionalLimits.clientSecretMaxLength });

/** POST /partner-sdk/token/bot (PROTOCOL.md §B.2). */
export const BotTokenRequest = Type.Object({
  external_user_id: ExternalUserId,
  preferred_global_name: Type.Optional(Type.Union([DisplayName, Type.Null()])),
  provisional_user_id: Type.Optional(Type.Union([Snowflake, Type.Null()])),
});

/** POST /partner-sdk/token and POST /partner-sdk/provisional-accounts/unmerge. */
export const ExternalTokenRequest = Type.Object({
  client_id: Snowflake,
  client_secret: Type.Optional(ClientSecret),
  external_auth_type: AuthType,
  external_auth_token: AuthToken,
});

export const BotUnmergeRequest = Type.Object({ external_user_id: ExternalUserId });

/** SPEC ProvisionalTokenResponse. */
export const ProvisionalTokenResponse = Type.Object({
  token_type: Type.Literal('Bearer'),
  access_token: Type.String(),
  expires_in: Type.Integer(),
  scope: Type.String(),
  id_token: Type.String(),
  refresh_token: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  scopes: Type.Optional(Type.Array(Type.String())),
  expires_at_s: Type.Optional(Type.Integer()),
});

/** PATCH /users/@me/account: the display name of a provisional account (UpdateProvisionalAccountDisplayName). */
export const ModifyCurrentUserAccount = Type.Object({ global_name: Type.Union([DisplayName, Type.Null()]) });

const ProviderType = Type.Union(
  Object.values(ExternalAuthTypes)
    .filter((value) => value !== ExternalAuthTypes.DiscordBotIssuedAccessToken)
    .map((value) => Type.Literal(value)),
);
const ProviderUrl = Type.String({ minLength: 1, maxLength: 2048 });
const ProviderClientId = Type.String({ minLength: 1, maxLength: 1024 });

/** POST /applications/{application.id}/identity-providers. */
export const NewIdentityProvider = Type.Object({
  type: ProviderType,
  issuer: Type.Optional(ProviderUrl),
  client_id: Type.Optional(ProviderClientId),
  verification_url: Type.Optional(ProviderUrl),
});

/** PATCH /applications/{application.id}/identity-providers/{provider.id}: an edit re-validates. */
export const ModifyIdentityProvider = Type.Object({
  issuer: Type.Optional(ProviderUrl),
  client_id: Type.Optional(ProviderClientId),
  verification_url: Type.Optional(ProviderUrl),
});

export const IdentityProviderObject = Type.Object({
  id: Type.String(),
  application_id: Type.String(),
  type: Type.String(),
  issuer: Type.Union([Type.String(), Type.Null()]),
  client_id: Type.Union([Type.String(), Type.Null()]),
  jwks_uri: Type.Union([Type.String(), Type.Null()]),
  id_token_signing_alg_values: Type.Array(Type.String()),
  verification_url: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** PUT /admin/users/{user.id}/ban. */
export const BanRequest = Type.Object({
  /** Seconds the ban lasts; absent or null: permanent. */
  duration_seconds: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 315_360_000 }), Type.Null()]),
  ),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: 512 }), Type.Null()])),
});
