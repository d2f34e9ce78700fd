import { createHash } from 'node:crypto';
import {
  ApplicationFlags,
  AuditLogEvents,
  EDITABLE_GUILD_MEMBER_FLAGS,
  FormErrors,
  GuildLimits,
  PermissionFlags,
  Scopes,
  VOICE_CHANNEL_TYPES,
} from '@hearth/protocol';
import type { Updateable } from 'kysely';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildMembersTable } from '../../storage/schema.js';
import { type AccountsService, toUserObject } from '../accounts/service.js';
import type { GuildAccess, MemberAccess } from './access.js';
import { type AuditLog, type AuditLogEntryInput, diffChanges } from './audit-log.js';
import type {
  AddGuildMember,
  ListMembersQuery,
  ModifyCurrentMember,
  ModifyGuildMember,
  SearchMembersQuery,
} from './members-schemas.js';
import type { MemberRow } from './members-store.js';
import * as store from './members-store.js';
import { toMemberObject } from './objects.js';
import { basePermissions, has } from './permissions.js';
import * as guildStore from './store.js';
import { type VoiceChannelOccupancy, voiceChannelsChanged } from './voice-occupancy.js';
import { toVoiceStateObject } from './voice-states-objects.js';
import * as voiceStore from './voice-states-store.js';

const P = PermissionFlags;

/** Who acts on a guild: a user's session or a bot (its application named). */
export interface GuildCaller {
  userId: string;
  /** The bot's application; absent for a user. */
  applicationId?: string | undefined;
}

/** The OAuth2 side Add Guild Member needs: who granted an access token, to which application, with what. */
export interface AccessTokens {
  authenticateAccessToken(
    token: string,
  ): Promise<{ userId: string; applicationId: string; scopes: readonly string[] } | undefined>;
}

/** The application flags List Guild Members reads (the GUILD_MEMBERS privileged intent). */
export interface ApplicationFlagsSource {
  flagsOf(applicationId: string): Promise<bigint | undefined>;
}

export interface GuildModerationDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  accounts: AccountsService;
  access: GuildAccess;
  auditLog: AuditLog;
  /** Told of every change of who is in which voice channel (voice start time, PROTOCOL.md §D.7). */
  voiceChannels?: VoiceChannelOccupancy;
}

export type MemberObject = ReturnType<typeof toMemberObject<ReturnType<typeof toUserObject>>>;

/** A change's events, published once its transaction has committed (STYLE 3). */
export class GuildEvents {
  readonly #events: BusEvent[] = [];

  constructor(
    readonly guildId: string,
    readonly bus: Bus,
  ) {}

  push(type: string, data: Record<string, unknown>): void {
    this.#events.push({ type, data, audience: { guildId: this.guildId } });
  }

  /** Queues events made elsewhere, with their own audience. */
  queue(events: readonly BusEvent[]): void {
    this.#events.push(...events);
  }

  async publish(): Promise<void> {
    for (const event of this.#events) await this.bus.publish(event);
  }
}

/** Records an audit entry in the change's transaction and queues its GUILD_AUDIT_LOG_ENTRY_CREATE. */
export async function audit(
  auditLog: AuditLog,
  tx: Executor,
  events: GuildEvents,
  entry: AuditLogEntryInput,
): Promise<void> {
  const id = await auditLog.record(tx, entry);
  events.push('GUILD_AUDIT_LOG_ENTRY_CREATE', {
    id,
    guild_id: entry.guildId,
    user_id: entry.userId,
    target_id: entry.targetId,
    action_type: entry.actionType,
    ...(entry.changes && entry.changes.length > 0 ? { changes: entry.changes } : {}),
    ...(entry.options ? { options: entry.options } : {}),
    ...(entry.reason ? { reason: entry.reason } : {}),
  });
}

/** Whether `actor` ranks above a target at `position` (GUILDS.md §1.3); the owner ranks above everyone. */
export function outranks(actor: MemberAccess, position: number): boolean {
  return actor.isOwner || actor.highestPosition > position;
}

/**
 * Told inside a transaction, before a member's roles change; what it answers is called after the change in
 * the same transaction and answers events to publish once committed (the threads domain: THREAD_LIST_SYNC
 * for the channels the member can see now and could not before).
 */
export type RolesChanging = (
  tx: Executor,
  guildId: string,
  userId: string,
) => Promise<(tx: Executor) => Promise<BusEvent[]>>;

export type MembersDeps = GuildModerationDeps & {
  tokens: AccessTokens;
  applications: ApplicationFlagsSource;
  rolesChanging?: RolesChanging;
};

/**
 * Guild members (GUILDS.md §3.2): the member object, listing and search, Add Guild Member with a
 * `guilds.join` token, modify (nick, roles, voice, timeout, flags), roles one by one, kick.
 */
export class MembersService {
  readonly #deps: MembersDeps;

