import { PermissionFlags } from './permissions.js';
import type { ActivityType, PresenceStatus } from './social.js';

/** Session start limit reported by GET /gateway/bot (PROTOCOL.md §D.1, §D.3). */
export const SESSION_START_LIMIT = { total: 1000, windowMs: 24 * 60 * 60 * 1000, maxConcurrency: 1 } as const;

/** Path of the WebSocket gateway on a Hearth server; clients append `?v=10&encoding=json`. */
export const GATEWAY_PATH = '/gateway';

/** Gateway versions served (PROTOCOL.md §D.1). */
export const GATEWAY_VERSIONS = [9, 10] as const;

/** Gateway opcodes (PROTOCOL.md §D.2). */
export const GatewayOpcodes = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  PresenceUpdate: 3,
  VoiceStateUpdate: 4,
  Resume: 6,
  Reconnect: 7,
  RequestGuildMembers: 8,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
  LobbyVoiceStates: 17,
  RequestSoundboardSounds: 31,
  LobbyVoiceServerPing: 42,
  RequestChannelInfo: 43,
} as const;
export type GatewayOpcode = (typeof GatewayOpcodes)[keyof typeof GatewayOpcodes];

/** The fields Request Channel Info (op 43) may ask for; CHANNEL_INFO carries only those asked (PROTOCOL.md §D.7). */
export const CHANNEL_INFO_FIELDS = ['status', 'voice_start_time'] as const;
export type ChannelInfoField = (typeof CHANNEL_INFO_FIELDS)[number];

/** One channel of a CHANNEL_INFO dispatch: `voice_start_time` in unix seconds. */
export interface ChannelInfoChannel {
  id: string;
  status?: string | null;
  voice_start_time?: number | null;
}

/** Op 43 `d` as clients send it: a name this server does not know is allowed and skipped. */
export interface GatewayRequestChannelInfoData {
  guild_id: string;
  fields: string[];
}

/** CHANNEL_INFO, the answer to op 43. */
export interface GatewayChannelInfoData {
  guild_id: string;
  channels: ChannelInfoChannel[];
}

/** VOICE_CHANNEL_STATUS_UPDATE (GUILDS intent). */
export interface GatewayVoiceChannelStatusUpdateData {
  id: string;
  guild_id: string;
  status: string | null;
}

/** VOICE_CHANNEL_START_TIME_UPDATE (GUILDS intent): unix seconds, null when the channel emptied. */
export interface GatewayVoiceChannelStartTimeUpdateData {
  id: string;
  guild_id: string;
  voice_start_time: number | null;
}

/** Close codes and whether a client may resume after them (PROTOCOL.md §D.4). */
export const GatewayCloseCodes = {
  UnknownError: 4000,
  UnknownOpcode: 4001,
  DecodeError: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidSeq: 4007,
  RateLimited: 4008,
  SessionTimedOut: 4009,
  InvalidShard: 4010,
  ShardingRequired: 4011,
  InvalidAPIVersion: 4012,
  InvalidIntents: 4013,
  DisallowedIntents: 4014,
} as const;
export type GatewayCloseCode = (typeof GatewayCloseCodes)[keyof typeof GatewayCloseCodes];

/** Close codes after which a client must not reconnect (PROTOCOL.md §D.4). */
export const FATAL_CLOSE_CODES: readonly GatewayCloseCode[] = [
  GatewayCloseCodes.AuthenticationFailed,
  GatewayCloseCodes.InvalidShard,
  GatewayCloseCodes.ShardingRequired,
  GatewayCloseCodes.InvalidAPIVersion,
  GatewayCloseCodes.InvalidIntents,
  GatewayCloseCodes.DisallowedIntents,
];

