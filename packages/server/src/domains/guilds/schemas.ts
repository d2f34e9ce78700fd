import { AFK_TIMEOUTS, AVAILABLE_LOCALES, GuildLimits, GuildSettingsRanges } from '@hearth/protocol';
import { type Static, Type } from 'typebox';

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const Optional = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Optional(Nullable(schema));

/** GET /users/@me/guilds query (PROTOCOL.md; SPEC `MyGuildResponse` pages). */
export const ListMyGuildsQuery = Type.Object({
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 200 })),
  with_counts: Type.Optional(Type.Boolean()),
});

export const MyGuildObject = Type.Object({
  id: Type.String(),
  name: Type.String(),
  icon: Type.Union([Type.String(), Type.Null()]),
  banner: Type.Union([Type.String(), Type.Null()]),
  owner: Type.Boolean(),
  permissions: Type.String(),
  features: Type.Array(Type.String()),
  approximate_member_count: Type.Optional(Type.Integer()),
  approximate_presence_count: Type.Optional(Type.Integer()),
});

const GuildName = Type.String({ minLength: GuildLimits.guildNameMin, maxLength: GuildLimits.guildNameMax });

/** POST /guilds and the operator CLI: a name, optionally an icon (data URI) and a banner hash. */
export const NewGuild = Type.Object({
  name: GuildName,
  icon: Optional(Type.String()),
  banner: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
});

export const GuildParams = Type.Object({ guild_id: Snowflake });
export const GetGuildQuery = Type.Object({ with_counts: Type.Optional(Type.Boolean()) });

/** PATCH /guilds/{id} (SPEC `GuildPatchRequestPartial`), plus the guild tag (GUILDS.md §3.4). */
export const ModifyGuild = Type.Object({
  name: Type.Optional(GuildName),
  description: Optional(Type.String({ maxLength: GuildLimits.guildDescriptionMax })),
  icon: Optional(Type.String()),
  banner: Optional(Type.String()),
  splash: Optional(Type.String()),
  discovery_splash: Optional(Type.String()),
  verification_level: Optional(
    Type.Integer({ minimum: 0, maximum: GuildSettingsRanges.verificationLevelMax }),
  ),
  default_message_notifications: Optional(
    Type.Integer({ minimum: 0, maximum: GuildSettingsRanges.defaultMessageNotificationsMax }),
  ),
  explicit_content_filter: Optional(
    Type.Integer({ minimum: 0, maximum: GuildSettingsRanges.explicitContentFilterMax }),
  ),
  afk_channel_id: Optional(Snowflake),
  afk_timeout: Optional(Type.Integer({ enum: [...AFK_TIMEOUTS] })),
  system_channel_id: Optional(Snowflake),
  system_channel_flags: Optional(
    Type.Integer({ minimum: 0, maximum: GuildSettingsRanges.systemChannelFlagsMask }),
  ),
  rules_channel_id: Optional(Snowflake),
  public_updates_channel_id: Optional(Snowflake),
  safety_alerts_channel_id: Optional(Snowflake),
  preferred_locale: Optional(Type.String({ enum: [...AVAILABLE_LOCALES] })),
  features: Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })),
  premium_progress_bar_enabled: Optional(Type.Boolean()),
  tag: Optional(Type.String({ minLength: GuildLimits.guildTagMin, maxLength: GuildLimits.guildTagMax })),
  badge: Optional(Type.String()),
});
export type ModifyGuild = Static<typeof ModifyGuild>;

/** Hearth's route for a member to wear a guild's tag (README: Guild tags). */
export const SetPrimaryGuild = Type.Object({
  identity_guild_id: Nullable(Snowflake),
  identity_enabled: Type.Optional(Type.Boolean()),
});

// ---- Roles (GUILDS.md §1.4; SPEC `CreateRoleRequest`, `UpdateRoleRequestPartial`) ----

const Color = Type.Integer({ minimum: 0, maximum: GuildLimits.roleColorMax });
/** Permissions as the platform's decimal string, or an integer as SPEC types it. */
const Permissions = Type.Union([Type.String({ pattern: '^[0-9]{1,20}$' }), Type.Integer({ minimum: 0 })]);

export const RoleFields = Type.Object({
  name: Optional(Type.String({ maxLength: GuildLimits.roleNameMax })),
  permissions: Optional(Permissions),
  color: Optional(Color),
  colors: Optional(
    Type.Object({
      primary_color: Optional(Color),
      secondary_color: Optional(Color),
      tertiary_color: Optional(Color),
    }),
  ),
  hoist: Optional(Type.Boolean()),
  mentionable: Optional(Type.Boolean()),
  icon: Optional(Type.String()),
  unicode_emoji: Optional(Type.String({ maxLength: GuildLimits.unicodeEmojiMax })),
});
export type RoleFields = Static<typeof RoleFields>;

export const RoleParams = Type.Object({ guild_id: Snowflake, role_id: Snowflake });

export const RolePositions = Type.Array(Type.Object({ id: Snowflake, position: Optional(Type.Integer()) }), {
  maxItems: GuildLimits.rolesPerGuild,
});
export type RolePositions = Static<typeof RolePositions>;

// ---- Audit log (GUILDS.md §8) ----

export const AuditLogQuery = Type.Object({
  user_id: Type.Optional(Snowflake),
  target_id: Type.Optional(Snowflake),
  // Bounded by its integer column: beyond it PostgreSQL refuses the query where SQLite finds nothing.
  action_type: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 })),
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: GuildLimits.auditLogMax })),
});
export type AuditLogQuery = Static<typeof AuditLogQuery>;
