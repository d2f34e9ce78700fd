/**
 * The guild platform's wire constants (GUILDS.md §1–§3, §8): channel types, overwrite types, features,
 * audit-log actions and the numeric limits of guilds, channels, roles, members and bans.
 */

/** Channel types (GUILDS.md §2.1). Threads (10–12) belong to the threads issue. */
export const ChannelTypes = {
  GuildText: 0,
  DM: 1,
  GuildVoice: 2,
  GroupDM: 3,
  GuildCategory: 4,
  GuildAnnouncement: 5,
  AnnouncementThread: 10,
  PublicThread: 11,
  PrivateThread: 12,
  GuildStageVoice: 13,
  GuildDirectory: 14,
  GuildForum: 15,
  GuildMedia: 16,
} as const;

export type ChannelType = (typeof ChannelTypes)[keyof typeof ChannelTypes];

/** The channel types a guild channel route may create (GUILDS.md §2.1; threads have their own routes). */
export const GUILD_CHANNEL_TYPES: readonly number[] = [
  ChannelTypes.GuildText,
  ChannelTypes.GuildVoice,
  ChannelTypes.GuildCategory,
  ChannelTypes.GuildAnnouncement,
  ChannelTypes.GuildStageVoice,
  ChannelTypes.GuildForum,
  ChannelTypes.GuildMedia,
];

/** Voice-capable channel types: bitrate, user limit, RTC region, voice states. */
export const VOICE_CHANNEL_TYPES: readonly number[] = [ChannelTypes.GuildVoice, ChannelTypes.GuildStageVoice];

/**
 * Channel types that carry a voice status and a voice start time (PUT /channels/{id}/voice-status, op 43):
 * the platform documents them for voice channels only; stages have their stage instance's topic.
 */
export const VOICE_STATUS_CHANNEL_TYPES: readonly number[] = [ChannelTypes.GuildVoice];

/** Thread auto-archive durations in minutes, a channel's `default_auto_archive_duration` (GUILDS.md §2.2). */
export const THREAD_AUTO_ARCHIVE_DURATIONS: readonly number[] = [60, 1440, 4320, 10080];

/** Voice channel `video_quality_mode` (GUILDS.md §2.2): 1 AUTO (the default), 2 FULL. */
export const VideoQualityModes = { Auto: 1, Full: 2 } as const;

/** Forum `default_sort_order` (0 LATEST_ACTIVITY, 1 CREATION_DATE) and `default_forum_layout` (0–2). */
export const ForumSortOrders = { LatestActivity: 0, CreationDate: 1 } as const;
export const ForumLayouts = { NotSet: 0, ListView: 1, GalleryView: 2 } as const;

/** Channel flags a guild channel may carry (GUILDS.md §2.3). */
export const ChannelFlags = {
  Pinned: 1 << 1,
  RequireTag: 1 << 4,
  HideMediaDownloadOptions: 1 << 15,
} as const;

/** Permission overwrite target (GUILDS.md §2.4). */
export const OverwriteTypes = { Role: 0, Member: 1 } as const;

/** Guild features the seed names, and those PATCH /guilds/{id} may toggle with the permission each needs. */
export const GuildFeatures = {
  EnhancedRoleColors: 'ENHANCED_ROLE_COLORS',
  RaidAlertsDisabled: 'RAID_ALERTS_DISABLED',
  Community: 'COMMUNITY',
  Discoverable: 'DISCOVERABLE',
  InvitesDisabled: 'INVITES_DISABLED',
  GuildTags: 'GUILD_TAGS',
  News: 'NEWS',
  RoleIcons: 'ROLE_ICONS',
  VipRegions: 'VIP_REGIONS',
} as const;