  constructor(deps: MembersDeps) {
    this.#deps = deps;
  }

  // ---- Member objects (also for the gateway: GUILD_CREATE, Request Guild Members) ----

  /** Member objects with their users and roles, in the order of `rows`; users that vanished are skipped. */
  async objects(db: Executor, guildId: string, rows: readonly MemberRow[]): Promise<MemberObject[]> {
    const ids = rows.map((row) => row.user_id);
    const roles = await store.roleIdsOf(db, guildId, ids);
    const users = await Promise.all(ids.map((id) => this.#deps.accounts.getUserIn(db, id)));
    const out: MemberObject[] = [];
    rows.forEach((row, i) => {
      const user = users[i];
      if (user) out.push(toMemberObject(row, roles.get(row.user_id) ?? [], toUserObject(user)));
    });
    return out;
  }

  /** One member object; 10007 for a user who is not a member, 10013 for an unknown user. */
  async memberObject(guildId: string, userId: string, db: Executor = this.#deps.storage.db) {
    const row = await this.#target(db, guildId, userId);
    const [object] = await this.objects(db, guildId, [row]);
    if (!object) throw new HearthError('UnknownUser');
    return object;
  }

  /** Members in user id order after `after` (the gateway's GUILD_CREATE and chunks page with this). */
  async membersOf(guildId: string, page: { limit: number; after?: string | undefined }) {
    const { db } = this.#deps.storage;
    return this.objects(db, guildId, await store.listMembers(db, guildId, page));
  }

  /** Request Guild Members (op 8): a username/nick prefix or user ids, at most `limit` (0: all). */
  async findMembers(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<MemberObject[]> {
    const { db } = this.#deps.storage;
    const rows = await store.findMembers(db, guildId, {
      query: filter.query,
      userIds: filter.userIds,
      limit: filter.limit === 0 ? 1_000_000 : filter.limit,
    });
    return this.objects(db, guildId, rows);
  }

  // ---- Routes ----

  /** GET /guilds/{id}/members/{user_id}: any member may read another. */
  async getMember(caller: GuildCaller, guildId: string, userId: string): Promise<MemberObject> {
    const { db } = this.#deps.storage;
    await this.#deps.access.member(db, guildId, caller.userId);
    return this.memberObject(guildId, userId);
  }

  /** GET /users/@me/guilds/{id}/member: the caller's own member; 10004 when they are not in the guild. */
  async currentMember(userId: string, guildId: string): Promise<MemberObject> {
    const { db } = this.#deps.storage;
    const row = await store.findMember(db, guildId, userId);
    if (!row) throw new HearthError('UnknownGuild');
    return this.memberObject(guildId, userId);
  }

  /** GET /guilds/{id}/members: bots only with the GUILD_MEMBERS intent enabled (else 50001, as the platform). */
  async listMembers(caller: GuildCaller, guildId: string, query: ListMembersQuery): Promise<MemberObject[]> {
    const { db } = this.#deps.storage;
    await this.#deps.access.member(db, guildId, caller.userId);
    if (caller.applicationId !== undefined) {
      const flags = (await this.#deps.applications.flagsOf(caller.applicationId)) ?? 0n;
      const intent = ApplicationFlags.GatewayGuildMembers | ApplicationFlags.GatewayGuildMembersLimited;
      if ((flags & intent) === 0n) throw new HearthError('MissingAccess');
    }
    return this.membersOf(guildId, {
      limit: query.limit ?? GuildLimits.membersListDefault,
      after: query.after,
    });
  }

  /** GET /guilds/{id}/members/search: username or nick prefix, case-insensitive. */
  async searchMembers(caller: GuildCaller, guildId: string, query: SearchMembersQuery) {
    const { db } = this.#deps.storage;
    await this.#deps.access.member(db, guildId, caller.userId);
    const rows = await store.findMembers(db, guildId, {
      query: query.query,
      limit: query.limit ?? GuildLimits.membersListDefault,
    });
    return this.objects(db, guildId, rows);
  }

  /**
   * PUT /guilds/{id}/members/{user_id}: the bot adds a user who granted its application `guilds.join`.
   * Answers the new member, or null when the user already was one (204).
   */
  async addMember(
    caller: GuildCaller,
    guildId: string,
    userId: string,
    input: AddGuildMember,
  ): Promise<MemberObject | null> {
    const grant = await this.#deps.tokens.authenticateAccessToken(input.access_token);
    if (!grant || grant.applicationId !== caller.applicationId || grant.userId !== userId)
      throw new HearthError('InvalidOAuth2AccessToken');
    if (!grant.scopes.includes(Scopes.GuildsJoin)) throw new HearthError('MissingOAuth2Scope');
    const { storage, clock, bus } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const added = await storage.transaction(async (tx) => {
      const actor = await this.#deps.access.member(tx, guildId, caller.userId);
      const permissions = basePermissions(actor.input, clock.now());
      const needed =
        P.CreateInstantInvite |
        (input.nick != null ? P.ManageNicknames : 0n) |
        (input.roles?.length ? P.ManageRoles : 0n) |
        (input.mute != null ? P.MuteMembers : 0n) |
        (input.deaf != null ? P.DeafenMembers : 0n);
      if (!has(permissions, needed)) throw new HearthError('MissingPermissions');
      if (await store.isBanned(tx, guildId, userId)) throw new HearthError('BannedFromGuild');
      if (await store.findMember(tx, guildId, userId)) return false;
      if ((await store.countUserGuilds(tx, userId)) >= GuildLimits.guildsPerUser)
        throw new HearthError('MaximumGuilds');
      const roles = await this.#grantableRoles(tx, guildId, actor, input.roles ?? []);
      await store.insertMember(tx, {
        guild_id: guildId,
        user_id: userId,
        joined_at: clock.now(),
        nick: input.nick || null,
        avatar: null,
        banner: null,
        bio: null,
        mute: input.mute ? 1 : 0,
        deaf: input.deaf ? 1 : 0,
        flags: (input.flags ?? 0) & EDITABLE_GUILD_MEMBER_FLAGS,
        communication_disabled_until: null,
      });
      await store.addMemberRoles(tx, guildId, userId, roles);
      return true;
    });
    if (!added) return null;
    const member = await this.memberObject(guildId, userId);
    events.push('GUILD_MEMBER_ADD', { ...member, guild_id: guildId });
    await events.publish();
    return member;
  }

  /**
   * A user joins on their own (an invite): inside the caller's transaction, with `roleIds` (already checked
   * by the caller) given; queues GUILD_MEMBER_ADD. Answers false when the user already is a member.
   * 40007 when the guild banned them, 30001 when they are in too many guilds.
   */
  async joinIn(
    tx: Executor,
    events: GuildEvents,
    guildId: string,
    userId: string,
    roleIds: readonly string[],
  ): Promise<boolean> {
    if (await store.isBanned(tx, guildId, userId)) throw new HearthError('BannedFromGuild');
    if (await store.findMember(tx, guildId, userId)) return false;
    if ((await store.countUserGuilds(tx, userId)) >= GuildLimits.guildsPerUser)
      throw new HearthError('MaximumGuilds');
    await store.insertMember(tx, {
      guild_id: guildId,
      user_id: userId,
      joined_at: this.#deps.clock.now(),
      nick: null,
      avatar: null,
      banner: null,
      bio: null,
      mute: 0,
      deaf: 0,
      flags: 0,
      communication_disabled_until: null,
    });
    const known = (await store.rolesByIds(tx, guildId, roleIds)).map((role) => role.id);
    await store.addMemberRoles(tx, guildId, userId, known);
    const member = await this.memberObject(guildId, userId, tx);
    events.push('GUILD_MEMBER_ADD', { ...member, guild_id: guildId });
    return true;
  }

  /** PATCH /guilds/{id}/members/{user_id} (GUILDS.md §3.2): each field with its own permission. */
  async modifyMember(
    caller: GuildCaller,
    guildId: string,
    userId: string,
    input: ModifyGuildMember,
    reason: string | null,
  ): Promise<MemberObject> {
    const { storage, clock, bus, access } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const now = clock.now();
    let occupancy: BusEvent[] = [];
    const voiceChanged = await storage.transaction(async (tx) => {
      const actor = await access.member(tx, guildId, caller.userId);
      const permissions = basePermissions(actor.input, now);
      const row = await this.#target(tx, guildId, userId);
      const target = await access.member(tx, guildId, userId);
      const self = caller.userId === userId;
      const require = (bits: bigint) => {
        if (!has(permissions, bits)) throw new HearthError('MissingPermissions');
      };
      const requireOutranks = () => {
        if (!outranks(actor, target.highestPosition)) throw new HearthError('MissingPermissions');
      };
      const patch: Updateable<GuildMembersTable> = {};

      if (input.nick !== undefined) {
        if (self && has(permissions, P.ChangeNickname)) {
          // One's own nick needs CHANGE_NICKNAME only (GUILDS.md §1, bit 26).
        } else {
          require(P.ManageNicknames);
          if (!self) requireOutranks();
        }
        patch.nick = input.nick || null;
      }
      if (input.communication_disabled_until !== undefined) {
        require(P.ModerateMembers);
        const until = input.communication_disabled_until;
        const ms = until === null ? null : Date.parse(until);
        if (ms !== null && ms > now + GuildLimits.timeoutMaxMs)
          throw invalidForm('communication_disabled_until', FormErrors.invalid());
        // Owner and ADMINISTRATOR holders cannot be timed out (GUILDS.md §3.2: 403).
        const targetBase = basePermissions({ ...target.input, communicationDisabledUntil: null }, now);
        if (ms !== null && (target.isOwner || has(targetBase, P.Administrator)))
          throw new HearthError('MissingPermissions');
        if (self || !outranks(actor, target.highestPosition)) throw new HearthError('MissingPermissions');
        patch.communication_disabled_until = ms;
      }
      if (input.flags !== undefined) {
        const canEditFlags =
          has(permissions, P.ManageGuild) ||
          has(permissions, P.ManageRoles) ||
          has(permissions, P.ModerateMembers | P.KickMembers | P.BanMembers);
        if (!canEditFlags) throw new HearthError('MissingPermissions');
        const editable = EDITABLE_GUILD_MEMBER_FLAGS;
        patch.flags = (Number(row.flags) & ~editable) | ((input.flags ?? 0) & editable);
      }
      let voice = await voiceStore.findVoiceState(tx, guildId, userId);
      if (input.mute !== undefined) {
        require(P.MuteMembers);
        if (!voice) throw new HearthError('TargetUserNotConnectedToVoice');
        patch.mute = input.mute ? 1 : 0;
      }
      if (input.deaf !== undefined) {
        require(P.DeafenMembers);
        if (!voice) throw new HearthError('TargetUserNotConnectedToVoice');
        patch.deaf = input.deaf ? 1 : 0;
      }

      let rolesChange: { added: string[]; removed: string[] } | undefined;
      if (input.roles !== undefined) {
        require(P.ManageRoles);
        if (!self) requireOutranks();
        rolesChange = await this.#replaceRoles(tx, guildId, userId, actor, input.roles ?? []);
      }

      await store.updateMember(tx, guildId, userId, patch);
      const after = { ...row, ...patch };
      const changes = diffChanges(memberAuditView(row), memberAuditView(after), [
        'nick',
        'communication_disabled_until',
        'mute',
        'deaf',
        'flags',
      ]);
      if (changes.length > 0) {
        await audit(this.#deps.auditLog, tx, events, {
          guildId,
          userId: caller.userId,
          targetId: userId,
          actionType: AuditLogEvents.MemberUpdate,
          changes,
          reason,
        });
      }
      if (rolesChange)
        await this.#auditRoles(tx, events, guildId, caller.userId, userId, rolesChange, reason);

      let disconnected: voiceStore.VoiceStateRow | undefined;
      const channelBefore = voice?.channel_id;
      if (voice && (patch.mute !== undefined || patch.deaf !== undefined)) {
        await voiceStore.updateVoiceState(tx, guildId, userId, {
          ...(patch.mute !== undefined ? { mute: patch.mute } : {}),
          ...(patch.deaf !== undefined ? { deaf: patch.deaf } : {}),
        });
      }
      if (input.channel_id !== undefined) {
        require(P.MoveMembers);
        if (!voice) throw new HearthError('TargetUserNotConnectedToVoice');
        if (input.channel_id === null) {
          await voiceStore.deleteVoiceState(tx, guildId, userId);
          disconnected = voice;
          await audit(this.#deps.auditLog, tx, events, {
            guildId,
            userId: caller.userId,
            targetId: null,
            actionType: AuditLogEvents.MemberDisconnect,
            options: { count: '1' },
            reason,
          });
        } else if (input.channel_id !== voice.channel_id) {
          await this.#requireVoiceChannel(tx, guildId, input.channel_id, actor);
          await voiceStore.updateVoiceState(tx, guildId, userId, { channel_id: input.channel_id });
          await audit(this.#deps.auditLog, tx, events, {
            guildId,
            userId: caller.userId,
            targetId: null,
            actionType: AuditLogEvents.MemberMove,
            options: { channel_id: input.channel_id, count: '1' },
            reason,
          });
        }
      }
      voice = disconnected ?? (await voiceStore.findVoiceState(tx, guildId, userId));
      const channelAfter = disconnected ? null : voice?.channel_id;
      if (channelBefore !== channelAfter) {
        occupancy = await voiceChannelsChanged(tx, this.#deps.voiceChannels, guildId, [
          channelBefore,
          channelAfter,
        ]);
      }
      const voiceTouched =
        input.channel_id !== undefined || input.mute !== undefined || input.deaf !== undefined;
      return voiceTouched && voice ? { row: voice, gone: disconnected !== undefined } : undefined;
    });
    const member = await this.memberObject(guildId, userId);
    events.push('GUILD_MEMBER_UPDATE', { guild_id: guildId, ...member });
    if (voiceChanged) {
      const { row, gone } = voiceChanged;
      events.push('VOICE_STATE_UPDATE', toVoiceStateObject(row, member, gone ? null : row.channel_id));
    }
    events.queue(occupancy);
    await events.publish();
    return member;
  }

