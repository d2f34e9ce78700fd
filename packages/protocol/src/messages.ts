/**
 * Channel messages (seed: Records Message, Attachment request, Embed, Select-menu components; Limits: embeds,
 * file upload, components; GUILDS.md §4–§6): types, flags, component and reaction kinds, AutoMod, limits.
 */

/** Message types (GUILDS.md §4.1); the ones a user or bot can create are `Default` and `Reply`. */
export const MessageTypes = {
  Default: 0,
  RecipientAdd: 1,
  RecipientRemove: 2,
  Call: 3,
  ChannelNameChange: 4,
  ChannelIconChange: 5,
  ChannelPinnedMessage: 6,
  UserJoin: 7,
  GuildBoost: 8,
  ChannelFollowAdd: 12,
  ThreadCreated: 18,
  Reply: 19,
  ChatInputCommand: 20,
  ThreadStarterMessage: 21,
  ContextMenuCommand: 23,
  AutoModerationAction: 24,
} as const;
export type MessageType = (typeof MessageTypes)[keyof typeof MessageTypes];

/** Types a member may delete as any other message; the rest are system messages (50021). */
export const DELETABLE_MESSAGE_TYPES: readonly number[] = [
  MessageTypes.Default,
  MessageTypes.ChannelPinnedMessage,
  MessageTypes.UserJoin,
  MessageTypes.GuildBoost,
  MessageTypes.ChannelFollowAdd,
  MessageTypes.ThreadCreated,
  MessageTypes.Reply,
  MessageTypes.ChatInputCommand,
  MessageTypes.ContextMenuCommand,
  MessageTypes.AutoModerationAction,
];

/**
 * Channel types that hold messages (GUILDS.md §2.1: text, DM, voice and stage text chat, announcement,
 * threads); sending anywhere else is 50008. Forum and media channels hold only threads.
 */
export const MESSAGE_CHANNEL_TYPES: readonly number[] = [0, 1, 2, 3, 5, 10, 11, 12, 13];

/** Message flags (GUILDS.md §4.2); `SentBySocialLayerIntegration` is the social layer's (PROTOCOL.md §A.4). */
export const MessageFlags = {
  Crossposted: 1 << 0,
  IsCrosspost: 1 << 1,
  SuppressEmbeds: 1 << 2,
  SourceMessageDeleted: 1 << 3,
  Urgent: 1 << 4,
  HasThread: 1 << 5,
  Ephemeral: 1 << 6,
  Loading: 1 << 7,
  FailedToMentionSomeRolesInThread: 1 << 8,
  SuppressNotifications: 1 << 12,
  IsVoiceMessage: 1 << 13,
  HasSnapshot: 1 << 14,
  IsComponentsV2: 1 << 15,
  SentBySocialLayerIntegration: 1 << 16,
} as const;

/** Flags a sender may set on create; on edit only `SuppressEmbeds` (and `IsComponentsV2`, never cleared). */
export const SENDABLE_MESSAGE_FLAGS =
  MessageFlags.SuppressEmbeds |
  MessageFlags.SuppressNotifications |
  MessageFlags.IsVoiceMessage |
  MessageFlags.IsComponentsV2;
export const EDITABLE_MESSAGE_FLAGS = MessageFlags.SuppressEmbeds | MessageFlags.IsComponentsV2;

/** `message_reference.type` (seed: Message; GUILDS.md §4.4). */
export const MessageReferenceTypes = { Default: 0, Forward: 1 } as const;

/** `allowed_mentions.parse` values. */
export const AllowedMentionTypes = { Roles: 'roles', Users: 'users', Everyone: 'everyone' } as const;

/** Attachment flags (GUILDS.md §4.5). */
export const AttachmentFlags = {
  IsClip: 1 << 0,
  IsThumbnail: 1 << 1,
  IsRemix: 1 << 2,
  IsSpoiler: 1 << 3,
  IsAnimated: 1 << 5,
} as const;

/** A file named so is a spoiler, as `is_spoiler: true` makes it. */
export const SPOILER_FILENAME_PREFIX = 'SPOILER_';

/** Message component types (GUILDS.md §5). */
export const ComponentTypes = {
  ActionRow: 1,
  Button: 2,
  StringSelect: 3,
  TextInput: 4,
  UserSelect: 5,
  RoleSelect: 6,
  MentionableSelect: 7,
  ChannelSelect: 8,
  Section: 9,
  TextDisplay: 10,
  Thumbnail: 11,
  MediaGallery: 12,
  File: 13,
  Separator: 14,
  Container: 17,
  Label: 18,
  FileUpload: 19,
} as const;
export type ComponentType = (typeof ComponentTypes)[keyof typeof ComponentTypes];

