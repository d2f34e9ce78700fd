import { GatewayIntents, LargeThreshold, PermissionFlags, PresenceStatuses } from '@hearth/protocol';
import type { Selectable } from 'kysely';
import type { Clock } from '../../kernel/clock.js';
import type { Storage } from '../../storage/database.js';
import type { ChannelOverwritesTable, GuildMembersTable } from '../../storage/schema.js';
import { toUserObject, type User } from '../accounts/service.js';
import { toChannelObject, toGuildObject, toMemberObject, toRoleObject } from './objects.js';
import { channelPermissions, has, type MemberPermissionInput, type Overwrite } from './permissions.js';
import * as store from './snapshot-store.js';

/** Who a GUILD_CREATE is for: the session's user, intents and Identify `large_threshold`. */
export interface SnapshotViewer {
  userId: string;
  intents: number;
  largeThreshold: number;
}

/** What the gateway keeps per guild to filter events by permission without a query per event. */
export interface GuildPermissionData {
  guildId: string;
  ownerId: string;
  /** Every role of the guild (the @everyone role's id is the guild's). */
  roles: Array<{ id: string; permissions: bigint }>;
  channels: Array<{ id: string; overwrites: Overwrite[] }>;
  /** The viewer's own member. */
  member: MemberPermissionData;
}

export interface MemberPermissionData {
  userId: string;
  roles: string[];
  communicationDisabledUntil: number | null;
}

export type MemberObject = ReturnType<typeof toMemberObject<ReturnType<typeof toUserObject>>>;

export interface GuildSnapshotsDeps {
  storage: Storage;
  clock: Clock;
  /** Users by id (the accounts domain owns them). */
  users: (ids: readonly string[]) => Promise<Map<string, User>>;
  /** A user's presence as others see it (offline when invisible or gone); the social layer keeps them. */
  presenceOf?: (userId: string) => { status: string };
  /** The active threads of a guild the user can see, with their thread member (the threads domain). */
  threadsOf?: (guildId: string, userId: string) => Promise<Record<string, unknown>[]>;
}

/**
 * Reads whole guilds as the gateway sends them: the GUILD_CREATE object (gateway events, Guild Create
 * extra fields) and member objects for Request Guild Members.
 */
export class GuildSnapshots {
  readonly #deps: GuildSnapshotsDeps;

  constructor(deps: GuildSnapshotsDeps) {
    this.#deps = deps;
  }

  /** With GUILD_PRESENCES, the presences of the members sent who are not offline (gateway events, Guild Create). */
  #presences(viewer: SnapshotViewer, members: ReadonlyArray<{ user?: { id: string } }>): unknown[] {
    const presenceOf = this.#deps.presenceOf;
    if (!presenceOf || (viewer.intents & GatewayIntents.GuildPresences) === 0) return [];
    return members
      .flatMap((member) => (member.user ? [presenceOf(member.user.id)] : []))
      .filter((presence) => presence.status !== PresenceStatuses.Offline);
  }

  /**
   * The GUILD_CREATE object for a member, with the permission data the gateway caches; undefined when the
   * guild is gone or the user is no longer in it.
   */
  async guildCreatePayload(
    guildId: string,
    viewer: SnapshotViewer,
  ): Promise<{ payload: Record<string, unknown>; permissions: GuildPermissionData } | undefined> {
    const db = this.#deps.storage.db;
    const guild = await store.guildRow(db, guildId);
    if (!guild) return undefined;
    const [own] = await store.members(db, guildId, { userIds: [viewer.userId], limit: 1 });
    if (!own) return undefined;
    const [roles, channels, overwrites, voiceStates, memberCount, ownRoles] = await Promise.all([
      store.guildRoles(db, guildId),
      store.guildChannels(db, guildId),
      store.guildOverwrites(db, guildId),
      store.voiceStates(db, guildId),
      store.memberCount(db, guildId),
      store.memberRoleIds(db, guildId, [viewer.userId]),
    ]);
    const permissions = permissionData(
      guildId,
      guild.owner_id,
      roles,
      channels,
      overwrites,
      own,
      ownRoles.map((row) => row.role_id),
    );
    const input = memberInput(permissions, viewer.userId);
    const now = this.#deps.clock.now();
    const byChannel = groupOverwrites(overwrites);
    const visible = channels.filter((channel) =>
      has(
        channelPermissions(input, toOverwrites(byChannel.get(channel.id) ?? []), now),
        PermissionFlags.ViewChannel,
      ),
    );
    const threshold = clampLargeThreshold(viewer.largeThreshold);
    const large = memberCount > threshold;
    // Without GUILD_PRESENCES, or in a large guild, members are the viewer and those in voice (gateway
    // events, Guild Create): the rest come from Request Guild Members.
    const everyone = (viewer.intents & GatewayIntents.GuildPresences) !== 0 && !large;
    const memberIds = everyone
      ? undefined
      : [...new Set([viewer.userId, ...voiceStates.map((state) => state.user_id)])];
    const members = await this.#memberObjects(
      guildId,
      memberIds === undefined ? { limit: threshold } : { userIds: memberIds, limit: memberIds.length },
    );
    const roleObjects = roles.map(toRoleObject);
    return {
      payload: {
        ...toGuildObject(guild, roleObjects, []),
        joined_at: new Date(Number(own.joined_at)).toISOString(),
        large,
        unavailable: false,
        member_count: memberCount,
        voice_states: voiceStates.map((state) => ({
          channel_id: state.channel_id,
          user_id: state.user_id,
          session_id: state.session_id,
          deaf: Number(state.deaf) === 1,
          mute: Number(state.mute) === 1,
          self_deaf: Number(state.self_deaf) === 1,
          self_mute: Number(state.self_mute) === 1,
          self_stream: Number(state.self_stream) === 1,
          self_video: Number(state.self_video) === 1,
          suppress: Number(state.suppress) === 1,
          request_to_speak_timestamp:
            state.request_to_speak_timestamp === null
              ? null
              : new Date(Number(state.request_to_speak_timestamp)).toISOString(),
        })),
        members,
        channels: visible.map((channel) => toChannelObject(channel, byChannel.get(channel.id) ?? [])),
        threads: (await this.#deps.threadsOf?.(guildId, viewer.userId)) ?? [],
        presences: this.#presences(viewer, members),
        stage_instances: [],
        guild_scheduled_events: [],
        soundboard_sounds: [],
      },
      permissions,
    };
  }

  /** The permission data of one member of a guild (what the gateway caches), or undefined. */
  async permissionData(guildId: string, userId: string): Promise<GuildPermissionData | undefined> {
    const db = this.#deps.storage.db;
    const guild = await store.guildRow(db, guildId);
    if (!guild) return undefined;
    const [own] = await store.members(db, guildId, { userIds: [userId], limit: 1 });
    if (!own) return undefined;
    const [roles, channels, overwrites, ownRoles] = await Promise.all([
      store.guildRoles(db, guildId),
      store.guildChannels(db, guildId),
      store.guildOverwrites(db, guildId),
      store.memberRoleIds(db, guildId, [userId]),
    ]);
    return permissionData(
      guildId,
      guild.owner_id,
      roles,
      channels,
      overwrites,
      own,
      ownRoles.map((row) => row.role_id),
    );
  }

  /** Member objects matching a name prefix or ids, at most `limit` (0: all), for Request Guild Members. */
  async members(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<MemberObject[]> {
    return this.#memberObjects(guildId, {
      ...filter,
      limit: filter.limit === 0 ? Number.MAX_SAFE_INTEGER : filter.limit,
    });
  }

  async #memberObjects(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<MemberObject[]> {
    const db = this.#deps.storage.db;
    const rows = await store.members(db, guildId, filter);
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.user_id);
    const [users, roleRows] = await Promise.all([
      this.#deps.users(ids),
      store.memberRoleIds(db, guildId, filter.userIds === undefined && !filter.query ? undefined : ids),
    ]);
    const rolesOf = new Map<string, string[]>();
    for (const row of roleRows) {
      const list = rolesOf.get(row.user_id);
      if (list) list.push(row.role_id);
      else rolesOf.set(row.user_id, [row.role_id]);
    }
    const out: MemberObject[] = [];
    for (const row of rows) {
      const user = users.get(row.user_id);
      if (user) out.push(toMemberObject(row, rolesOf.get(row.user_id) ?? [], toUserObject(user)));
    }
    return out;
  }
}

