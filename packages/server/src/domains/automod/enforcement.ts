import { createHash } from 'node:crypto';
import {
  AutoModerationActionTypes as Actions,
  AuditLogEvents,
  AutoModerationEventTypes,
  PermissionFlags,
  AutoModerationTriggerTypes as Triggers,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { RateLimitStore } from '../../ratelimit/store.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildAccess } from '../guilds/access.js';
import type { AuditLog } from '../guilds/audit-log.js';
import { basePermissions, has } from '../guilds/permissions.js';
import * as guildStore from '../guilds/store.js';
import { type KeywordHit, matchKeywords, matchRegexes, spamFingerprint, uniqueMentions } from './matcher.js';
import { type ActionExecutionObject, type ActionObject, type RuleObject, toRuleObject } from './objects.js';
import { KEYWORD_PRESETS } from './presets.js';
import * as store from './store.js';

/**
 * SPAM (DOCS: "content represents generic spam") is, in Hearth, a heuristic over the author's recent
 * messages in the guild, counted in fixed windows shared by every node (the rate-limit store): the same
 * text (case and spacing folded) sent more than 3 times within 30 s, or more than 10 messages of any
 * text within 5 s. Edits never count: they send nothing new.
 */
export const SpamHeuristic = {
  repeatLimit: 3,
  repeatWindowMs: 30_000,
  floodLimit: 10,
  floodWindowMs: 5_000,
} as const;

/**
 * MENTION_SPAM's `mention_raid_protection_enabled`, in Hearth: besides one message over
 * `mention_total_limit`, a raid of pings — more than 5 messages carrying mentions from one author within a
 * fixed 60 s window — triggers the rule.
 */
export const MentionRaidHeuristic = { messageLimit: 5, windowMs: 60_000 } as const;

/** A message about to be created or edited, as the message core hands it over. */
export interface MessageScreening {
  guildId: string;
  channelId: string;
  authorId: string;
  content: string;
  /** Embed objects of the message: their text is searched with the content. */
  embeds?: readonly unknown[];
  /** An edit is checked like a send (DOCS: Event Types) but does not count toward SPAM. */
  edit?: boolean;
}

/** What the message core hands its guards (its MessageDraft): DMs have no guild and no AutoMod. */
export interface MessageDraft {
  guildId: string | null;
  channelId: string;
  authorId: string;
  content: string;
  embeds: readonly unknown[];
  edit: boolean;
}

/** One action a matched rule runs. */
export interface PendingExecution {
  rule: RuleObject;
  action: ActionObject;
  matchedKeyword: string | null;
  matchedContent: string | null;
}

export interface AutoModVerdict {
  /** Whether a BLOCK_MESSAGE action matched: the message must not be stored (200000). */
  blocked: boolean;
  executions: PendingExecution[];
  screening: MessageScreening;
}

/** The alert of SEND_ALERT_MESSAGE: a system message of type 24 that the message core stores. */
export interface AlertMessage {
  guildId: string;
  channelId: string;
  /** The member whose message triggered the rule: the alert is shown as theirs. */
  authorId: string;
  content: string;
  embeds: Array<Record<string, unknown>>;
}

/** The message core's side of SEND_ALERT_MESSAGE: stores the alert in `tx`, answers its id and event. */
export interface AlertMessages {
  postAlert(tx: Executor, alert: AlertMessage): Promise<{ id: string; event: BusEvent }>;
}

/** The members side of TIMEOUT: times the member out in `tx`, answers GUILD_MEMBER_UPDATE (if a member). */
export interface MemberTimeouts {
  timeoutBySystem(
    tx: Executor,
    guildId: string,
    userId: string,
    until: number,
  ): Promise<BusEvent | undefined>;
}

export interface AutoModEnforcementDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  counters: RateLimitStore;
  alerts: AlertMessages;
  timeouts: MemberTimeouts;
}

const PASS: Omit<AutoModVerdict, 'screening'> = { blocked: false, executions: [] };