/** Gateway intents (PROTOCOL.md §D.5). */
export const GatewayIntents = {
  Guilds: 1 << 0,
  GuildMembers: 1 << 1,
  GuildModeration: 1 << 2,
  GuildExpressions: 1 << 3,
  GuildIntegrations: 1 << 4,
  GuildWebhooks: 1 << 5,
  GuildInvites: 1 << 6,
  GuildVoiceStates: 1 << 7,
  GuildPresences: 1 << 8,
  GuildMessages: 1 << 9,
  GuildMessageReactions: 1 << 10,
  GuildMessageTyping: 1 << 11,
  DirectMessages: 1 << 12,
  DirectMessageReactions: 1 << 13,
  DirectMessageTyping: 1 << 14,
  MessageContent: 1 << 15,
  GuildScheduledEvents: 1 << 16,
  AutoModerationConfiguration: 1 << 20,
  AutoModerationExecution: 1 << 21,
  GuildMessagePolls: 1 << 24,
  DirectMessagePolls: 1 << 25,
} as const;

/** Intents an application must be approved for (PROTOCOL.md §D.5). */
export const PRIVILEGED_INTENTS =
  GatewayIntents.GuildMembers | GatewayIntents.GuildPresences | GatewayIntents.MessageContent;
export const ALL_INTENTS = Object.values(GatewayIntents).reduce((all, bit) => all | bit, 0);

/** Client payloads larger than this close the connection with 4002 (PROTOCOL.md §D.1). */
export const MAX_CLIENT_PAYLOAD_BYTES = 4096;
/** 120 events sent per connection per 60 s; more closes with 4008 (PROTOCOL.md §D.6). */
export const CLIENT_EVENTS_LIMIT = { limit: 120, windowMs: 60_000 } as const;
/** Presence updates: 5 per 20 s (PROTOCOL.md §D.6, §B.8). */
export const PRESENCE_UPDATES_LIMIT = { limit: 5, windowMs: 20_000 } as const;
/** Identify concurrency window: `max_concurrency` identifies per 5 s (PROTOCOL.md §D.3). */
export const IDENTIFY_WINDOW_MS = 5_000;
/**
 * How long a socket may stay open without a session (no Identify or Resume accepted): then it closes with
 * 4003 Not authenticated, heartbeats or not. The platform publishes no figure; a client identifies right
 * after Hello, so this only bounds sockets that never will.
 */
export const IDENTIFY_TIMEOUT_MS = 20_000;
/** The heartbeat interval sent in Hello (PROTOCOL.md §D.3). */
export const HEARTBEAT_INTERVAL_MS = 41_250;
/** Request Guild Members `nonce` is at most 32 bytes (PROTOCOL.md §D.6). */
export const GUILD_MEMBERS_NONCE_MAX_BYTES = 32;

