/** Permission bits (bigint; the platform serializes them as decimal strings). */
export const PermissionFlags = {
  CreateInstantInvite: 1n << 0n,
  KickMembers: 1n << 1n,
  BanMembers: 1n << 2n,
  Administrator: 1n << 3n,
  ManageChannels: 1n << 4n,
  ManageGuild: 1n << 5n,
  AddReactions: 1n << 6n,
  ViewAuditLog: 1n << 7n,
  PrioritySpeaker: 1n << 8n,
  Stream: 1n << 9n,
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  SendTTSMessages: 1n << 12n,
  ManageMessages: 1n << 13n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  MentionEveryone: 1n << 17n,
  UseExternalEmojis: 1n << 18n,
  ViewGuildInsights: 1n << 19n,
  Connect: 1n << 20n,
  Speak: 1n << 21n,
  MuteMembers: 1n << 22n,
  DeafenMembers: 1n << 23n,
  MoveMembers: 1n << 24n,
  UseVAD: 1n << 25n,
  ChangeNickname: 1n << 26n,
  ManageNicknames: 1n << 27n,
  ManageRoles: 1n << 28n,
  ManageWebhooks: 1n << 29n,
  ManageGuildExpressions: 1n << 30n,
  UseApplicationCommands: 1n << 31n,
  RequestToSpeak: 1n << 32n,
  ManageEvents: 1n << 33n,
  /** Locked threads: users without it cannot post or edit there (seed, States: Locked threads). */
  ManageThreads: 1n << 34n,
  CreatePublicThreads: 1n << 35n,
  CreatePrivateThreads: 1n << 36n,
  UseExternalStickers: 1n << 37n,
  SendMessagesInThreads: 1n << 38n,
  UseEmbeddedActivities: 1n << 39n,
  ModerateMembers: 1n << 40n,
  ViewCreatorMonetizationAnalytics: 1n << 41n,
  UseSoundboard: 1n << 42n,
  /** Needed by bots for emoji and stickers from 23 February 2026 (seed, Versioning). */
  CreateGuildExpressions: 1n << 43n,
  /** Needed by bots for scheduled events from 23 February 2026 (seed, Versioning). */
  CreateEvents: 1n << 44n,
  UseExternalSounds: 1n << 45n,
  SendVoiceMessages: 1n << 46n,
  /** PUT /channels/{id}/voice-status (seed, Endpoints). */
  SetVoiceChannelStatus: 1n << 48n,
  SendPolls: 1n << 49n,
  /** On by default (seed, Versioning). */
  UseExternalApps: 1n << 50n,
  /** Needed to pin from 23 February 2026 (seed, Versioning). */
  PinMessages: 1n << 51n,
  /** Needed to avoid slowmode from 23 February 2026 (seed, Versioning). */
  BypassSlowmode: 1n << 52n,
} as const;

export type PermissionFlag = keyof typeof PermissionFlags;

/** Every permission bit: what a guild owner holds. */
export const ALL_PERMISSIONS = Object.values(PermissionFlags).reduce((all, bit) => all | bit, 0n);

/** What a new guild's @everyone role holds: the platform's default member permissions (USE_EXTERNAL_APPS on, seed). */
export const DEFAULT_EVERYONE_PERMISSIONS = (
  [
    'CreateInstantInvite',
    'AddReactions',
    'Stream',
    'ViewChannel',
    'SendMessages',
    'EmbedLinks',
    'AttachFiles',
    'ReadMessageHistory',
    'MentionEveryone',
    'UseExternalEmojis',
    'Connect',
    'Speak',
    'UseVAD',
    'ChangeNickname',
    'UseApplicationCommands',
    'RequestToSpeak',
    'CreatePublicThreads',
    'CreatePrivateThreads',
    'UseExternalStickers',
    'SendMessagesInThreads',
    'UseEmbeddedActivities',
    'UseSoundboard',
    'CreateGuildExpressions',
    'CreateEvents',
    'UseExternalSounds',
    'SendVoiceMessages',
    'SetVoiceChannelStatus',
    'SendPolls',
    'UseExternalApps',
  ] as const satisfies readonly PermissionFlag[]
).reduce((all, name) => all | PermissionFlags[name], 0n);

/** What a timed-out member keeps (GUILDS.md §1.2 step 12). */
export const TIMED_OUT_PERMISSIONS = PermissionFlags.ViewChannel | PermissionFlags.ReadMessageHistory;

/** Parses a wire permission bitset (decimal string); undefined when it is not one. */
export function parsePermissions(value: string): bigint | undefined {
  return /^\d{1,20}$/.test(value) ? BigInt(value) : undefined;
}
