import type { Generated } from 'kysely';

/**
 * Tables as both engines store them. Portable types only: ids are snowflake strings (text), instants are
 * milliseconds (bigint, read back as number), booleans are 0/1 integers, JSON is text.
 */
export interface Schema {
  users: UsersTable;
  sessions: SessionsTable;
  applications: ApplicationsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  signing_keys: SigningKeysTable;
  connections: ConnectionsTable;
  guilds: GuildsTable;
  guild_members: GuildMembersTable;
  outbox: OutboxTable;
  lobbies: LobbiesTable;
  lobby_members: LobbyMembersTable;
  lobby_messages: LobbyMessagesTable;
  lobby_channel_links: LobbyChannelLinksTable;
  webhook_attempts: WebhookAttemptsTable;
  event_webhooks: EventWebhooksTable;
  skus: SkusTable;
  entitlements: EntitlementsTable;
  subscriptions: SubscriptionsTable;
  // Provisional accounts
  external_identities: ExternalIdentitiesTable;
  identity_providers: IdentityProvidersTable;
  user_bans: UserBansTable;
  // ---- Social layer (0007_social) ----
  relationships: RelationshipsTable;
  game_relationships: GameRelationshipsTable;
  dm_channels: DmChannelsTable;
  dm_messages: DmMessagesTable;
  group_dm_channels: GroupDmChannelsTable;
  group_dm_recipients: GroupDmRecipientsTable;
  group_dm_icons: GroupDmIconsTable;
  // ---- Guild platform (0008_guilds) ----
  guild_roles: GuildRolesTable;
  guild_member_roles: GuildMemberRolesTable;
  channels: ChannelsTable;
  channel_overwrites: ChannelOverwritesTable;
  guild_bans: GuildBansTable;
  audit_log_entries: AuditLogEntriesTable;
  voice_states: VoiceStatesTable;
  // ---- Event log (0009_event_log) ----
  event_log: EventLogTable;
  // ---- Avatars and banners (0010_user_images) ----
  user_images: UserImagesTable;
  application_images: ApplicationImagesTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  application_emojis: ApplicationEmojisTable;
  activity_url_mappings: ActivityUrlMappingsTable;
  quest_enrollments: QuestEnrollmentsTable;
  // ---- Channel messages (0016_messages) ----
  messages: MessagesTable;
  message_nonces: MessageNoncesTable;
  interactions: InteractionsTable;
  interaction_modals: InteractionModalsTable;
  interaction_messages: InteractionMessagesTable;
  interaction_endpoints: InteractionEndpointsTable;
  message_attachments: MessageAttachmentsTable;
  application_guild_installs: ApplicationGuildInstallsTable;
  message_reactions: MessageReactionsTable;
  slowmode_marks: SlowmodeMarksTable;
  auto_moderation_rules: AutoModerationRulesTable;
  // ---- Gateway sessions shared by nodes (0022_gateway_sessions) ----
  gateway_sessions: GatewaySessionsTable;
  gateway_session_dispatches: GatewaySessionDispatchesTable;
  // ---- Voice channel status and start time (0027_voice_status) ----
  voice_channel_statuses: VoiceChannelStatusesTable;
  // ---- Voice calls and tokens (0033_voice) ----
  voice_calls: VoiceCallsTable;
  voice_tokens: VoiceTokensTable;
  lobby_voice_states: LobbyVoiceStatesTable;
  dm_calls: DmCallsTable;
  dm_voice_states: DmVoiceStatesTable;
  dm_call_rings: DmCallRingsTable;
  // ---- Guild invites (0026_invites) ----
  invites: InvitesTable;
  invite_target_users: InviteTargetUsersTable;
  invite_temporary_members: InviteTemporaryMembersTable;
  // ---- Threads (0023_threads) ----
  threads: ThreadsTable;
  thread_members: ThreadMembersTable;
  // ---- Emulator fixtures (0034_emulator_fixtures) ----
  emulator_fixtures: EmulatorFixturesTable;
  // ---- Application commands (0031_commands) ----
  application_commands: ApplicationCommandsTable;
  application_command_permissions: ApplicationCommandPermissionsTable;
}

