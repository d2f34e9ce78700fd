import { randomInt } from 'node:crypto';
import {
  ApplicationFlags,
  AuditLogEvents,
  ChannelTypes,
  FormErrors,
  GuildFeatures,
  InviteLimits,
  InviteTargetTypes,
  PermissionFlags,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import type { Application } from '../applications/service.js';
import type { ChannelRow } from '../channels/store.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import { type AuditLog, diffChanges } from '../guilds/audit-log.js';
import { GuildEvents, outranks } from '../guilds/members.js';
import * as memberStore from '../guilds/members-store.js';
import { basePermissions, has } from '../guilds/permissions.js';
import * as guildStore from '../guilds/store.js';
import {
  type InviteCounts,
  type InviteObject,
  type InviteParts,
  inviteAuditView,
  toInviteCreateEvent,
  toInviteObject,
} from './objects.js';
import { CreateInvite, type GetInviteQuery, normalizeCreateInvite } from './schemas.js';
import type { InviteRow } from './store.js';
import * as store from './store.js';
import { InviteTargetUsers, usableInvite } from './target-users.js';
import { parseTargetUsers } from './target-users-file.js';

/** The guild members side an invite needs: joining, and leaving when a temporary membership ends. */
export interface InviteMembers {
  joinIn(
    tx: Executor,
    events: GuildEvents,
    guildId: string,
    userId: string,
    roleIds: readonly string[],
  ): Promise<boolean>;
  removeMemberIn(
    tx: Executor,
    events: GuildEvents,
    guildId: string,
    userId: string,
    user: Record<string, unknown> | undefined,
  ): Promise<boolean>;
}

export interface InvitesDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  applications: { getApplicationIn(db: Executor, id: string): Promise<Application | undefined> };
  members: InviteMembers;
  /** Whether a user has a live, visible session (approximate_presence_count); default: nobody. */
  isOnline?: (userId: string) => boolean;
}

/**
 * An invite another domain creates for its own purpose (a lobby's linked channel: single use, one hour,
 * for one user). The caller has checked who may ask for it; the rules of the invite itself are checked here.
 */
export interface InviteRequest {
  channelId: string;
  /** The user the invite is from; null for the system. */
  inviterId: string | null;
  /** Seconds, 0 = never expires; default 86400. */
  maxAge?: number | undefined;
  /** 0 = unlimited; default 0. */
  maxUses?: number | undefined;
  temporary?: boolean | undefined;
  /** false (the default): an existing invite with the same settings is answered instead of a new one. */
  unique?: boolean | undefined;
  targetType?: number | null | undefined;
  targetUserId?: string | null | undefined;
  targetApplicationId?: string | null | undefined;
  /** Roles given on joining (already checked against the inviter by the caller). */
  roleIds?: readonly string[] | undefined;
  /** Only these users may accept it. */
  targetUserIds?: readonly string[] | undefined;
  reason?: string | null | undefined;
}

/** A created (or reused) invite and the events to publish once the caller's transaction commits. */
export interface CreatedInvite {
  invite: InviteObject;
  /** False when `unique: false` answered an existing invite. */
  created: boolean;
  events: BusEvent[];
}

const P = PermissionFlags;
const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const CODE_LENGTH = 10;

/** Channel types an invite may point at (DOCS channel: Create Channel Invite; threads and categories not). */
const INVITABLE_TYPES: readonly number[] = [
  ChannelTypes.GuildText,
  ChannelTypes.GuildVoice,
  ChannelTypes.GuildAnnouncement,
  ChannelTypes.GuildStageVoice,
  ChannelTypes.GuildForum,
  ChannelTypes.GuildMedia,
];

/**
 * Guild invites (GUILDS.md §3.6): create (also for other domains), list per channel and guild, resolve,
 * revoke, accept as a user (joining through the guild members service), and the target users file.
 * Expired and used-up invites are unknown (10006) from the moment they stop being usable.
 */
export class InvitesService {
  readonly #deps: InvitesDeps;
  /** GET/PUT /invites/{code}/target-users and its job status. */
  readonly targetUsers: InviteTargetUsers;