  /** PATCH /guilds/{id}/members/@me: nick (CHANGE_NICKNAME); avatar, banner and bio (seed: bots may set them). */
  async modifyCurrentMember(
    caller: GuildCaller,
    guildId: string,
    input: ModifyCurrentMember,
    reason: string | null,
  ): Promise<MemberObject> {
    const { storage, clock, bus, access } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const patch: Updateable<GuildMembersTable> = {};
    if (input.avatar !== undefined)
      patch.avatar = input.avatar === null ? null : imageHash('avatar', input.avatar);
    if (input.banner !== undefined)
      patch.banner = input.banner === null ? null : imageHash('banner', input.banner);
    if (input.bio !== undefined) patch.bio = input.bio || null;
    await storage.transaction(async (tx) => {
      const actor = await access.member(tx, guildId, caller.userId);
      const row = await this.#target(tx, guildId, caller.userId);
      if (input.nick !== undefined) {
        const permissions = basePermissions(actor.input, clock.now());
        if (!has(permissions, P.ChangeNickname) && !has(permissions, P.ManageNicknames))
          throw new HearthError('MissingPermissions');
        patch.nick = input.nick || null;
      }
      await store.updateMember(tx, guildId, caller.userId, patch);
      const changes = diffChanges(memberAuditView(row), memberAuditView({ ...row, ...patch }), [
        'nick',
        'avatar_hash',
        'banner_hash',
      ]);
      if (changes.length > 0) {
        await audit(this.#deps.auditLog, tx, events, {
          guildId,
          userId: caller.userId,
          targetId: caller.userId,
          actionType: AuditLogEvents.MemberUpdate,
          changes,
          reason,
        });
      }
    });
    const member = await this.memberObject(guildId, caller.userId);
    events.push('GUILD_MEMBER_UPDATE', { guild_id: guildId, ...member });
    await events.publish();
    return member;
  }

