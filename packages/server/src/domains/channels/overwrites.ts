import {
  ALL_PERMISSIONS,
  AuditLogEvents,
  FormErrors,
  OverwriteTypes,
  PermissionFlags,
} from '@hearth/protocol';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import type { MemberAccess } from '../guilds/access.js';
import type { AuditLog } from '../guilds/audit-log.js';
import { has } from '../guilds/permissions.js';
import type { OverwriteRequest } from './schemas.js';
import type { OverwriteRow } from './store.js';
import * as store from './store.js';

/**
 * Permission overwrites (GUILDS.md §2.4): who they may target, which bits an actor may put in them, and
 * the audit entries their changes leave (CHANNEL_OVERWRITE_CREATE/UPDATE/DELETE).
 */

/** An overwrite as stored: bits as bigints, unknown bits dropped. */
export interface OverwriteValue {
  id: string;
  type: number;
  allow: bigint;
  deny: bigint;
}

/** Bits the wire sends as a decimal string or an integer; null or absent is none ("0"). */
export function toBits(value: string | number | null | undefined): bigint {
  if (value === null || value === undefined) return 0n;
  return BigInt(value) & ALL_PERMISSIONS;
}

/**
 * Resolves requested overwrites against the guild: a role overwrite must name one of its roles (10011),
 * a member overwrite one of its members (10007); without `type`, whichever the id is. Last one wins.
 */
export async function resolveOverwrites(
  db: Executor,
  guildId: string,
  requested: readonly OverwriteRequest[],
  path = 'permission_overwrites',
): Promise<OverwriteValue[]> {
  const ids = requested.map((overwrite) => overwrite.id);
  const roles = new Set((await store.guildRolesAmong(db, guildId, ids)).map((role) => role.id));
  const members = new Set(await store.guildMembersAmong(db, guildId, ids));
  const resolved = new Map<string, OverwriteValue>();
  requested.forEach((overwrite, index) => {
    const type =
      overwrite.type ??
      (roles.has(overwrite.id)
        ? OverwriteTypes.Role
        : members.has(overwrite.id)
          ? OverwriteTypes.Member
          : null);
    if (type === null) throw invalidForm(`${path}.${index}.type`, FormErrors.required());
    if (type === OverwriteTypes.Role && !roles.has(overwrite.id)) throw new HearthError('UnknownRole');
    if (type === OverwriteTypes.Member && !members.has(overwrite.id)) throw new HearthError('UnknownMember');
    resolved.set(overwrite.id, {
      id: overwrite.id,
      type,
      allow: toBits(overwrite.allow),
      deny: toBits(overwrite.deny),
    });
  });
  return [...resolved.values()];
}

export function fromRow(row: OverwriteRow): OverwriteValue {
  return { id: row.target_id, type: Number(row.type), allow: BigInt(row.allow), deny: BigInt(row.deny) };
}

export function toRow(channelId: string, overwrite: OverwriteValue) {
  return {
    channel_id: channelId,
    target_id: overwrite.id,
    type: overwrite.type,
    allow: overwrite.allow.toString(),
    deny: overwrite.deny.toString(),
  };
}

/** What the grant check needs to know about the actor. */
export interface Grantor {
  access: MemberAccess;
  /** Guild-level permissions. */
  base: bigint;
  /** Permissions in the channel's category, if it has one. */
  parent: bigint;
  /** The actor holds MANAGE_ROLES through an explicit allow in this channel's own overwrites. */
  manageRolesOverwrite: boolean;
}

/**
 * Only bits the actor holds in the guild or the category may be allowed or denied, unless it has a
 * MANAGE_ROLES overwrite in the channel; MANAGE_ROLES itself only by administrators (GUILDS.md §2.4; docs:
 * Create Guild Channel, Edit Channel Permissions). Only the bits that change are checked.
 */
