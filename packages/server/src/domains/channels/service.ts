import {
  AuditLogEvents,
  ChannelTypes,
  FormErrors,
  GuildFeatures,
  GuildLimits,
  PermissionFlags,
} from '@hearth/protocol';
import type { Insertable, Transaction } from 'kysely';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { ChannelsTable, Schema } from '../../storage/schema.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import { type AuditLog, diffChanges } from '../guilds/audit-log.js';
import { type ChannelObject, toChannelObject, toGuildObject, toRoleObject } from '../guilds/objects.js';
import { basePermissions, channelPermissions, has } from '../guilds/permissions.js';
import * as guildStore from '../guilds/store.js';
import { type ChannelFields, changedType, channelFields, creatableType, isForum, isVoice } from './fields.js';
import {
  allowsManageRoles,
  assertGrantable,
  fromRow,
  type OverwriteValue,
  recordOverwriteChanges,
  resolveOverwrites,
  toBits,
  toRow,
} from './overwrites.js';
import { CreateChannel, EditOverwrite, ModifyChannel, ReorderChannels } from './schemas.js';
import type { ChannelRow } from './store.js';
import * as store from './store.js';

export interface ChannelsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  /**
   * What other domains keep per channel and remove with it, inside the deletion's transaction (messages,
   * a lobby link); it may answer work to run once the deletion has committed (their events).
   */
  channelDeleted?: (tx: Executor, channelId: string) => Promise<void | (() => Promise<void>)>;
  /** Channels that are not a guild's (DM channels): GET /channels/{id} answers them for a participant. */
  privateChannel?: (userId: string, channelId: string) => Promise<Record<string, unknown> | undefined>;
  /** PATCH /channels/{id} of a group DM (or its error for a DM); undefined when no private channel has the id. */
  modifyPrivateChannel?: (
    userId: string,
    channelId: string,
    input: unknown,
  ) => Promise<Record<string, unknown> | undefined>;
  /** Threads, which the channel routes read, modify and delete too; undefined when no thread has the id. */
  threads?: ThreadChannels;
}

/** What GET, PATCH and DELETE /channels/{id} ask of the threads domain (declared here, implemented there). */
export interface ThreadChannels {
  get(userId: string, threadId: string): Promise<Record<string, unknown> | undefined>;
  modify(
    userId: string,
    threadId: string,
    input: unknown,
    reason: string | null,
  ): Promise<Record<string, unknown> | undefined>;
  delete(
    userId: string,
    threadId: string,
    reason: string | null,
  ): Promise<Record<string, unknown> | undefined>;
  accessChanging: AccessChanging;
}

/**
 * Told inside a transaction, before a channel's overwrites change, of the change to come; what it answers
 * is called after the change in the same transaction and answers events to publish once committed (the
 * threads domain: THREAD_LIST_SYNC to members who gained access to the channel).
 */
export type AccessChanging = (
  tx: Executor,
  channelId: string,
) => Promise<(tx: Executor) => Promise<BusEvent[]>>;

type Tx = Transaction<Schema>;
type GuildRow = NonNullable<Awaited<ReturnType<typeof guildStore.findGuild>>>;

const { ManageChannels, ManageRoles, ViewChannel } = PermissionFlags;

/** The keys an audit entry of a channel lists (GUILDS.md §8). */
const AUDITED_KEYS = [
  'name',
  'type',
  'topic',
  'nsfw',
  'rate_limit_per_user',
  'bitrate',
  'user_limit',
  'rtc_region',
  'video_quality_mode',
  'parent_id',
  'position',
  'flags',
  'default_auto_archive_duration',
  'default_thread_rate_limit_per_user',
  'available_tags',
  'default_reaction_emoji',
  'default_sort_order',
  'default_forum_layout',
] as const;

const DEFAULT_BITRATE = 64_000;

