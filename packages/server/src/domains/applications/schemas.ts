import { MAX_REDIRECT_URIS, RpcLimits } from '@hearth/protocol';
import { Type } from 'typebox';
import { UserObject } from '../accounts/schemas.js';
import { EventWebhooksChanges, EventWebhooksFields } from '../webhooks/schemas.js';

export const RedirectUri = Type.String({ minLength: 1, maxLength: 2048 });
/** An origin allowed on the local RPC WebSocket (PROTOCOL.md §H): `scheme://host[:port]`. */
export const RpcOrigins = Type.Array(
  Type.String({ format: 'uri', minLength: 1, maxLength: RpcLimits.originMaxLength }),
  {
    maxItems: RpcLimits.originsMax,
  },
);
const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const NewApplication = Type.Object({
  name: Type.String({ minLength: 2, maxLength: 32 }),
  redirect_uris: Type.Optional(Type.Array(RedirectUri, { maxItems: MAX_REDIRECT_URIS })),
  public_client: Type.Optional(Type.Boolean()),
  owner_id: Type.Optional(Nullable(Snowflake)),
});

/** PATCH /applications/@me (SPEC ApplicationFormPartial, the fields Hearth serves). */
export const ModifyCurrentApplication = Type.Object({
  description: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  tags: Type.Optional(
    Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 20 }), { maxItems: 5, uniqueItems: true })),
  ),
  custom_install_url: Type.Optional(Nullable(Type.String({ format: 'uri', maxLength: 2048 }))),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 }))),
  rpc_origins: Type.Optional(Nullable(RpcOrigins)),
  /** Verified with a PING before it is saved (domains/interactions). */
  interactions_endpoint_url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  /** Image data URIs (SPEC: base64), or null to remove. */
  icon: Type.Optional(Nullable(Type.String())),
  cover_image: Type.Optional(Nullable(Type.String())),
  /** Checked field by field in install-settings.ts, to name the failing scope or install type. */
  install_params: Type.Optional(Type.Unknown()),
  integration_types_config: Type.Optional(Type.Unknown()),
  role_connections_verification_url: Type.Optional(Nullable(Type.String({ format: 'uri', maxLength: 2048 }))),
  /** Set in the platform's own portal; Hearth's portal sets them through this same call. */
  bot_public: Type.Optional(Type.Boolean()),
  bot_require_code_grant: Type.Optional(Type.Boolean()),
  ...EventWebhooksChanges,
});

const InstallParamsObject = Type.Object({ scopes: Type.Array(Type.String()), permissions: Type.String() });

/** What an operator may change from the CLI. */
export const AdminApplicationUpdate = Type.Object({
  redirect_uris: Type.Optional(Type.Array(RedirectUri, { maxItems: MAX_REDIRECT_URIS })),
  public_client: Type.Optional(Type.Boolean()),
  parent_application_id: Type.Optional(Nullable(Snowflake)),
  rpc_origins: Type.Optional(RpcOrigins),
  grant_flags: Type.Optional(Type.Array(Type.String())),
  revoke_flags: Type.Optional(Type.Array(Type.String())),
});

/** DOCS teams: Team Object, with its members (SPEC TeamResponse). */
export const TeamObject = Type.Object({
  id: Type.String(),
  icon: Nullable(Type.String()),
  name: Type.String(),
  owner_user_id: Type.String(),
  members: Type.Array(
    Type.Object({
      user: UserObject,
      team_id: Type.String(),
      membership_state: Type.Integer(),
      role: Type.String(),
      permissions: Type.Array(Type.String()),
    }),
  ),
});

export const ApplicationObject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  icon: Nullable(Type.String()),
  description: Type.String(),
  type: Type.Null(),
  cover_image: Type.Optional(Type.String()),
  bot: Type.Optional(UserObject),
  bot_public: Type.Boolean(),
  bot_require_code_grant: Type.Boolean(),
  custom_install_url: Type.Optional(Type.String()),
  install_params: Type.Optional(InstallParamsObject),
  integration_types_config: Type.Record(
    Type.String(),
    Type.Object({ oauth2_install_params: Type.Optional(InstallParamsObject) }),
  ),
  verify_key: Type.String(),
  flags: Type.Integer(),
  flags_new: Type.String(),
  tags: Type.Optional(Type.Array(Type.String())),
  redirect_uris: Type.Array(Type.String()),
  rpc_origins: Type.Array(Type.String()),
  interactions_endpoint_url: Nullable(Type.String()),
  role_connections_verification_url: Nullable(Type.String()),
  owner: UserObject,
  approximate_guild_count: Type.Integer(),
  approximate_user_install_count: Type.Integer(),
  approximate_user_authorization_count: Type.Integer(),
  explicit_content_filter: Type.Integer(),
  team: Nullable(TeamObject),
  eligible_oauth2_scopes: Type.Array(Type.String()),
  ...EventWebhooksFields,
});

/** GET /applications/{id}/rpc: the public fields an RPC client and the local agent read (PROTOCOL.md §H). */
export const RpcApplicationObject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  icon: Nullable(Type.String()),
  description: Type.String(),
  summary: Type.String(),
  type: Type.Null(),
  verify_key: Type.String(),
  flags: Type.Integer(),
  rpc_origins: Type.Array(Type.String()),
});

export const ApplicationParams = Type.Object({ application_id: Snowflake });