/** Select menus whose `default_values` are `{id, type}` (seed: Select-menu components). */
export const AUTO_POPULATED_SELECT_TYPES: readonly number[] = [
  ComponentTypes.UserSelect,
  ComponentTypes.RoleSelect,
  ComponentTypes.MentionableSelect,
  ComponentTypes.ChannelSelect,
];

export const ButtonStyles = { Primary: 1, Secondary: 2, Success: 3, Danger: 4, Link: 5, Premium: 6 } as const;

export const SeparatorSpacing = { Small: 1, Large: 2 } as const;

/** Reaction types (`type` query of the reaction routes). */
export const ReactionTypes = { Normal: 0, Burst: 1 } as const;

/** Numeric limits of messages, embeds, components and reactions (seed: Limits; GUILDS.md §4–§6). */
export const MessageLimits = {
  contentMax: 2000,
  nonceMax: 25,
  /** `enforce_nonce`: a repeat within this window answers the first message (seed: "a few minutes"). */
  enforceNonceWindowMs: 5 * 60 * 1000,
  embedsMax: 10,
  attachmentsMax: 10,
  stickersMax: 3,
  listMin: 1,
  listMax: 100,
  listDefault: 50,
  bulkDeleteMin: 2,
  bulkDeleteMax: 100,
  /** Bulk delete refuses messages older than two weeks. */
  bulkDeleteMaxAgeMs: 14 * 24 * 60 * 60 * 1000,
  attachmentDescriptionMax: 1024,
  attachmentTitleMax: 1024,
  filenameMax: 1024,
  reactionsPerMessage: 20,
  reactionUsersMin: 1,
  reactionUsersMax: 100,
  reactionUsersDefault: 25,
  slowmodeMaxSeconds: 21_600,
  /** TYPING_START lasts this long on clients. */
  typingDurationMs: 10_000,
} as const;

/** Embed limits (seed: Limits "embeds"; GUILDS.md §4.6). */
export const EmbedLimits = {
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  authorName: 256,
  /** Characters of every title, description, field, footer and author name of a message together. */
  total: 6000,
  /** Every URL of an embed (OAS `RichEmbed`). */
  url: 2048,
} as const;

/** URL schemes an embed's link takes, and those its images take (an upload of the message by name). */
export const EMBED_URL_SCHEMES: readonly string[] = ['http', 'https'];
export const MEDIA_URL_SCHEMES: readonly string[] = ['http', 'https', 'attachment'];
/** A link button also opens the platform's own `discord://` links. */
export const BUTTON_URL_SCHEMES: readonly string[] = ['http', 'https', 'discord'];
/** `attachment://<filename>` names a file uploaded with the same message (DOCS reference "Uploading Files"). */
export const ATTACHMENT_URL_PREFIX = 'attachment://';

/** `default_values[].type` each auto-populated select takes (seed: Select-menu components). */
export const SELECT_DEFAULT_VALUE_TYPES: Readonly<Record<number, readonly string[]>> = {
  [ComponentTypes.UserSelect]: ['user'],
  [ComponentTypes.RoleSelect]: ['role'],
  [ComponentTypes.MentionableSelect]: ['user', 'role'],
  [ComponentTypes.ChannelSelect]: ['channel'],
};

/** Component limits (seed: Limits "components"; GUILDS.md §5). */
export const ComponentLimits = {
  legacyActionRows: 5,
  componentsV2Total: 40,
  actionRowButtons: 5,
  buttonLabel: 80,
  customId: 100,
  selectOptionsMin: 1,
  selectOptions: 25,
  selectPlaceholder: 150,
  selectMinValuesMax: 25,
  selectMaxValuesMax: 25,
  selectOptionLabel: 100,
  selectOptionValue: 100,
  selectOptionDescription: 100,
  textDisplayContent: 4000,
  sectionTextDisplaysMin: 1,
  sectionTextDisplaysMax: 3,
  mediaGalleryItemsMin: 1,
  mediaGalleryItemsMax: 10,
  mediaDescription: 1024,
  actionRowComponentsMin: 1,
  buttonUrl: 512,
  emojiName: 32,
  mediaUrl: 2048,
  /** `id` of a component is a positive 32-bit integer; 0 means "assign one". */
  componentIdMax: 2 ** 31 - 1,
} as const;

