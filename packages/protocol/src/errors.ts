/**
 * The one catalogue of JSON error codes (PROTOCOL.md §E.2, §B.2). Each entry is the wire triple a client
 * sees: HTTP status, JSON `code`, `message`. Several HTTP-level errors share code 0.
 */
export const JSONErrors = {
  GeneralBadRequest: { code: 0, status: 400, message: '400: Bad Request' },
  GeneralUnauthorized: { code: 0, status: 401, message: '401: Unauthorized' },
  GeneralForbidden: { code: 0, status: 403, message: '403: Forbidden' },
  GeneralNotFound: { code: 0, status: 404, message: '404: Not Found' },
  GeneralMethodNotAllowed: { code: 0, status: 405, message: '405: Method Not Allowed' },
  /** A request whose head or body did not arrive in time (the HTTP server's own timeouts). */
  GeneralRequestTimeout: { code: 0, status: 408, message: '408: Request Timeout' },
  /** A request line or headers over the HTTP server's size limit (an over-long URL among them). */
  GeneralRequestHeaderFieldsTooLarge: {
    code: 0,
    status: 431,
    message: '431: Request Header Fields Too Large',
  },
  GeneralInternalServerError: { code: 0, status: 500, message: '500: Internal Server Error' },
  UnknownApplication: { code: 10002, status: 404, message: 'Unknown Application' },
  UnknownChannel: { code: 10003, status: 404, message: 'Unknown Channel' },
  UnknownGuild: { code: 10004, status: 404, message: 'Unknown Guild' },
  /** An invite code that does not exist, has expired or is used up (GUILDS.md §3.6). */
  UnknownInvite: { code: 10006, status: 404, message: 'Unknown Invite' },
  UnknownMember: { code: 10007, status: 404, message: 'Unknown Member' },
  UnknownMessage: { code: 10008, status: 404, message: 'Unknown Message' },
  UnknownOverwrite: { code: 10009, status: 404, message: 'Unknown Overwrite' },
  UnknownRole: { code: 10011, status: 404, message: 'Unknown Role' },
  UnknownUser: { code: 10013, status: 404, message: 'Unknown User' },
  UnknownEmoji: { code: 10014, status: 404, message: 'Unknown Emoji' },
  UnknownBan: { code: 10026, status: 404, message: 'Unknown Ban' },
  UnknownSKU: { code: 10027, status: 404, message: 'Unknown SKU' },
  UnknownEntitlement: { code: 10029, status: 404, message: 'Unknown Entitlement' },
  UnknownLobby: { code: 10031, status: 404, message: 'Unknown Lobby' },
  UnknownWebhook: { code: 10015, status: 404, message: 'Unknown Webhook' },
  /** An interaction that does not exist, or whose 3 s for a first response have passed (DOCS). */
  UnknownInteraction: { code: 10062, status: 404, message: 'Unknown interaction' },
  UnknownVoiceState: { code: 10065, status: 404, message: 'Unknown Voice State' },
  UnknownApplicationCommand: { code: 10063, status: 404, message: 'Unknown application command' },
  /**
   * A command's permissions asked for while it has no overwrites in the guild (the platform's answer; 10066
   * is this, per its error table, not an unknown AutoMod rule, which has no code of its own and answers the
   * plain 404).
   */
  UnknownApplicationCommandPermissions: {
    code: 10066,
    status: 404,
    message: 'Unknown application command permissions',
  },
  BotsCannotUseEndpoint: { code: 20001, status: 403, message: 'Bots cannot use this endpoint' },
  OnlyBotsCanUseEndpoint: { code: 20002, status: 403, message: 'Only bots can use this endpoint' },
  /** A token of one application acting on another's commands. */
  NotAuthorizedForApplication: {
    code: 20012,
    status: 403,
    message: 'You are not authorized to perform this action on this application',
  },
  /** Slowmode (`rate_limit_per_user`): answered with 429 and `retry_after` (GUILDS.md §4.8). */
  SlowmodeRateLimited: {
    code: 20016,
    status: 429,
    message: 'This action cannot be performed due to slowmode rate limit',
  },
  MaximumGuilds: { code: 30001, status: 400, message: 'Maximum number of guilds reached (100)' },
  MaximumFriends: { code: 30002, status: 400, message: 'Maximum number of friends reached (1000)' },
  /** Pin Message past PinLimits.perChannel (GUILDS.md §3.7). */
  MaximumPins: { code: 30003, status: 400, message: 'Maximum number of pins reached for the channel (250)' },
  MaximumRoles: { code: 30005, status: 400, message: 'Maximum number of guild roles reached (250)' },
  /** Application emoji past Limits.applicationEmojisMax (DOCS emoji: Application-Owned Emoji). */
  MaximumEmojis: { code: 30008, status: 400, message: 'Maximum number of emojis reached' },
  MaximumReactions: { code: 30010, status: 400, message: 'Maximum number of reactions reached (20)' },
  MaximumChannels: { code: 30013, status: 400, message: 'Maximum number of guild channels reached (500)' },
  MaximumInvites: { code: 30016, status: 400, message: 'Maximum number of invites reached (1000)' },
  /** One command past its type's limit in its scope; `{max}` is that limit (100, 15, 1). */
  MaximumApplicationCommands: {
    code: 30032,
    status: 400,
    message: 'Maximum number of application commands reached ({max})',
  },
  // Hearth-defined: the platform publishes no code for the two lobby caps (PROTOCOL.md §A.2).
  MaximumLobbyMembers: {
    code: 30100,
    status: 400,
    message: 'Maximum number of lobby members reached (1000)',
  },
  MaximumLobbies: { code: 30101, status: 400, message: 'Maximum number of lobbies reached (100)' },
  // Hearth-defined: the platform publishes no codes for refused channel links (PROTOCOL.md §A.5).
  LobbyCannotBeLinked: {
    code: 30102,
    status: 400,
    message: 'Lobbies created with a secret cannot be linked to a channel',
  },
  ChannelAgeRestricted: {
    code: 30103,
    status: 400,
    message: 'Age-restricted channels cannot be linked to a lobby',
  },
  ChannelAlreadyLinked: { code: 30104, status: 400, message: 'Channel is already linked to another lobby' },
  LobbyNotLinked: { code: 30105, status: 400, message: 'Lobby has no linked channel' },
  Unauthorized: { code: 40001, status: 401, message: 'Unauthorized. Provide a valid token and try again' },
  RequestEntityTooLarge: { code: 40005, status: 413, message: 'Request entity too large' },
  /** Add Guild Member for a user the guild banned (GUILDS.md §3.3). */
  BannedFromGuild: { code: 40007, status: 403, message: 'The user is banned from this guild.' },
  MessageAlreadyCrossposted: {
    code: 40033,
    status: 400,
    message: 'This message has already been crossposted',
  },
  OnlyConsumableSKUsCanBeConsumed: {
    code: 40018,
    status: 400,
    message: 'Only consumable SKUs can be consumed',
  },
  OnlyTestEntitlementsCanBeDeleted: {
    code: 40019,
    status: 400,
    message: 'You can only delete sandbox entitlements.',
  },
  /** PATCH member `mute`/`deaf`/`channel_id` on a member who is in no voice channel (GUILDS.md §3.2). */
  TargetUserNotConnectedToVoice: {
    code: 40032,
    status: 400,
    message: 'Target user is not connected to voice.',
  },
  /** An edit renaming a command to the name of another of its type and scope. */
  ApplicationCommandNameExists: {
    code: 40041,
    status: 400,
    message: 'An application command with that name already exists',
  },
  InteractionAlreadyAcknowledged: {
    code: 40060,
    status: 400,
    message: 'Interaction has already been acknowledged',
  },
  /** Follow-ups past 5 of an interaction of a user-installed app (seed: Limits). */
  MaximumInteractionFollowups: {
    code: 40094,
    status: 400,
    message: 'This interaction has hit the maximum number of follow up messages',
  },
  EntitlementAlreadyGranted: {
    code: 40074,
    status: 400,
    message: 'The entitlement for this SKU has already been granted',
  },
  /** A tag from the forum's `available_tags` is required for a post there (REQUIRE_TAG flag). */
  ForumTagRequired: {
    code: 40067,
    status: 400,
    message: 'A tag is required to create a forum post in this channel',
  },
  /** Members of one thread (GUILDS.md §9: 30033). */
  MaximumThreadParticipants: {
    code: 30033,
    status: 400,
    message: 'Maximum number of thread participants has been reached (1000)',
  },
  MissingAccess: { code: 50001, status: 403, message: 'Missing Access' },
  CannotExecuteOnDMChannel: { code: 50003, status: 403, message: 'Cannot execute action on a DM channel' },
  CannotEditOtherUsersMessage: {
    code: 50005,
    status: 403,
    message: 'Cannot edit a message authored by another user',
  },
  CannotSendEmptyMessage: { code: 50006, status: 400, message: 'Cannot send an empty message' },
  CannotSendMessagesToThisUser: { code: 50007, status: 400, message: 'Cannot send messages to this user' },
  CannotSendMessagesInNonTextChannel: {
    code: 50008,
    status: 400,
    message: 'Cannot send messages in a non-text channel',
  },
  MissingPermissions: { code: 50013, status: 403, message: 'Missing Permissions' },
  /** Deleting or editing a system message (GUILDS.md §4.1). */
  CannotExecuteOnSystemMessage: {
    code: 50021,
    status: 400,
    message: 'Cannot execute action on a system message',
  },
  InvalidAuthenticationToken: { code: 50014, status: 401, message: 'Invalid authentication token provided' },
  /** An interaction token that is wrong, or older than its 15 minutes, on the webhook routes. */
  InvalidWebhookToken: { code: 50027, status: 401, message: 'Invalid Webhook Token' },
  InvalidOAuth2AccessToken: { code: 50025, status: 403, message: 'Invalid OAuth2 access token provided' },
  MissingOAuth2Scope: { code: 50026, status: 403, message: 'Missing required OAuth2 scope' },
  CannotExecuteOnChannelType: {
    code: 50024,
    status: 400,
    message: 'Cannot execute action on this channel type',
  },
  /** Deleting @everyone or a managed role (GUILDS.md §1.4). */
  InvalidRole: { code: 50028, status: 400, message: 'Invalid Role' },
  InvalidFormBody: { code: 50035, status: 400, message: 'Invalid Form Body' },
  BulkDeleteTooOld: {
    code: 50034,
    status: 400,
    message: 'A message provided was too old to bulk delete',
  },
  CannotDeleteCommunityChannel: {
    code: 50074,
    status: 400,
    message: 'Cannot delete a channel required for Community guilds',
  },
  InvalidAPIVersion: { code: 50041, status: 400, message: 'Invalid API version provided' },
  /** The owner leaving their own guild (DELETE /users/@me/guilds/{id}). */
  InvalidGuild: { code: 50055, status: 400, message: 'Invalid Guild' },
  /** Role icons without the ROLE_ICONS feature (GUILDS.md §9). */
  ServerNeedsMoreBoosts: {
    code: 50101,
    status: 400,
    message: 'This server needs more boosts to perform this action',
  },
  InvalidJSON: { code: 50109, status: 400, message: 'The request body contains invalid JSON.' },
  InvalidUserType: { code: 50229, status: 400, message: 'Invalid user type' },
  IndexNotYetAvailable: { code: 110000, status: 202, message: 'Index not yet available. Try again later' },
  CannotReplyWithoutReadHistory: {
    code: 160002,
    status: 403,
    message: 'Cannot reply without permission to read message history',
  },
  /** Threads (GUILDS.md §2.5, §9): an archived thread refuses writes; a locked one those of non-moderators. */
  ThreadArchived: { code: 50083, status: 400, message: 'Thread is archived' },
  ThreadAlreadyCreatedForMessage: {
    code: 160004,
    status: 400,
    message: 'A thread has already been created for this message',
  },
  ThreadLocked: { code: 160005, status: 400, message: 'Thread is locked' },
  MaximumActiveThreads: { code: 160006, status: 400, message: 'Maximum number of active threads reached' },
  ReactionBlocked: { code: 90001, status: 403, message: 'Reaction was blocked' },
  CannotForwardUnreadableMessage: {
    code: 160014,
    status: 403,
    message: 'You cannot forward a message whose content you cannot read',
  },
  // The platform publishes no HTTP status for 500000 (GUILDS.md §9): the request, not the server, failed, so 4xx.
  FailedToBanUsers: { code: 500000, status: 400, message: 'Failed to ban users' },
  AutoModerationMessageBlocked: {
    code: 200000,
    status: 400,
    message: 'Message was blocked by automatic moderation',
  },
  AutoModerationTitleBlocked: {
    code: 200001,
    status: 400,
    message: 'Title was blocked by automatic moderation',
  },
  ProvisionalAccountsNotEnabled: {
    code: 530000,
    status: 400,
    message: 'Application is not enabled for provisional accounts',
  },
  ProvisionalIdTokenExpired: { code: 530001, status: 400, message: 'ID token expired' },
  ProvisionalIssuerMismatch: { code: 530002, status: 400, message: 'ID token issuer mismatch' },
  ProvisionalAudienceMismatch: { code: 530003, status: 400, message: 'ID token audience mismatch' },
  ProvisionalIdTokenTooOld: { code: 530004, status: 400, message: 'ID token issued too long ago' },
  ProvisionalUsernameGenerationFailed: {
    code: 530006,
    status: 400,
    message: 'Failed to generate a unique username, please retry',
  },
  ProvisionalInvalidClientSecret: { code: 530007, status: 400, message: 'Invalid client secret' },
  ProvisionalOIDCConfigurationNotFound: {
    code: 530008,
    status: 400,
    message: 'OIDC configuration not found',
  },
  ProvisionalOIDCJWKSNotFound: { code: 530009, status: 400, message: 'OIDC JWKS not found' },
  ProvisionalAccountNonProvisional: {
    code: 530010,
    status: 400,
    message: 'User account is non-provisional and should be authed through OAuth2',
  },
  MergeSourceNotProvisional: { code: 530014, status: 400, message: 'Merge source user is not provisional' },
  MergeDestinationProvisional: {
    code: 530016,
    status: 400,
    message: 'Merge destination user is provisional',
  },
  MergeSourceBanned: { code: 530017, status: 400, message: 'Merge source user is banned' },
  ProvisionalInvalidOIDCJWT: { code: 530020, status: 400, message: 'Invalid OIDC JWT' },
  MergeExternalIdentityExists: {
    code: 530023,
    status: 400,
    message: 'User already has an external identity for this application',
  },
  ProvisionalOIDCJWTMissingKid: { code: 530027, status: 400, message: 'OIDC JWT is missing the kid header' },
  /**
   * Hearth-defined: the platform publishes no code for an SDK past its support window (seed: Versioning).
   * `{…}` is filled in per request.
   */
  SDKVersionEndOfLife: {
    code: 530100,
    status: 400,
    message: 'SDK {version} is end of life: move to {minimum} or newer (the latest is {latest})',
  },
  // ---- Social layer: relationships and game direct messages (PROTOCOL.md §B.4–B.6) ----
  /** A friend request to a user who blocked the sender: the block is not revealed (Hearth's reading). */
  IncomingFriendRequestsDisabled: { code: 80000, status: 400, message: 'Incoming friend requests disabled.' },
  CannotSendFriendRequestToSelf: { code: 80003, status: 400, message: 'Cannot send friend request to self' },
  NoUsersWithDiscordTag: { code: 80004, status: 400, message: 'No users with DiscordTag exist' },
} as const satisfies Record<string, JSONError>;