/** The intent a bot session needs to receive a dispatch (PROTOCOL.md §D.5); unlisted events need none. */
export const DISPATCH_INTENTS: Readonly<Record<string, number>> = {
  GUILD_CREATE: GatewayIntents.Guilds,
  GUILD_UPDATE: GatewayIntents.Guilds,
  GUILD_DELETE: GatewayIntents.Guilds,
  CHANNEL_CREATE: GatewayIntents.Guilds,
  CHANNEL_UPDATE: GatewayIntents.Guilds,
  CHANNEL_DELETE: GatewayIntents.Guilds,
  THREAD_CREATE: GatewayIntents.Guilds,
  THREAD_UPDATE: GatewayIntents.Guilds,
  THREAD_DELETE: GatewayIntents.Guilds,
  VOICE_CHANNEL_STATUS_UPDATE: GatewayIntents.Guilds,
  VOICE_CHANNEL_START_TIME_UPDATE: GatewayIntents.Guilds,
  GUILD_ROLE_CREATE: GatewayIntents.Guilds,
  GUILD_ROLE_UPDATE: GatewayIntents.Guilds,
  GUILD_ROLE_DELETE: GatewayIntents.Guilds,
  CHANNEL_PINS_UPDATE: GatewayIntents.Guilds,
  THREAD_LIST_SYNC: GatewayIntents.Guilds,
  THREAD_MEMBER_UPDATE: GatewayIntents.Guilds,
  THREAD_MEMBERS_UPDATE: GatewayIntents.Guilds,
  STAGE_INSTANCE_CREATE: GatewayIntents.Guilds,
  STAGE_INSTANCE_UPDATE: GatewayIntents.Guilds,
  STAGE_INSTANCE_DELETE: GatewayIntents.Guilds,
  GUILD_MEMBER_ADD: GatewayIntents.GuildMembers,
  GUILD_MEMBER_UPDATE: GatewayIntents.GuildMembers,
  GUILD_MEMBER_REMOVE: GatewayIntents.GuildMembers,
  GUILD_BAN_ADD: GatewayIntents.GuildModeration,
  GUILD_BAN_REMOVE: GatewayIntents.GuildModeration,
  GUILD_AUDIT_LOG_ENTRY_CREATE: GatewayIntents.GuildModeration,
  GUILD_EMOJIS_UPDATE: GatewayIntents.GuildExpressions,
  GUILD_STICKERS_UPDATE: GatewayIntents.GuildExpressions,
  GUILD_INTEGRATIONS_UPDATE: GatewayIntents.GuildIntegrations,
  INTEGRATION_CREATE: GatewayIntents.GuildIntegrations,
  INTEGRATION_UPDATE: GatewayIntents.GuildIntegrations,
  INTEGRATION_DELETE: GatewayIntents.GuildIntegrations,
  WEBHOOKS_UPDATE: GatewayIntents.GuildWebhooks,
  INVITE_CREATE: GatewayIntents.GuildInvites,
  INVITE_DELETE: GatewayIntents.GuildInvites,
  VOICE_STATE_UPDATE: GatewayIntents.GuildVoiceStates,
  PRESENCE_UPDATE: GatewayIntents.GuildPresences,
  TYPING_START: GatewayIntents.GuildMessageTyping,
  MESSAGE_CREATE: GatewayIntents.GuildMessages,
  MESSAGE_UPDATE: GatewayIntents.GuildMessages,
  MESSAGE_DELETE: GatewayIntents.GuildMessages,
  MESSAGE_DELETE_BULK: GatewayIntents.GuildMessages,
  MESSAGE_REACTION_ADD: GatewayIntents.GuildMessageReactions,
  MESSAGE_REACTION_REMOVE: GatewayIntents.GuildMessageReactions,
  MESSAGE_REACTION_REMOVE_ALL: GatewayIntents.GuildMessageReactions,
  MESSAGE_REACTION_REMOVE_EMOJI: GatewayIntents.GuildMessageReactions,
  AUTO_MODERATION_RULE_CREATE: GatewayIntents.AutoModerationConfiguration,
  AUTO_MODERATION_RULE_UPDATE: GatewayIntents.AutoModerationConfiguration,
  AUTO_MODERATION_RULE_DELETE: GatewayIntents.AutoModerationConfiguration,
  AUTO_MODERATION_ACTION_EXECUTION: GatewayIntents.AutoModerationExecution,
};

/**
 * Events whose intent is another outside a guild (PROTOCOL.md §D.5, GUILDS.md §7.1 "DM equivalents"): a
 * dispatch with no guild in its audience needs these instead of DISPATCH_INTENTS.
 */
export const DM_DISPATCH_INTENTS: Readonly<Record<string, number>> = {
  MESSAGE_CREATE: GatewayIntents.DirectMessages,
  MESSAGE_UPDATE: GatewayIntents.DirectMessages,
  MESSAGE_DELETE: GatewayIntents.DirectMessages,
  CHANNEL_PINS_UPDATE: GatewayIntents.DirectMessages,
  MESSAGE_REACTION_ADD: GatewayIntents.DirectMessageReactions,
  MESSAGE_REACTION_REMOVE: GatewayIntents.DirectMessageReactions,
  MESSAGE_REACTION_REMOVE_ALL: GatewayIntents.DirectMessageReactions,
  MESSAGE_REACTION_REMOVE_EMOJI: GatewayIntents.DirectMessageReactions,
  TYPING_START: GatewayIntents.DirectMessageTyping,
};

/** The intent a bot needs for a dispatch in a guild (`inGuild`) or outside one; undefined: none. */
export function dispatchIntent(type: string, inGuild: boolean): number | undefined {
  return inGuild ? DISPATCH_INTENTS[type] : (DM_DISPATCH_INTENTS[type] ?? DISPATCH_INTENTS[type]);
}