  constructor(deps: InvitesDeps) {
    this.#deps = deps;
    this.targetUsers = new InviteTargetUsers(deps);
  }

  // ---- Create ----

  /**
   * Creates an invite inside the caller's transaction `db`, with its audit entry; the caller publishes
   * `events` once committed (or calls `createInvite`, which does both). 10003 for a channel that is not an
   * invitable guild channel, 30016 when the guild holds the maximum.
   */
  async create(db: Executor, request: InviteRequest): Promise<CreatedInvite> {
    const now = this.#deps.clock.now();
    const channel = await this.#channel(db, request.channelId);
    const maxAge = request.maxAge ?? InviteLimits.maxAgeDefault;
    const maxUses = request.maxUses ?? 0;
    const temporary = request.temporary === true ? 1 : 0;
    const targetType = request.targetType ?? null;
    const targetUserId = targetType === InviteTargetTypes.Stream ? (request.targetUserId ?? null) : null;
    const targetApplicationId =
      targetType === InviteTargetTypes.EmbeddedApplication ? (request.targetApplicationId ?? null) : null;
    // Sorted, so that `unique: false` finds the same set given in another order.
    const roleIds = JSON.stringify([...new Set(request.roleIds ?? [])].sort());
    const targetUserIds = request.targetUserIds ?? [];
    if (request.unique !== true && targetUserIds.length === 0) {
      const similar = await store.findSimilar(
        db,
        {
          channelId: channel.id,
          inviterId: request.inviterId,
          maxAge,
          maxUses,
          temporary,
          targetType,
          targetUserId,
          targetApplicationId,
          roleIds,
        },
        now,
      );
      if (similar)
        return { invite: await this.#object(db, similar, { metadata: true }), created: false, events: [] };
    }
    if ((await store.countGuildInvites(db, channel.guild_id, now)) >= InviteLimits.invitesPerGuild)
      throw new HearthError('MaximumInvites');
    const row: InviteRow = {
      code: await this.#newCode(db),
      guild_id: channel.guild_id,
      channel_id: channel.id,
      inviter_id: request.inviterId,
      max_age: maxAge,
      max_uses: maxUses,
      uses: 0,
      temporary,
      target_type: targetType,
      target_user_id: targetUserId,
      target_application_id: targetApplicationId,
      role_ids: roleIds,
      flags: 0,
      created_at: now,
      expires_at: maxAge === 0 ? null : now + maxAge * 1000,
      target_users_at: null,
      target_users_completed_at: null,
      target_users_total: 0,
    };
    await store.insertInvite(db, row);
    if (targetUserIds.length > 0) await store.replaceTargetUsers(db, row.code, targetUserIds, now);
    const audit = await this.#deps.auditLog.recordEvent(db, {
      guildId: row.guild_id,
      userId: request.inviterId,
      targetId: null,
      actionType: AuditLogEvents.InviteCreate,
      changes: diffChanges(undefined, inviteAuditView(row), Object.keys(inviteAuditView(row))),
      reason: request.reason ?? null,
    });
    const parts = await this.#parts(db, row);
    return {
      invite: toInviteObject(row, parts, { metadata: true }),
      created: true,
      events: [this.#inviteEvent('INVITE_CREATE', row, toInviteCreateEvent(row, parts)), audit],
    };
  }

  /** `create` in its own transaction, its events published once committed. */
  async createInvite(request: InviteRequest): Promise<InviteObject> {
    const created = await this.#deps.storage.transaction((tx) => this.create(tx, request));
    await this.#publish(created.events);
    return created.invite;
  }