  /** PUT /guilds/{id}/members/{user_id}/roles/{role_id} and DELETE: MANAGE_ROLES, below the actor's highest. */
  async changeRole(
    caller: GuildCaller,
    guildId: string,
    userId: string,
    roleId: string,
    add: boolean,
    reason: string | null,
  ): Promise<void> {
    const { storage, bus, access, clock } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const synced: BusEvent[] = [];
    const changed = await storage.transaction(async (tx) => {
      const actor = await access.member(tx, guildId, caller.userId);
      if (!has(basePermissions(actor.input, clock.now()), P.ManageRoles))
        throw new HearthError('MissingPermissions');
      await this.#target(tx, guildId, userId);
      const [role] = await store.rolesByIds(tx, guildId, [roleId]);
      if (!role || role.id === guildId) throw new HearthError('UnknownRole');
      if (Number(role.managed) === 1 || !outranks(actor, Number(role.position)))
        throw new HearthError('MissingPermissions');
      const current = (await store.roleIdsOf(tx, guildId, [userId])).get(userId) ?? [];
      if (current.includes(roleId) === add) return false;
      const rolesChanged = await this.#deps.rolesChanging?.(tx, guildId, userId);
      if (add) await store.addMemberRoles(tx, guildId, userId, [roleId]);
      else await store.removeMemberRoles(tx, guildId, userId, [roleId]);
      if (rolesChanged) synced.push(...(await rolesChanged(tx)));
      const change = add ? { added: [roleId], removed: [] } : { added: [], removed: [roleId] };
      await this.#auditRoles(tx, events, guildId, caller.userId, userId, change, reason);
      return true;
    });
    if (!changed) return;
    const member = await this.memberObject(guildId, userId);
    events.push('GUILD_MEMBER_UPDATE', { guild_id: guildId, ...member });
    await events.publish();
    for (const event of synced) await bus.publish(event);
  }

