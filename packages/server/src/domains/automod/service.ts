import {
  AutoModerationActionTypes as Actions,
  AuditLogEvents,
  AutoModerationEventTypes,
  AutoModerationLimits,
  ChannelTypes,
  FormErrors,
  PermissionFlags,
  AutoModerationTriggerTypes as Triggers,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { formErrorTree, HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import { type AuditLog, diffChanges } from '../guilds/audit-log.js';
import { basePermissions, has } from '../guilds/permissions.js';
import * as guildStore from '../guilds/store.js';
import { compileRegex, isMatchableKeyword } from './matcher.js';
import { type ActionObject, type RuleObject, type TriggerMetadataObject, toRuleObject } from './objects.js';
import { type Action, CreateRule, ModifyRule, type TriggerMetadata } from './schemas.js';
import * as store from './store.js';

export interface AutoModDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
}

/** The keys an audit entry of a rule lists. */
const AUDITED_KEYS = [
  'name',
  'event_type',
  'trigger_type',
  'trigger_metadata',
  'actions',
  'enabled',
  'exempt_roles',
  'exempt_channels',
] as const;

/** Rules per guild of each trigger type (DOCS auto-moderation: Trigger Types, "Max per Guild"). */
function maxRulesOf(triggerType: number): number {
  return triggerType === Triggers.Keyword
    ? AutoModerationLimits.keywordRules
    : AutoModerationLimits.otherRules;
}

/** Which actions a trigger type takes: TIMEOUT only for KEYWORD and MENTION_SPAM (DOCS: Action Types). */
function actionsFor(triggerType: number): number[] {
  const timeout = triggerType === Triggers.Keyword || triggerType === Triggers.MentionSpam;
  return [Actions.BlockMessage, Actions.SendAlertMessage, ...(timeout ? [Actions.Timeout] : [])];
}

/** Channels an alert can be posted in: those that hold messages. */
const ALERT_CHANNEL_TYPES: readonly number[] = [
  ChannelTypes.GuildText,
  ChannelTypes.GuildVoice,
  ChannelTypes.GuildAnnouncement,
  ChannelTypes.GuildStageVoice,
];

/**
 * AutoMod rules (GUILDS.md §10; DOCS auto-moderation): list, get, create, modify, delete, each needing
 * MANAGE_GUILD, each change audited (140–142) in its transaction and announced to the members who may
 * manage the guild (AUTO_MODERATION_RULE_*, intent AUTO_MODERATION_CONFIGURATION) once committed.
 */
export class AutoModService {
  readonly #deps: AutoModDeps;

  constructor(deps: AutoModDeps) {
    this.#deps = deps;
  }

  async listRules(userId: string, guildId: string): Promise<RuleObject[]> {
    const db = this.#deps.storage.db;
    await this.#deps.access.requireGuild(db, guildId, userId, PermissionFlags.ManageGuild);
    return (await store.guildRules(db, guildId)).map(toRuleObject);
  }

  async getRule(userId: string, guildId: string, ruleId: string): Promise<RuleObject> {
    const db = this.#deps.storage.db;
    await this.#deps.access.requireGuild(db, guildId, userId, PermissionFlags.ManageGuild);
    return toRuleObject(await this.#rule(db, guildId, ruleId));
  }

  async createRule(
    userId: string,
    guildId: string,
    input: unknown,
    reason: string | null,
  ): Promise<RuleObject> {
    const body = parse(CreateRule, input ?? {});
    const { storage, snowflakes, clock } = this.#deps;
    const events: BusEvent[] = [];
    const created = await storage.transaction(async (tx) => {
      const access = await this.#deps.access.requireGuild(tx, guildId, userId, PermissionFlags.ManageGuild);
      const triggerType = body.trigger_type;
      checkEventType(body.event_type);
      const metadata = triggerMetadata(triggerType, body.trigger_metadata ?? null);
      const actions = await this.#actions(tx, access, guildId, triggerType, body.actions);
      const exemptRoles = await this.#exemptRoles(tx, guildId, body.exempt_roles ?? []);
      const exemptChannels = await this.#exemptChannels(tx, guildId, body.exempt_channels ?? []);
      const max = maxRulesOf(triggerType);
      if ((await store.countRulesOfType(tx, guildId, triggerType)) >= max)
        throw new HearthError('InvalidFormBody', {
          errors: formErrorTree([[[], FormErrors.autoModerationMaxRulesOfType(triggerType, max)]]),
        });
      const id = snowflakes.next();
      await store.insertRule(tx, {
        id,
        guild_id: guildId,
        name: body.name,
        creator_id: userId,
        event_type: body.event_type,
        trigger_type: triggerType,
        trigger_metadata: JSON.stringify(metadata),
        actions: JSON.stringify(actions),
        enabled: body.enabled === true ? 1 : 0,
        exempt_roles: JSON.stringify(exemptRoles),
        exempt_channels: JSON.stringify(exemptChannels),
        created_at: clock.now(),
      });
      const rule = toRuleObject(await this.#rule(tx, guildId, id));
      events.push(
        await this.#deps.auditLog.recordEvent(tx, {
          guildId,
          userId,
          targetId: id,
          actionType: AuditLogEvents.AutoModerationRuleCreate,
          changes: diffChanges(undefined, rule, AUDITED_KEYS),
          reason,
        }),
      );
      return rule;
    });
    await this.#publish([ruleEvent('AUTO_MODERATION_RULE_CREATE', created), ...events]);
    return created;
  }

  async modifyRule(
    userId: string,
    guildId: string,
    ruleId: string,
    input: unknown,
    reason: string | null,
  ): Promise<RuleObject> {
    const body = parse(ModifyRule, input ?? {});
    const events: BusEvent[] = [];
    const updated = await this.#deps.storage.transaction(async (tx) => {
      const access = await this.#deps.access.requireGuild(tx, guildId, userId, PermissionFlags.ManageGuild);
      const before = toRuleObject(await this.#rule(tx, guildId, ruleId));
      const triggerType = before.trigger_type;
      if (body.trigger_type !== undefined && body.trigger_type !== triggerType)
        throw invalidForm('trigger_type', FormErrors.choices([triggerType]));
      if (body.event_type !== undefined) checkEventType(body.event_type);
      const changes = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.event_type !== undefined ? { event_type: body.event_type } : {}),
        ...(body.trigger_metadata !== undefined
          ? { trigger_metadata: JSON.stringify(triggerMetadata(triggerType, body.trigger_metadata)) }
          : {}),
        ...(body.actions !== undefined && body.actions !== null
          ? { actions: JSON.stringify(await this.#actions(tx, access, guildId, triggerType, body.actions)) }
          : {}),
        ...(body.enabled !== undefined && body.enabled !== null ? { enabled: body.enabled ? 1 : 0 } : {}),
        ...(body.exempt_roles !== undefined
          ? { exempt_roles: JSON.stringify(await this.#exemptRoles(tx, guildId, body.exempt_roles ?? [])) }
          : {}),
        ...(body.exempt_channels !== undefined
          ? {
              exempt_channels: JSON.stringify(
                await this.#exemptChannels(tx, guildId, body.exempt_channels ?? []),
              ),
            }
          : {}),
      };
      await store.updateRule(tx, ruleId, changes);
      const after = toRuleObject(await this.#rule(tx, guildId, ruleId));
      const diff = diffChanges(before, after, AUDITED_KEYS);
      if (diff.length > 0)
        events.push(
          await this.#deps.auditLog.recordEvent(tx, {
            guildId,
            userId,
            targetId: ruleId,
            actionType: AuditLogEvents.AutoModerationRuleUpdate,
            changes: diff,
            reason,
          }),
        );
      return after;
    });
    await this.#publish([ruleEvent('AUTO_MODERATION_RULE_UPDATE', updated), ...events]);
    return updated;
  }

  async deleteRule(userId: string, guildId: string, ruleId: string, reason: string | null): Promise<void> {
    const events: BusEvent[] = [];
    const deleted = await this.#deps.storage.transaction(async (tx) => {
      await this.#deps.access.requireGuild(tx, guildId, userId, PermissionFlags.ManageGuild);
      const rule = toRuleObject(await this.#rule(tx, guildId, ruleId));
      await store.deleteRule(tx, ruleId);
      events.push(
        await this.#deps.auditLog.recordEvent(tx, {
          guildId,
          userId,
          targetId: ruleId,
          actionType: AuditLogEvents.AutoModerationRuleDelete,
          changes: diffChanges(rule, undefined, AUDITED_KEYS),
          reason,
        }),
      );
      return rule;
    });
    await this.#publish([ruleEvent('AUTO_MODERATION_RULE_DELETE', deleted), ...events]);
  }

  // ---- Steps ----

  async #rule(db: Executor, guildId: string, ruleId: string) {
    const row = await store.findRule(db, guildId, ruleId);
    // The platform's error table has no code for an unknown rule: the plain 404.
    if (!row) throw new HearthError('GeneralNotFound');
    return row;
  }

  /**
   * The actions in their stored (wire) shape: each allowed for the trigger type, an alert naming a
   * message channel of the guild, a timeout with its duration and a creator holding MODERATE_MEMBERS.
   */
  async #actions(
    tx: Executor,
    access: MemberAccess,
    guildId: string,
    triggerType: number,
    actions: readonly Action[],
  ): Promise<ActionObject[]> {
    const allowed = actionsFor(triggerType);
    const channelIds = actions.flatMap((action) =>
      action.metadata?.channel_id ? [action.metadata.channel_id] : [],
    );
    const channels = await guildStore.guildChannelIds(tx, guildId, channelIds);
    return actions.map((action, i) => {
      if (!allowed.includes(action.type)) throw invalidForm(`actions.${i}.type`, FormErrors.choices(allowed));
      const metadata = action.metadata ?? {};
      switch (action.type) {
        case Actions.SendAlertMessage: {
          const channelId = metadata.channel_id;
          if (channelId === undefined)
            throw invalidForm(`actions.${i}.metadata.channel_id`, FormErrors.required());
          const type = channels.get(channelId);
          if (type === undefined || !ALERT_CHANNEL_TYPES.includes(type))
            throw invalidForm(`actions.${i}.metadata.channel_id`, FormErrors.invalid());
          return { type: action.type, metadata: { channel_id: channelId } };
        }
        case Actions.Timeout: {
          const duration = metadata.duration_seconds;
          if (duration === undefined || duration === null)
            throw invalidForm(`actions.${i}.metadata.duration_seconds`, FormErrors.required());
          // The TIMEOUT action needs MODERATE_MEMBERS besides MANAGE_GUILD (DOCS: Permission Requirements).
          if (!has(basePermissions(access.input, this.#deps.clock.now()), PermissionFlags.ModerateMembers))
            throw new HearthError('MissingPermissions');
          return { type: action.type, metadata: { duration_seconds: duration } };
        }
        default: {
          const message = metadata.custom_message;
          return {
            type: action.type,
            metadata:
              message === undefined || message === null || message === '' ? {} : { custom_message: message },
          };
        }
      }
    });
  }

  /** Distinct roles, each one of the guild's. */
  async #exemptRoles(tx: Executor, guildId: string, ids: readonly string[]): Promise<string[]> {
    const roles = new Set((await guildStore.guildRoles(tx, guildId)).map((role) => role.id));
    ids.forEach((id, i) => {
      if (!roles.has(id)) throw invalidForm(`exempt_roles.${i}`, FormErrors.invalid());
    });
    return [...new Set(ids)];
  }

  /** Distinct channels (categories too: their channels are exempt with them), each one of the guild's. */
  async #exemptChannels(tx: Executor, guildId: string, ids: readonly string[]): Promise<string[]> {
    const channels = await guildStore.guildChannelIds(tx, guildId, ids);
    ids.forEach((id, i) => {
      if (!channels.has(id)) throw invalidForm(`exempt_channels.${i}`, FormErrors.invalid());
    });
    return [...new Set(ids)];
  }

  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}

