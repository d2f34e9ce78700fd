import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import { basePermissions, channelPermissions, has, type MemberPermissionInput } from './permissions.js';
import * as store from './store.js';

/** A member as the permission checks see them: their computed input and their highest role position. */
export interface MemberAccess {
  input: MemberPermissionInput;
  /** The position of the member's highest role (@everyone: 0); the owner's is +Infinity (GUILDS.md §1.3). */
  highestPosition: number;
  isOwner: boolean;
}

/**
 * Loads what `permissions.ts` computes over, for every route of the guild platform: the only place that
 * reads roles and overwrites to answer "may this user do that here" (STYLE: one permission module).
 */
export class GuildAccess {
  readonly #clock: Clock;

  constructor(deps: { clock: Clock }) {
    this.#clock = deps.clock;
  }

  /** The member's access in a guild; 10004 for an unknown guild, 50001 for a non-member. */
  async member(db: Executor, guildId: string, userId: string): Promise<MemberAccess> {
    const guild = await store.findGuild(db, guildId);
    if (!guild) throw new HearthError('UnknownGuild');
    const member = await store.findMember(db, guildId, userId);
    if (!member) throw new HearthError('MissingAccess');
    const rows = await store.memberRoles(db, guildId, userId);
    const everyone = rows.find((row) => row.id === guildId);
    const roles = rows
      .filter((row) => row.id !== guildId)
      .map((row) => ({ id: row.id, permissions: BigInt(row.permissions), position: Number(row.position) }));
    const isOwner = guild.owner_id === userId;
    return {
      input: {
        guildId,
        ownerId: guild.owner_id,
        userId,
        everyone: BigInt(everyone?.permissions ?? '0'),
        roles,
        communicationDisabledUntil:
          member.communication_disabled_until === null ? null : Number(member.communication_disabled_until),
      },
      highestPosition: isOwner
        ? Number.POSITIVE_INFINITY
        : Math.max(0, ...roles.map((role) => role.position)),
      isOwner,
    };
  }

  /** The clock the checks read: what a rule that depends on time (thread auto-archive) compares with. */
  now(): number {
    return this.#clock.now();
  }

  /** Guild-level permissions of a member (no overwrites). */
  async guildPermissions(db: Executor, guildId: string, userId: string): Promise<bigint> {
    return basePermissions((await this.member(db, guildId, userId)).input, this.#clock.now());
  }

  /** Permissions of a member in a channel of the guild; 10003 when the channel is not the guild's. */
  async channelPermissions(db: Executor, channelId: string, userId: string): Promise<bigint> {
    const channel = await store.findChannelForAccess(db, channelId);
    if (!channel) throw new HearthError('UnknownChannel');
    const access = await this.member(db, channel.guild_id, userId);
    return this.permissionsIn(db, access, channelId);
  }

  /** Permissions of a loaded member in one channel. */
  async permissionsIn(db: Executor, access: MemberAccess, channelId: string): Promise<bigint> {
    const overwrites = (await store.channelOverwrites(db, channelId)).map((row) => ({
      id: row.target_id,
      type: Number(row.type),
      allow: BigInt(row.allow),
      deny: BigInt(row.deny),
    }));
    return channelPermissions(access.input, overwrites, this.#clock.now());
  }

  /** Throws 50013 unless the member holds every bit at guild level; answers their access. */
  async requireGuild(db: Executor, guildId: string, userId: string, bits: bigint): Promise<MemberAccess> {
    const access = await this.member(db, guildId, userId);
    if (!has(basePermissions(access.input, this.#clock.now()), bits))
      throw new HearthError('MissingPermissions');
    return access;
  }

  /** Throws 50013 unless the member holds every bit in the channel (10003 unknown channel). */
  async requireChannel(db: Executor, channelId: string, userId: string, bits: bigint): Promise<bigint> {
    const permissions = await this.channelPermissions(db, channelId, userId);
    if (!has(permissions, bits)) throw new HearthError('MissingPermissions');
    return permissions;
  }
}
