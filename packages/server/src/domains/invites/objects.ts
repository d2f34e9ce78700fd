import { InviteTypes } from '@hearth/protocol';
import type { Selectable } from 'kysely';
import type { ChannelsTable, GuildRolesTable, GuildsTable } from '../../storage/schema.js';
import type { Application } from '../applications/service.js';
import { toRoleObject } from '../guilds/objects.js';
import type { InviteRow } from './store.js';

/** The invite object's parts other domains own, loaded by the service. */
export interface InviteParts {
  guild: Selectable<GuildsTable>;
  channel: Selectable<ChannelsTable>;
  inviter: Record<string, unknown> | undefined;
  targetUser: Record<string, unknown> | undefined;
  targetApplication: Application | undefined;
  roles: ReadonlyArray<Selectable<GuildRolesTable>>;
}

/** What GET /invites/{code} adds with `with_counts`. */
export interface InviteCounts {
  members: number;
  presences: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The invite object (GUILDS.md §3.6, OAS `GuildInviteResponse`): guild and channel partial, roles partial
 * (seed: `id`, `name`, `position`, `color`, `colors`, `icon`, `unicode_emoji`); with `metadata` the
 * fields of the guild's own invite lists (`uses`, `max_uses`, `max_age`, `temporary`, `created_at`).
 */
export function toInviteObject(
  row: InviteRow,
  parts: InviteParts,
  options: { metadata: boolean; counts?: InviteCounts | undefined },
) {
  const { guild, channel, inviter, targetUser, targetApplication, roles } = parts;
  return {
    type: InviteTypes.Guild,
    code: row.code,
    guild: toInviteGuild(guild),
    guild_id: guild.id,
    channel: { id: channel.id, type: Number(channel.type), name: channel.name },
    ...(inviter ? { inviter } : {}),
    ...(row.target_type !== null ? { target_type: Number(row.target_type) } : {}),
    ...(targetUser ? { target_user: targetUser } : {}),
    ...(targetApplication ? { target_application: toInviteApplication(targetApplication) } : {}),
    expires_at: row.expires_at === null ? null : iso(Number(row.expires_at)),
    flags: Number(row.flags),
    ...(roles.length > 0 ? { roles: roles.map(toInviteRole) } : {}),
    ...(options.counts
      ? {
          approximate_member_count: options.counts.members,
          approximate_presence_count: options.counts.presences,
        }
      : {}),
    ...(options.metadata
      ? {
          uses: Number(row.uses),
          max_uses: Number(row.max_uses),
          max_age: Number(row.max_age),
          temporary: Number(row.temporary) === 1,
          created_at: iso(Number(row.created_at)),
        }
      : {}),
  };
}

export type InviteObject = ReturnType<typeof toInviteObject>;

/** INVITE_CREATE (DOCS gateway events: Invite Create). */
export function toInviteCreateEvent(row: InviteRow, parts: InviteParts): Record<string, unknown> {
  return {
    channel_id: row.channel_id,
    code: row.code,
    created_at: iso(Number(row.created_at)),
    guild_id: row.guild_id,
    ...(parts.inviter ? { inviter: parts.inviter } : {}),
    max_age: Number(row.max_age),
    max_uses: Number(row.max_uses),
    ...(row.target_type !== null ? { target_type: Number(row.target_type) } : {}),
    ...(parts.targetUser ? { target_user: parts.targetUser } : {}),
    ...(parts.targetApplication ? { target_application: toInviteApplication(parts.targetApplication) } : {}),
    temporary: Number(row.temporary) === 1,
    uses: Number(row.uses),
    expires_at: row.expires_at === null ? null : iso(Number(row.expires_at)),
  };
}

/** The keys an audit entry of an invite lists (GUILDS.md §8), as the wire shows them. */
export function inviteAuditView(row: InviteRow): Record<string, unknown> {
  return {
    code: row.code,
    channel_id: row.channel_id,
    inviter_id: row.inviter_id,
    uses: Number(row.uses),
    max_uses: Number(row.max_uses),
    max_age: Number(row.max_age),
    temporary: Number(row.temporary) === 1,
    flags: Number(row.flags),
  };
}

function toInviteGuild(guild: Selectable<GuildsTable>) {
  const nsfwLevel = Number(guild.nsfw_level);
  return {
    id: guild.id,
    name: guild.name,
    splash: guild.splash,
    banner: guild.banner,
    description: guild.description,
    icon: guild.icon,
    features: JSON.parse(guild.features) as string[],
    verification_level: Number(guild.verification_level),
    vanity_url_code: null,
    nsfw_level: nsfwLevel,
    nsfw: nsfwLevel === 1 || nsfwLevel === 3,
    premium_subscription_count: 0,
  };
}

function toInviteRole(row: Selectable<GuildRolesTable>) {
  const { id, name, position, color, colors, icon, unicode_emoji } = toRoleObject(row);
  return { id, name, position, color, colors, icon, unicode_emoji };
}

function toInviteApplication(application: Application) {
  return {
    id: application.id,
    name: application.name,
    icon: null,
    description: application.description,
    type: null,
    verify_key: application.verifyKey,
    flags: Number(application.flags & 0xffffffffn),
    flags_new: application.flags.toString(),
  };
}