export function assertGrantable(
  grantor: Grantor,
  before: readonly OverwriteValue[],
  after: readonly OverwriteValue[],
): void {
  if (has(grantor.base, PermissionFlags.Administrator)) return;
  const previous = new Map(before.map((overwrite) => [overwrite.id, overwrite]));
  let changed = 0n;
  for (const overwrite of after) {
    const old = previous.get(overwrite.id);
    changed |= (overwrite.allow ^ (old?.allow ?? 0n)) | (overwrite.deny ^ (old?.deny ?? 0n));
  }
  if (changed === 0n || grantor.manageRolesOverwrite) return;
  const held = grantor.base | grantor.parent;
  if ((changed & PermissionFlags.ManageRoles) !== 0n || (changed & ~held) !== 0n)
    throw new HearthError('MissingPermissions');
}

/** Whether one of the channel's overwrites for the actor (their roles, or them) allows MANAGE_ROLES. */
export function allowsManageRoles(access: MemberAccess, overwrites: readonly OverwriteValue[]): boolean {
  const mine = new Set([access.input.userId, ...access.input.roles.map((role) => role.id)]);
  return overwrites.some(
    (overwrite) => mine.has(overwrite.id) && (overwrite.allow & PermissionFlags.ManageRoles) !== 0n,
  );
}

/**
 * One audit entry per overwrite created, changed or removed, with `options` `{id, type, role_name?}`
 * (GUILDS.md §8, "Optional Audit Entry Info").
 */
export async function recordOverwriteChanges(
  tx: Executor,
  auditLog: AuditLog,
  entry: { guildId: string; channelId: string; userId: string; reason: string | null },
  before: readonly OverwriteValue[],
  after: readonly OverwriteValue[],
): Promise<void> {
  const previous = new Map(before.map((overwrite) => [overwrite.id, overwrite]));
  const next = new Map(after.map((overwrite) => [overwrite.id, overwrite]));
  const roleIds = [...previous.values(), ...next.values()]
    .filter((overwrite) => overwrite.type === OverwriteTypes.Role)
    .map((overwrite) => overwrite.id);
  const roleNames = new Map(
    (await store.guildRolesAmong(tx, entry.guildId, roleIds)).map((role) => [role.id, role.name]),
  );
  const record = async (
    actionType: (typeof AuditLogEvents)[keyof typeof AuditLogEvents],
    overwrite: OverwriteValue,
    changes: Array<{ key: string; old_value?: unknown; new_value?: unknown }>,
  ) => {
    const roleName = roleNames.get(overwrite.id);
    await auditLog.record(tx, {
      guildId: entry.guildId,
      userId: entry.userId,
      targetId: entry.channelId,
      actionType,
      changes,
      options: {
        id: overwrite.id,
        type: String(overwrite.type),
        ...(overwrite.type === OverwriteTypes.Role && roleName !== undefined ? { role_name: roleName } : {}),
      },
      reason: entry.reason,
    });
  };
  for (const overwrite of next.values()) {
    const old = previous.get(overwrite.id);
    if (!old) {
      await record(AuditLogEvents.ChannelOverwriteCreate, overwrite, [
        { key: 'id', new_value: overwrite.id },
        { key: 'type', new_value: overwrite.type },
        { key: 'allow', new_value: overwrite.allow.toString() },
        { key: 'deny', new_value: overwrite.deny.toString() },
      ]);
    } else if (old.allow !== overwrite.allow || old.deny !== overwrite.deny) {
      const changes = [];
      if (old.allow !== overwrite.allow)
        changes.push({
          key: 'allow',
          old_value: old.allow.toString(),
          new_value: overwrite.allow.toString(),
        });
      if (old.deny !== overwrite.deny)
        changes.push({ key: 'deny', old_value: old.deny.toString(), new_value: overwrite.deny.toString() });
      await record(AuditLogEvents.ChannelOverwriteUpdate, overwrite, changes);
    }
  }
  for (const old of previous.values()) {
    if (next.has(old.id)) continue;
    await record(AuditLogEvents.ChannelOverwriteDelete, old, [
      { key: 'id', old_value: old.id },
      { key: 'type', old_value: old.type },
      { key: 'allow', old_value: old.allow.toString() },
      { key: 'deny', old_value: old.deny.toString() },
    ]);
  }
}
