import { AuditLogEvents, IntegrationTypes, PermissionFlags, Scopes } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Executor, Storage } from '../../storage/database.js';
import { recordWebhookEvent } from '../../storage/outbox.js';
import { toUserObject, type User } from '../accounts/service.js';
import type { GuildAccess } from './access.js';
import type { AuditLog } from './audit-log.js';
import * as store from './bot-install-store.js';
import { type GuildObject, toGuildObject, toMemberObject, toRoleObject } from './objects.js';
import { findGuild, findMember } from './store.js';

export interface BotInstallDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  /** The application's name and bot user (the applications domain owns them). */
  application: (id: string) => Promise<{ id: string; name: string; botUserId: string } | undefined>;
  /** A user by id, inside the caller's transaction (the accounts domain owns them). */
  user: (db: Executor, id: string) => Promise<User | undefined>;
}

/** The application whose bot is installed. */
export interface InstalledApplication {
  id: string;
  name: string;
  botUserId: string;
}

export interface BotInstallRequest {
  guildId: string;
  applicationId: string;
  /** The bits the managed role gets (OAuth2 `permissions`). */
  permissions: bigint;
  /** Who installs: they must hold MANAGE_GUILD in the guild. */
  actorId: string;
  reason?: string | null;
}

export interface BotInstallResult {
  guild: GuildObject;
  /** Gateway events to publish once the transaction has committed. */
  events: BusEvent[];
  /** False when the bot was already in the guild (its managed role was updated). */
  added: boolean;
  /** The bot's managed role. */
  roleId: string;
}

/**
 * The `bot` scope (OAuth2, Bot Authorization Flow): the application's bot joins the guild with a managed
 * role named after the application holding the requested permissions; shared by the authorize flow and the CLI.
 */
export class BotInstalls {
  readonly #deps: BotInstallDeps;

  constructor(deps: BotInstallDeps) {
    this.#deps = deps;
  }