/** Channel order as clients sort it: position, then id (GUILDS.md §2.2). */
function byPosition(a: ChannelRow, b: ChannelRow): number {
  const position = Number(a.position) - Number(b.position);
  if (position !== 0) return position;
  const [x, y] = [BigInt(a.id), BigInt(b.id)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Guild channels (GUILDS.md §2): create, read, modify, delete, reorder, and their permission overwrites.
 * Every check goes through GuildAccess; every change leaves its audit entry in its own transaction and
 * sends its gateway event once committed.
 */
export class ChannelsService {
  readonly #deps: ChannelsDeps;

  constructor(deps: ChannelsDeps) {
    this.#deps = deps;
  }

  // ---- Reading ----

  /** Every channel of a guild with its overwrites, sorted: what GUILD_CREATE carries. */
  async channelsOf(guildId: string, db: Executor = this.#deps.storage.db): Promise<ChannelObject[]> {
    const [rows, overwrites] = await Promise.all([
      store.guildChannels(db, guildId),
      store.guildOverwrites(db, guildId),
    ]);
    return rows.sort(byPosition).map((row) =>
      toChannelObject(
        row,
        overwrites.filter((overwrite) => overwrite.channel_id === row.id),
      ),
    );
  }

  /** The channels of a guild a user can see (VIEW_CHANNEL); 10004 unknown guild, 50001 non-member. */
  async visibleTo(userId: string, guildId: string): Promise<ChannelObject[]> {
    const db = this.#deps.storage.db;
    const access = await this.#deps.access.member(db, guildId, userId);
    const now = this.#deps.clock.now();
    const channels = await this.channelsOf(guildId, db);
    return channels.filter((channel) => has(this.#permissionsOf(access, channel, now), ViewChannel));
  }

  /** GET /channels/{id}: 10003 unless a guild channel, 50001 unless the caller can see it. */
  async getChannel(userId: string, channelId: string): Promise<ChannelObject | Record<string, unknown>> {
    const db = this.#deps.storage.db;
    const row = await store.findChannel(db, channelId);
    if (!row) {
      const thread = await this.#deps.threads?.get(userId, channelId);
      if (thread) return thread;
      const other = await this.#deps.privateChannel?.(userId, channelId);
      if (other) return other;
    }
    const channel = row ?? (await this.#channel(db, channelId));
    const access = await this.#deps.access.member(db, channel.guild_id, userId);
    await this.#requireIn(db, access, channelId, 0n);
    return this.#object(db, channel);
  }

  // ---- Create ----

  async createChannel(
    userId: string,
    guildId: string,
    input: unknown,
    reason: string | null,
  ): Promise<ChannelObject> {
    const body = parse(CreateChannel, input ?? {});
    const { storage, snowflakes, clock } = this.#deps;
    const created = await storage.transaction(async (tx) => {
      const access = await this.#deps.access.requireGuild(tx, guildId, userId, ManageChannels);
      const guild = await this.#guild(tx, guildId);
      const type = creatableType(this.#features(guild), body.type ?? ChannelTypes.GuildText);
      if ((await store.countGuildChannels(tx, guildId)) >= GuildLimits.channelsPerGuild)
        throw new HearthError('MaximumChannels');
      const parentId = body.parent_id ?? null;
      if (parentId !== null) await this.#checkParent(tx, guildId, type, parentId, 'parent_id');
      const overwrites = await resolveOverwrites(tx, guildId, body.permission_overwrites ?? []);
      const base = this.#base(access);
      const parent = parentId === null ? 0n : await this.#deps.access.permissionsIn(tx, access, parentId);
      assertGrantable({ access, base, parent, manageRolesOverwrite: false }, [], overwrites);
      const id = snowflakes.next();
      const position = body.position ?? ((await store.maxPosition(tx, guildId)) ?? -1) + 1;
      const row: Insertable<ChannelsTable> = {
        id,
        guild_id: guildId,
        type,
        name: body.name,
        position,
        parent_id: parentId,
        topic: null,
        nsfw: 0,
        rate_limit_per_user: 0,
        bitrate: isVoice(type) ? DEFAULT_BITRATE : null,
        user_limit: isVoice(type) ? 0 : null,
        rtc_region: null,
        video_quality_mode: null,
        default_auto_archive_duration: null,
        default_thread_rate_limit_per_user: null,
        last_message_id: null,
        last_pin_timestamp: null,
        available_tags: isForum(type) ? '[]' : null,
        default_reaction_emoji: null,
        default_sort_order: null,
        default_forum_layout: type === ChannelTypes.GuildForum ? 0 : null,
        created_at: clock.now(),
        ...channelFields(this.#features(guild), type, body, [], () => snowflakes.next()),
      };
      await store.insertChannel(tx, row);
      await store.replaceOverwrites(
        tx,
        id,
        overwrites.map((overwrite) => toRow(id, overwrite)),
      );
      const channel = await this.#object(tx, await this.#channel(tx, id));
      const changes = diffChanges(undefined, channel, [...AUDITED_KEYS, 'permission_overwrites']).filter(
        (change) => change.new_value !== null,
      );
      await this.#deps.auditLog.record(tx, {
        guildId,
        userId,
        targetId: id,
        actionType: AuditLogEvents.ChannelCreate,
        changes,
        reason,
      });
      return channel;
    });
    await this.#publish([{ type: 'CHANNEL_CREATE', data: created, audience: { guildId } }]);
    return created;
  }

  // ---- Modify ----

  async modifyChannel(
    userId: string,
    channelId: string,
    input: unknown,
    reason: string | null,
  ): Promise<ChannelObject | Record<string, unknown>> {
    if (!(await store.findChannel(this.#deps.storage.db, channelId))) {
      const thread = await this.#deps.threads?.modify(userId, channelId, input, reason);
      if (thread) return thread;
      const other = await this.#deps.modifyPrivateChannel?.(userId, channelId, input);
      if (other) return other;
    }
    const body = parse(ModifyChannel, input ?? {});
    const synced: BusEvent[] = [];
    const updated = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#channel(tx, channelId);
      const guildId = row.guild_id;
      const access = await this.#deps.access.member(tx, guildId, userId);
      const permissions = await this.#requireIn(tx, access, channelId, ManageChannels);
      const guild = await this.#guild(tx, guildId);
      const before = await this.#object(tx, row);
      const type = changedType(this.#features(guild), Number(row.type), body.type);
      const changes: ChannelFields = {
        ...channelFields(this.#features(guild), type, body, before.available_tags ?? [], () =>
          this.#deps.snowflakes.next(),
        ),
      };
      if (type !== Number(row.type)) changes.type = type;
      if (body.name !== undefined) changes.name = body.name;
      if (body.position !== undefined && body.position !== null) changes.position = body.position;
      if (body.parent_id !== undefined && body.parent_id !== row.parent_id) {
        if (body.parent_id !== null)
          await this.#checkParent(tx, guildId, type, body.parent_id, 'parent_id', channelId);
        changes.parent_id = body.parent_id;
      }
      await store.updateChannel(tx, channelId, changes);
      if (body.permission_overwrites !== undefined) {
        if (!has(permissions, ManageRoles)) throw new HearthError('MissingPermissions');
        const changed = await this.#accessChanging(tx, channelId);
        await this.#replaceOverwrites(tx, access, row, body.permission_overwrites ?? [], userId, reason);
        synced.push(...(await changed(tx)));
      }
      const after = await this.#object(tx, await this.#channel(tx, channelId));
      const diff = diffChanges(before, after, AUDITED_KEYS);
      if (diff.length > 0)
        await this.#deps.auditLog.record(tx, {
          guildId,
          userId,
          targetId: channelId,
          actionType: AuditLogEvents.ChannelUpdate,
          changes: diff,
          reason,
        });
      return after;
    });
    await this.#publish([
      { type: 'CHANNEL_UPDATE', data: updated, audience: { guildId: updated.guild_id } },
      ...synced,
    ]);
    return updated;
  }

  // ---- Delete ----

  /** Deletes a channel; a category's children lose their parent, guild settings naming it are cleared. */
  async deleteChannel(
    userId: string,
    channelId: string,
    reason: string | null,
  ): Promise<ChannelObject | Record<string, unknown>> {
    if (this.#deps.threads && !(await store.findChannel(this.#deps.storage.db, channelId))) {
      const thread = await this.#deps.threads.delete(userId, channelId, reason);
      if (thread) return thread;
    }
    const events: BusEvent[] = [];
    let afterCommit: (() => Promise<void>) | undefined;
    const deleted = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#channel(tx, channelId);
      const guildId = row.guild_id;
      const access = await this.#deps.access.member(tx, guildId, userId);
      await this.#requireIn(tx, access, channelId, ManageChannels);
      const guild = await this.#guild(tx, guildId);
      if (this.#features(guild).includes(GuildFeatures.Community)) {
        if (channelId === guild.rules_channel_id || channelId === guild.public_updates_channel_id)
          throw new HearthError('CannotDeleteCommunityChannel');
      }
      const channel = await this.#object(tx, row);
      const children = await store.orphanChildren(tx, channelId);
      const after = await this.#deps.channelDeleted?.(tx, channelId);
      if (after) afterCommit = after;
      await store.deleteChannel(tx, channelId);
      const settingsCleared = await store.clearGuildChannelSettings(tx, guildId, channelId);
      await this.#deps.auditLog.record(tx, {
        guildId,
        userId,
        targetId: channelId,
        actionType: AuditLogEvents.ChannelDelete,
        changes: diffChanges(channel, undefined, [...AUDITED_KEYS, 'permission_overwrites']).filter(
          (change) => change.old_value !== null,
        ),
        reason,
      });
      for (const childId of children) {
        const child = await this.#object(tx, await this.#channel(tx, childId));
        events.push({ type: 'CHANNEL_UPDATE', data: child, audience: { guildId } });
      }
      events.push({ type: 'CHANNEL_DELETE', data: channel, audience: { guildId } });
      if (settingsCleared) events.push(await this.#guildUpdate(tx, guildId));
      return channel;
    });
    await this.#publish(events);
    await afterCommit?.();
    return deleted;
  }

  // ---- Reorder ----

  /** PATCH /guilds/{id}/channels: positions, parents and permission sync of several channels at once. */
  async reorderChannels(
    userId: string,
    guildId: string,
    input: unknown,
    reason: string | null,
  ): Promise<void> {
    const entries = parse(ReorderChannels, input);
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      await this.#deps.access.requireGuild(tx, guildId, userId, ManageChannels);
      const channels = new Map((await store.guildChannels(tx, guildId)).map((row) => [row.id, row]));
      const touched = new Map<string, ChannelObject>();
      for (const [index, entry] of entries.entries()) {
        const row = channels.get(entry.id);
        if (!row) throw new HearthError('UnknownChannel');
        touched.set(row.id, touched.get(row.id) ?? (await this.#object(tx, row)));
        const changes: ChannelFields = {};
        if (entry.position !== undefined && entry.position !== null) changes.position = entry.position;
        let parentId = row.parent_id;
        if (entry.parent_id !== undefined && entry.parent_id !== row.parent_id) {
          if (entry.parent_id !== null)
            await this.#checkParent(
              tx,
              guildId,
              Number(row.type),
              entry.parent_id,
              `${index}.parent_id`,
              row.id,
            );
          changes.parent_id = entry.parent_id;
          parentId = entry.parent_id;
        }
        await store.updateChannel(tx, row.id, changes);
        // Syncing copies the category's overwrites onto the channel (GUILDS.md §1.2, category sync).
        if (entry.lock_permissions === true && parentId !== null) {
          const synced = await store.channelOverwrites(tx, parentId);
          await store.replaceOverwrites(
            tx,
            row.id,
            synced.map((overwrite) => ({ ...overwrite, channel_id: row.id })),
          );
        }
        channels.set(row.id, { ...row, ...changes } as ChannelRow);
      }
      for (const [id, before] of touched) {
        const after = await this.#object(tx, await this.#channel(tx, id));
        const diff = diffChanges(before, after, [...AUDITED_KEYS, 'permission_overwrites']);
        if (diff.length === 0) continue;
        await this.#deps.auditLog.record(tx, {
          guildId,
          userId,
          targetId: id,
          actionType: AuditLogEvents.ChannelUpdate,
          changes: diff.filter((change) => change.key !== 'permission_overwrites'),
          reason,
        });
        events.push({ type: 'CHANNEL_UPDATE', data: after, audience: { guildId } });
      }
    });
    await this.#publish(events);
  }

  // ---- Permission overwrites ----

  /** PUT /channels/{id}/permissions/{overwrite_id} (MANAGE_ROLES, "Manage Permissions"). */
  async editOverwrite(
    userId: string,
    channelId: string,
    targetId: string,
    input: unknown,
    reason: string | null,
  ): Promise<void> {
    const body = parse(EditOverwrite, input ?? {});
    const synced: BusEvent[] = [];
    const updated = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#channel(tx, channelId);
      const access = await this.#deps.access.member(tx, row.guild_id, userId);
      await this.#requireIn(tx, access, channelId, ManageRoles);
      const current = (await store.channelOverwrites(tx, channelId)).map(fromRow);
      const [wanted] = await resolveOverwrites(tx, row.guild_id, [
        { id: targetId, type: body.type, allow: body.allow ?? null, deny: body.deny ?? null },
      ]);
      const next = [...current.filter((overwrite) => overwrite.id !== targetId), wanted as OverwriteValue];
      const changed = await this.#accessChanging(tx, channelId);
      await this.#applyOverwrites(tx, access, row, current, next, userId, reason);
      synced.push(...(await changed(tx)));
      return this.#object(tx, await this.#channel(tx, channelId));
    });
    await this.#publish([
      { type: 'CHANNEL_UPDATE', data: updated, audience: { guildId: updated.guild_id } },
      ...synced,
    ]);
  }

  /** DELETE /channels/{id}/permissions/{overwrite_id}: 10009 when there is none. */
  async deleteOverwrite(
    userId: string,
    channelId: string,
    targetId: string,
    reason: string | null,
  ): Promise<void> {
    const synced: BusEvent[] = [];
    const updated = await this.#deps.storage.transaction(async (tx) => {
      const row = await this.#channel(tx, channelId);
      const access = await this.#deps.access.member(tx, row.guild_id, userId);
      await this.#requireIn(tx, access, channelId, ManageRoles);
      const current = (await store.channelOverwrites(tx, channelId)).map(fromRow);
      if (!current.some((overwrite) => overwrite.id === targetId)) throw new HearthError('UnknownOverwrite');
      const changed = await this.#accessChanging(tx, channelId);
      await store.deleteOverwrite(tx, channelId, targetId);
      synced.push(...(await changed(tx)));
      await recordOverwriteChanges(
        tx,
        this.#deps.auditLog,
        { guildId: row.guild_id, channelId, userId, reason },
        current,
        current.filter((overwrite) => overwrite.id !== targetId),
      );
      return this.#object(tx, row);
    });
    await this.#publish([
      { type: 'CHANNEL_UPDATE', data: updated, audience: { guildId: updated.guild_id } },
      ...synced,
    ]);
  }

  // ---- Steps ----

  async #accessChanging(tx: Tx, channelId: string): Promise<(tx: Executor) => Promise<BusEvent[]>> {
    return (await this.#deps.threads?.accessChanging(tx, channelId)) ?? (async () => []);
  }

  async #replaceOverwrites(
    tx: Tx,
    access: MemberAccess,
    row: ChannelRow,
    requested: Parameters<typeof resolveOverwrites>[2],
    userId: string,
    reason: string | null,
  ): Promise<void> {
    const current = (await store.channelOverwrites(tx, row.id)).map(fromRow);
    const next = await resolveOverwrites(tx, row.guild_id, requested);
    await this.#applyOverwrites(tx, access, row, current, next, userId, reason);
  }

  /** Checks the actor may grant what changes, stores the new set, and audits each overwrite changed. */
  async #applyOverwrites(
    tx: Tx,
    access: MemberAccess,
    row: ChannelRow,
    current: readonly OverwriteValue[],
    next: readonly OverwriteValue[],
    userId: string,
    reason: string | null,
  ): Promise<void> {
    const parent =
      row.parent_id === null ? 0n : await this.#deps.access.permissionsIn(tx, access, row.parent_id);
    assertGrantable(
      { access, base: this.#base(access), parent, manageRolesOverwrite: allowsManageRoles(access, current) },
      current,
      next,
    );
    await store.replaceOverwrites(
      tx,
      row.id,
      next.map((overwrite) => toRow(row.id, overwrite)),
    );
    await recordOverwriteChanges(
      tx,
      this.#deps.auditLog,
      { guildId: row.guild_id, channelId: row.id, userId, reason },
      current,
      next,
    );
  }

  /** A parent is a category of the same guild with room for one more child; categories have none. */
  async #checkParent(
    tx: Tx,
    guildId: string,
    type: number,
    parentId: string,
    path: string,
    channelId?: string,
  ): Promise<void> {
    const parent = await store.findChannel(tx, parentId);
    if (
      type === ChannelTypes.GuildCategory ||
      !parent ||
      parent.guild_id !== guildId ||
      Number(parent.type) !== ChannelTypes.GuildCategory
    )
      throw invalidForm(path, FormErrors.channelParentInvalid());
    if ((await store.countChildren(tx, parentId, channelId)) >= GuildLimits.channelsPerCategory)
      throw invalidForm(path, FormErrors.channelParentMaxChannels(GuildLimits.channelsPerCategory));
  }

  /** The member's permissions in a channel; 50001 without VIEW_CHANNEL, 50013 without `bits`. */
  async #requireIn(db: Executor, access: MemberAccess, channelId: string, bits: bigint): Promise<bigint> {
    const permissions = await this.#deps.access.permissionsIn(db, access, channelId);
    if (!has(permissions, ViewChannel)) throw new HearthError('MissingAccess');
    if (!has(permissions, bits)) throw new HearthError('MissingPermissions');
    return permissions;
  }

  #permissionsOf(access: MemberAccess, channel: ChannelObject, now: number): bigint {
    const overwrites = channel.permission_overwrites.map((overwrite) => ({
      id: overwrite.id,
      type: overwrite.type,
      allow: toBits(overwrite.allow),
      deny: toBits(overwrite.deny),
    }));
    return channelPermissions(access.input, overwrites, now);
  }

  #base(access: MemberAccess): bigint {
    return basePermissions(access.input, this.#deps.clock.now());
  }

  async #channel(db: Executor, channelId: string): Promise<ChannelRow> {
    const row = await store.findChannel(db, channelId);
    if (!row) throw new HearthError('UnknownChannel');
    return row;
  }

  async #guild(db: Executor, guildId: string): Promise<GuildRow> {
    const guild = await guildStore.findGuild(db, guildId);
    if (!guild) throw new HearthError('UnknownGuild');
    return guild;
  }

  #features(guild: GuildRow): string[] {
    return JSON.parse(guild.features) as string[];
  }

  async #object(db: Executor, row: ChannelRow): Promise<ChannelObject> {
    return toChannelObject(row, await store.channelOverwrites(db, row.id));
  }

  /** GUILD_UPDATE after a deleted channel cleared a guild setting (a guild object without members). */
  async #guildUpdate(tx: Tx, guildId: string): Promise<BusEvent> {
    const guild = await this.#guild(tx, guildId);
    const roles = (await store.guildRoles(tx, guildId))
      .sort((a, b) => Number(a.position) - Number(b.position))
      .map(toRoleObject);
    return { type: 'GUILD_UPDATE', data: toGuildObject(guild, roles, []), audience: { guildId } };
  }

  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}
