import { ChildTokenLimits } from '@hearth/protocol';
import { Type } from 'typebox';

/** POST /oauth2/authorize body: the player's answer on the consent screen. */
export const AuthorizeDecision = Type.Object({
  authorize: Type.Boolean(),
});

export const AuthorizeLocation = Type.Object({ location: Type.String() });

/** POST /partner-sdk/child-token (PROTOCOL.md §B.3). */
export const ChildTokenRequest = Type.Object({
  parent_access_token: Type.String({ minLength: 1, maxLength: ChildTokenLimits.parentAccessTokenMaxLength }),
  child_application_id: Type.String({ format: 'snowflake' }),
  parent_client_secret: Type.Optional(
    Type.String({ minLength: 1, maxLength: ChildTokenLimits.parentClientSecretMaxLength }),
  ),
});

export const TokenResponseObject = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.Optional(Type.String()),
  scope: Type.String(),
  id_token: Type.Optional(Type.String()),
});

export const UserInfoObject = Type.Object({
  sub: Type.String(),
  email: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  email_verified: Type.Optional(Type.Boolean()),
  preferred_username: Type.Optional(Type.String()),
  nickname: Type.Optional(Type.String()),
  picture: Type.Optional(Type.String()),
  locale: Type.Optional(Type.String()),
});

/**
 * POST /users/@me/authorize-requests: an entry point inside the platform client asks a game to authorize
 * the player (seed, Events: AUTHORIZE_REQUEST). `scopes` is space-separated; absent, the SDK's default.
 */
export const AuthorizeRequestBody = Type.Object({
  application_id: Type.String({ format: 'snowflake' }),
  scopes: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
});
