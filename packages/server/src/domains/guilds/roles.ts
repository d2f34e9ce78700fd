import {
  ALL_PERMISSIONS,
  AuditLogEvents,
  DEFAULT_ROLE_NAME,
  FormErrors,
  GuildFeatures,
  GuildLimits,
  HOLOGRAPHIC_ROLE_COLORS,
  PermissionFlags,
} from '@hearth/protocol';
import type { Selectable } from 'kysely';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildRolesTable } from '../../storage/schema.js';
import { GuildAccess, type MemberAccess } from './access.js';
import { AuditLog, diffChanges } from './audit-log.js';
import { imageHash } from './images.js';
import { type RoleObject, toRoleObject } from './objects.js';
import { basePermissions } from './permissions.js';
import * as roleStore from './roles-store.js';
import { RoleFields, RolePositions } from './schemas.js';
import * as store from './store.js';

type RoleRow = Selectable<GuildRolesTable>;

/** What a ROLE_CREATE/UPDATE/DELETE audit entry compares (the platform's change keys). */
const ROLE_AUDIT_KEYS = [
  'name',
  'permissions',
  'color',
  'colors',
  'hoist',
  'mentionable',
  'icon',
  'unicode_emoji',
] as const;

export interface RolesDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  /**
   * Before a role's permissions change: who sees what. After: the events of members who gained access
   * (THREAD_LIST_SYNC for the active threads of channels they can now view), with their own audiences.
   */
  accessChanging?: (tx: Executor, guildId: string) => Promise<(tx: Executor) => Promise<BusEvent[]>>;
}

/**
 * Guild roles (GUILDS.md §1.3–§1.4): create, list, get, member counts, modify, reorder, delete, with the
 * role hierarchy (an actor touches only roles below their highest) and "grant only what you hold".
 */
export class RolesService {
  readonly #deps: RolesDeps;
  readonly #access: GuildAccess;
  readonly #auditLog: AuditLog;

  constructor(deps: RolesDeps) {
    this.#deps = deps;
    this.#access = new GuildAccess({ clock: deps.clock });
    this.#auditLog = new AuditLog({ clock: deps.clock, snowflakes: deps.snowflakes });
  }

  /** GET /guilds/{id}/roles: members only. */
  async listRoles(userId: string, guildId: string): Promise<RoleObject[]> {
    const db = this.#deps.storage.db;
    await this.#access.member(db, guildId, userId);
    return (await store.guildRoles(db, guildId)).map(toRoleObject);
  }