/**
 * The permission a member needs to receive a guild dispatch (gateway, Receiving Events: channels the
 * member cannot view, audit log entries without VIEW_AUDIT_LOG); CHANNEL_* is checked in that channel.
 */
export const DISPATCH_PERMISSIONS: Readonly<Record<string, bigint>> = {
  CHANNEL_CREATE: PermissionFlags.ViewChannel,
  CHANNEL_UPDATE: PermissionFlags.ViewChannel,
  CHANNEL_DELETE: PermissionFlags.ViewChannel,
  GUILD_AUDIT_LOG_ENTRY_CREATE: PermissionFlags.ViewAuditLog,
  // AutoMod events go to members who may manage the guild's rules (GUILDS.md §10).
  AUTO_MODERATION_RULE_CREATE: PermissionFlags.ManageGuild,
  AUTO_MODERATION_RULE_UPDATE: PermissionFlags.ManageGuild,
  AUTO_MODERATION_RULE_DELETE: PermissionFlags.ManageGuild,
  AUTO_MODERATION_ACTION_EXECUTION: PermissionFlags.ManageGuild,
};

/** Identify `large_threshold`: members above which a guild is large and GUILD_CREATE lists fewer members. */
export const LargeThreshold = { min: 50, max: 250, default: 50 } as const;

/** Which approval flag lets an application ask for a privileged intent. */
export const PRIVILEGED_INTENT_FLAGS: ReadonlyArray<{ intent: number; flags: readonly bigint[] }> = [
  { intent: GatewayIntents.GuildPresences, flags: [1n << 12n, 1n << 13n] },
  { intent: GatewayIntents.GuildMembers, flags: [1n << 14n, 1n << 15n] },
  { intent: GatewayIntents.MessageContent, flags: [1n << 18n, 1n << 19n] },
];

// ---- Frames (PROTOCOL.md §D.2) ----
// The wire shapes of what the gateway sends, checked against discord-api-types v10 by
// packages/protocol/test/gateway-frames.test.ts, so a client built on them reads Hearth's frames.

/** `{op, d, s, t}`: `s` and `t` are set on dispatches (op 0) only. */
export interface GatewayFrame<Op extends GatewayOpcode = GatewayOpcode, D = unknown> {
  op: Op;
  d: D;
  s: number | null;
  t: string | null;
}

/** A dispatch (op 0) of event `T`. */
export interface GatewayDispatchFrame<T extends string, D>
  extends GatewayFrame<typeof GatewayOpcodes.Dispatch, D> {
  s: number;
  t: T;
}

/** op 10 HELLO. */
export interface GatewayHelloData {
  heartbeat_interval: number;
}

/** The user object of READY and of the user events: `flags` and `public_flags` always present. */
export interface GatewayUser {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: string | null;
  bot?: boolean;
  system?: boolean;
  banner?: string | null;
  accent_color?: number | null;
  flags: number;
  public_flags: number;
  mfa_enabled?: boolean;
  locale?: string;
  verified?: boolean;
  email?: string | null;
  premium_type?: number;
}

/** A presence's activity as friends see it (secrets removed; PROTOCOL.md §B.8). */
export interface GatewayActivity {
  name: string;
  type: ActivityType;
  created_at: number;
  url?: string | null;
  application_id?: string;
  details?: string | null;
  state?: string | null;
  timestamps?: { start?: number; end?: number };
  party?: { id?: string; size?: [current_size: number, max_size: number] };
  assets?: { large_image?: string; large_text?: string; small_image?: string; small_text?: string };
  flags?: number;
  platform?: string;
}

/** The statuses a presence shows others: `invisible` shows as `offline`. */
export type GatewayPresenceStatus = Exclude<PresenceStatus, 'invisible'>;

/** PRESENCE_UPDATE and READY `presences`: a friend's presence, of no guild (PROTOCOL.md §B.8). */
export interface GatewayPresence {
  user: { id: string };
  status: GatewayPresenceStatus;
  activities: GatewayActivity[];
  client_status: {
    desktop?: GatewayPresenceStatus;
    mobile?: GatewayPresenceStatus;
    web?: GatewayPresenceStatus;
  };
}