export interface JSONError {
  readonly code: number;
  readonly status: number;
  readonly message: string;
}

export type JSONErrorName = keyof typeof JSONErrors;

/** Error body of the HTTP API (PROTOCOL.md §E.2). */
export interface ErrorBody {
  code: number;
  message: string;
  errors?: FormErrorTree;
}

/** The nested `errors` tree of an Invalid Form Body error: keys are field names or array indexes. */
export interface FormErrorTree {
  _errors?: FormErrorLeaf[];
  [field: string]: FormErrorTree | FormErrorLeaf[] | undefined;
}

export interface FormErrorLeaf {
  code: string;
  message: string;
}

/** Field-level error codes inside an Invalid Form Body tree, with the platform's message wording. */
export const FormErrors = {
  required: () => ({ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }),
  string: (value: unknown) => ({
    code: 'BASE_TYPE_STRING',
    message: `Could not interpret "${describe(value)}" as string.`,
  }),
  integer: (value: unknown) => ({
    code: 'NUMBER_TYPE_COERCE',
    message: `Value "${describe(value)}" is not int.`,
  }),
  number: (value: unknown) => ({
    code: 'NUMBER_TYPE_COERCE',
    message: `Value "${describe(value)}" is not a number.`,
  }),
  boolean: () => ({ code: 'BASE_TYPE_BOOLEAN', message: 'Must be either true or false.' }),
  snowflake: (value: unknown) => ({
    code: 'NUMBER_TYPE_COERCE',
    message: `Value "${describe(value)}" is not snowflake.`,
  }),
  object: () => ({ code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }),
  array: () => ({ code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' }),
  maxLength: (max: number) => ({
    code: 'BASE_TYPE_MAX_LENGTH',
    message: `Must be ${max} or fewer in length.`,
  }),
  minLength: (min: number) => ({
    code: 'BASE_TYPE_MIN_LENGTH',
    message: `Must be ${min} or more in length.`,
  }),
  badLength: (min: number, max: number) => ({
    code: 'BASE_TYPE_BAD_LENGTH',
    message: `Must be between ${min} and ${max} in length.`,
  }),
  maxItems: (max: number) => ({
    code: 'BASE_TYPE_MAX_LENGTH',
    message: `Must be ${max} or fewer in length.`,
  }),
  minItems: (min: number) => ({ code: 'BASE_TYPE_MIN_LENGTH', message: `Must be ${min} or more in length.` }),
  minimum: (min: number | bigint) => ({
    code: 'NUMBER_TYPE_MIN',
    message: `int value should be greater than or equal to ${min}.`,
  }),
  maximum: (max: number | bigint) => ({
    code: 'NUMBER_TYPE_MAX',
    message: `int value should be less than or equal to ${max}.`,
  }),
  choices: (choices: readonly unknown[]) => ({
    code: 'BASE_TYPE_CHOICES',
    message: `Value must be one of (${choices.map((c) => `'${String(c)}'`).join(', ')}).`,
  }),
  email: () => ({ code: 'EMAIL_TYPE_INVALID_EMAIL', message: 'Not a well formed email address.' }),
  url: () => ({ code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' }),
  usernameTaken: () => ({
    code: 'USERNAME_ALREADY_TAKEN',
    message: 'Username is unavailable. Try adding numbers, letters, underscores _ , or periods.',
  }),
  usernameRateLimit: () => ({
    code: 'USERNAME_RATE_LIMIT',
    message: 'You are changing your username or Discord Tag too fast. Try again later.',
  }),
  /** A team id that names no team (Hearth's wording: teams are managed by the operator). */
  unknownTeam: () => ({ code: 'UNKNOWN_TEAM', message: 'Unknown team.' }),
  /** A user who is not a member of the team. */
  notTeamMember: () => ({ code: 'NOT_TEAM_MEMBER', message: 'This user is not a member of the team.' }),
  /** An application emoji name already used by another of its emoji (Hearth's wording). */
  emojiNameTaken: () => ({
    code: 'EMOJI_NAME_ALREADY_TAKEN',
    message: 'An emoji with this name already exists.',
  }),
  /** `install_params` and `custom_install_url` together (DOCS application: mutually exclusive). */
  installParamsExclusive: () => ({
    code: 'APPLICATION_INSTALL_PARAMS_EXCLUSIVE',
    message: 'install_params and custom_install_url cannot both be set.',
  }),
  /** The `bot` scope in a user install's parameters: a bot joins guilds only (Hearth's wording). */
  botScopeGuildInstallOnly: () => ({
    code: 'APPLICATION_BOT_SCOPE_GUILD_INSTALL_ONLY',
    message: 'The bot scope is available for guild installs only.',
  }),
  /** Image data that is not a data URI of an accepted type, or whose bytes are not that type's image. */
  imageInvalid: () => ({ code: 'IMAGE_INVALID', message: 'Invalid image data' }),
  imageTooLarge: (maxBytes: number) => ({
    code: 'BINARY_TYPE_MAX_SIZE',
    message: `File cannot be larger than ${(maxBytes / 1024).toFixed(1)} kb.`,
  }),
  emailTaken: () => ({ code: 'EMAIL_ALREADY_REGISTERED', message: 'Email is already registered.' }),
  invalidLogin: () => ({ code: 'INVALID_LOGIN', message: 'Login or password is invalid.' }),
  /** A password change whose current password is wrong (the platform's PATCH /users/@me wording). */
  passwordMismatch: () => ({ code: 'PASSWORD_DOES_NOT_MATCH', message: 'Password does not match.' }),
  unknownField: () => ({ code: 'UNKNOWN_FIELD', message: 'This field is not allowed' }),
  invalid: () => ({ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }),
  /** A category holds at most 50 channels (the platform answers it under `parent_id`). */
  channelParentMaxChannels: (max: number) => ({
    code: 'CHANNEL_PARENT_MAX_CHANNELS',
    message: `Maximum number of channels in category reached (${max})`,
  }),
  /** `parent_id` names no category of the guild (Hearth's wording; the platform publishes none). */
  channelParentInvalid: () => ({ code: 'CHANNEL_PARENT_INVALID', message: 'Category does not exist' }),
  // ---- Message embeds and components (GUILDS.md §4.7, §5) ----
  /** A URL whose scheme the field does not take (embed links: http/https; media also attachment://). */
  urlScheme: (scheme: string, allowed: readonly string[]) => ({
    code: 'URL_TYPE_INVALID_SCHEME',
    message: `Scheme "${scheme}" is not supported. Scheme must be one of (${allowed.map((s) => `'${s}'`).join(', ')}).`,
  }),
  /** A timestamp that is not ISO 8601 (embed `timestamp`). */
  dateTime: (value: unknown) => ({
    code: 'DATE_TIME_TYPE_PARSE',
    message: `Could not parse ${describe(value)}. Should be ISO8601.`,
  }),
  /** The characters of every embed of a message together (answered under `embeds`). */
  embedSizeExceeded: (max: number) => ({
    code: 'MAX_EMBED_SIZE_EXCEEDED',
    message: `Embed size exceeds maximum size of ${max}`,
  }),
  /** A component whose `type` may not stand where it is (the platform prints the choices as a tuple). */
  unionTypeChoices: (types: readonly number[]) => ({
    code: 'UNION_TYPE_CHOICES',
    message: `Value of field "type" must be one of (${types.length === 1 ? `${types[0]},` : types.join(', ')}).`,
  }),
  componentCustomIdDuplicated: () => ({
    code: 'COMPONENT_CUSTOM_ID_DUPLICATED',
    message: 'Component custom id cannot be duplicated',
  }),
  /** Two components of one message with the same `id` (Hearth's wording, after the custom id one). */
  componentIdDuplicated: () => ({
    code: 'COMPONENT_ID_DUPLICATED',
    message: 'Component id cannot be duplicated',
  }),
  /** A select that shares its action row, or more than the row holds. */
  componentLayoutWidthExceeded: () => ({
    code: 'COMPONENT_LAYOUT_WIDTH_EXCEEDED',
    message: 'The specified component exceeds the maximum width',
  }),
  buttonCustomIdRequired: () => ({
    code: 'BUTTON_COMPONENT_CUSTOM_ID_REQUIRED',
    message: 'A custom id is required',
  }),
  buttonUrlRequired: () => ({ code: 'BUTTON_COMPONENT_URL_REQUIRED', message: 'A url is required' }),
  buttonSkuIdRequired: () => ({ code: 'BUTTON_COMPONENT_SKU_ID_REQUIRED', message: 'A sku id is required' }),
  buttonCustomIdUrlMutuallyExclusive: () => ({
    code: 'BUTTON_COMPONENT_CUSTOM_ID_URL_MUTUALLY_EXCLUSIVE',
    message: 'A custom id and url cannot both be specified',
  }),
  /** A field the button's style does not take (a url on a primary button, a label on a premium one). */
  buttonFieldNotAllowed: (style: number) => ({
    code: 'BUTTON_COMPONENT_FIELD_NOT_ALLOWED',
    message: `This field cannot be used with a button of style ${style}`,
  }),
  selectOptionValueDuplicated: () => ({
    code: 'SELECT_COMPONENT_OPTION_VALUE_DUPLICATED',
    message: 'Select component option value cannot be duplicated',
  }),
  selectTooManyDefaultValues: () => ({
    code: 'SELECT_COMPONENT_TOO_MANY_DEFAULT_VALUES',
    message: 'Select component has more default options than max_values',
  }),
  /** A file component or media item naming an attachment the message does not carry. */
  mediaAttachmentNotFound: (filename: string) => ({
    code: 'UNFURLED_MEDIA_ITEM_ATTACHMENT_NOT_FOUND',
    message: `The message has no attachment named "${filename}"`,
  }),
  /** File components show an uploaded file only: `attachment://<filename>`. */
  mediaAttachmentRequired: () => ({
    code: 'UNFURLED_MEDIA_ITEM_ATTACHMENT_REQUIRED',
    message: 'The url must be an attachment:// reference',
  }),
  /** `content`, `embeds`, `sticker_ids` or `poll` on a message flagged IS_COMPONENTS_V2 (GUILDS.md §4.3). */
  componentsV2LegacyField: (field: string) => ({
    code: 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2',
    message: `The '${field}' field cannot be used when using MessageFlags.IS_COMPONENTS_V2`,
  }),
  // ---- AutoMod (GUILDS.md §10) ----
  /** One rule too many of a trigger type (keyword 6, others 1): the platform answers it at the body's root. */
  autoModerationMaxRulesOfType: (triggerType: number, max: number) => ({
    code: 'AUTO_MODERATION_MAX_RULES_OF_TYPE_EXCEEDED',
    message: `Maximum number of rules with trigger type ${triggerType} is ${max}`,
  }),
  /** A `regex_patterns` entry that does not compile, or uses what the platform's (Rust) regex lacks. */
  autoModerationInvalidRegex: () => ({
    code: 'AUTO_MODERATION_INVALID_REGEX',
    message: 'Invalid regex pattern',
  }),
  // ---- Application commands (GUILDS.md §6) ----
  /** A name outside the naming rule (CHAT_INPUT and option names: the pattern, lowercase). */
  commandInvalidName: () => ({
    code: 'APPLICATION_COMMAND_INVALID_NAME',
    message: 'Command name is invalid',
  }),
  /** Names, descriptions and choices of one command together past the size limit. */
  commandTooLarge: (max: number) => ({
    code: 'APPLICATION_COMMAND_TOO_LARGE',
    message: `Command exceeds maximum size (${max})`,
  }),
  /** A required option after an optional one. */
  commandOptionsRequiredOrder: () => ({
    code: 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
    message: 'Required options must be placed before non-required options',
  }),
  commandOptionNameDuplicated: (name: string) => ({
    code: 'APPLICATION_COMMAND_OPTIONS_DUPLICATE_NAME',
    message: `Option name ${name} is already used in these options`,
  }),
  /** Two commands of one type with one name in a bulk overwrite. */
  commandNameDuplicated: (name: string) => ({
    code: 'APPLICATION_COMMANDS_DUPLICATE_NAME',
    message: `Application command names must be unique (${name})`,
  }),
  commandAutocompleteWithChoices: () => ({
    code: 'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID',
    message: 'Autocomplete cannot be enabled on an option with choices',
  }),
  /** A field the command's or option's type does not take (options on a context menu, `handler`…). */
  commandFieldNotAllowed: () => ({
    code: 'APPLICATION_COMMAND_FIELD_NOT_ALLOWED',
    message: 'This field is not allowed for this type',
  }),
  /** A subcommand or group where it may not stand (a group in a group, a parameter beside a subcommand). */
  commandOptionsNesting: () => ({
    code: 'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID',
    message: 'Subcommands and groups cannot be mixed with parameters, nor nested deeper',
  }),
  /** A localization keyed by something that is not a locale. */
  localeInvalid: (locale: string) => ({
    code: 'LOCALE_INVALID',
    message: `Invalid locale: ${describe(locale)}`,
  }),
  /** `min_value` above `max_value`, `min_length` above `max_length`. */
  commandRangeInvalid: () => ({
    code: 'APPLICATION_COMMAND_OPTION_RANGE_INVALID',
    message: 'The minimum must be less than or equal to the maximum',
  }),
  /** PRIMARY_ENTRY_POINT commands are global only. */
  commandEntryPointGuild: () => ({
    code: 'APPLICATION_COMMAND_PRIMARY_ENTRY_POINT_GUILD_INVALID',
    message: 'Primary entry point commands cannot be guild commands',
  }),
  /**
   * An entry point command of an application without Activities enabled (EMBEDDED); Hearth's name, as the
   * platform publishes none for it.
   */
  commandEntryPointActivities: () => ({
    code: 'APPLICATION_COMMAND_PRIMARY_ENTRY_POINT_ACTIVITIES_DISABLED',
    message: 'Primary entry point commands require Activities to be enabled',
  }),
  /** A dictionary where another shape is required (the platform's ModelType wording). */
  modelType: () => ({ code: 'MODEL_TYPE_CONVERT', message: 'Only dictionaries may be used in a ModelType' }),
  // ---- Webhooks ----
  /** A URL that did not answer its PING with 204 (Hearth's name, after the interactions endpoint's error). */
  eventWebhooksUrlInvalid: () => ({
    code: 'APPLICATION_EVENT_WEBHOOKS_URL_INVALID',
    message: 'The specified event webhooks url could not be verified.',
  }),
  /** An interactions endpoint URL that failed its PING or accepted a bad signature (DOCS overview). */
  interactionsEndpointUrlInvalid: () => ({
    code: 'APPLICATION_INTERACTIONS_ENDPOINT_URL_INVALID',
    message: 'The specified interactions endpoint url could not be verified.',
  }),
  /** `allowed_mentions.parse` naming a kind whose id list is also given (GUILDS.md §4.6). */
  allowedMentionsParseExclusive: (kind: 'users' | 'roles') => ({
    code: 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
    message: `parse:["${kind}"] and ${kind}: [ids...] are mutually exclusive.`,
  }),
  /** A reply to a message that does not exist, with `fail_if_not_exists` left true (GUILDS.md §4.4). */
  messageReferenceUnknownMessage: () => ({
    code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE',
    message: 'Unknown message',
  }),
  /**
   * An id listed twice where a set is asked for (bulk delete's `messages`): the platform's message, at the
   * path of the repeat (`messages.1`); the code is Hearth's name for it.
   */
  setDuplicate: () => ({
    code: 'SET_TYPE_ALREADY_CONTAINS_VALUE',
    message: 'The set already contains this value',
  }),
  /** A line of an invite's `target_users_file` that is not a user id (GUILDS.md §3.6: "Line 5: invalid user ID - …"). */
  targetUsersLine: (line: number, value: string) => ({
    code: 'INVALID_USER_ID',
    message: `Line ${line}: invalid user ID - ${describe(value)}`,
  }),
  /** A `target_users_file` naming no user. */
  targetUsersEmpty: () => ({ code: 'BASE_TYPE_REQUIRED', message: 'The file lists no user IDs' }),
  contentType: () => ({
    code: 'CONTENT_TYPE_INVALID',
    message: `Expected "Content-Type" header to be one of {'application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'}.`,
  }),
} as const;

/** A value as the platform quotes it in a message: its JSON, cut at 64 characters. */
function describe(value: unknown): string {
  const text = typeof value === 'string' ? value : preview(value, 65);
  return text.length > 64 ? `${text.slice(0, 61)}...` : text;
}

/**
 * The first `limit` characters of JSON.stringify(value), built with an explicit stack: a value nested
 * thousands deep (a hostile body) would overflow the call stack of JSON.stringify (issue 21).
 */
function preview(value: unknown, limit: number): string {
  if (typeof value !== 'object' || value === null) return scalar(value) ?? String(value);
  let out = '';
  const work: Array<{ text: string } | { value: unknown }> = [{ value }];
  for (let item = work.pop(); item !== undefined && out.length < limit; item = work.pop()) {
    if ('text' in item) {
      out += item.text;
      continue;
    }
    const current = item.value;
    if (typeof current !== 'object' || current === null) {
      out += scalar(current) ?? 'null';
      continue;
    }
    const entries = Array.isArray(current)
      ? current.map((child) => ['', child] as const)
      : Object.entries(current)
          .filter(([, child]) => scalar(child) !== undefined || (typeof child === 'object' && child !== null))
          .map(([key, child]) => [`${JSON.stringify(key)}:`, child] as const);
    const [open, close] = Array.isArray(current) ? ['[', ']'] : ['{', '}'];
    work.push({ text: close });
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] ?? ['', null];
      work.push({ value: child });
      work.push({ text: `${i > 0 ? ',' : ''}${key}` });
    }
    work.push({ text: open });
  }
  return out;
}

/** JSON of a value that is not an object; undefined where JSON has none (undefined, functions). */
function scalar(value: unknown): string | undefined {
  return typeof value === 'bigint' ? String(value) : (JSON.stringify(value) as string | undefined);
}
