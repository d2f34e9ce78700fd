import {
  AuditLogEvents,
  ChannelTypes,
  DEFAULT_EVERYONE_PERMISSIONS,
  FormErrors,
  GuildFeatures,
  GuildLimits,
  isInEffect,
  MUTABLE_GUILD_FEATURES,
  PermissionFlags,
} from '@hearth/protocol';
import type { Static } from 'typebox';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Principal } from '../../http/auth.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import { GuildAccess } from './access.js';
import { AuditLog, diffChanges } from './audit-log.js';
import { imageChange, imageHash } from './images.js';
import { type GuildObject, toAuditLogEntryObject, toGuildObject, toRoleObject } from './objects.js';
import { basePermissions, has } from './permissions.js';
import {
  type AuditLogQuery,
  ListMyGuildsQuery,
  ModifyGuild,
  type MyGuildObject,
  NewGuild,
  SetPrimaryGuild,
} from './schemas.js';
import * as store from './store.js';

export interface GuildsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  /** User objects for events and the audit log's `users`. */
  users: { getUsers(ids: readonly string[]): Promise<Map<string, User>> };
  /** Whether a user has a live, visible session (approximate_presence_count); default: nobody. */
  isOnline?: (userId: string) => boolean;
  /** Called in the guild's deletion for each of its channels, as a channel's own deletion calls it. */
  channelDeleted?: (tx: Executor, channelId: string) => Promise<(() => Promise<void>) | undefined>;
}

/** A new voice channel's bitrate (bps), as the platform sets it. */
const DEFAULT_BITRATE = 64_000;

/** Guild settings that name a channel of the guild. */
const CHANNEL_SETTINGS = [
  'afk_channel_id',
  'system_channel_id',
  'rules_channel_id',
  'public_updates_channel_id',
  'safety_alerts_channel_id',
] as const;

/** The keys an audit GUILD_UPDATE entry compares (the columns PATCH may change, by their wire names). */
const GUILD_AUDIT_KEYS = [
  'name',
  'description',
  'icon',
  'banner',
  'splash',
  'discovery_splash',
  'verification_level',
  'default_message_notifications',
  'explicit_content_filter',
  'afk_timeout',
  ...CHANNEL_SETTINGS,
  'system_channel_flags',
  'preferred_locale',
  'features',
  'premium_progress_bar_enabled',
  'tag',
  'badge',
] as const;

/** Guilds (servers): the guild object, its settings and tag, membership of the caller, the audit log. */
export class GuildsService {
  readonly #deps: GuildsDeps;
  readonly #access: GuildAccess;
  readonly #auditLog: AuditLog;

  constructor(deps: GuildsDeps) {
    this.#deps = deps;
    this.#access = new GuildAccess({ clock: deps.clock });
    this.#auditLog = new AuditLog({ clock: deps.clock, snowflakes: deps.snowflakes });
  }

  /** Creates a guild with its @everyone role and its owner as first member (operators, tests, POST /guilds). */
  async createGuild(
    ownerId: string,
    input: unknown,
    options: { defaultChannels?: boolean; applicationId?: string } = {},
  ): Promise<{ id: string }> {
    const { name, banner = null, icon } = parse(NewGuild, input);
    const iconHash = icon === undefined || icon === null ? null : imageHash('icon', icon);
    const { storage, clock, snowflakes } = this.#deps;
    const id = snowflakes.next();
    const now = clock.now();
    if (!(await store.userExists(storage.db, ownerId))) throw new HearthError('UnknownUser');
    await storage.transaction(async (tx) => {
      await store.insertGuild(tx, {
        id,
        name,
        icon: iconHash,
        banner,
        owner_id: ownerId,
        features: '[]',
        application_id: options.applicationId ?? null,
        created_at: now,
      });
      // The @everyone role shares the guild's id (GUILDS.md §1.4).
      await store.insertRole(tx, {
        id,
        guild_id: id,
        name: '@everyone',
        permissions: DEFAULT_EVERYONE_PERMISSIONS.toString(),
        color: 0,
        secondary_color: null,
        tertiary_color: null,
        hoist: 0,
        icon: null,
        unicode_emoji: null,
        position: 0,
        managed: 0,
        mentionable: 0,
        bot_id: null,
        integration_id: null,
        created_at: now,
      });
      await store.insertMember(tx, { guild_id: id, user_id: ownerId, joined_at: now });
      if (options.defaultChannels) await this.#createDefaultChannels(tx, id, now);
    });
    return { id };
  }