/** READY (PROTOCOL.md §D.3); `scopes`, `lobbies` and `presences` are the social layer's additions. */
export interface GatewayReadyData {
  v: number;
  user: GatewayUser;
  guilds: Array<{ id: string; unavailable: true }>;
  session_id: string;
  resume_gateway_url: string;
  shard: [shard_id: number, shard_count: number];
  /** Sessions of a bot or a game's player: the application's id and flags. */
  application?: { id: string; flags: number; flags_new: string };
  scopes?: string[];
  lobbies?: unknown[];
  presences?: GatewayPresence[];
}

/** RESUMED carries an empty object, as the platform sends it. */
export type GatewayResumedData = Record<string, never>;

/** A guild member of GUILD_MEMBERS_CHUNK. */
export interface GatewayGuildMember {
  user: GatewayUser;
  nick?: string | null;
  avatar?: string | null;
  roles: string[];
  joined_at: string;
  deaf: boolean;
  mute: boolean;
  flags: number;
  pending?: boolean;
}

/** GUILD_MEMBERS_CHUNK, the answer to op 8 REQUEST_GUILD_MEMBERS. */
export interface GatewayGuildMembersChunkData {
  guild_id: string;
  members: GatewayGuildMember[];
  chunk_index: number;
  chunk_count: number;
  not_found?: string[];
  nonce?: string;
}

/** RATE_LIMITED, sent when op 8 is asked for too often. */
export interface GatewayRateLimitedData {
  opcode: typeof GatewayOpcodes.RequestGuildMembers;
  retry_after: number;
  meta: { guild_id: string; nonce?: string };
}

export type GatewayHelloFrame = GatewayFrame<typeof GatewayOpcodes.Hello, GatewayHelloData> & {
  s: null;
  t: null;
};
export type GatewayHeartbeatAckFrame = GatewayFrame<typeof GatewayOpcodes.HeartbeatAck, null> & {
  s: null;
  t: null;
};
export type GatewayInvalidSessionFrame = GatewayFrame<typeof GatewayOpcodes.InvalidSession, boolean> & {
  s: null;
  t: null;
};
export type GatewayReadyFrame = GatewayDispatchFrame<'READY', GatewayReadyData>;
export type GatewayResumedFrame = GatewayDispatchFrame<'RESUMED', GatewayResumedData>;
export type GatewayPresenceUpdateFrame = GatewayDispatchFrame<'PRESENCE_UPDATE', GatewayPresence>;
export type GatewayGuildMembersChunkFrame = GatewayDispatchFrame<
  'GUILD_MEMBERS_CHUNK',
  GatewayGuildMembersChunkData
>;
export type GatewayRateLimitedFrame = GatewayDispatchFrame<'RATE_LIMITED', GatewayRateLimitedData>;

/** What a client sends: op 2 IDENTIFY. */
export interface GatewayIdentifyData {
  token: string;
  properties: { os: string; browser: string; device: string };
  intents?: number;
  compress?: boolean;
  large_threshold?: number;
  shard?: [shard_id: number, shard_count: number];
  presence?: unknown;
}

/** op 6 RESUME. */
export interface GatewayResumeData {
  token: string;
  session_id: string;
  seq: number;
}

/** op 8 REQUEST_GUILD_MEMBERS: a query or user ids. */
export interface GatewayRequestGuildMembersData {
  guild_id: string | string[];
  query?: string;
  limit?: number;
  presences?: boolean;
  user_ids?: string | string[];
  nonce?: string;
}

/** op 31 REQUEST_SOUNDBOARD_SOUNDS: the guilds whose sounds the client wants (DOCS gateway events). */
export interface GatewayRequestSoundboardSoundsData {
  guild_ids: string[];
}

/** SOUNDBOARD_SOUNDS, once per guild asked for by op 31; Hearth has no soundboard, so the list is empty. */
export interface GatewaySoundboardSoundsData {
  guild_id: string;
  soundboard_sounds: never[];
}

/** CHANNEL_PINS_UPDATE: `guild_id` in guild channels only; `last_pin_timestamp` null once nothing is pinned. */
export interface GatewayChannelPinsUpdateData {
  guild_id?: string;
  channel_id: string;
  last_pin_timestamp: string | null;
}