  /** DELETE /guilds/{id}/members/{user_id}: KICK_MEMBERS, a target below the actor, never the owner. */
  async kick(caller: GuildCaller, guildId: string, userId: string, reason: string | null): Promise<void> {
    const { storage, bus, access, clock } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const user = await this.#deps.accounts.getUser(userId);
    await storage.transaction(async (tx) => {
      const actor = await access.member(tx, guildId, caller.userId);
      if (!has(basePermissions(actor.input, clock.now()), P.KickMembers))
        throw new HearthError('MissingPermissions');
      await this.#target(tx, guildId, userId);
      const target = await access.member(tx, guildId, userId);
      if (target.isOwner || !outranks(actor, target.highestPosition))
        throw new HearthError('MissingPermissions');
      await this.removeMemberIn(tx, events, guildId, userId, user && toUserObject(user));
      await audit(this.#deps.auditLog, tx, events, {
        guildId,
        userId: caller.userId,
        targetId: userId,
        actionType: AuditLogEvents.MemberKick,
        reason,
      });
    });
    await events.publish();
  }

  /**
   * AutoMod's TIMEOUT action (DOCS auto-moderation: Action Types): times a member out with no acting
   * member, inside the caller's transaction, never shortening a longer timeout; answers the
   * GUILD_MEMBER_UPDATE to publish once committed, or undefined when the user is not a member.
   */
  async timeoutBySystem(
    tx: Executor,
    guildId: string,
    userId: string,
    until: number,
  ): Promise<BusEvent | undefined> {
    const row = await store.findMember(tx, guildId, userId);
    if (!row) return undefined;
    const current = row.communication_disabled_until === null ? 0 : Number(row.communication_disabled_until);
    await store.updateMember(tx, guildId, userId, { communication_disabled_until: Math.max(current, until) });
    const member = await this.memberObject(guildId, userId, tx);
    return { type: 'GUILD_MEMBER_UPDATE', data: { guild_id: guildId, ...member }, audience: { guildId } };
  }

  /** DELETE /users/@me/guilds/{id}: 10004 for a guild the user is not in; the owner cannot leave (50055). */
  async leave(userId: string, guildId: string): Promise<void> {
    const events = new GuildEvents(guildId, this.#deps.bus);
    const user = await this.#deps.accounts.getUser(userId);
    await this.#deps.storage.transaction(async (tx) => {
      const guild = await guildStore.findGuild(tx, guildId);
      if (!guild || !(await store.findMember(tx, guildId, userId))) throw new HearthError('UnknownGuild');
      if (guild.owner_id === userId) throw new HearthError('InvalidGuild');
      await this.removeMemberIn(tx, events, guildId, userId, user && toUserObject(user));
    });
    await events.publish();
  }

  /**
   * Removes a member inside a transaction (kick, ban, leave): their roles, voice state and guild tag go; queues
   * GUILD_MEMBER_REMOVE, and VOICE_STATE_UPDATE with no channel when they were in voice.
   */
  async removeMemberIn(
    tx: Executor,
    events: GuildEvents,
    guildId: string,
    userId: string,
    user: Record<string, unknown> | undefined,
  ): Promise<boolean> {
    const row = await store.findMember(tx, guildId, userId);
    if (!row) return false;
    const voice = await voiceStore.findVoiceState(tx, guildId, userId);
    await store.deleteMember(tx, guildId, userId);
    await guildStore.clearPrimaryGuild(tx, guildId, userId);
    if (voice) {
      events.push('VOICE_STATE_UPDATE', toVoiceStateObject(voice, undefined, null));
      events.queue(await voiceChannelsChanged(tx, this.#deps.voiceChannels, guildId, [voice.channel_id]));
    }
    events.push('GUILD_MEMBER_REMOVE', { guild_id: guildId, user: user ?? { id: userId } });
    return true;
  }

  // ---- Steps ----

  /** The target member's row; 10007 when the user exists but is not a member, 10013 when unknown. */
  async #target(db: Executor, guildId: string, userId: string): Promise<MemberRow> {
    const row = await store.findMember(db, guildId, userId);
    if (row) return row;
    throw new HearthError((await store.userExists(db, userId)) ? 'UnknownMember' : 'UnknownUser');
  }

  /** Roles the actor may hand out: the guild's (10011 otherwise), unmanaged and below the actor's highest. */
  async #grantableRoles(
    db: Executor,
    guildId: string,
    actor: MemberAccess,
    ids: readonly string[],
  ): Promise<string[]> {
    const wanted = [...new Set(ids)].filter((id) => id !== guildId);
    const roles = await store.rolesByIds(db, guildId, wanted);
    if (roles.length !== wanted.length) throw new HearthError('UnknownRole');
    for (const role of roles) {
      if (Number(role.managed) === 1 || !outranks(actor, Number(role.position)))
        throw new HearthError('MissingPermissions');
    }
    return wanted;
  }

  /** Replaces a member's roles; every role added or removed must be unmanaged and below the actor. */
  async #replaceRoles(
    tx: Executor,
    guildId: string,
    userId: string,
    actor: MemberAccess,
    ids: readonly string[],
  ): Promise<{ added: string[]; removed: string[] }> {
    const wanted = new Set(ids.filter((id) => id !== guildId));
    const current = new Set((await store.roleIdsOf(tx, guildId, [userId])).get(userId) ?? []);
    const added = [...wanted].filter((id) => !current.has(id));
    const removed = [...current].filter((id) => !wanted.has(id));
    const known = await store.rolesByIds(tx, guildId, [...wanted]);
    if (known.length !== wanted.size) throw new HearthError('UnknownRole');
    const touched = await store.rolesByIds(tx, guildId, [...added, ...removed]);
    for (const role of touched) {
      if (Number(role.managed) === 1 || !outranks(actor, Number(role.position)))
        throw new HearthError('MissingPermissions');
    }
    await store.addMemberRoles(tx, guildId, userId, added);
    await store.removeMemberRoles(tx, guildId, userId, removed);
    return { added, removed };
  }

  /** MEMBER_ROLE_UPDATE with `$add` / `$remove` changes of `{id, name}` (GUILDS.md §8). */
  async #auditRoles(
    tx: Executor,
    events: GuildEvents,
    guildId: string,
    actorId: string,
    userId: string,
    change: { added: readonly string[]; removed: readonly string[] },
    reason: string | null,
  ): Promise<void> {
    if (change.added.length === 0 && change.removed.length === 0) return;
    const roles = await store.rolesByIds(tx, guildId, [...change.added, ...change.removed]);
    const named = (ids: readonly string[]) =>
      ids.map((id) => ({ id, name: roles.find((role) => role.id === id)?.name ?? '' }));
    await audit(this.#deps.auditLog, tx, events, {
      guildId,
      userId: actorId,
      targetId: userId,
      actionType: AuditLogEvents.MemberRoleUpdate,
      changes: [
        ...(change.added.length ? [{ key: '$add', new_value: named(change.added) }] : []),
        ...(change.removed.length ? [{ key: '$remove', new_value: named(change.removed) }] : []),
      ],
      reason,
    });
  }

  /** A move's destination: a voice or stage channel of the guild the actor may connect to. */
  async #requireVoiceChannel(tx: Executor, guildId: string, channelId: string, actor: MemberAccess) {
    const channel = await voiceStore.findChannel(tx, channelId);
    if (!channel || channel.guild_id !== guildId) throw new HearthError('UnknownChannel');
    if (!VOICE_CHANNEL_TYPES.includes(Number(channel.type)))
      throw new HearthError('CannotExecuteOnChannelType');
    const permissions = await this.#deps.access.permissionsIn(tx, actor, channelId);
    if (!has(permissions, P.Connect | P.MoveMembers)) throw new HearthError('MissingPermissions');
  }
}