export interface UsersTable {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  email: string | null;
  password_hash: string | null;
  avatar: string | null;
  /** Hash of the banner image (0010_user_images). */
  banner: Generated<string | null>;
  bot: number;
  flags: number;
  created_at: number;
  premium_type: Generated<number>;
  /** 1 for a provisional account (a game-owned placeholder keyed by an external identity). */
  provisional: Generated<number>;
  /** The guild whose tag the user shows (`primary_guild.identity_guild_id`). */
  primary_guild_id: Generated<string | null>;
  /** `primary_guild.identity_enabled`: null when cleared by the system, 0 when removed by the user. */
  primary_guild_enabled: Generated<number | null>;
}

/** User session tokens (the bare `Authorization: <token>` form), stored hashed. */
export interface SessionsTable {
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number | null;
}

export interface ApplicationsTable {
  id: string;
  name: string;
  description: Generated<string>;
  owner_id: string | null;
  bot_user_id: string;
  bot_token_hash: string;
  client_secret_hash: string;
  public_client: number;
  redirect_uris: string;
  flags: number;
  verify_key: string;
  signing_key: string;
  created_at: number;
  parent_application_id: string | null;
  tags: Generated<string>;
  custom_install_url: string | null;
  /** Unix ms of the operator's last approval of the privileged intents review; null: never (0008). */
  intents_review_approved_at: Generated<number | null>;
  /** JSON array of the origins allowed on the local RPC WebSocket (0029). */
  rpc_origins: Generated<string>;
  /** Hashes of the current icon and cover image, or null (0030). */
  icon: Generated<string | null>;
  cover_image: Generated<string | null>;
  /** JSON object keyed by integration type, each `{oauth2_install_params?}`; `install_params` is key "0" (0030). */
  integration_types_config: Generated<string>;
  role_connections_verification_url: Generated<string | null>;
  bot_public: Generated<number>;
  bot_require_code_grant: Generated<number>;
  /** The owning team, or null for an application its owner develops alone (0030). */
  team_id: Generated<string | null>;
}

export interface ApplicationImagesTable {
  application_id: string;
  kind: 'icon' | 'cover_image';
  hash: string;
  content_type: string;
  bytes: Buffer;
  created_at: number;
}

export interface TeamsTable {
  id: string;
  name: string;
  owner_user_id: string;
  created_at: number;
}

export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  /** `owner`, `admin`, `developer` or `read-only` (seed: Team member). */
  role: string;
  membership_state: number;
  created_at: number;
}

export interface ApplicationEmojisTable {
  id: string;
  application_id: string;
  name: string;
  /** Who uploaded it: the bot user through the API, a team member through the portal. */
  user_id: string;
  animated: number;
  content_type: string;
  bytes: Buffer;
  created_at: number;
}

export interface ActivityUrlMappingsTable {
  application_id: string;
  /** A path prefix under the Activity's proxy, `/` or `/api`… */
  prefix: string;
  /** Where requests under the prefix go: a base URL without query. */
  target: string;
  created_at: number;
}

export interface QuestEnrollmentsTable {
  application_id: string;
  quest_id: string;
  user_id: string;
  enrolled_at: number;
}

export interface OAuthGrantsTable {
  application_id: string;
  user_id: string;
  /** Space-separated, as granted (umbrella scopes unexpanded). */
  scopes: string;
  integration_type: number | null;
  created_at: number;
}

export interface OAuthCodesTable {
  code_hash: string;
  application_id: string;
  user_id: string;
  redirect_uri: string | null;
  scopes: string;
  nonce: string | null;
  code_challenge: string | null;
  integration_type: number | null;
  auth_time: number;
  expires_at: number;
  used_at: number | null;
  created_at: number;
  /** Once spent: the family of the token it was exchanged for, revoked if the code is replayed. */
  family_id: string | null;
}