  /** GET /guilds/{id}/roles/{role_id}: 10011 for a role not of this guild. */
  async getRole(userId: string, guildId: string, roleId: string): Promise<RoleObject> {
    const db = this.#deps.storage.db;
    await this.#access.member(db, guildId, userId);
    return toRoleObject(await this.#role(db, guildId, roleId));
  }

  /** GET /guilds/{id}/roles/member-counts: every role but @everyone, 0 when nobody holds it. */
  async memberCounts(userId: string, guildId: string): Promise<Record<string, number>> {
    const db = this.#deps.storage.db;
    await this.#access.member(db, guildId, userId);
    const counts = new Map(
      (await roleStore.roleMemberCounts(db, guildId)).map((row) => [row.role_id, Number(row.n)]),
    );
    const roles = (await store.guildRoles(db, guildId)).filter((role) => role.id !== guildId);
    return Object.fromEntries(roles.map((role) => [role.id, counts.get(role.id) ?? 0]));
  }

  /**
   * POST /guilds/{id}/roles: MANAGE_ROLES; permissions default to @everyone's; the new role sits at
   * position 1 and the others move up.
   */
  async createRole(userId: string, guildId: string, input: unknown, reason: string | null) {
    const fields = parse(RoleFields, input ?? {});
    const { storage, clock, snowflakes } = this.#deps;
    const events: BusEvent[] = [];
    const role = await storage.transaction(async (tx) => {
      const access = await this.#access.requireGuild(tx, guildId, userId, PermissionFlags.ManageRoles);
      const guild = await store.findGuild(tx, guildId);
      const features = JSON.parse(guild?.features ?? '[]') as string[];
      if ((await roleStore.countRoles(tx, guildId)) >= GuildLimits.rolesPerGuild)
        throw new HearthError('MaximumRoles');
      const permissions = this.#grantable(access, fields.permissions, 0n, access.input.everyone);
      const colors = resolveColors(fields, features, {
        color: 0,
        secondary_color: null,
        tertiary_color: null,
      });
      const icons = resolveIcons(fields, features, { icon: null, unicode_emoji: null });
      const before = await store.guildRoles(tx, guildId);
      await roleStore.shiftRolesUp(tx, guildId, 1);
      const id = snowflakes.next();
      await store.insertRole(tx, {
        id,
        guild_id: guildId,
        name: fields.name ?? DEFAULT_ROLE_NAME,
        permissions: permissions.toString(),
        ...colors,
        ...icons,
        hoist: fields.hoist ? 1 : 0,
        position: 1,
        managed: 0,
        mentionable: fields.mentionable ? 1 : 0,
        bot_id: null,
        integration_id: null,
        created_at: clock.now(),
      });
      const created = await this.#role(tx, guildId, id);
      const object = toRoleObject(created);
      events.push({ type: 'GUILD_ROLE_CREATE', data: { guild_id: guildId, role: object } });
      events.push(...(await this.#movedEvents(tx, guildId, before)));
      events.push(
        await this.#auditLog.recordEvent(tx, {
          guildId,
          userId,
          targetId: id,
          actionType: AuditLogEvents.RoleCreate,
          changes: diffChanges(undefined, auditView(created), ROLE_AUDIT_KEYS),
          reason,
        }),
      );
      return object;
    });
    await this.#publish(guildId, events);
    return role;
  }

  /** PATCH /guilds/{id}/roles/{role_id}: MANAGE_ROLES and the hierarchy; audit ROLE_UPDATE with its changes. */
  async modifyRole(userId: string, guildId: string, roleId: string, input: unknown, reason: string | null) {
    const fields = parse(RoleFields, input ?? {});
    const events: BusEvent[] = [];
    const gained: BusEvent[] = [];
    const role = await this.#deps.storage.transaction(async (tx) => {
      const access = await this.#access.requireGuild(tx, guildId, userId, PermissionFlags.ManageRoles);
      const before = await this.#role(tx, guildId, roleId);
      requireBelow(access, before);
      const guild = await store.findGuild(tx, guildId);
      const features = JSON.parse(guild?.features ?? '[]') as string[];
      const current = BigInt(before.permissions);
      const update = {
        // The @everyone role keeps its name.
        ...(fields.name !== undefined && fields.name !== null && roleId !== guildId
          ? { name: fields.name }
          : {}),
        ...(fields.permissions !== undefined && fields.permissions !== null
          ? { permissions: this.#grantable(access, fields.permissions, current, current).toString() }
          : {}),
        ...(fields.color !== undefined || fields.colors !== undefined
          ? resolveColors(fields, features, {
              color: Number(before.color),
              secondary_color: before.secondary_color === null ? null : Number(before.secondary_color),
              tertiary_color: before.tertiary_color === null ? null : Number(before.tertiary_color),
            })
          : {}),
        ...resolveIcons(fields, features, {}),
        ...(fields.hoist !== undefined && fields.hoist !== null ? { hoist: fields.hoist ? 1 : 0 } : {}),
        ...(fields.mentionable !== undefined && fields.mentionable !== null
          ? { mentionable: fields.mentionable ? 1 : 0 }
          : {}),
      };
      const permissionsChange = 'permissions' in update && update.permissions !== before.permissions;
      const gaining = permissionsChange ? await this.#deps.accessChanging?.(tx, guildId) : undefined;
      if (Object.keys(update).length > 0) await roleStore.updateRole(tx, roleId, update);
      if (gaining) gained.push(...(await gaining(tx)));
      const after = await this.#role(tx, guildId, roleId);
      const changes = diffChanges(auditView(before), auditView(after), ROLE_AUDIT_KEYS);
      const object = toRoleObject(after);
      if (changes.length > 0) {
        events.push({ type: 'GUILD_ROLE_UPDATE', data: { guild_id: guildId, role: object } });
        events.push(
          await this.#auditLog.recordEvent(tx, {
            guildId,
            userId,
            targetId: roleId,
            actionType: AuditLogEvents.RoleUpdate,
            changes,
            reason,
          }),
        );
      }
      return object;
    });
    await this.#publish(guildId, events);
    for (const event of gained) await this.#deps.bus.publish(event);
    return role;
  }

  /**
   * PATCH /guilds/{id}/roles: moves the listed roles to their positions, renumbering the rest 1…n in their
   * order; only roles below the actor's highest, to positions below it. Answers every role.
   */
  async reorderRoles(userId: string, guildId: string, input: unknown): Promise<RoleObject[]> {
    const moves = parse(RolePositions, input);
    const events: BusEvent[] = [];
    const roles = await this.#deps.storage.transaction(async (tx) => {
      const access = await this.#access.requireGuild(tx, guildId, userId, PermissionFlags.ManageRoles);
      const before = await store.guildRoles(tx, guildId);
      const byId = new Map(before.map((role) => [role.id, role]));
      const wanted = new Map<string, number>();
      for (const [index, move] of moves.entries()) {
        const role = byId.get(move.id);
        if (!role) throw new HearthError('UnknownRole');
        if (move.position === undefined || move.position === null) continue;
        // @everyone stays at 0.
        if (role.id === guildId) throw invalidForm(`${index}.id`, FormErrors.invalid());
        requireBelow(access, role);
        if (!access.isOwner && move.position >= access.highestPosition)
          throw new HearthError('MissingPermissions');
        wanted.set(role.id, Math.max(1, move.position));
      }
      const others = before.filter((role) => role.id !== guildId && !wanted.has(role.id));
      const moved = [...wanted.entries()].sort((a, b) => a[1] - b[1]);
      const order: RoleRow[] = [...others];
      for (const [id, position] of moved)
        order.splice(Math.min(position - 1, order.length), 0, byId.get(id)!);
      for (const [index, role] of order.entries()) {
        if (Number(role.position) !== index + 1)
          await roleStore.updateRole(tx, role.id, { position: index + 1 });
      }
      events.push(...(await this.#movedEvents(tx, guildId, before)));
      return (await store.guildRoles(tx, guildId)).map(toRoleObject);
    });
    await this.#publish(guildId, events);
    return roles;
  }

  /** DELETE /guilds/{id}/roles/{role_id}: not @everyone nor a managed role (50028); the hierarchy applies. */
  async deleteRole(userId: string, guildId: string, roleId: string, reason: string | null): Promise<void> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const access = await this.#access.requireGuild(tx, guildId, userId, PermissionFlags.ManageRoles);
      const role = await this.#role(tx, guildId, roleId);
      if (role.id === guildId || Number(role.managed) === 1) throw new HearthError('InvalidRole');
      requireBelow(access, role);
      await roleStore.deleteRole(tx, roleId);
      events.push({ type: 'GUILD_ROLE_DELETE', data: { guild_id: guildId, role_id: roleId } });
      events.push(
        await this.#auditLog.recordEvent(tx, {
          guildId,
          userId,
          targetId: roleId,
          actionType: AuditLogEvents.RoleDelete,
          changes: diffChanges(auditView(role), undefined, ROLE_AUDIT_KEYS),
          reason,
        }),
      );
    });
    await this.#publish(guildId, events);
  }

  async #role(db: Executor, guildId: string, roleId: string): Promise<RoleRow> {
    const role = await roleStore.findRole(db, guildId, roleId);
    if (!role) throw new HearthError('UnknownRole');
    return role;
  }

  /**
   * The permissions a role may be given: requested bits the actor lacks refuse the request (50013) unless
   * they were already on the role; the owner and administrators hold every bit.
   */
  #grantable(
    access: MemberAccess,
    requested: string | number | null | undefined,
    current: bigint,
    fallback: bigint,
  ): bigint {
    if (requested === undefined || requested === null) return fallback;
    const bits = BigInt(requested) & ALL_PERMISSIONS;
    const held = basePermissions(access.input, this.#deps.clock.now());
    if ((bits & ~current & ~held) !== 0n) throw new HearthError('MissingPermissions');
    return bits;
  }

  /** GUILD_ROLE_UPDATE for each role whose position differs from `before`. */
  async #movedEvents(tx: Executor, guildId: string, before: readonly RoleRow[]): Promise<BusEvent[]> {
    const positions = new Map(before.map((role) => [role.id, Number(role.position)]));
    const after = await store.guildRoles(tx, guildId);
    return after
      .filter((role) => positions.has(role.id) && positions.get(role.id) !== Number(role.position))
      .map((role) => ({ type: 'GUILD_ROLE_UPDATE', data: { guild_id: guildId, role: toRoleObject(role) } }));
  }

  async #publish(guildId: string, events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish({ ...event, audience: { guildId } });
  }
}