  /** What a new guild gets from the platform: a text and a voice category, `general` in each. */
  async #createDefaultChannels(tx: Executor, guildId: string, now: number): Promise<void> {
    const { snowflakes } = this.#deps;
    const textCategory = snowflakes.next();
    const voiceCategory = snowflakes.next();
    const general = snowflakes.next();
    const channel = (id: string, type: number, name: string, position: number, parent: string | null) => ({
      id,
      guild_id: guildId,
      type,
      name,
      position,
      parent_id: parent,
      nsfw: 0,
      rate_limit_per_user: 0,
      bitrate: type === ChannelTypes.GuildVoice ? DEFAULT_BITRATE : null,
      user_limit: type === ChannelTypes.GuildVoice ? 0 : null,
      created_at: now,
    });
    await store.insertChannel(
      tx,
      channel(textCategory, ChannelTypes.GuildCategory, 'Text Channels', 0, null),
    );
    await store.insertChannel(
      tx,
      channel(voiceCategory, ChannelTypes.GuildCategory, 'Voice Channels', 1, null),
    );
    await store.insertChannel(tx, channel(general, ChannelTypes.GuildText, 'general', 0, textCategory));
    await store.insertChannel(
      tx,
      channel(snowflakes.next(), ChannelTypes.GuildVoice, 'General', 0, voiceCategory),
    );
    await store.updateGuild(tx, guildId, { system_channel_id: general });
  }

  /**
   * POST /guilds: user accounts create guilds (at most 100 memberships); apps lost the route on
   * 15 July 2025 (seed, Versioning), and before that a bot could while in fewer than 10 guilds.
   */
  async createGuildFor(principal: Principal, input: unknown): Promise<GuildObject> {
    const db = this.#deps.storage.db;
    await this.assertMayCreateGuild(principal);
    const { id } = await this.createGuild(principal.userId, input, { defaultChannels: true });
    if (principal.kind === 'bot')
      await store.updateGuild(db, id, { application_id: principal.applicationId });
    return this.#guildObject(db, id);
  }

  /** Whether the caller may create a guild at all, asked before its body is read (an app is refused first). */
  async assertMayCreateGuild(principal: Principal): Promise<void> {
    const count = await store.countUserGuilds(this.#deps.storage.db, principal.userId);
    if (principal.kind === 'bot') {
      if (isInEffect('createGuildRemovedForApps', this.#deps.clock.now()))
        throw new HearthError('BotsCannotUseEndpoint');
      if (count >= GuildLimits.botCreateGuildBelow) throw new HearthError('MaximumGuilds');
    } else if (count >= GuildLimits.guildsPerUser) {
      throw new HearthError('MaximumGuilds');
    }
  }

  async addMember(guildId: string, userId: string): Promise<void> {
    await store.insertMember(this.#deps.storage.db, {
      guild_id: guildId,
      user_id: userId,
      joined_at: this.#deps.clock.now(),
    });
  }

  /** The ids of the guilds a user is in (what a gateway session can see). */
  async guildIdsOf(userId: string): Promise<string[]> {
    const rows = await store.listUserGuilds(this.#deps.storage.db, userId, { limit: 100_000 });
    return rows.map((row) => row.id);
  }

  /** Members matching a name prefix or ids, at most `limit` (0: all), for Request Guild Members. */
  async findMembers(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<Array<{ userId: string; joinedAt: number }>> {
    const rows = await store.listMembers(this.#deps.storage.db, guildId, {
      ...filter,
      limit: filter.limit === 0 ? 1_000_000 : filter.limit,
    });
    return rows.map((row) => ({ userId: row.user_id, joinedAt: Number(row.joined_at) }));
  }

  /** GET /users/@me/guilds: `permissions` computed from roles (no overwrites), `banner` (seed), `owner`. */
  async listUserGuilds(userId: string, query: unknown): Promise<Static<typeof MyGuildObject>[]> {
    const { before, after, limit = 200, with_counts = false } = parse(ListMyGuildsQuery, query ?? {});
    const db = this.#deps.storage.db;
    const rows = await store.listUserGuilds(db, userId, { before, after, limit });
    const now = this.#deps.clock.now();
    const guilds: Static<typeof MyGuildObject>[] = [];
    for (const row of rows) {
      const access = await this.#access.member(db, row.id, userId);
      guilds.push({
        id: row.id,
        name: row.name,
        icon: row.icon,
        banner: row.banner,
        owner: row.owner_id === userId,
        permissions: basePermissions(access.input, now).toString(),
        features: JSON.parse(row.features) as string[],
        ...(with_counts
          ? {
              approximate_member_count: Number(row.member_count ?? 0),
              approximate_presence_count: await this.#presenceCount(db, row.id),
            }
          : {}),
      });
    }
    return guilds;
  }

  // ---- GET /guilds/{id}, preview ----

  /** GET /guilds/{id}: members only (10004 unknown, 50001 non-member); counts with `with_counts`. */
  async getGuild(userId: string, guildId: string, withCounts: boolean) {
    const db = this.#deps.storage.db;
    await this.#access.member(db, guildId, userId);
    const guild = await this.#guildObject(db, guildId);
    if (!withCounts) return guild;
    return { ...guild, ...(await this.#counts(db, guildId)) };
  }

  /** GET /guilds/{id}/preview: for members, or anyone when the guild is DISCOVERABLE; else 10004. */
  async getPreview(userId: string, guildId: string) {
    const db = this.#deps.storage.db;
    const row = await store.findGuild(db, guildId);
    if (!row) throw new HearthError('UnknownGuild');
    const features = JSON.parse(row.features) as string[];
    const member = await store.findMember(db, guildId, userId);
    if (!member && !features.includes(GuildFeatures.Discoverable)) throw new HearthError('UnknownGuild');
    return {
      id: row.id,
      name: row.name,
      icon: row.icon,
      description: row.description,
      home_header: null,
      splash: row.splash,
      discovery_splash: row.discovery_splash,
      features,
      ...(await this.#counts(db, guildId)),
      emojis: [],
      stickers: [],
    };
  }

  async #guildObject(db: Executor, guildId: string): Promise<GuildObject> {
    const row = await store.findGuild(db, guildId);
    if (!row) throw new HearthError('UnknownGuild');
    const roles = await store.guildRoles(db, guildId);
    return toGuildObject(row, roles.map(toRoleObject), []);
  }

  async #counts(db: Executor, guildId: string) {
    return {
      approximate_member_count: await store.countMembers(db, guildId),
      approximate_presence_count: await this.#presenceCount(db, guildId),
    };
  }

  async #presenceCount(db: Executor, guildId: string): Promise<number> {
    const isOnline = this.#deps.isOnline;
    if (!isOnline) return 0;
    return (await store.memberIds(db, guildId)).filter((id) => isOnline(id)).length;
  }

  // ---- PATCH /guilds/{id} ----

  /** MANAGE_GUILD; the features named in MUTABLE_GUILD_FEATURES each need their own bit; audit GUILD_UPDATE. */
  async modifyGuild(userId: string, guildId: string, input: unknown, reason: string | null) {
    const changes = parse(ModifyGuild, input ?? {});
    const { storage } = this.#deps;
    const events: BusEvent[] = [];
    const guild = await storage.transaction(async (tx) => {
      const access = await this.#access.requireGuild(tx, guildId, userId, PermissionFlags.ManageGuild);
      const permissions = basePermissions(access.input, this.#deps.clock.now());
      const before = await store.findGuild(tx, guildId);
      if (!before) throw new HearthError('UnknownGuild');
      await this.#checkChannels(tx, guildId, changes);
      const update = {
        ...this.#scalarChanges(changes),
        ...this.#imageChanges(changes),
        ...(changes.features === undefined || changes.features === null
          ? {}
          : { features: JSON.stringify(this.#features(before.features, changes.features, permissions)) }),
      };
      if (Object.keys(update).length > 0) await store.updateGuild(tx, guildId, update);
      const after = await store.findGuild(tx, guildId);
      const diff = diffChanges(auditView(before), auditView(after), GUILD_AUDIT_KEYS);
      if (diff.length > 0) {
        events.push(
          await this.#auditLog.recordEvent(tx, {
            guildId,
            userId,
            targetId: guildId,
            actionType: AuditLogEvents.GuildUpdate,
            changes: diff,
            reason,
          }),
        );
        events.unshift({ type: 'GUILD_UPDATE', data: { ...(await this.#guildObject(tx, guildId)) } });
      }
      return this.#guildObject(tx, guildId);
    });
    await this.#publish(guildId, events);
    return guild;
  }

  #scalarChanges(changes: ModifyGuild) {
    const keep = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;
    return {
      ...(keep(changes.name) ? { name: changes.name.trim() } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(keep(changes.verification_level) ? { verification_level: changes.verification_level } : {}),
      ...(keep(changes.default_message_notifications)
        ? { default_message_notifications: changes.default_message_notifications }
        : {}),
      ...(keep(changes.explicit_content_filter)
        ? { explicit_content_filter: changes.explicit_content_filter }
        : {}),
      ...(keep(changes.afk_timeout) ? { afk_timeout: changes.afk_timeout } : {}),
      ...(keep(changes.system_channel_flags) ? { system_channel_flags: changes.system_channel_flags } : {}),
      ...(keep(changes.preferred_locale) ? { preferred_locale: changes.preferred_locale } : {}),
      ...(keep(changes.premium_progress_bar_enabled)
        ? { premium_progress_bar_enabled: changes.premium_progress_bar_enabled ? 1 : 0 }
        : {}),
      ...(changes.tag !== undefined ? { tag: changes.tag } : {}),
      ...Object.fromEntries(
        CHANNEL_SETTINGS.filter((key) => changes[key] !== undefined).map((key) => [key, changes[key]]),
      ),
    };
  }

  #imageChanges(changes: ModifyGuild) {
    const out: Record<string, string | null> = {};
    for (const key of ['icon', 'banner', 'splash', 'discovery_splash', 'badge'] as const) {
      const value = imageChange(key, changes[key]);
      if (value !== undefined) out[key] = value;
    }
    return out;
  }

  /** Each channel a setting names must be a channel of this guild; the AFK channel a voice channel. */
  async #checkChannels(tx: Executor, guildId: string, changes: ModifyGuild): Promise<void> {
    const named = CHANNEL_SETTINGS.flatMap((key) => {
      const value = changes[key];
      return typeof value === 'string' ? [[key, value] as const] : [];
    });
    const found = await store.guildChannelIds(
      tx,
      guildId,
      named.map(([, id]) => id),
    );
    for (const [key, id] of named) {
      const type = found.get(id);
      const wanted: readonly number[] =
        key === 'afk_channel_id'
          ? [ChannelTypes.GuildVoice]
          : [ChannelTypes.GuildText, ChannelTypes.GuildAnnouncement];
      if (type === undefined) throw new HearthError('UnknownChannel');
      if (!wanted.includes(type)) throw invalidForm(key, FormErrors.invalid());
    }
  }

  /**
   * The new feature list: only MUTABLE_GUILD_FEATURES may be added or removed, each with its bit; the
   * features the platform grants stay as they are.
   */
  #features(current: string, requested: readonly (string | null)[], permissions: bigint): string[] {
    const before = JSON.parse(current) as string[];
    const wanted = new Set(requested.filter((feature): feature is string => feature !== null));
    const added = [...wanted].filter((feature) => !before.includes(feature));
    const removed = before.filter((feature) => !wanted.has(feature) && feature in MUTABLE_GUILD_FEATURES);
    for (const feature of [...added, ...removed]) {
      const bit = MUTABLE_GUILD_FEATURES[feature];
      if (bit === undefined) {
        const index = requested.indexOf(feature);
        throw invalidForm(`features.${index}`, FormErrors.choices(Object.keys(MUTABLE_GUILD_FEATURES)));
      }
      if (!has(permissions, PermissionFlags[bit])) throw new HearthError('MissingPermissions');
    }
    return [...before.filter((feature) => !removed.includes(feature)), ...added];
  }

  // ---- DELETE /guilds/{id}, leave ----

  /** Owner only (50013 for other members); GUILD_DELETE after commit. */
  async deleteGuild(userId: string, guildId: string): Promise<void> {
    const afterwards: Array<() => Promise<void>> = [];
    await this.#deps.storage.transaction(async (tx) => {
      const access = await this.#access.member(tx, guildId, userId);
      if (!access.isOwner) throw new HearthError('MissingPermissions');
      await store.clearPrimaryGuild(tx, guildId);
      // Messages, threads and their files live outside the guild's cascade: their owners remove them.
      for (const channelId of await store.allGuildChannelIds(tx, guildId)) {
        const after = await this.#deps.channelDeleted?.(tx, channelId);
        if (after) afterwards.push(after);
      }
      await store.deleteGuild(tx, guildId);
    });
    await this.#publish(guildId, [{ type: 'GUILD_DELETE', data: { id: guildId } }]);
    // A lobby linked to one of its channels learns it lost the link (LOBBY_UPDATE).
    for (const after of afterwards) await after();
  }

  // ---- Guild tags (GUILDS.md §3.4) ----

  /**
   * Hearth's PUT /users/@me/primary-guild: wear (or stop wearing) the tag of a guild one is a member of;
   * a guild without a tag cannot be chosen (50035).
   */
  async setPrimaryGuild(userId: string, input: unknown): Promise<void> {
    const { identity_guild_id: guildId, identity_enabled: enabled = true } = parse(SetPrimaryGuild, input);
    const db = this.#deps.storage.db;
    if (guildId === null) {
      await store.setPrimaryGuild(db, userId, null, null);
      return;
    }
    const guild = await store.findGuild(db, guildId);
    if (!guild || !(await store.findMember(db, guildId, userId))) throw new HearthError('UnknownGuild');
    if (guild.tag === null) throw invalidForm('identity_guild_id', FormErrors.invalid());
    await store.setPrimaryGuild(db, userId, guildId, enabled);
  }

  // ---- Audit log (GUILDS.md §8) ----

  /** GET /guilds/{id}/audit-logs: VIEW_AUDIT_LOG; newest first; `users` holds the actors and user targets. */
  async listAuditLog(userId: string, guildId: string, query: AuditLogQuery) {
    const db = this.#deps.storage.db;
    await this.#access.requireGuild(db, guildId, userId, PermissionFlags.ViewAuditLog);
    const rows = await store.listAuditLogEntries(db, guildId, {
      userId: query.user_id,
      targetId: query.target_id,
      actionType: query.action_type,
      before: query.before,
      after: query.after,
      limit: query.limit ?? GuildLimits.auditLogDefault,
    });
    const entries = rows.map(toAuditLogEntryObject).sort((a, b) => compareIds(b.id, a.id));
    const ids = entries.flatMap((entry) => [entry.user_id, entry.target_id]).filter((id) => id !== null);
    const users = await this.#deps.users.getUsers(ids);
    return {
      audit_log_entries: entries,
      users: [...users.values()].map((user) => toUserObject(user)),
      application_commands: [],
      auto_moderation_rules: [],
      guild_scheduled_events: [],
      integrations: [],
      threads: [],
      webhooks: [],
    };
  }

  async #publish(guildId: string, events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish({ ...event, audience: { guildId } });
  }

  // ---- Entitlements ----
  async guildExists(guildId: string): Promise<boolean> {
    return store.guildExists(this.#deps.storage.db, guildId);
  }
}

/** A guild row by the wire names the audit log compares (`premium_progress_bar_enabled` as a boolean). */
function auditView(row: Awaited<ReturnType<typeof store.findGuild>>): Record<string, unknown> | undefined {
  if (!row) return undefined;
  return {
    ...row,
    features: JSON.parse(row.features) as string[],
    verification_level: Number(row.verification_level),
    default_message_notifications: Number(row.default_message_notifications),
    explicit_content_filter: Number(row.explicit_content_filter),
    afk_timeout: Number(row.afk_timeout),
    system_channel_flags: Number(row.system_channel_flags),
    premium_progress_bar_enabled: Number(row.premium_progress_bar_enabled) === 1,
  };
}

/** Snowflakes compared as numbers. */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