/** `features` a guild manager may set through PATCH /guilds/{id}, and the bit each needs (GUILDS.md §3.1). */
export const MUTABLE_GUILD_FEATURES: Readonly<Record<string, 'Administrator' | 'ManageGuild'>> = {
  COMMUNITY: 'Administrator',
  DISCOVERABLE: 'Administrator',
  INVITES_DISABLED: 'ManageGuild',
  RAID_ALERTS_DISABLED: 'ManageGuild',
};

/** Audit log action types (GUILDS.md §8; 192/193 as the seed names them). */
export const AuditLogEvents = {
  GuildUpdate: 1,
  ChannelCreate: 10,
  ChannelUpdate: 11,
  ChannelDelete: 12,
  ChannelOverwriteCreate: 13,
  ChannelOverwriteUpdate: 14,
  ChannelOverwriteDelete: 15,
  MemberKick: 20,
  MemberPrune: 21,
  MemberBanAdd: 22,
  MemberBanRemove: 23,
  MemberUpdate: 24,
  MemberRoleUpdate: 25,
  MemberMove: 26,
  MemberDisconnect: 27,
  BotAdd: 28,
  RoleCreate: 30,
  RoleUpdate: 31,
  RoleDelete: 32,
  InviteCreate: 40,
  InviteUpdate: 41,
  InviteDelete: 42,
  MessageDelete: 72,
  MessageBulkDelete: 73,
  MessagePin: 74,
  MessageUnpin: 75,
  ThreadCreate: 110,
  ThreadUpdate: 111,
  ThreadDelete: 112,
  AutoModerationRuleCreate: 140,
  AutoModerationRuleUpdate: 141,
  AutoModerationRuleDelete: 142,
  AutoModerationBlockMessage: 143,
  AutoModerationFlagToChannel: 144,
  AutoModerationUserCommunicationDisabled: 145,
  VoiceChannelStatusUpdate: 192,
  VoiceChannelStatusDelete: 193,
} as const;

export type AuditLogEvent = (typeof AuditLogEvents)[keyof typeof AuditLogEvents];

/** Guild member flags (GUILDS.md §3.2); only BYPASSES_VERIFICATION is editable. */
export const GuildMemberFlags = {
  DidRejoin: 1 << 0,
  CompletedOnboarding: 1 << 1,
  BypassesVerification: 1 << 2,
  StartedOnboarding: 1 << 3,
} as const;

/** The member flags PATCH /guilds/{id}/members/{user_id} may change (GUILDS.md §3.2). */
export const EDITABLE_GUILD_MEMBER_FLAGS = GuildMemberFlags.BypassesVerification;

/** The holographic role-colour preset that sending `tertiary_color` forces (GUILDS.md §1.4). */
export const HOLOGRAPHIC_ROLE_COLORS = {
  primary_color: 11127295,
  secondary_color: 16759788,
  tertiary_color: 16761760,
} as const;

/** Numeric limits of the guild platform (GUILDS.md §2.4, §3, §8, §9). */
export const GuildLimits = {
  guildNameMin: 2,
  guildNameMax: 100,
  guildDescriptionMax: 300,
  /** Guilds one user may be in (30001). */
  guildsPerUser: 100,
  maxMembers: 25_000_000,
  channelNameMin: 1,
  channelNameMax: 100,
  topicMax: 1024,
  forumTopicMax: 4096,
  rateLimitPerUserMax: 21_600,
  bitrateMin: 8000,
  voiceBitrateMax: 96_000,
  vipVoiceBitrateMax: 384_000,
  stageBitrateMax: 64_000,
  voiceUserLimitMax: 99,
  stageUserLimitMax: 10_000,
  /** Channels in one guild (30013). */
  channelsPerGuild: 500,
  /** Children of one category. */
  channelsPerCategory: 50,
  /** `permission_overwrites` in one request (OAS `maxItems`). */
  overwritesPerChannel: 100,
  /** Forum and media `available_tags` (GUILDS.md §2.4). */
  availableTagsMax: 20,
  /** A forum tag's name: 0–20 characters (GUILDS.md §2.5). */
  forumTagNameMax: 20,
  /** `emoji_name` of a tag or default reaction (OAS). */
  emojiNameMax: 100,
  /** Roles in one guild (30005). */
  rolesPerGuild: 250,
  roleNameMax: 100,
  nickMax: 32,
  bioMax: 190,
  membersListDefault: 1,
  membersListMax: 1000,
  bansListDefault: 1000,
  bansListMax: 1000,
  bulkBanMax: 200,
  deleteMessageSecondsMax: 604_800,
  /** A timeout ends at most 28 days ahead. */
  timeoutMaxMs: 28 * 24 * 60 * 60 * 1000,
  auditLogDefault: 50,
  auditLogMax: 100,
  auditLogReasonMax: 512,
  /** Guild tag: 1 to 4 characters (seed, Limits). */
  guildTagMin: 1,
  guildTagMax: 4,
  /** Before POST /guilds closed to apps, a bot could create one only while in fewer guilds than this. */
  botCreateGuildBelow: 10,
  unicodeEmojiMax: 100,
  /** The largest 24-bit colour a role may hold. */
  roleColorMax: 0xffffff,
} as const;

