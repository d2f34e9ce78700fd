/** Lobbies (PROTOCOL.md §A): limits, flags and event names, each named once. */
export const LobbyLimits = {
  /** Members per lobby (guide: "a maximum of 1,000 members"). */
  membersMax: 1000,
  /** Lobbies one user may be in, per application. */
  lobbiesPerUserPerApplication: 100,
  /** Members in the `members` array of Create and Modify (SPEC `maxItems`). */
  requestMembersMax: 25,
  /** Lobby and member metadata: keys per object and characters per value (SPEC). */
  metadataKeysMax: 25,
  metadataValueMaxLength: 1024,
  idleTimeoutMinSeconds: 5,
  idleTimeoutMaxSeconds: 604_800,
  idleTimeoutDefaultSeconds: 300,
  secretMaxLength: 250,
  /** The secret of an SDK-created lobby stops admitting new members after 30 days; the lobby stays. */
  secretLifetimeMs: 30 * 24 * 60 * 60 * 1000,
  additionalNameMinLength: 1,
  additionalNameMaxLength: 80,
  messageContentMaxLength: 4000,
  overrideWebhooksUrlMaxLength: 512,
  /** GET messages `limit` (also the history window of the library with the age below). */
  messagesDefaultLimit: 50,
} as const;

/** Pre-approval limits per application, lifted by `CommunicationFeaturesApproved` (PROTOCOL.md §A.3). */
export const PRE_APPROVAL_LIMIT = { limit: 100, windowMs: 2 * 60 * 60 * 1000 } as const;
/** PATCH /lobbies/{id}/channel-linking has its own, smaller pre-approval limit (PROTOCOL.md §A.3). */
export const CHANNEL_LINKING_LIMIT = { limit: 20, windowMs: 2 * 60 * 60 * 1000 } as const;

/** The guild invite of Create Lobby Channel Invite: single use, valid one hour (PROTOCOL.md §A.3 rows 14, 15). */
export const LobbyChannelInvites = { maxAgeSeconds: 3600, maxUses: 1 } as const;

/** Lobby flags; requests may set only this one (SPEC). */
export const LobbyFlags = { RequireApplicationAuthorization: 1 << 0 } as const;
/** Lobby member flags. */
export const LobbyMemberFlags = { CanLinkLobby: 1 << 0 } as const;

/** Message flags the social layer sets (UDOC `SENT_BY_SOCIAL_LAYER_INTEGRATION`). */
export const SocialMessageFlags = { SentBySocialLayerIntegration: 1 << 16 } as const;

/** `reason` of LOBBY_DELETE: the lobby is gone, or only this member left or was removed. */
export const LobbyDeleteReasons = { Deleted: 'deleted', Removed: 'removed' } as const;
export type LobbyDeleteReason = (typeof LobbyDeleteReasons)[keyof typeof LobbyDeleteReasons];

/** Lobby dispatches to SDK sessions (PROTOCOL.md §A.6) and the webhook events of lobby messages (§F.4). */
export const LobbyEvents = {
  Create: 'LOBBY_CREATE',
  Update: 'LOBBY_UPDATE',
  Delete: 'LOBBY_DELETE',
  MemberAdd: 'LOBBY_MEMBER_ADD',
  MemberUpdate: 'LOBBY_MEMBER_UPDATE',
  MemberRemove: 'LOBBY_MEMBER_REMOVE',
  MessageCreate: 'LOBBY_MESSAGE_CREATE',
  MessageUpdate: 'LOBBY_MESSAGE_UPDATE',
  MessageDelete: 'LOBBY_MESSAGE_DELETE',
} as const;
