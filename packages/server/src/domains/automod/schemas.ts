import {
  AutoModerationActionTypes,
  AutoModerationEventTypes,
  AutoModerationKeywordPresetTypes,
  AutoModerationTriggerTypes,
  AutoModerationLimits as L,
} from '@hearth/protocol';
import { type Static, type TSchema, Type } from 'typebox';

/**
 * Request shapes of the AutoMod rule routes (DOCS auto-moderation: Create / Modify Auto Moderation Rule;
 * OAS `*UpsertRequest`). What depends on the trigger type (which metadata, which actions, the allow-list
 * size) is the service's, since one body shape serves every trigger.
 */

const Snowflake = Type.String({ format: 'snowflake' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** An integer out of a list: one `enum` keyword, so a wrong value gets one BASE_TYPE_CHOICES leaf. */
const Choice = (values: readonly number[]) => Type.Unsafe<number>({ type: 'integer', enum: [...values] });

/** Trigger types Hearth enforces; MEMBER_PROFILE (6) rules watch profile edits, which Hearth does not check. */
export const SUPPORTED_TRIGGER_TYPES: readonly number[] = [
  AutoModerationTriggerTypes.Keyword,
  AutoModerationTriggerTypes.Spam,
  AutoModerationTriggerTypes.KeywordPreset,
  AutoModerationTriggerTypes.MentionSpam,
];

const Keyword = Type.String({ minLength: 1, maxLength: L.keywordLength });

export const TriggerMetadata = Type.Object({
  keyword_filter: Type.Optional(Nullable(Type.Array(Keyword, { maxItems: L.keywordFilter }))),
  regex_patterns: Type.Optional(
    Nullable(
      Type.Array(Type.String({ minLength: 1, maxLength: L.regexLength }), { maxItems: L.regexPatterns }),
    ),
  ),
  presets: Type.Optional(Nullable(Type.Array(Choice(Object.values(AutoModerationKeywordPresetTypes))))),
  // The larger (KEYWORD_PRESET) bound; KEYWORD's 100 is checked by the service.
  allow_list: Type.Optional(Nullable(Type.Array(Keyword, { maxItems: L.allowListPreset }))),
  mention_total_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: L.mentionTotalLimitMax }))),
  mention_raid_protection_enabled: Type.Optional(Nullable(Type.Boolean())),
});
export type TriggerMetadata = Static<typeof TriggerMetadata>;

export const Action = Type.Object({
  type: Choice(Object.values(AutoModerationActionTypes)),
  metadata: Type.Optional(
    Nullable(
      Type.Object({
        custom_message: Type.Optional(Nullable(Type.String({ maxLength: L.customMessage }))),
        channel_id: Type.Optional(Snowflake),
        duration_seconds: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: L.timeoutMaxSeconds }))),
      }),
    ),
  ),
});
export type Action = Static<typeof Action>;

const ruleFields = {
  name: Type.String({ minLength: 1, maxLength: L.ruleNameMax }),
  event_type: Choice(Object.values(AutoModerationEventTypes)),
  trigger_metadata: Type.Optional(Nullable(TriggerMetadata)),
  actions: Type.Array(Action, { minItems: L.actionsMin, maxItems: L.actionsMax }),
  enabled: Type.Optional(Nullable(Type.Boolean())),
  exempt_roles: Type.Optional(Nullable(Type.Array(Snowflake, { maxItems: L.exemptRoles }))),
  exempt_channels: Type.Optional(Nullable(Type.Array(Snowflake, { maxItems: L.exemptChannels }))),
};

export const CreateRule = Type.Object({
  ...ruleFields,
  trigger_type: Choice(SUPPORTED_TRIGGER_TYPES),
});
export type CreateRule = Static<typeof CreateRule>;

/** PATCH: every field optional; the trigger type is fixed at creation (it is not a Modify parameter). */
export const ModifyRule = Type.Object({
  name: Type.Optional(ruleFields.name),
  event_type: Type.Optional(ruleFields.event_type),
  trigger_metadata: ruleFields.trigger_metadata,
  actions: Type.Optional(Nullable(ruleFields.actions)),
  enabled: ruleFields.enabled,
  exempt_roles: ruleFields.exempt_roles,
  exempt_channels: ruleFields.exempt_channels,
  trigger_type: Type.Optional(Type.Integer()),
});
export type ModifyRule = Static<typeof ModifyRule>;

export const GuildParams = Type.Object({ guild_id: Snowflake });
export const RuleParams = Type.Object({ guild_id: Snowflake, rule_id: Snowflake });
