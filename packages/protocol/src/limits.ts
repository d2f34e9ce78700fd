/** Numeric limits of the spec (seed: Limits), each named once. */
export const Limits = {
  lobbyMessagesGetMax: 200,
  lobbyHistoryMaxMessages: 200,
  lobbyHistoryMaxAgeMs: 72 * 60 * 60 * 1000,
  lobbyMembersBulkMax: 25,
  voiceChannelStatusMaxLength: 500,
  embedFieldsMax: 25,
  componentsV2TotalMax: 40,
  legacyActionRowsMax: 5,
  contextMenuCommandsPerType: 15,
  entryPointCommandsGlobal: 1,
  applicationEmojisMax: 2000,
  userInstallFollowupsMax: 5,
  fileUploadComponentMaxFiles: 10,
  guildTagMinLength: 1,
  guildTagMaxLength: 4,
  displayNameMaxLength: 32,
  sdkHttpRequestTimeoutMs: 30000,
  /** An application that can reach this many users needs an approved review for privileged intents. */
  privilegedIntentReviewUsers: 10000,
  /** The review is reapplied for once a year: an approval older than this lapses (seed, Limits). */
  privilegedIntentReviewValidMs: 365 * 24 * 60 * 60 * 1000,
  /** Request Guild Members for all members: 1 per guild per bot per 30 s (seed, Limits). */
  requestAllGuildMembersWindowMs: 30_000,
  /** File upload limit per attachment before and after 16 January 2025 (seed, Limits). */
  fileUploadBytesBefore20250116: 25 * 1024 * 1024,
  fileUploadBytes: 10 * 1024 * 1024,
} as const;

/** Request body size the HTTP server accepts before answering 413. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/**
 * Nesting of arrays and objects a JSON body may have (Hearth's limit: the platform's bodies are a few
 * levels deep). Deeper bodies are refused before they are parsed, so no check ever recurses that far.
 */
export const MAX_JSON_DEPTH = 32;