/** The member fields the audit log names, as the wire shows them. */
function memberAuditView(
  row: { [K in keyof MemberRow]?: MemberRow[K] | undefined },
): Record<string, unknown> {
  const until = row.communication_disabled_until;
  return {
    nick: row.nick ?? null,
    communication_disabled_until: until == null ? null : new Date(Number(until)).toISOString(),
    mute: Number(row.mute) === 1,
    deaf: Number(row.deaf) === 1,
    flags: Number(row.flags ?? 0),
    avatar_hash: row.avatar ?? null,
    banner_hash: row.banner ?? null,
  };
}

const IMAGE_SIGNATURES: ReadonlyArray<[string, (bytes: Buffer) => boolean]> = [
  [
    'image/png',
    (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  ],
  ['image/jpeg', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
  ['image/gif', (b) => b.subarray(0, 4).toString('latin1') === 'GIF8'],
  [
    'image/webp',
    (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
];

/**
 * The hash a member avatar or banner is known by: a PNG, JPEG, GIF or WebP data URI whose bytes match its
 * type; animated (GIF) ones start with `a_` as the platform's do. Anything else is 50035 on the field.
 */
export function imageHash(field: string, dataUri: string): string {
  const match = /^data:(image\/(?:png|jpeg|jpg|gif|webp));base64,([A-Za-z0-9+/=\s]+)$/.exec(dataUri);
  const type = match?.[1] === 'image/jpg' ? 'image/jpeg' : match?.[1];
  const bytes = Buffer.from(match?.[2] ?? '', 'base64');
  const check = IMAGE_SIGNATURES.find(([name]) => name === type)?.[1];
  if (!check || bytes.length < 12 || !check(bytes)) throw invalidForm(field, FormErrors.invalid());
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 32);
  return type === 'image/gif' ? `a_${hash}` : hash;
}