/**
 * Runs a guild's AutoMod rules over messages (GUILDS.md §10). `checkMessage` decides, touching nothing
 * but the spam counters; `execute` carries the actions out in a transaction of its own — alerts, timeouts,
 * audit entries 143–145 — and publishes them and AUTO_MODERATION_ACTION_EXECUTION once committed.
 * `messageGuard` is both, as the message core calls them.
 */
export class AutoModEnforcement {
  readonly #deps: AutoModEnforcementDeps;

  constructor(deps: AutoModEnforcementDeps) {
    this.#deps = deps;
  }

  /**
   * The message core's guard for creates and edits (its MessageGuard): guild messages are checked; a
   * blocked one is refused with 200000. The actions run once the create or edit has settled — for a
   * blocked message at once after the refusal; for a stored one naming it; for one refused by a later
   * step (slowmode…) not at all, since nothing was posted.
   */
  messageGuard() {
    return {
      check: async (db: Executor, draft: MessageDraft) => {
        if (draft.guildId === null) return undefined;
        const verdict = await this.checkMessage(db, { ...draft, guildId: draft.guildId });
        if (verdict.executions.length === 0) return undefined;
        return {
          ...(verdict.blocked ? { refusal: new HearthError('AutoModerationMessageBlocked') } : {}),
          settle: async (messageId: string | null) => {
            if (verdict.blocked) await this.execute(verdict, null);
            else if (messageId !== null) await this.execute(verdict, messageId);
          },
        };
      },
    };
  }