/** Message rules run on MESSAGE_SEND; MEMBER_UPDATE belongs to profile rules, which Hearth refuses. */
function checkEventType(eventType: number): void {
  if (eventType !== AutoModerationEventTypes.MessageSend)
    throw invalidForm('event_type', FormErrors.choices([AutoModerationEventTypes.MessageSend]));
}

/**
 * The trigger metadata of a trigger type, every field of that type present (the rule object's shape);
 * fields of other types are dropped. Keywords must have something besides wildcards; regexes must compile.
 */
function triggerMetadata(triggerType: number, input: TriggerMetadata | null): TriggerMetadataObject {
  const metadata = input ?? {};
  const allowList = metadata.allow_list ?? [];
  allowList.forEach((keyword, i) => {
    if (!isMatchableKeyword(keyword))
      throw invalidForm(`trigger_metadata.allow_list.${i}`, FormErrors.invalid());
  });
  switch (triggerType) {
    case Triggers.Keyword: {
      const keywords = metadata.keyword_filter ?? [];
      keywords.forEach((keyword, i) => {
        if (!isMatchableKeyword(keyword))
          throw invalidForm(`trigger_metadata.keyword_filter.${i}`, FormErrors.invalid());
      });
      const patterns = metadata.regex_patterns ?? [];
      patterns.forEach((pattern, i) => {
        if (!compileRegex(pattern))
          throw invalidForm(`trigger_metadata.regex_patterns.${i}`, FormErrors.autoModerationInvalidRegex());
      });
      // KEYWORD rules take 100 allow-list entries, KEYWORD_PRESET rules 1000 (DOCS: Trigger Metadata Field Limits).
      if (allowList.length > AutoModerationLimits.allowList)
        throw invalidForm('trigger_metadata.allow_list', FormErrors.maxItems(AutoModerationLimits.allowList));
      return { keyword_filter: keywords, regex_patterns: patterns, allow_list: allowList };
    }
    case Triggers.KeywordPreset:
      return { presets: [...new Set(metadata.presets ?? [])], allow_list: allowList };
    case Triggers.MentionSpam: {
      const limit = metadata.mention_total_limit;
      if (limit === undefined || limit === null)
        throw invalidForm('trigger_metadata.mention_total_limit', FormErrors.required());
      return {
        mention_total_limit: limit,
        mention_raid_protection_enabled: metadata.mention_raid_protection_enabled === true,
      };
    }
    default:
      return {};
  }
}

/** Rule events reach members with MANAGE_GUILD (DISPATCH_PERMISSIONS), bots with the configuration intent. */
function ruleEvent(type: string, rule: RuleObject): BusEvent {
  return { type, data: rule, audience: { guildId: rule.guild_id } };
}