  /**
   * POST /channels/{id}/invites (CREATE_INSTANT_INVITE; GUILDS.md §3.6). `role_ids` needs MANAGE_ROLES and
   * roles below the caller's highest; a target users file restricts who may accept.
   */
  async createChannelInvite(
    userId: string,
    channelId: string,
    input: unknown,
    options: { form: boolean; reason: string | null },
  ): Promise<InviteObject> {
    const body = parse(CreateInvite, normalizeCreateInvite(input, options.form));
    const targetUserIds =
      body.target_users_file == null ? [] : parseTargetUsers(body.target_users_file, 'target_users_file');
    const created = await this.#deps.storage.transaction(async (tx) => {
      const channel = await this.#channel(tx, channelId);
      const access = await this.#deps.access.member(tx, channel.guild_id, userId);
      await this.#requireIn(tx, access, channelId, P.CreateInstantInvite);
      const roleIds = await this.#grantableRoles(tx, access, body.role_ids ?? []);
      await this.#checkTarget(tx, body);
      return this.create(tx, {
        channelId,
        inviterId: userId,
        maxAge: body.max_age ?? undefined,
        maxUses: body.max_uses ?? undefined,
        temporary: body.temporary ?? undefined,
        unique: body.unique ?? undefined,
        targetType: body.target_type ?? null,
        targetUserId: body.target_user_id ?? null,
        targetApplicationId: body.target_application_id ?? null,
        roleIds,
        targetUserIds,
        reason: options.reason,
      });
    });
    await this.#publish(created.events);
    return created.invite;
  }

  // ---- Read ----

  /** GET /channels/{id}/invites: MANAGE_CHANNELS in the channel; the usable invites with metadata. */
  async channelInvites(userId: string, channelId: string): Promise<InviteObject[]> {
    const db = this.#deps.storage.db;
    const channel = await this.#channel(db, channelId);
    const access = await this.#deps.access.member(db, channel.guild_id, userId);
    await this.#requireIn(db, access, channelId, P.ManageChannels);
    const rows = await store.listInvites(db, { channelId }, this.#deps.clock.now());
    return Promise.all(rows.map((row) => this.#object(db, row, { metadata: true })));
  }

  /** GET /guilds/{id}/invites: MANAGE_GUILD; every usable invite of the guild with metadata. */
  async guildInvites(userId: string, guildId: string): Promise<InviteObject[]> {
    const db = this.#deps.storage.db;
    await this.#deps.access.requireGuild(db, guildId, userId, P.ManageGuild);
    const rows = await store.listInvites(db, { guildId }, this.#deps.clock.now());
    return Promise.all(rows.map((row) => this.#object(db, row, { metadata: true })));
  }

  /** GET /invites/{code}: anyone; `with_counts` adds the approximate member and presence counts. */
  async getInvite(code: string, query: GetInviteQuery): Promise<InviteObject> {
    const db = this.#deps.storage.db;
    const row = await this.#usable(db, code);
    const counts = query.with_counts === true ? await this.#counts(db, row.guild_id) : undefined;
    return this.#object(db, row, { metadata: false, counts });
  }

  // ---- Delete ----

  /** DELETE /invites/{code}: MANAGE_CHANNELS in its channel or MANAGE_GUILD; answers the invite. */
  async deleteInvite(userId: string, code: string, reason: string | null): Promise<InviteObject> {
    const events: BusEvent[] = [];
    const deleted = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#usable(tx, code);
      const access = await this.#deps.access.member(tx, row.guild_id, userId);
      const inChannel = await this.#deps.access.permissionsIn(tx, access, row.channel_id);
      if (!has(inChannel, P.ManageChannels) && !has(this.#base(access), P.ManageGuild))
        throw new HearthError('MissingPermissions');
      const invite = await this.#object(tx, row, { metadata: true });
      await store.deleteInvite(tx, code);
      events.push(this.#deleteEvent(row));
      events.push(
        await this.#deps.auditLog.recordEvent(tx, {
          guildId: row.guild_id,
          userId,
          targetId: null,
          actionType: AuditLogEvents.InviteDelete,
          changes: diffChanges(inviteAuditView(row), undefined, Object.keys(inviteAuditView(row))),
          reason,
        }),
      );
      return invite;
    });
    await this.#publish(events);
    return deleted;
  }

  // ---- Accept ----

  /**
   * POST /invites/{code} with a user session: the user joins the guild through the members service
   * (GUILD_MEMBER_ADD), gets the invite's roles, and the use is counted; a member already in the guild
   * spends no use. Unknown, expired and used-up codes, and users a target users file leaves out: 10006.
   * A banned user: 40007; a guild that paused invites (INVITES_DISABLED): 50001 to non-members. An invite whose last use this was is removed (INVITE_DELETE).
   */
  async acceptInvite(userId: string, code: string) {
    const { storage, clock, bus } = this.#deps;
    const result = await storage.transaction(async (tx) => {
      const row = await this.#usable(tx, code);
      const events = new GuildEvents(row.guild_id, bus);
      const extra: BusEvent[] = [];
      if (row.target_users_at !== null && !(await store.isTargetUser(tx, code, userId)))
        throw new HearthError('UnknownInvite');
      if (await this.#invitesPaused(tx, row.guild_id, userId)) throw new HearthError('MissingAccess');
      const roleIds = JSON.parse(row.role_ids) as string[];
      const joined = await this.#deps.members.joinIn(tx, events, row.guild_id, userId, roleIds);
      let after = row;
      if (joined) {
        if (!(await store.countUse(tx, code))) throw new HearthError('UnknownInvite');
        after = { ...row, uses: Number(row.uses) + 1 };
        if (Number(row.temporary) === 1)
          await store.recordTemporaryMember(tx, row.guild_id, userId, roleIds, clock.now());
        if (Number(after.max_uses) > 0 && Number(after.uses) >= Number(after.max_uses)) {
          await store.deleteInvite(tx, code);
          extra.push(this.#deleteEvent(after));
        }
      }
      const invite = await this.#object(tx, after, { metadata: false });
      return { invite: { ...invite, new_member: joined }, events, extra };
    });
    await result.events.publish();
    await this.#publish(result.extra);
    return result.invite;
  }

  /**
   * A user's last gateway session ended: temporary memberships end with it (DOCS invite: `temporary`),
   * except where the member was given a role since joining.
   */
  async userDisconnected(userId: string): Promise<void> {
    const { storage, bus } = this.#deps;
    const memberships = await store.temporaryMembershipsOf(storage.db, userId);
    for (const membership of memberships) {
      const events = new GuildEvents(membership.guild_id, bus);
      await storage.transaction(async (tx) => {
        await store.forgetTemporaryMember(tx, membership.guild_id, userId);
        const granted = new Set(JSON.parse(membership.role_ids) as string[]);
        const roles = (await memberStore.roleIdsOf(tx, membership.guild_id, [userId])).get(userId) ?? [];
        if (roles.some((id) => !granted.has(id))) return;
        const user = await this.#deps.users.getUserIn(tx, userId);
        await this.#deps.members.removeMemberIn(
          tx,
          events,
          membership.guild_id,
          userId,
          user && toUserObject(user),
        );
      });
      await events.publish();
    }
  }

  // ---- Steps ----

  /** INVITES_DISABLED (GUILDS.md §3.1): the guild has paused invites; only its members pass. */
  async #invitesPaused(db: Executor, guildId: string, userId: string): Promise<boolean> {
    const guild = await guildStore.findGuild(db, guildId);
    const features = JSON.parse(guild?.features ?? '[]') as string[];
    if (!features.includes(GuildFeatures.InvitesDisabled)) return false;
    return (await guildStore.findMember(db, guildId, userId)) === undefined;
  }

  #usable(db: Executor, code: string): Promise<InviteRow> {
    return usableInvite(db, code, this.#deps.clock.now());
  }

  async #channel(db: Executor, channelId: string): Promise<ChannelRow> {
    const channel = await channelStore.findChannel(db, channelId);
    if (!channel) throw new HearthError('UnknownChannel');
    if (!INVITABLE_TYPES.includes(Number(channel.type))) throw new HearthError('CannotExecuteOnChannelType');
    return channel;
  }

  /** The member's permissions in a channel; 50001 without VIEW_CHANNEL, 50013 without `bits`. */
  async #requireIn(db: Executor, access: MemberAccess, channelId: string, bits: bigint): Promise<bigint> {
    const permissions = await this.#deps.access.permissionsIn(db, access, channelId);
    if (!has(permissions, P.ViewChannel)) throw new HearthError('MissingAccess');
    if (!has(permissions, bits)) throw new HearthError('MissingPermissions');
    return permissions;
  }

  #base(access: MemberAccess): bigint {
    return basePermissions(access.input, this.#deps.clock.now());
  }

  /**
   * `role_ids` (DOCS channel: Create Channel Invite): MANAGE_ROLES, roles of the guild (10011), unmanaged
   * and below the caller's highest role (50013), as when the caller gives them to a member directly.
   */
  async #grantableRoles(db: Executor, access: MemberAccess, ids: readonly string[]): Promise<string[]> {
    const guildId = access.input.guildId;
    const wanted = [...new Set(ids)].filter((id) => id !== guildId);
    if (wanted.length === 0) return [];
    if (!has(this.#base(access), P.ManageRoles)) throw new HearthError('MissingPermissions');
    const roles = await memberStore.rolesByIds(db, guildId, wanted);
    if (roles.length !== wanted.length) throw new HearthError('UnknownRole');
    for (const role of roles) {
      if (Number(role.managed) === 1 || !outranks(access, Number(role.position)))
        throw new HearthError('MissingPermissions');
    }
    return wanted;
  }

  /** `target_type` 1 needs `target_user_id` (a known user), 2 needs `target_application_id` (EMBEDDED). */
  async #checkTarget(db: Executor, body: CreateInvite): Promise<void> {
    if (body.target_type === InviteTargetTypes.Stream) {
      if (!body.target_user_id) throw invalidForm('target_user_id', FormErrors.required());
      if (!(await this.#deps.users.getUserIn(db, body.target_user_id))) throw new HearthError('UnknownUser');
    }
    if (body.target_type === InviteTargetTypes.EmbeddedApplication) {
      const id = body.target_application_id;
      if (!id) throw invalidForm('target_application_id', FormErrors.required());
      const application = await this.#deps.applications.getApplicationIn(db, id);
      if (!application) throw new HearthError('UnknownApplication');
      if ((application.flags & ApplicationFlags.Embedded) === 0n)
        throw invalidForm('target_application_id', FormErrors.invalid());
    }
  }

  async #newCode(db: Executor): Promise<string> {
    for (;;) {
      let code = '';
      for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
      if (!(await store.codeTaken(db, code))) return code;
    }
  }

  async #parts(db: Executor, row: InviteRow): Promise<InviteParts> {
    const user = async (id: string | null) => {
      const found = id === null ? undefined : await this.#deps.users.getUserIn(db, id);
      return found && toUserObject(found);
    };
    const guild = await guildStore.findGuild(db, row.guild_id);
    const channel = await channelStore.findChannel(db, row.channel_id);
    if (!guild || !channel) throw new HearthError('UnknownInvite');
    const roleIds = JSON.parse(row.role_ids) as string[];
    return {
      guild,
      channel,
      inviter: await user(row.inviter_id),
      targetUser: await user(row.target_user_id),
      targetApplication:
        row.target_application_id === null
          ? undefined
          : await this.#deps.applications.getApplicationIn(db, row.target_application_id),
      roles:
        roleIds.length === 0
          ? []
          : (await guildStore.guildRoles(db, row.guild_id)).filter((role) => roleIds.includes(role.id)),
    };
  }

  async #object(
    db: Executor,
    row: InviteRow,
    options: { metadata: boolean; counts?: InviteCounts | undefined },
  ): Promise<InviteObject> {
    return toInviteObject(row, await this.#parts(db, row), options);
  }

  async #counts(db: Executor, guildId: string): Promise<InviteCounts> {
    const isOnline = this.#deps.isOnline;
    const ids = await guildStore.memberIds(db, guildId);
    return { members: ids.length, presences: isOnline ? ids.filter((id) => isOnline(id)).length : 0 };
  }

  /** Invite events reach members who may manage the channel (and bots with GUILD_INVITES). */
  #inviteEvent(type: string, row: InviteRow, data: Record<string, unknown>): BusEvent {
    return {
      type,
      data,
      audience: { guildId: row.guild_id, channelId: row.channel_id, permission: P.ManageChannels.toString() },
    };
  }

  #deleteEvent(row: InviteRow): BusEvent {
    return this.#inviteEvent('INVITE_DELETE', row, {
      channel_id: row.channel_id,
      guild_id: row.guild_id,
      code: row.code,
    });
  }

  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}