  /**
   * Thread titles (a thread's name, a forum post's title) pass the MESSAGE_SEND rules as an edit would (no
   * SPAM count): the matched actions run, and a BLOCK_MESSAGE match refuses the title with 200001.
   */
  async screenTitle(screening: Omit<MessageScreening, 'edit' | 'embeds'>): Promise<void> {
    const verdict = await this.checkMessage(this.#deps.storage.db, { ...screening, edit: true });
    if (verdict.executions.length === 0) return;
    await this.execute(verdict, null);
    if (verdict.blocked) throw new HearthError('AutoModerationTitleBlocked');
  }

  /** The rules a message matches and their actions; members who may manage the guild are not checked. */
  async checkMessage(db: Executor, screening: MessageScreening): Promise<AutoModVerdict> {
    const { guildId, channelId, authorId } = screening;
    const rules = (await store.enabledRules(db, guildId, AutoModerationEventTypes.MessageSend)).map(
      toRuleObject,
    );
    if (rules.length === 0) return { ...PASS, screening };
    // A lobby member writing through a linked channel may be no member of the guild: no role exempts them.
    const access = (await guildStore.findMember(db, guildId, authorId))
      ? await this.#deps.access.member(db, guildId, authorId)
      : undefined;
    const now = this.#deps.clock.now();
    // MANAGE_GUILD (and so ADMINISTRATOR and the owner) exempts from every rule (DOCS auto-moderation).
    if (access && has(basePermissions(access.input, now), PermissionFlags.ManageGuild))
      return { ...PASS, screening };
    const roles = new Set(access?.input.roles.map((role) => role.id) ?? []);
    const channel = await guildStore.findChannelForAccess(db, channelId);
    const channels = new Set([channelId, ...(channel?.parent_id ? [channel.parent_id] : [])]);
    const text = messageText(screening);
    const executions: PendingExecution[] = [];
    for (const rule of rules) {
      if (rule.exempt_roles.some((id) => roles.has(id))) continue;
      if (rule.exempt_channels.some((id) => channels.has(id))) continue;
      const hit = await this.#trigger(rule, text, screening, now);
      if (!hit) continue;
      for (const action of rule.actions)
        executions.push({
          rule,
          action,
          matchedKeyword: hit === true ? null : hit.keyword,
          matchedContent: hit === true ? null : hit.content,
        });
    }
    return {
      blocked: executions.some((execution) => execution.action.type === Actions.BlockMessage),
      executions,
      screening,
    };
  }

  /**
   * Carries out a verdict's actions and announces each: for a stored message `messageId` names it; for a
   * blocked one it is null. Call it after the message's own transaction has committed (or was refused).
   */
  async execute(verdict: AutoModVerdict, messageId: string | null): Promise<void> {
    if (verdict.executions.length === 0) return;
    const { screening } = verdict;
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      for (const execution of verdict.executions) {
        const payload = executionPayload(execution, screening, messageId);
        switch (execution.action.type) {
          case Actions.BlockMessage:
            await this.#audit(tx, events, execution, screening, AuditLogEvents.AutoModerationBlockMessage);
            break;
          case Actions.SendAlertMessage: {
            // A deleted alert channel takes no alert; the execution is still announced.
            const target = await guildStore.findChannelForAccess(
              tx,
              execution.action.metadata.channel_id ?? '',
            );
            if (target?.guild_id !== screening.guildId) break;
            const alert = await this.#deps.alerts.postAlert(tx, this.#alert(execution, verdict));
            payload.alert_system_message_id = alert.id;
            events.push(alert.event);
            await this.#audit(tx, events, execution, screening, AuditLogEvents.AutoModerationFlagToChannel);
            break;
          }
          case Actions.Timeout: {
            const seconds = execution.action.metadata.duration_seconds ?? 0;
            const until = this.#deps.clock.now() + seconds * 1000;
            const update = await this.#deps.timeouts.timeoutBySystem(
              tx,
              screening.guildId,
              screening.authorId,
              until,
            );
            if (update) events.push(update);
            await this.#audit(
              tx,
              events,
              execution,
              screening,
              AuditLogEvents.AutoModerationUserCommunicationDisabled,
            );
            break;
          }
          default:
            break;
        }
        events.push({
          type: 'AUTO_MODERATION_ACTION_EXECUTION',
          data: payload,
          audience: { guildId: screening.guildId },
        });
      }
    });
    for (const event of events) await this.#deps.bus.publish(event);
  }

  // ---- Triggers ----

  /** A keyword hit, `true` for a trigger without keywords (spam, mentions), or undefined. */
  async #trigger(
    rule: RuleObject,
    text: string,
    screening: MessageScreening,
    now: number,
  ): Promise<KeywordHit | true | undefined> {
    const metadata = rule.trigger_metadata;
    switch (rule.trigger_type) {
      case Triggers.Keyword:
        return (
          matchKeywords(text, metadata.keyword_filter ?? [], metadata.allow_list ?? []) ??
          matchRegexes(text, metadata.regex_patterns ?? [], metadata.allow_list ?? [])
        );
      case Triggers.KeywordPreset: {
        const words = (metadata.presets ?? []).flatMap((preset) => KEYWORD_PRESETS[preset] ?? []);
        return matchKeywords(text, words, metadata.allow_list ?? []);
      }
      case Triggers.MentionSpam:
        return (await this.#mentionSpam(rule, screening, now)) || undefined;
      case Triggers.Spam:
        return (await this.#spam(screening, now)) || undefined;
      default:
        return undefined;
    }
  }

  async #mentionSpam(rule: RuleObject, screening: MessageScreening, now: number): Promise<boolean> {
    const mentions = uniqueMentions(screening.content);
    if (mentions.length > (rule.trigger_metadata.mention_total_limit ?? Number.POSITIVE_INFINITY))
      return true;
    if (!rule.trigger_metadata.mention_raid_protection_enabled || mentions.length === 0 || screening.edit)
      return false;
    const { messageLimit, windowMs } = MentionRaidHeuristic;
    const key = `automod:raid:${screening.guildId}:${screening.authorId}`;
    return (await this.#deps.counters.hit(key, windowMs, now)).count > messageLimit;
  }

  async #spam(screening: MessageScreening, now: number): Promise<boolean> {
    if (screening.edit) return false;
    const { counters } = this.#deps;
    const author = `${screening.guildId}:${screening.authorId}`;
    const flood = await counters.hit(`automod:flood:${author}`, SpamHeuristic.floodWindowMs, now);
    const fingerprint = spamFingerprint(screening.content);
    if (fingerprint === '') return flood.count > SpamHeuristic.floodLimit;
    const digest = createHash('sha256').update(fingerprint).digest('base64url');
    const repeat = await counters.hit(
      `automod:repeat:${author}:${digest}`,
      SpamHeuristic.repeatWindowMs,
      now,
    );
    return flood.count > SpamHeuristic.floodLimit || repeat.count > SpamHeuristic.repeatLimit;
  }

  // ---- Actions ----

  /**
   * The alert as the platform posts it: the member's content, and an `auto_moderation_message` embed whose
   * fields name the rule, the channel and what matched (and the timeout the same rule applied).
   */
  #alert(execution: PendingExecution, verdict: AutoModVerdict): AlertMessage {
    const { screening } = verdict;
    const field = (name: string, value: string) => ({ name, value, inline: false });
    const timeout = verdict.executions.find(
      (other) => other.rule.id === execution.rule.id && other.action.type === Actions.Timeout,
    );
    return {
      guildId: screening.guildId,
      channelId: execution.action.metadata.channel_id ?? screening.channelId,
      authorId: screening.authorId,
      content: screening.content,
      embeds: [
        {
          type: 'auto_moderation_message',
          description: screening.content,
          fields: [
            field('rule_name', execution.rule.name),
            field('channel_id', screening.channelId),
            field('decision_id', this.#deps.snowflakes.next()),
            ...(execution.matchedKeyword === null ? [] : [field('keyword', execution.matchedKeyword)]),
            ...(execution.matchedContent === null
              ? []
              : [field('keyword_matched_content', execution.matchedContent)]),
            ...(timeout
              ? [field('timeout_duration', String(timeout.action.metadata.duration_seconds ?? 0))]
              : []),
          ],
        },
      ],
    };
  }

  /** The action's audit entry (143–145): the member acted upon, the rule and the channel in its options. */
  async #audit(
    tx: Executor,
    events: BusEvent[],
    execution: PendingExecution,
    screening: MessageScreening,
    actionType: (typeof AuditLogEvents)[keyof typeof AuditLogEvents],
  ): Promise<void> {
    events.push(
      await this.#deps.auditLog.recordEvent(tx, {
        guildId: screening.guildId,
        userId: screening.authorId,
        targetId: screening.authorId,
        actionType,
        options: {
          auto_moderation_rule_name: execution.rule.name,
          auto_moderation_rule_trigger_type: String(execution.rule.trigger_type),
          channel_id: screening.channelId,
        },
      }),
    );
  }
}