  /** The whole install in its own transaction, with its APPLICATION_AUTHORIZED event (operators, CLI). */
  async install(request: BotInstallRequest): Promise<BotInstallResult> {
    const application = await this.#deps.application(request.applicationId);
    if (!application) throw new HearthError('UnknownApplication');
    const result = await this.#deps.storage.transaction(async (tx) => {
      const installed = await this.installIn(tx, application, request);
      const installer = await this.#deps.user(tx, request.actorId);
      await recordWebhookEvent(tx, {
        id: this.#deps.snowflakes.next(),
        type: 'APPLICATION_AUTHORIZED',
        applicationId: request.applicationId,
        data: {
          integration_type: IntegrationTypes.GuildInstall,
          user: installer ? toUserObject(installer) : { id: request.actorId },
          scopes: [Scopes.Bot],
          guild: installed.guild,
        },
        createdAt: this.#deps.clock.now(),
      });
      return installed;
    });
    await this.publish(result.events);
    return result;
  }

  /** The install inside the caller's transaction (the authorize flow records its own webhook event). */
  async installIn(
    tx: Executor,
    application: InstalledApplication,
    request: Omit<BotInstallRequest, 'applicationId'>,
  ): Promise<BotInstallResult> {
    await this.#deps.access.requireGuild(tx, request.guildId, request.actorId, PermissionFlags.ManageGuild);
    const botUserId = application.botUserId;
    if (await store.isBanned(tx, request.guildId, botUserId)) throw new HearthError('MissingPermissions');
    const events: BusEvent[] = [];
    const audience = { guildId: request.guildId };
    const roleId = await this.#managedRole(tx, request, application, events);
    const member = await findMember(tx, request.guildId, botUserId);
    if (!member) await store.insertMember(tx, request.guildId, botUserId, this.#deps.clock.now());
    if (!(await store.hasMemberRole(tx, request.guildId, botUserId, roleId)))
      await store.insertMemberRole(tx, request.guildId, botUserId, roleId);
    if (!member) {
      const row = await findMember(tx, request.guildId, botUserId);
      const bot = await this.#deps.user(tx, botUserId);
      const roleIds = (await store.memberRoleIds(tx, request.guildId, botUserId)).map((r) => r.role_id);
      if (row && bot) {
        events.push({
          type: 'GUILD_MEMBER_ADD',
          data: { ...toMemberObject(row, roleIds, toUserObject(bot)), guild_id: request.guildId },
          audience,
        });
      }
      events.push(await this.#audit(tx, request, botUserId));
    }
    const guild = await findGuild(tx, request.guildId);
    if (!guild) throw new HearthError('UnknownGuild');
    const roles = (await store.guildRoles(tx, request.guildId)).map(toRoleObject);
    return { guild: toGuildObject(guild, roles, []), events, added: !member, roleId };
  }

  /**
   * A guild install with `applications.commands` alone (OAuth2: the commands scope without `bot`): no bot
   * joins, but the application's guild commands become usable there. MANAGE_GUILD, as for a bot.
   */
  async installCommandsIn(
    tx: Executor,
    application: InstalledApplication,
    request: { guildId: string; actorId: string },
  ): Promise<GuildObject> {
    await this.#deps.access.requireGuild(tx, request.guildId, request.actorId, PermissionFlags.ManageGuild);
    await store.insertCommandsInstall(tx, {
      application_id: application.id,
      guild_id: request.guildId,
      installer_id: request.actorId,
      created_at: this.#deps.clock.now(),
    });
    const guild = await findGuild(tx, request.guildId);
    if (!guild) throw new HearthError('UnknownGuild');
    const roles = (await store.guildRoles(tx, request.guildId)).map(toRoleObject);
    return toGuildObject(guild, roles, []);
  }

  async publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }

  /** Creates the bot's managed role, or sets the permissions of the one it has; answers its id. */
  async #managedRole(
    tx: Executor,
    request: Omit<BotInstallRequest, 'applicationId'>,
    application: InstalledApplication,
    events: BusEvent[],
  ): Promise<string> {
    const audience = { guildId: request.guildId };
    const permissions = request.permissions.toString();
    const existing = await store.managedRoleOf(tx, request.guildId, application.botUserId);
    if (existing) {
      if (existing.permissions !== permissions) {
        await store.setRolePermissions(tx, existing.id, permissions);
        const role = toRoleObject(await store.findRole(tx, existing.id));
        events.push({ type: 'GUILD_ROLE_UPDATE', data: { guild_id: request.guildId, role }, audience });
      }
      return existing.id;
    }
    const id = this.#deps.snowflakes.next();
    await store.insertRole(tx, {
      id,
      guild_id: request.guildId,
      name: application.name,
      permissions,
      color: 0,
      secondary_color: null,
      tertiary_color: null,
      hoist: 0,
      icon: null,
      unicode_emoji: null,
      position: 1,
      managed: 1,
      mentionable: 0,
      bot_id: application.botUserId,
      integration_id: null,
      created_at: this.#deps.clock.now(),
    });
    const role = toRoleObject(await store.findRole(tx, id));
    events.push({ type: 'GUILD_ROLE_CREATE', data: { guild_id: request.guildId, role }, audience });
    return id;
  }

  /** The BOT_ADD entry, in the install's transaction, and its gateway event. */
  async #audit(
    tx: Executor,
    request: Omit<BotInstallRequest, 'applicationId'>,
    botUserId: string,
  ): Promise<BusEvent> {
    const reason = request.reason ?? null;
    const id = await this.#deps.auditLog.record(tx, {
      guildId: request.guildId,
      userId: request.actorId,
      targetId: botUserId,
      actionType: AuditLogEvents.BotAdd,
      reason,
    });
    return {
      type: 'GUILD_AUDIT_LOG_ENTRY_CREATE',
      data: {
        id,
        guild_id: request.guildId,
        user_id: request.actorId,
        target_id: botUserId,
        action_type: AuditLogEvents.BotAdd,
        changes: [],
        ...(reason === null ? {} : { reason }),
      },
      audience: { guildId: request.guildId },
    };
  }
}