/** AutoMod (GUILDS.md §6). */
export const AutoModerationTriggerTypes = {
  Keyword: 1,
  Spam: 3,
  KeywordPreset: 4,
  MentionSpam: 5,
  MemberProfile: 6,
} as const;
export const AutoModerationEventTypes = { MessageSend: 1, MemberUpdate: 2 } as const;
export const AutoModerationActionTypes = {
  BlockMessage: 1,
  SendAlertMessage: 2,
  Timeout: 3,
  BlockMemberInteraction: 4,
} as const;
export const AutoModerationKeywordPresetTypes = { Profanity: 1, SexualContent: 2, Slurs: 3 } as const;
export const AutoModerationLimits = {
  ruleNameMax: 100,
  actionsMin: 1,
  actionsMax: 5,
  keywordFilter: 1000,
  keywordLength: 60,
  regexPatterns: 10,
  regexLength: 260,
  allowList: 100,
  allowListPreset: 1000,
  allowListLength: 60,
  mentionTotalLimitMax: 50,
  exemptRoles: 20,
  exemptChannels: 50,
  customMessage: 150,
  timeoutMaxSeconds: 2_419_200,
  /** Rules per guild per trigger type (keyword 6, others 1). */
  keywordRules: 6,
  otherRules: 1,
} as const;

/** Gateway dispatches of channel messages. */
export const MessageDispatches = {
  MessageCreate: 'MESSAGE_CREATE',
  MessageUpdate: 'MESSAGE_UPDATE',
  MessageDelete: 'MESSAGE_DELETE',
  MessageDeleteBulk: 'MESSAGE_DELETE_BULK',
  MessageReactionAdd: 'MESSAGE_REACTION_ADD',
  MessageReactionRemove: 'MESSAGE_REACTION_REMOVE',
  MessageReactionRemoveAll: 'MESSAGE_REACTION_REMOVE_ALL',
  MessageReactionRemoveEmoji: 'MESSAGE_REACTION_REMOVE_EMOJI',
  TypingStart: 'TYPING_START',
  AutoModerationRuleCreate: 'AUTO_MODERATION_RULE_CREATE',
  AutoModerationRuleUpdate: 'AUTO_MODERATION_RULE_UPDATE',
  AutoModerationRuleDelete: 'AUTO_MODERATION_RULE_DELETE',
  AutoModerationActionExecution: 'AUTO_MODERATION_ACTION_EXECUTION',
} as const;

/**
 * Forwards (`message_reference.type` FORWARD) count against limits of their own, stricter than sending
 * (seed: "forwarding has stricter rate limits"; the platform publishes no numbers, these are Hearth's):
 * per forwarding user across every channel, by count and by the bytes of the attachments they carry. The
 * byte budget holds the largest message the 25 MiB era allowed (10 files of 25 MiB), once per window.
 */
export const ForwardLimits = {
  forwards: { limit: 10, windowMs: 60_000 },
  attachmentBytes: { limit: 256 * 1024 * 1024, windowMs: 5 * 60_000 },
} as const;

/** Source messages a forward may carry (GUILDS.md §4.4): user and command messages, no system messages. */
export const FORWARDABLE_MESSAGE_TYPES: readonly number[] = [
  MessageTypes.Default,
  MessageTypes.Reply,
  MessageTypes.ChatInputCommand,
  MessageTypes.ContextMenuCommand,
];

/**
 * A custom emoji in a reaction route: `name:id` (discord.js writes it so), `a:name:id` for an animated one
 * tolerated; names are 2–32 of letters, digits and `_` (the platform's emoji names).
 */
export const CUSTOM_REACTION_EMOJI_PATTERN = /^(?:(a):)?([A-Za-z0-9_]{2,32}):([0-9]{1,20})$/;

/** Pins (GUILDS.md §3.7; DOCS message resource, Get Channel Pins). */
export const PinLimits = {
  /** Pinned messages per channel; one more is 30003. */
  perChannel: 250,
  /** GET /channels/{id}/messages/pins `limit`. */
  listMin: 1,
  listMax: 50,
  listDefault: 50,
  /** The deprecated GET /channels/{id}/pins answers the newest this many. */
  legacyList: 50,
} as const;

/** Messages a member may pin: what users, bots and commands write; pinning a system message is 50021. */
export const PINNABLE_MESSAGE_TYPES: readonly number[] = [
  MessageTypes.Default,
  MessageTypes.Reply,
  MessageTypes.ChatInputCommand,
  MessageTypes.ContextMenuCommand,
];

/** Gateway dispatch of a pin or unpin (DOCS gateway events, Channel Pins Update). */
export const PinDispatches = { ChannelPinsUpdate: 'CHANNEL_PINS_UPDATE' } as const;