function executionPayload(
  execution: PendingExecution,
  screening: MessageScreening,
  messageId: string | null,
): ActionExecutionObject {
  return {
    guild_id: screening.guildId,
    action: execution.action,
    rule_id: execution.rule.id,
    rule_trigger_type: execution.rule.trigger_type,
    user_id: screening.authorId,
    channel_id: screening.channelId,
    ...(messageId === null ? {} : { message_id: messageId }),
    content: screening.content,
    matched_keyword: execution.matchedKeyword,
    matched_content: execution.matchedContent,
  };
}

/** The text keyword rules search: the content, then each embed's title, description, fields, footer, author. */
function messageText(screening: MessageScreening): string {
  const parts = [screening.content];
  for (const embed of screening.embeds ?? []) {
    if (typeof embed !== 'object' || embed === null) continue;
    const e = embed as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === 'string' ? [value] : []);
    parts.push(...text(e['title']), ...text(e['description']));
    if (Array.isArray(e['fields']))
      for (const f of e['fields'] as Array<Record<string, unknown>>)
        parts.push(...text(f?.['name']), ...text(f?.['value']));
    parts.push(...text((e['footer'] as Record<string, unknown> | undefined)?.['text']));
    parts.push(...text((e['author'] as Record<string, unknown> | undefined)?.['name']));
  }
  return parts.filter((part) => part !== '').join('\n');
}