/** Invites (GUILDS.md §3.6; DOCS invite, channel "Create Channel Invite"). */
export const InviteLimits = {
  /** `max_age` in seconds: 0 (never expires) to 7 days; default 24 hours. */
  maxAgeMax: 604_800,
  maxAgeDefault: 86_400,
  /** `max_uses`: 0 (unlimited) to 100. */
  maxUsesMax: 100,
  /** Invites one guild may hold (30016). */
  invitesPerGuild: 1000,
  /** `role_ids` of one invite (OAS `maxItems`). */
  roleIdsMax: 250,
  /** Bad lines of a `target_users_file` named in one 50035. */
  targetUsersErrorsMax: 10,
} as const;

/** Invite `type` (GUILDS.md §3.6). */
export const InviteTypes = { Guild: 0, GroupDM: 1, Friend: 2 } as const;

/** Invite `target_type`: 1 STREAM (with `target_user_id`), 2 EMBEDDED_APPLICATION (`target_application_id`). */
export const InviteTargetTypes = { Stream: 1, EmbeddedApplication: 2 } as const;

/** `status` of GET /invites/{code}/target-users/job-status. */
export const TargetUsersJobStatuses = { Unspecified: 0, Processing: 1, Completed: 2, Failed: 3 } as const;

/** The header line of a target users CSV (seed: "header `user_id`"). */
export const TARGET_USERS_CSV_HEADER = 'user_id';

/** Name of a role created without one (POST /guilds/{id}/roles). */
export const DEFAULT_ROLE_NAME = 'new role';

/** The AFK timeouts a guild may choose, in seconds (SPEC `AfkTimeouts`). */
export const AFK_TIMEOUTS = [60, 300, 900, 1800, 3600] as const;

/** Guild settings' value ranges (GUILDS.md §3.1). */
export const GuildSettingsRanges = {
  verificationLevelMax: 4,
  defaultMessageNotificationsMax: 1,
  explicitContentFilterMax: 2,
  /** The six SUPPRESS_* system channel flags (1 << 0 … 1 << 5). */
  systemChannelFlagsMask: 0b111111,
} as const;

/** `preferred_locale` values (SPEC `AvailableLocalesEnum`). */
export const AVAILABLE_LOCALES = [
  'ar',
  'bg',
  'cs',
  'da',
  'de',
  'el',
  'en-GB',
  'en-US',
  'es-419',
  'es-ES',
  'fi',
  'fr',
  'he',
  'hi',
  'hr',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'lt',
  'nl',
  'no',
  'pl',
  'pt-BR',
  'ro',
  'ru',
  'sv-SE',
  'th',
  'tr',
  'uk',
  'vi',
  'zh-CN',
  'zh-TW',
] as const;