/** Identify's `large_threshold`, within the interface's 50–250 (default 50). */
export function clampLargeThreshold(value: number): number {
  return Math.min(LargeThreshold.max, Math.max(LargeThreshold.min, value));
}

export function memberInput(data: GuildPermissionData, userId: string): MemberPermissionInput {
  const roles = new Map(data.roles.map((role) => [role.id, role.permissions]));
  const member = data.member;
  return {
    guildId: data.guildId,
    ownerId: data.ownerId,
    userId,
    everyone: roles.get(data.guildId) ?? 0n,
    roles: member.roles.flatMap((id) => {
      const permissions = roles.get(id);
      return permissions === undefined || id === data.guildId ? [] : [{ id, permissions }];
    }),
    communicationDisabledUntil: member.communicationDisabledUntil,
  };
}

export function toOverwrites(rows: ReadonlyArray<Selectable<ChannelOverwritesTable>>): Overwrite[] {
  return rows.map((row) => ({
    id: row.target_id,
    type: Number(row.type),
    allow: BigInt(row.allow),
    deny: BigInt(row.deny),
  }));
}

function groupOverwrites(rows: ReadonlyArray<Selectable<ChannelOverwritesTable>>) {
  const byChannel = new Map<string, Selectable<ChannelOverwritesTable>[]>();
  for (const row of rows) {
    const list = byChannel.get(row.channel_id);
    if (list) list.push(row);
    else byChannel.set(row.channel_id, [row]);
  }
  return byChannel;
}

function permissionData(
  guildId: string,
  ownerId: string,
  roles: ReadonlyArray<{ id: string; permissions: string }>,
  channels: ReadonlyArray<{ id: string }>,
  overwrites: ReadonlyArray<Selectable<ChannelOverwritesTable>>,
  member: Selectable<GuildMembersTable>,
  roleIds: string[],
): GuildPermissionData {
  const byChannel = groupOverwrites(overwrites);
  return {
    guildId,
    ownerId,
    roles: roles.map((role) => ({ id: role.id, permissions: BigInt(role.permissions) })),
    channels: channels.map((channel) => ({
      id: channel.id,
      overwrites: toOverwrites(byChannel.get(channel.id) ?? []),
    })),
    member: {
      userId: member.user_id,
      roles: roleIds,
      communicationDisabledUntil:
        member.communication_disabled_until === null ? null : Number(member.communication_disabled_until),
    },
  };
}
