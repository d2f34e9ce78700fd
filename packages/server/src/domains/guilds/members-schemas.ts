import { GuildLimits } from '@hearth/protocol';
import { type Static, Type } from 'typebox';

/** Requests of the member, ban and voice-state routes (GUILDS.md §3.2, §3.3, §3.5; openapi.json). */

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);
const Nick = Type.String({ maxLength: GuildLimits.nickMax });
const RoleIds = Type.Array(Snowflake, { maxItems: GuildLimits.rolesPerGuild, uniqueItems: true });

export const GuildParams = Type.Object({ guild_id: Snowflake });
export const GuildUserParams = Type.Object({ guild_id: Snowflake, user_id: Snowflake });
export const GuildUserRoleParams = Type.Object({
  guild_id: Snowflake,
  user_id: Snowflake,
  role_id: Snowflake,
});

const Limit = (max: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: max }));

export const ListMembersQuery = Type.Object({
  limit: Limit(GuildLimits.membersListMax),
  after: Type.Optional(Snowflake),
});
export type ListMembersQuery = Static<typeof ListMembersQuery>;

export const SearchMembersQuery = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 100 }),
  limit: Limit(GuildLimits.membersListMax),
});
export type SearchMembersQuery = Static<typeof SearchMembersQuery>;

export const AddGuildMember = Type.Object({
  access_token: Type.String({ maxLength: 10240 }),
  nick: Type.Optional(Nullable(Nick)),
  roles: Type.Optional(Nullable(RoleIds)),
  mute: Type.Optional(Nullable(Type.Boolean())),
  deaf: Type.Optional(Nullable(Type.Boolean())),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
});
export type AddGuildMember = Static<typeof AddGuildMember>;

export const ModifyGuildMember = Type.Object({
  nick: Type.Optional(Nullable(Nick)),
  roles: Type.Optional(Nullable(RoleIds)),
  mute: Type.Optional(Nullable(Type.Boolean())),
  deaf: Type.Optional(Nullable(Type.Boolean())),
  channel_id: Type.Optional(Nullable(Snowflake)),
  communication_disabled_until: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  flags: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
});
export type ModifyGuildMember = Static<typeof ModifyGuildMember>;

/** An image as a data URI (`data:image/png;base64,…`); about 10 MiB of base64 at most. */
const DataUri = Type.String({ maxLength: 14_000_000 });

export const ModifyCurrentMember = Type.Object({
  nick: Type.Optional(Nullable(Nick)),
  avatar: Type.Optional(Nullable(DataUri)),
  banner: Type.Optional(Nullable(DataUri)),
  bio: Type.Optional(Nullable(Type.String({ maxLength: GuildLimits.bioMax }))),
});
export type ModifyCurrentMember = Static<typeof ModifyCurrentMember>;

export const ListBansQuery = Type.Object({
  limit: Limit(GuildLimits.bansListMax),
  before: Type.Optional(Snowflake),
  after: Type.Optional(Snowflake),
});
export type ListBansQuery = Static<typeof ListBansQuery>;

const DeleteMessageSeconds = Type.Integer({ minimum: 0, maximum: GuildLimits.deleteMessageSecondsMax });
/** Deprecated days form of `delete_message_seconds` (0–7). */
const DeleteMessageDays = Type.Integer({
  minimum: 0,
  maximum: GuildLimits.deleteMessageSecondsMax / 86_400,
});

export const CreateBan = Type.Object({
  delete_message_seconds: Type.Optional(Nullable(DeleteMessageSeconds)),
  delete_message_days: Type.Optional(Nullable(DeleteMessageDays)),
});
export type CreateBan = Static<typeof CreateBan>;

export const BulkBan = Type.Object({
  user_ids: Type.Array(Snowflake, { maxItems: GuildLimits.bulkBanMax, uniqueItems: true }),
  delete_message_seconds: Type.Optional(Nullable(DeleteMessageSeconds)),
});
export type BulkBan = Static<typeof BulkBan>;

export const ModifyCurrentVoiceState = Type.Object({
  channel_id: Type.Optional(Nullable(Snowflake)),
  suppress: Type.Optional(Nullable(Type.Boolean())),
  request_to_speak_timestamp: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
});
export type ModifyCurrentVoiceState = Static<typeof ModifyCurrentVoiceState>;

export const ModifyUserVoiceState = Type.Object({
  channel_id: Type.Optional(Nullable(Snowflake)),
  suppress: Type.Optional(Nullable(Type.Boolean())),
});
export type ModifyUserVoiceState = Static<typeof ModifyUserVoiceState>;

/** Gateway op 4 (GUILDS.md §7.4). */
export const VoiceStateUpdate = Type.Object({
  guild_id: Snowflake,
  channel_id: Nullable(Snowflake),
  self_mute: Type.Boolean(),
  self_deaf: Type.Boolean(),
  self_video: Type.Optional(Type.Boolean()),
});
export type VoiceStateUpdate = Static<typeof VoiceStateUpdate>;
