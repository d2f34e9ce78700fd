import type { RuleRow } from './store.js';

/**
 * Wire objects of AutoMod (DOCS auto-moderation: Auto Moderation Rule Object, Action Object; gateway
 * Auto Moderation Action Execution). Rows hold the normalized trigger metadata and actions as JSON, in the
 * shape the wire has for their trigger type, so serializing is reading them back.
 */

/** Trigger metadata as the rule object carries it: only the fields of its trigger type, all present. */
export interface TriggerMetadataObject {
  keyword_filter?: string[];
  regex_patterns?: string[];
  presets?: number[];
  allow_list?: string[];
  mention_total_limit?: number;
  mention_raid_protection_enabled?: boolean;
}

export interface ActionObject {
  type: number;
  metadata: { custom_message?: string; channel_id?: string; duration_seconds?: number };
}

export interface RuleObject {
  [key: string]: unknown;
  id: string;
  guild_id: string;
  name: string;
  creator_id: string;
  event_type: number;
  trigger_type: number;
  trigger_metadata: TriggerMetadataObject;
  actions: ActionObject[];
  enabled: boolean;
  exempt_roles: string[];
  exempt_channels: string[];
}

export function toRuleObject(row: RuleRow): RuleObject {
  return {
    id: row.id,
    guild_id: row.guild_id,
    name: row.name,
    creator_id: row.creator_id,
    event_type: Number(row.event_type),
    trigger_type: Number(row.trigger_type),
    trigger_metadata: JSON.parse(row.trigger_metadata) as TriggerMetadataObject,
    actions: JSON.parse(row.actions) as ActionObject[],
    enabled: Number(row.enabled) === 1,
    exempt_roles: JSON.parse(row.exempt_roles) as string[],
    exempt_channels: JSON.parse(row.exempt_channels) as string[],
  };
}

/** AUTO_MODERATION_ACTION_EXECUTION's payload (GUILDS.md §10). */
export interface ActionExecutionObject {
  [key: string]: unknown;
  guild_id: string;
  action: ActionObject;
  rule_id: string;
  rule_trigger_type: number;
  user_id: string;
  channel_id: string;
  message_id?: string;
  alert_system_message_id?: string;
  /** The message's content; empty for bots without MESSAGE_CONTENT. */
  content: string;
  matched_keyword: string | null;
  /** The text that matched; empty for bots without MESSAGE_CONTENT. */
  matched_content: string | null;
}