export interface OAuthTokensTable {
  id: string;
  access_hash: string;
  refresh_hash: string | null;
  refresh_spent: number;
  refresh_expires_at: number | null;
  family_id: string;
  code_hash: string | null;
  /** For a child token: the family of the parent token it was exchanged from. */
  parent_family_id: string | null;
  application_id: string;
  user_id: string;
  scopes: string;
  expires_at: number;
  created_at: number;
  /** 1 for a client_credentials token (migration 0021): the owner's identity, no player scopes. */
  client_credentials: Generated<number>;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

export interface ConnectionsTable {
  id: string;
  user_id: string;
  type: string;
  external_id: string;
  name: string;
  verified: number;
  visibility: number;
  legacy_publisher: number;
  created_at: number;
}

export interface GuildsTable {
  id: string;
  name: string;
  icon: string | null;
  banner: string | null;
  owner_id: string;
  /** JSON array of feature strings. */
  features: string;
  created_at: number;
  splash: string | null;
  discovery_splash: string | null;
  description: string | null;
  verification_level: Generated<number>;
  default_message_notifications: Generated<number>;
  explicit_content_filter: Generated<number>;
  mfa_level: Generated<number>;
  nsfw_level: Generated<number>;
  afk_channel_id: string | null;
  afk_timeout: Generated<number>;
  system_channel_id: string | null;
  system_channel_flags: Generated<number>;
  rules_channel_id: string | null;
  public_updates_channel_id: string | null;
  safety_alerts_channel_id: string | null;
  preferred_locale: Generated<string>;
  premium_progress_bar_enabled: Generated<number>;
  /** The application whose bot created the guild, if one did. */
  application_id: string | null;
  tag: string | null;
  badge: string | null;
}

export interface GuildMembersTable {
  guild_id: string;
  user_id: string;
  /** Unused since 0008: permissions come from roles. */
  permissions: Generated<string>;
  joined_at: number;
  nick: string | null;
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  flags: Generated<number>;
  pending: Generated<number>;
  mute: Generated<number>;
  deaf: Generated<number>;
  communication_disabled_until: number | null;
}

export interface GuildRolesTable {
  id: string;
  guild_id: string;
  name: string;
  /** Decimal-string bitset. */
  permissions: string;
  /** `colors.primary_color` (and the deprecated `color`). */
  color: number;
  secondary_color: number | null;
  tertiary_color: number | null;
  hoist: number;
  icon: string | null;
  unicode_emoji: string | null;
  position: number;
  managed: number;
  mentionable: number;
  flags: Generated<number>;
  /** `tags.bot_id` of a bot's managed role. */
  bot_id: string | null;
  integration_id: string | null;
  created_at: number;
}

export interface GuildMemberRolesTable {
  guild_id: string;
  user_id: string;
  role_id: string;
}

export interface ChannelsTable {
  id: string;
  guild_id: string;
  type: number;
  name: string;
  position: number;
  parent_id: string | null;
  topic: string | null;
  nsfw: number;
  rate_limit_per_user: number;
  bitrate: number | null;
  user_limit: number | null;
  rtc_region: string | null;
  video_quality_mode: number | null;
  default_auto_archive_duration: number | null;
  default_thread_rate_limit_per_user: number | null;
  flags: Generated<number>;
  last_message_id: string | null;
  last_pin_timestamp: number | null;
  /** JSON text (forum and media channels). */
  available_tags: string | null;
  default_reaction_emoji: string | null;
  default_sort_order: number | null;
  default_forum_layout: number | null;
  created_at: number;
}

export interface ChannelOverwritesTable {
  channel_id: string;
  /** A role id (type 0) or a user id (type 1). */
  target_id: string;
  type: number;
  allow: string;
  deny: string;
}

export interface GuildBansTable {
  guild_id: string;
  user_id: string;
  reason: string | null;
  created_at: number;
}

export interface AuditLogEntriesTable {
  id: string;
  guild_id: string;
  /** Who acted (null for the system). */
  user_id: string | null;
  target_id: string | null;
  action_type: number;
  /** JSON array of `{key, old_value?, new_value?}`. */
  changes: string | null;
  /** JSON object of the entry's optional info. */
  options: string | null;
  reason: string | null;
  created_at: number;
}

export interface VoiceStatesTable {
  guild_id: string;
  user_id: string;
  channel_id: string;
  session_id: string;
  deaf: number;
  mute: number;
  self_deaf: number;
  self_mute: number;
  self_stream: number;
  self_video: number;
  suppress: number;
  request_to_speak_timestamp: number | null;
}

export interface OutboxTable {
  id: string;
  type: string;
  application_id: string;
  payload: string;
  created_at: number;
  // ---- delivery state (0004_webhooks) ----
  /** `pending`, `delivered`, `failed` (retries spent) or `skipped` (not subscribed, no URL, disabled). */
  status: Generated<string>;
  attempts: Generated<number>;
  next_attempt_at: Generated<number>;
  /** The node delivering it now, until `lease_until`. */
  lease_owner: string | null;
  lease_until: number | null;
  finished_at: number | null;
  last_error: string | null;
  /** Where to deliver instead of the application's URL (a lobby's `override_event_webhooks_url`). */
  override_url: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  event_id: string;
  application_id: string;
  attempt: number;
  url: string;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  created_at: number;
}

/** An application's `event_webhooks_*` settings (PROTOCOL.md §F.1). */
export interface EventWebhooksTable {
  application_id: string;
  url: string | null;
  status: number;
  /** JSON array of event type names. */
  types: string;
  disabled_reason: string | null;
  updated_at: number;
}

export interface SkusTable {
  id: string;
  application_id: string;
  type: number;
  name: string;
  slug: string;
  flags: number;
  created_at: number;
}

export interface EntitlementsTable {
  id: string;
  application_id: string;
  sku_id: string;
  user_id: string | null;
  guild_id: string | null;
  type: number;
  deleted: number;
  consumed: number;
  starts_at: number | null;
  ends_at: number | null;
  subscription_id: string | null;
  created_at: number;
}

export interface SubscriptionsTable {
  id: string;
  application_id: string;
  user_id: string;
  /** JSON arrays of snowflakes. */
  sku_ids: string;
  entitlement_ids: string;
  renewal_sku_ids: string | null;
  current_period_start: number;
  current_period_end: number;
  status: number;
  canceled_at: number | null;
  created_at: number;
}

export interface LobbiesTable {
  id: string;
  application_id: string;
  /** JSON object of strings, or null. */
  metadata: string | null;
  flags: number;
  idle_timeout_seconds: number;
  secret: string | null;
  secret_expires_at: number | null;
  sdk_created: number;
  override_event_webhooks_url: string | null;
  created_at: number;
  active_at: number;
  /** Bumped by trigger on every change to the lobby's member rows (0038): keys cached member lists. */
  members_version: Generated<number>;
}

export interface LobbyMembersTable {
  lobby_id: string;
  user_id: string;
  application_id: string;
  metadata: string | null;
  flags: number;
  additional_name: string | null;
  joined_at: number;
}

export interface LobbyMessagesTable {
  id: string;
  lobby_id: string;
  author_id: string;
  application_id: string;
  content: string;
  metadata: string | null;
  moderation_metadata: string | null;
  author_additional_name: string | null;
  flags: number;
  created_at: number;
  edited_at: number | null;
  /** The linked channel the message also lives in (0028_linked_channels); null for the lobby alone. */
  channel_id: Generated<string | null>;
}

/** A lobby's linked guild text channel (0028_linked_channels). */
export interface LobbyChannelLinksTable {
  lobby_id: string;
  channel_id: string;
  guild_id: string;
  application_id: string;
  linked_by: string;
  linked_at: number;
}

// ---- Provisional accounts ----

export interface ExternalIdentitiesTable {
  id: string;
  application_id: string;
  provider_type: string;
  provider_id: string;
  external_user_id: string;
  user_id: string;
  restricted_by: string | null;
  created_at: number;
}

export interface IdentityProvidersTable {
  id: string;
  application_id: string;
  type: string;
  issuer: string | null;
  client_id: string | null;
  jwks_uri: string | null;
  algorithms: Generated<string>;
  verification_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface UserBansTable {
  user_id: string;
  reason: string | null;
  expires_at: number | null;
  created_at: number;
}

// ---- Social layer (0007_social) ----

/** A's view of B: `user_id` A, `target_id` B, `type` a RelationshipType. */
export interface RelationshipsTable {
  user_id: string;
  target_id: string;
  type: number;
  since: number;
}

export interface GameRelationshipsTable {
  application_id: string;
  user_id: string;
  target_id: string;
  type: number;
  since: number;
}

export interface DmChannelsTable {
  id: string;
  user_low: string;
  user_high: string;
  created_at: number;
}

/**
 * A group DM (0037_rings_and_group_dms): channel type 3, named or not, owned by one of its recipients, or
 * by the bot of the application that manages it (`gdm.join`, 0039_managed_group_dms).
 */
export interface GroupDmChannelsTable {
  id: string;
  owner_id: string;
  name: string | null;
  /** Icon hash (the image's MD5, as the platform answers it). */
  icon: string | null;
  /** The application whose bot opened it through `gdm.join`; null for a person's group DM. */
  application_id: Generated<string | null>;
  created_at: number;
}

/** A user in a group DM (its owner included, unless a bot: bots are no recipients). */
export interface GroupDmRecipientsTable {
  channel_id: string;
  user_id: string;
  added_at: number;
  /** The nickname a managing bot gave the recipient (`nicks`, `nick`). */
  nick: Generated<string | null>;
}

/** A group DM's current icon image (0039_managed_group_dms), its hash the channel's `icon`. */
export interface GroupDmIconsTable {
  channel_id: string;
  hash: string;
  content_type: string;
  bytes: Buffer;
  created_at: number;
}

export interface DmMessagesTable {
  id: string;
  channel_id: string;
  application_id: string;
  author_id: string;
  recipient_id: string;
  content: string;
  /** JSON `{string: string}` or null. */
  metadata: string | null;
  moderation_metadata: string | null;
  /** JSON message activity `{type, party_id?}` of an invite, or null. */
  activity: string | null;
  nonce: string | null;
  flags: number;
  /** 1 when both users are provisional: the message lives only in-game, outside the history (§B.5). */
  ephemeral: number;
  created_at: number;
  edited_at: number | null;
}

/** A bus event as the event log keeps it (bus/database-bus.ts); `id` gives the order every node delivers in. */
export interface EventLogTable {
  id: Generated<number>;
  /** The publisher's clock, never below the previous row's: the `<ms>` of the event id. */
  ms: number;
  /** The event's JSON text (bus.ts `encodeEvent`). */
  event: string;
}

/** The bytes of a user's current avatar or banner, served at `/avatars/…` and `/banners/…`. */
export interface UserImagesTable {
  user_id: string;
  kind: 'avatar' | 'banner';
  hash: string;
  content_type: string;
  bytes: Buffer;
  created_at: number;
}

// ---- Channel messages (0016_messages) ----

export interface MessagesTable {
  id: string;
  channel_id: string;
  guild_id: string | null;
  author_id: string;
  type: Generated<number>;
  content: Generated<string>;
  flags: Generated<number>;
  tts: Generated<number>;
  mention_everyone: Generated<number>;
  /** JSON array of user ids. */
  mentions: Generated<string>;
  /** JSON array of role ids. */
  mention_roles: Generated<string>;
  /** JSON array of embed objects as the wire has them. */
  embeds: Generated<string>;
  /** JSON array of component objects as the wire has them. */
  components: Generated<string>;
  message_reference: string | null;
  message_snapshots: string | null;
  interaction_metadata: string | null;
  /** The deprecated `interaction` object (JSON), on messages of interactions. */
  interaction: string | null;
  /** `{participants, ended_timestamp}` (JSON) of a CALL message (type 3, 0036_dm_calls). */
  call: string | null;
  nonce: string | null;
  pinned: Generated<number>;
  pinned_at: number | null;
  webhook_id: string | null;
  application_id: string | null;
  /** The id's own timestamp (ms): history pages order by (created_at, id). */
  created_at: number;
  edited_at: number | null;
}

export interface MessageNoncesTable {
  author_id: string;
  nonce: string;
  message_id: string;
  created_at: number;
}

export interface MessageAttachmentsTable {
  id: string;
  /** Null while an upload is staged and not yet part of a message. */
  message_id: string | null;
  channel_id: string;
  position: Generated<number>;
  filename: string;
  title: string | null;
  description: string | null;
  content_type: string | null;
  size: number;
  width: number | null;
  height: number | null;
  duration_secs: number | null;
  waveform: string | null;
  flags: Generated<number>;
  storage_key: string;
  created_at: number;
  /** The interaction whose user sent the file (an ATTACHMENT option, a modal's upload); no message holds it. */
  interaction_id: string | null;
}

/** An application installed to a guild with `applications.commands` alone: its bot is not a member. */
export interface ApplicationGuildInstallsTable {
  application_id: string;
  guild_id: string;
  installer_id: string;
  created_at: number;
}

export interface MessageReactionsTable {
  message_id: string;
  /** A custom emoji's id, or the unicode emoji itself. */
  emoji_key: string;
  emoji_id: string | null;
  emoji_name: string | null;
  emoji_animated: Generated<number>;
  user_id: string;
  burst: Generated<number>;
  created_at: number;
}

export interface SlowmodeMarksTable {
  channel_id: string;
  user_id: string;
  until: number;
}

export interface AutoModerationRulesTable {
  id: string;
  guild_id: string;
  name: string;
  creator_id: string;
  event_type: number;
  trigger_type: number;
  trigger_metadata: Generated<string>;
  actions: Generated<string>;
  enabled: Generated<number>;
  exempt_roles: Generated<string>;
  exempt_channels: Generated<string>;
  created_at: number;
}

/** A gateway session other nodes may take over (gateway/session-store.ts). */
export interface GatewaySessionsTable {
  id: string;
  /** The node that holds it; a node that takes it over writes its own name. */
  owner: string;
  /** StoredSession as JSON. */
  session: string;
  /** When its owner last said it holds it: a session nobody holds past the resume window is removed. */
  touched_at: number;
}

/** A session's recent dispatches, for a Resume on another node. */
export interface GatewaySessionDispatchesTable {
  session_id: string;
  seq: number;
  /** Sent as JSON. */
  sent: string;
}

/** A voice channel's ephemeral data (0027_voice_status): its status and when its voice session began (ms). */
export interface VoiceChannelStatusesTable {
  channel_id: string;
  guild_id: string;
  status: string | null;
  voice_start_time: number | null;
}

/** Which node hosts a call (0033_voice); `alive_at` (ms) is refreshed while the node runs it. */
export interface VoiceCallsTable {
  channel_id: string;
  node_id: string;
  endpoint: string;
  alive_at: number;
}

/** A voice token of VOICE_SERVER_UPDATE (0033_voice), bound to user, server, channel and gateway session. */
export interface VoiceTokensTable {
  token_hash: string;
  user_id: string;
  server_id: string;
  channel_id: string;
  session_id: string;
  expires_at: number;
}

/** A member in a lobby's call (0033_voice), from op 4 with the lobby as the channel. */
export interface LobbyVoiceStatesTable {
  lobby_id: string;
  user_id: string;
  session_id: string;
  self_mute: number;
  self_deaf: number;
}

/** The call of a DM channel while someone is in it (0036_dm_calls). */
export interface DmCallsTable {
  channel_id: string;
  /** Its CALL system message. */
  message_id: string;
}

/** A recipient a DM call rings (0037_call_rings) until it joins, declines, or `expires_at` passes. */
export interface DmCallRingsTable {
  channel_id: string;
  user_id: string;
  expires_at: number;
}

/** A user in a DM call (0036_dm_calls): one private call per user. */
export interface DmVoiceStatesTable {
  user_id: string;
  channel_id: string;
  session_id: string;
  self_mute: number;
  self_deaf: number;
  self_video: number;
}

/** A guild invite (0026_invites); `max_age` in seconds, `expires_at` null when it never expires. */
export interface InvitesTable {
  code: string;
  guild_id: string;
  channel_id: string;
  inviter_id: string | null;
  max_age: number;
  max_uses: number;
  uses: Generated<number>;
  temporary: Generated<number>;
  target_type: number | null;
  target_user_id: string | null;
  target_application_id: string | null;
  /** JSON array of role ids granted on joining. */
  role_ids: Generated<string>;
  flags: Generated<number>;
  created_at: number;
  expires_at: number | null;
  /** When the last target users file was received and processed; null: the invite has none. */
  target_users_at: number | null;
  target_users_completed_at: number | null;
  target_users_total: Generated<number>;
}

/** The users a target users file allows to accept an invite. */
export interface InviteTargetUsersTable {
  code: string;
  user_id: string;
}

/** Memberships granted by a temporary invite: removed when the member's last session ends. */
export interface InviteTemporaryMembersTable {
  guild_id: string;
  user_id: string;
  /** JSON array of the roles the invite gave. */
  role_ids: Generated<string>;
  joined_at: number;
}

export interface ThreadsTable {
  id: string;
  guild_id: string;
  parent_id: string;
  type: number;
  name: string;
  owner_id: string;
  flags: Generated<number>;
  rate_limit_per_user: Generated<number>;
  last_message_id: string | null;
  last_pin_timestamp: number | null;
  archived: Generated<number>;
  auto_archive_duration: number;
  archive_timestamp: number;
  locked: Generated<number>;
  /** Private threads only. */
  invitable: number | null;
  message_count: Generated<number>;
  total_message_sent: Generated<number>;
  /** JSON array of forum tag ids. */
  applied_tags: Generated<string>;
  /** The last activity: auto-archive counts from it. */
  last_activity_at: number;
  created_at: number;
}

export interface ThreadMembersTable {
  thread_id: string;
  user_id: string;
  join_timestamp: number;
  flags: Generated<number>;
}

/** One named fixture object a seed run created (0034_emulator_fixtures): its ids and credentials as JSON. */
export interface EmulatorFixturesTable {
  key: string;
  value: string;
  created_at: number;
}

export interface InteractionsTable {
  id: string;
  application_id: string;
  type: number;
  token_hash: string;
  user_id: string;
  guild_id: string | null;
  channel_id: string;
  payload: string;
  source_message_id: string | null;
  nonce: string | null;
  user_install_only: Generated<number>;
  created_at: number;
  response_type: number | null;
  original_message_id: string | null;
  followups: Generated<number>;
  settled: Generated<number>;
  /** The choices an autocomplete was answered with (JSON), for clients without a gateway session. */
  autocomplete_choices: string | null;
}

export interface InteractionModalsTable {
  id: string;
  interaction_id: string;
  application_id: string;
  user_id: string;
  channel_id: string;
  custom_id: string;
  components: string;
  created_at: number;
  submitted: Generated<number>;
}

export interface InteractionMessagesTable {
  message_id: string;
  interaction_id: string;
  channel_id: string;
  original: Generated<number>;
}

export interface InteractionEndpointsTable {
  application_id: string;
  url: string;
}

/** An application command (0031_commands); `scope` is its guild id, '' when global; JSON text columns. */
export interface ApplicationCommandsTable {
  id: string;
  application_id: string;
  guild_id: string | null;
  scope: string;
  type: number;
  name: string;
  name_localizations: string | null;
  description: string;
  description_localizations: string | null;
  options: string | null;
  default_member_permissions: string | null;
  contexts: string | null;
  integration_types: string | null;
  nsfw: number;
  handler: number | null;
  version: string;
  created_at: number;
}

/** A command's permission overwrites in one guild (JSON list); `command_id` may be the application's id. */
export interface ApplicationCommandPermissionsTable {
  guild_id: string;
  command_id: string;
  application_id: string;
  permissions: string;
}
