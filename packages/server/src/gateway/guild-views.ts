import { DISPATCH_PERMISSIONS } from '@hearth/protocol';
import type { DeliveredEvent } from '../bus/bus.js';
import { basePermissions, channelPermissions, has, type Overwrite } from '../domains/guilds/permissions.js';
import {
  type GuildPermissionData,
  type MemberPermissionData,
  memberInput,
} from '../domains/guilds/snapshot.js';

/** One guild as this node's sessions see it: roles, channel overwrites, and the members with sessions here. */
interface GuildView {
  ownerId: string;
  roles: Map<string, bigint>;
  channels: Map<string, Overwrite[]>;
  members: Map<string, MemberPermissionData>;
}

/**
 * The permission data of the guilds this node's sessions are in, kept current by the guild events
 * themselves, so a dispatch is filtered by VIEW_CHANNEL / VIEW_AUDIT_LOG without a query per session.
 */
export class GuildViews {
  readonly #views = new Map<string, GuildView>();

  /** Loads (or refreshes) a member's view of a guild from a snapshot. */
  load(data: GuildPermissionData): void {
    let view = this.#views.get(data.guildId);
    if (!view) {
      view = { ownerId: data.ownerId, roles: new Map(), channels: new Map(), members: new Map() };
      this.#views.set(data.guildId, view);
    }
    view.ownerId = data.ownerId;
    view.roles = new Map(data.roles.map((role) => [role.id, role.permissions]));
    view.channels = new Map(data.channels.map((channel) => [channel.id, channel.overwrites]));
    view.members.set(data.member.userId, data.member);
  }

  has(guildId: string, userId: string): boolean {
    return this.#views.get(guildId)?.members.has(userId) ?? false;
  }

  /** Forgets a member (left, kicked, banned) or, with no user, the whole guild (deleted). */
  forget(guildId: string, userId?: string): void {
    if (userId === undefined) this.#views.delete(guildId);
    else this.#views.get(guildId)?.members.delete(userId);
  }

  /** Drops guilds no session of this node is in any more. */
  retain(guildIds: ReadonlySet<string>): void {
    for (const id of this.#views.keys()) if (!guildIds.has(id)) this.#views.delete(id);
  }

  /** Applies a guild event to the cached data, before it is fanned out. */
  apply(event: DeliveredEvent): void {
    const guildId = event.audience?.guildId;
    const view = guildId === undefined ? undefined : this.#views.get(guildId);
    if (!view) return;
    const data = event.data;
    switch (event.type) {
      case 'GUILD_UPDATE':
        if (typeof data['owner_id'] === 'string') view.ownerId = data['owner_id'];
        return;
      case 'GUILD_ROLE_CREATE':
      case 'GUILD_ROLE_UPDATE': {
        const role = data['role'] as { id?: unknown; permissions?: unknown } | undefined;
        if (typeof role?.id === 'string' && typeof role.permissions === 'string')
          view.roles.set(role.id, BigInt(role.permissions));
        return;
      }
      case 'GUILD_ROLE_DELETE':
        if (typeof data['role_id'] === 'string') {
          view.roles.delete(data['role_id']);
          for (const member of view.members.values())
            member.roles = member.roles.filter((id) => id !== data['role_id']);
        }
        return;
      case 'CHANNEL_CREATE':
      case 'CHANNEL_UPDATE':
        if (typeof data['id'] === 'string') view.channels.set(data['id'], overwritesOf(data));
        return;
      case 'CHANNEL_DELETE':
        if (typeof data['id'] === 'string') view.channels.delete(data['id']);
        return;
      case 'GUILD_MEMBER_ADD':
      case 'GUILD_MEMBER_UPDATE': {
        const userId = (data['user'] as { id?: unknown } | undefined)?.id;
        if (typeof userId !== 'string' || !view.members.has(userId)) return;
        const until = data['communication_disabled_until'];
        view.members.set(userId, {
          userId,
          roles: Array.isArray(data['roles']) ? data['roles'].filter((r) => typeof r === 'string') : [],
          communicationDisabledUntil: typeof until === 'string' ? Date.parse(until) : null,
        });
        return;
      }
      default:
        return;
    }
  }

  /**
   * Whether a member may receive this dispatch: the audience's `permission` (in `channelId` if given), or
   * the event's own requirement (DISPATCH_PERMISSIONS; CHANNEL_* in the channel it carries).
   */
  permits(event: DeliveredEvent, userId: string, now: number): boolean {
    const audience = event.audience;
    const guildId = audience?.guildId;
    if (guildId === undefined) return true;
    const explicit = audience?.permission === undefined ? undefined : BigInt(audience.permission);
    const required = explicit ?? DISPATCH_PERMISSIONS[event.type];
    if (required === undefined) return true;
    const view = this.#views.get(guildId);
    const member = view?.members.get(userId);
    if (!view || !member) return false;
    const input = memberInput(
      {
        guildId,
        ownerId: view.ownerId,
        roles: [...view.roles].map(([id, permissions]) => ({ id, permissions })),
        channels: [],
        member,
      },
      userId,
    );
    const inChannel = event.type.startsWith('CHANNEL_') && explicit === undefined;
    const channelId = audience?.channelId ?? (inChannel ? (event.data['id'] as string) : undefined);
    if (channelId === undefined) return has(basePermissions(input, now), required);
    const overwrites = inChannel ? overwritesOf(event.data) : (view.channels.get(channelId) ?? []);
    return has(channelPermissions(input, overwrites, now), required);
  }
}

function overwritesOf(channel: Record<string, unknown>): Overwrite[] {
  const list = channel['permission_overwrites'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((item: { id?: unknown; type?: unknown; allow?: unknown; deny?: unknown }) =>
    typeof item?.id === 'string' && typeof item.allow === 'string' && typeof item.deny === 'string'
      ? [{ id: item.id, type: Number(item.type), allow: BigInt(item.allow), deny: BigInt(item.deny) }]
      : [],
  );
}
