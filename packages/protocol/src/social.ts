/**
 * The social layer: relationships, presence and rich presence, activity invites, game direct messages
 * (PROTOCOL.md §B.4–B.9). Numbers and names of the spec, each once.
 */

/** Relationship types (PROTOCOL.md §B.6; DAT `rpc/common.ts` RelationshipType). 6 SUGGESTION is retired. */
export const RelationshipTypes = {
  None: 0,
  Friend: 1,
  Blocked: 2,
  PendingIncoming: 3,
  PendingOutgoing: 4,
  Implicit: 5,
} as const;
export type RelationshipType = (typeof RelationshipTypes)[keyof typeof RelationshipTypes];

/** Game relationships only take these types (PROTOCOL.md §B.6). */
export const GAME_RELATIONSHIP_TYPES: readonly RelationshipType[] = [
  RelationshipTypes.Friend,
  RelationshipTypes.PendingIncoming,
  RelationshipTypes.PendingOutgoing,
];

/** Presence statuses a client may set (PROTOCOL.md §D.6); `invisible` is seen by others as `offline`. */
export const PresenceStatuses = {
  Online: 'online',
  Idle: 'idle',
  Dnd: 'dnd',
  Invisible: 'invisible',
  Offline: 'offline',
} as const;
export type PresenceStatus = (typeof PresenceStatuses)[keyof typeof PresenceStatuses];
export const PRESENCE_STATUSES: readonly PresenceStatus[] = Object.values(PresenceStatuses);

/** Activity types (PROTOCOL.md §B.8; 6 HANG is UDOC only). */
export const ActivityTypes = {
  Playing: 0,
  Streaming: 1,
  Listening: 2,
  Watching: 3,
  Custom: 4,
  Competing: 5,
  HangStatus: 6,
} as const;
export type ActivityType = (typeof ActivityTypes)[keyof typeof ActivityTypes];

/** Activity flags (PROTOCOL.md §B.8), party privacy among them. */
export const ActivityFlags = {
  Instance: 1 << 0,
  Join: 1 << 1,
  Spectate: 1 << 2,
  JoinRequest: 1 << 3,
  Sync: 1 << 4,
  Play: 1 << 5,
  PartyPrivacyFriends: 1 << 6,
  PartyPrivacyVoiceChannel: 1 << 7,
  Embedded: 1 << 8,
} as const;
export const ALL_ACTIVITY_FLAGS = Object.values(ActivityFlags).reduce((all, bit) => all | bit, 0);

/** `status_display_type` (PROTOCOL.md §B.8). */
export const StatusDisplayTypes = { Name: 0, State: 1, Details: 2 } as const;

/** `supported_platforms` values an activity may name (PROTOCOL.md §B.8, UDOC). */
export const ACTIVITY_PLATFORMS = [
  'desktop',
  'xbox',
  'samsung',
  'ios',
  'android',
  'embedded',
  'ps4',
  'ps5',
  'meta_quest',
] as const;
export type ActivityPlatform = (typeof ACTIVITY_PLATFORMS)[number];

/** Field limits of an activity a client sets (PROTOCOL.md §B.8, UDOC extras on send). */
export const ActivityLimits = {
  nameMin: 1,
  nameMax: 128,
  detailsMax: 128,
  stateMax: 128,
  urlMax: 256,
  assetTextMax: 128,
  assetImageMax: 256,
  partyIdMax: 128,
  secretMax: 128,
  buttonsMax: 2,
  buttonLabelMax: 32,
  buttonUrlMax: 512,
  supportedPlatformsMax: 10,
  /** Activities one presence update may carry. */
  activitiesMax: 10,
} as const;

/** Message activity types of an invite message (PROTOCOL.md §B.9). */
export const MessageActivityTypes = {
  Join: 1,
  Spectate: 2,
  Listen: 3,
  JoinRequest: 5,
  StreamRequest: 6,
} as const;
export type MessageActivityType = (typeof MessageActivityTypes)[keyof typeof MessageActivityTypes];

/** Activity action types of the secret a join or spectate reveals (PROTOCOL.md §B.9: GameSDK ActivityActionType). */
export const ActivityActionTypes = { Join: 1, Spectate: 2 } as const;

/** Game direct messages (PROTOCOL.md §B.5, §B.4, §A.3). */
export const DirectMessageLimits = {
  contentMax: 2000,
  /** GET /users/{user.id}/messages `limit` (PROTOCOL.md §B.5). */
  getMin: 1,
  getMax: 200,
  getDefault: 50,
  /** History a game sees: at most 200 messages and 72 hours (PROTOCOL.md §B.5). */
  historyMaxMessages: 200,
  historyMaxAgeMs: 72 * 60 * 60 * 1000,
  metadataMaxKeys: 25,
  metadataValueMax: 1024,
  metadataKeyMax: 1024,
  nonceMax: 25,
  /** The library keeps this many messages per channel in memory (PROTOCOL.md §B.5). */
  sdkCachedPerChannel: 25,
} as const;

/** Moderation metadata of a message (PROTOCOL.md §B.4): ≤5 keys, key ≤1024, value ≤2000 characters. */
export const ModerationMetadataLimits = { maxKeys: 5, keyMax: 1024, valueMax: 2000 } as const;

/** Relationships (PROTOCOL.md §B.6): platform friends are capped at 1,000; game friends are not. */
export const RelationshipLimits = { friendsMax: 1000 } as const;

/**
 * Pre-approval limits of the communication features, per application (PROTOCOL.md §A.3 "DMs: 100 per 2 h"),
 * lifted by the `CommunicationFeaturesApproved` application flag.
 */

/** Gateway dispatches of the social layer (PROTOCOL.md §B.6, §B.9; UDOC gateway events). */
export const SocialDispatches = {
  RelationshipAdd: 'RELATIONSHIP_ADD',
  RelationshipUpdate: 'RELATIONSHIP_UPDATE',
  RelationshipRemove: 'RELATIONSHIP_REMOVE',
  GameRelationshipAdd: 'GAME_RELATIONSHIP_ADD',
  GameRelationshipRemove: 'GAME_RELATIONSHIP_REMOVE',
  PresenceUpdate: 'PRESENCE_UPDATE',
  MessageCreate: 'MESSAGE_CREATE',
  MessageUpdate: 'MESSAGE_UPDATE',
  MessageDelete: 'MESSAGE_DELETE',
  /**
   * Hearth's own: an invite was accepted by one of the player's devices; the others learn of it, so that
   * SetActivityInviteCreatedCallback fires on them too (seed, Library operations).
   */
  ActivityInviteAccepted: 'ACTIVITY_INVITE_ACCEPTED',
} as const;

/** Webhook event types of game direct messages (PROTOCOL.md §F.4). */
export const GameDirectMessageEvents = {
  Create: 'GAME_DIRECT_MESSAGE_CREATE',
  Update: 'GAME_DIRECT_MESSAGE_UPDATE',
  Delete: 'GAME_DIRECT_MESSAGE_DELETE',
} as const;
