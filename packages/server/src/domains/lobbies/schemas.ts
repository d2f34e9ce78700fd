import {
  Limits,
  LobbyFlags,
  LobbyLimits,
  LobbyMemberFlags,
  ModerationMetadataLimits,
} from '@hearth/protocol';
import { type Static, Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** Lobby and member metadata: string values, ≤ 25 keys, each value ≤ 1024 characters (SPEC). */
export const Metadata = Type.Record(
  Type.String(),
  Type.String({ maxLength: LobbyLimits.metadataValueMaxLength }),
  { maxProperties: LobbyLimits.metadataKeysMax },
);
export type Metadata = Static<typeof Metadata>;

const IdleTimeout = Type.Integer({
  minimum: LobbyLimits.idleTimeoutMinSeconds,
  maximum: LobbyLimits.idleTimeoutMaxSeconds,
});
/** Requests may set only the one defined flag (SPEC: `enum: [1]`). */
const LobbyFlag = Nullable(Type.Literal(LobbyFlags.RequireApplicationAuthorization));
const MemberFlag = Nullable(Type.Literal(LobbyMemberFlags.CanLinkLobby));
const AdditionalName = Type.String({
  minLength: LobbyLimits.additionalNameMinLength,
  maxLength: LobbyLimits.additionalNameMaxLength,
});
const WebhooksUrl = Type.String({ format: 'uri', maxLength: LobbyLimits.overrideWebhooksUrlMaxLength });

export const LobbyMemberRequest = Type.Object({
  id: Snowflake,
  metadata: Type.Optional(Nullable(Metadata)),
  flags: Type.Optional(MemberFlag),
});

export const CreateLobby = Type.Object({
  metadata: Type.Optional(Nullable(Metadata)),
  members: Type.Optional(
    Nullable(Type.Array(LobbyMemberRequest, { maxItems: LobbyLimits.requestMembersMax })),
  ),
  idle_timeout_seconds: Type.Optional(Nullable(IdleTimeout)),
  flags: Type.Optional(LobbyFlag),
  override_event_webhooks_url: Type.Optional(Nullable(WebhooksUrl)),
});
export type CreateLobby = Static<typeof CreateLobby>;

/** PATCH: the same fields; `members`, when given, replaces the member list. */
export const ModifyLobby = CreateLobby;
export type ModifyLobby = CreateLobby;

export const CreateOrJoinLobby = Type.Object({
  secret: Type.String({ maxLength: LobbyLimits.secretMaxLength }),
  idle_timeout_seconds: Type.Optional(Nullable(IdleTimeout)),
  lobby_metadata: Type.Optional(Nullable(Metadata)),
  member_metadata: Type.Optional(Nullable(Metadata)),
  flags: Type.Optional(LobbyFlag),
});
export type CreateOrJoinLobby = Static<typeof CreateOrJoinLobby>;

/** Add Member: `additional_name` omitted keeps it, `null` clears it. */
export const AddLobbyMember = Type.Object({
  metadata: Type.Optional(Nullable(Metadata)),
  flags: Type.Optional(MemberFlag),
  additional_name: Type.Optional(Nullable(AdditionalName)),
});
export type AddLobbyMember = Static<typeof AddLobbyMember>;

export const BulkLobbyMember = Type.Object({
  id: Snowflake,
  metadata: Type.Optional(Nullable(Metadata)),
  flags: Type.Optional(MemberFlag),
  additional_name: Type.Optional(Nullable(AdditionalName)),
  remove_member: Type.Optional(Nullable(Type.Boolean())),
});
export const BulkLobbyMembers = Type.Array(BulkLobbyMember, {
  minItems: 1,
  maxItems: Limits.lobbyMembersBulkMax,
});
export type BulkLobbyMembers = Static<typeof BulkLobbyMembers>;

/** Send Lobby Message: the SDK message fields lobbies serve (SPEC SDKMessageRequest). */
export const SendLobbyMessage = Type.Object({
  content: Type.String({ maxLength: LobbyLimits.messageContentMaxLength }),
  metadata: Type.Optional(Nullable(Metadata)),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
});
export type SendLobbyMessage = Static<typeof SendLobbyMessage>;

export const EditLobbyMessage = Type.Object({
  content: Type.String({ maxLength: LobbyLimits.messageContentMaxLength }),
});

/** Moderation metadata: a flat object of strings, ≤ 5 keys, key ≤ 1024, value ≤ 2000 (§B.4). */
export const ModerationMetadata = Type.Record(
  Type.String(),
  Type.String({ maxLength: ModerationMetadataLimits.valueMax }),
  {
    maxProperties: ModerationMetadataLimits.maxKeys,
    propertyNames: { maxLength: ModerationMetadataLimits.keyMax },
  },
);
export type ModerationMetadata = Static<typeof ModerationMetadata>;

export const LobbyParams = Type.Object({ lobby_id: Snowflake });
export const LobbyMemberParams = Type.Object({ lobby_id: Snowflake, user_id: Snowflake });
export const LobbyMessageParams = Type.Object({ lobby_id: Snowflake, message_id: Snowflake });

export const LobbyMessagesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: Limits.lobbyMessagesGetMax })),
});