/** Role hierarchy (GUILDS.md §1.3): only roles strictly below the actor's highest; the owner passes. */
function requireBelow(access: MemberAccess, role: RoleRow): void {
  if (!access.isOwner && Number(role.position) >= access.highestPosition)
    throw new HearthError('MissingPermissions');
}

/**
 * `color` (deprecated) and `colors` to columns: `colors` wins; secondary and tertiary colours need
 * ENHANCED_ROLE_COLORS (50035 otherwise); a tertiary colour forces the holographic preset (GUILDS.md §1.4).
 */
function resolveColors(
  fields: RoleFields,
  features: readonly string[],
  current: { color: number; secondary_color: number | null; tertiary_color: number | null },
) {
  const colors = fields.colors;
  if (colors === undefined || colors === null) {
    return fields.color === undefined || fields.color === null
      ? current
      : { ...current, color: fields.color };
  }
  const enhanced = features.includes(GuildFeatures.EnhancedRoleColors);
  for (const key of ['secondary_color', 'tertiary_color'] as const) {
    if (colors[key] !== undefined && colors[key] !== null && !enhanced)
      throw invalidForm(`colors.${key}`, FormErrors.invalid());
  }
  if (colors.tertiary_color !== undefined && colors.tertiary_color !== null) {
    const { primary_color, secondary_color, tertiary_color } = HOLOGRAPHIC_ROLE_COLORS;
    return { color: primary_color, secondary_color, tertiary_color };
  }
  return {
    color: colors.primary_color ?? fields.color ?? 0,
    secondary_color: colors.secondary_color ?? null,
    tertiary_color: null,
  };
}

/** `icon` and `unicode_emoji` need ROLE_ICONS (50101 otherwise); an icon is a data URI stored as its hash. */
function resolveIcons(
  fields: RoleFields,
  features: readonly string[],
  defaults: { icon?: null; unicode_emoji?: null },
): { icon?: string | null; unicode_emoji?: string | null } {
  const setting = [fields.icon, fields.unicode_emoji].some((value) => value !== undefined && value !== null);
  if (setting && !features.includes(GuildFeatures.RoleIcons)) throw new HearthError('ServerNeedsMoreBoosts');
  return {
    ...defaults,
    ...(fields.icon !== undefined
      ? { icon: fields.icon === null ? null : imageHash('icon', fields.icon) }
      : {}),
    ...(fields.unicode_emoji !== undefined ? { unicode_emoji: fields.unicode_emoji } : {}),
  };
}

/** A role row by the wire names the audit log compares. */
function auditView(row: RoleRow): Record<string, unknown> {
  const object = toRoleObject(row);
  return {
    name: object.name,
    permissions: object.permissions,
    color: object.color,
    colors: object.colors,
    hoist: object.hoist,
    mentionable: object.mentionable,
    icon: object.icon,
    unicode_emoji: object.unicode_emoji,
  };
}
