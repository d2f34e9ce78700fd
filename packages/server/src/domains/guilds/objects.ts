import { ChannelTypes, GuildLimits, VOICE_CHANNEL_TYPES } from '@hearth/protocol';
import type { Selectable } from 'kysely';
import type {
  AuditLogEntriesTable,
  ChannelOverwritesTable,
  ChannelsTable,
  GuildMembersTable,
  GuildRolesTable,
  GuildsTable,
} from '../../storage/schema.js';

/**
 * The wire shapes of the guild platform (GUILDS.md §1.4, §2.2, §3.1, §3.2), built from rows in one place
 * so REST answers and gateway events agree.
 */

const iso = (ms: number | string | null): string | null =>
  ms === null ? null : new Date(Number(ms)).toISOString();
const bool = (value: number | string): boolean => Number(value) === 1;

/** Role object; `colors` always present, the deprecated `color` equal to `colors.primary_color`. */
export function toRoleObject(row: Selectable<GuildRolesTable>) {
  const color = Number(row.color);
  return {
    id: row.id,
    name: row.name,
    color,
    colors: {
      primary_color: color,
      secondary_color: row.secondary_color === null ? null : Number(row.secondary_color),
      tertiary_color: row.tertiary_color === null ? null : Number(row.tertiary_color),
    },
    hoist: bool(row.hoist),
    icon: row.icon,
    unicode_emoji: row.unicode_emoji,
    position: Number(row.position),
    permissions: row.permissions,
    managed: bool(row.managed),
    mentionable: bool(row.mentionable),
    flags: Number(row.flags),
    ...(row.bot_id !== null || row.integration_id !== null
      ? {
          tags: {
            ...(row.bot_id !== null ? { bot_id: row.bot_id } : {}),
            ...(row.integration_id !== null ? { integration_id: row.integration_id } : {}),
          },
        }
      : {}),
  };
}

export type RoleObject = ReturnType<typeof toRoleObject>;

export function toOverwriteObject(row: Selectable<ChannelOverwritesTable>) {
  return { id: row.target_id, type: Number(row.type), allow: row.allow, deny: row.deny };
}

/** Guild channel object: the keys of its type only (text-like, voice-like, category, forum/media). */
export function toChannelObject(
  row: Selectable<ChannelsTable>,
  overwrites: ReadonlyArray<Selectable<ChannelOverwritesTable>>,
) {
  const type = Number(row.type);
  const voice = VOICE_CHANNEL_TYPES.includes(type);
  const forum = type === ChannelTypes.GuildForum || type === ChannelTypes.GuildMedia;
  const textLike = type === ChannelTypes.GuildText || type === ChannelTypes.GuildAnnouncement || forum;
  return {
    id: row.id,
    type,
    guild_id: row.guild_id,
    name: row.name,
    position: Number(row.position),
    flags: Number(row.flags),
    parent_id: row.parent_id,
    permission_overwrites: overwrites.map(toOverwriteObject),
    nsfw: bool(row.nsfw),
    ...(textLike || voice
      ? {
          last_message_id: row.last_message_id,
          rate_limit_per_user: Number(row.rate_limit_per_user),
        }
      : {}),
    ...(textLike
      ? {
          topic: row.topic,
          last_pin_timestamp: iso(row.last_pin_timestamp),
          default_auto_archive_duration:
            row.default_auto_archive_duration === null
              ? undefined
              : Number(row.default_auto_archive_duration),
          default_thread_rate_limit_per_user: Number(row.default_thread_rate_limit_per_user ?? 0),
        }
      : {}),
    ...(voice
      ? {
          bitrate: Number(row.bitrate ?? 64000),
          user_limit: Number(row.user_limit ?? 0),
          rtc_region: row.rtc_region,
          video_quality_mode: Number(row.video_quality_mode ?? 1),
        }
      : {}),
    ...(forum
      ? {
          available_tags: row.available_tags === null ? [] : (JSON.parse(row.available_tags) as unknown[]),
          default_reaction_emoji:
            row.default_reaction_emoji === null ? null : (JSON.parse(row.default_reaction_emoji) as unknown),
          default_sort_order: row.default_sort_order === null ? null : Number(row.default_sort_order),
          default_forum_layout: Number(row.default_forum_layout ?? 0),
        }
      : {}),
  };
}

export type ChannelObject = ReturnType<typeof toChannelObject>;

/** Guild member object; `user` is the caller's user object (absent where the interface omits it). */
export function toMemberObject<U>(
  row: Selectable<GuildMembersTable>,
  roleIds: readonly string[],
  user: U | undefined,
) {
  return {
    ...(user === undefined ? {} : { user }),
    nick: row.nick,
    avatar: row.avatar,
    banner: row.banner,
    roles: [...roleIds],
    joined_at: iso(row.joined_at) as string,
    premium_since: null,
    deaf: bool(row.deaf),
    mute: bool(row.mute),
    flags: Number(row.flags),
    pending: bool(row.pending),
    communication_disabled_until: iso(row.communication_disabled_until),
  };
}

/** Guild object (GUILDS.md §3.1), with its roles and emojis given by the caller. */
export function toGuildObject(
  row: Selectable<GuildsTable>,
  roles: readonly RoleObject[],
  emojis: readonly unknown[],
) {
  return {
    id: row.id,
    name: row.name,
    icon: row.icon,
    icon_hash: row.icon,
    splash: row.splash,
    discovery_splash: row.discovery_splash,
    banner: row.banner,
    description: row.description,
    home_header: null,
    owner_id: row.owner_id,
    application_id: row.application_id,
    region: 'deprecated',
    afk_channel_id: row.afk_channel_id,
    afk_timeout: Number(row.afk_timeout),
    widget_enabled: false,
    widget_channel_id: null,
    verification_level: Number(row.verification_level),
    default_message_notifications: Number(row.default_message_notifications),
    explicit_content_filter: Number(row.explicit_content_filter),
    mfa_level: Number(row.mfa_level),
    nsfw: false,
    nsfw_level: Number(row.nsfw_level),
    features: JSON.parse(row.features) as string[],
    roles: [...roles],
    emojis: [...emojis],
    stickers: [],
    system_channel_id: row.system_channel_id,
    system_channel_flags: Number(row.system_channel_flags),
    rules_channel_id: row.rules_channel_id,
    public_updates_channel_id: row.public_updates_channel_id,
    safety_alerts_channel_id: row.safety_alerts_channel_id,
    max_presences: null,
    max_members: GuildLimits.maxMembers,
    vanity_url_code: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: row.preferred_locale,
    max_video_channel_users: 25,
    max_stage_video_channel_users: 50,
    premium_progress_bar_enabled: bool(row.premium_progress_bar_enabled),
    incidents_data: null,
  };
}

export type GuildObject = ReturnType<typeof toGuildObject>;

/** Audit log entry object (GUILDS.md §8): `changes`, `options` and `reason` only when present. */
export function toAuditLogEntryObject(row: Selectable<AuditLogEntriesTable>) {
  return {
    id: row.id,
    user_id: row.user_id,
    target_id: row.target_id,
    action_type: Number(row.action_type),
    ...(row.changes === null ? {} : { changes: JSON.parse(row.changes) as unknown[] }),
    ...(row.options === null ? {} : { options: JSON.parse(row.options) as Record<string, string> }),
    ...(row.reason === null ? {} : { reason: row.reason }),
  };
}

export type AuditLogEntryObject = ReturnType<typeof toAuditLogEntryObject>;
