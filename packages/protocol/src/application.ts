/**
 * Application flags. `flags` on the wire is the low 32 bits; `flags_new` is every bit as a decimal string
 * (seed: Records, Application). Bits 0–31 are the platform's public flags; the approval bits above 32 are
 * Hearth's own, chosen high so they cannot meet a public flag.
 */
export const ApplicationFlags = {
  ApplicationAutoModerationRuleCreateBadge: 1n << 6n,
  GatewayPresence: 1n << 12n,
  GatewayPresenceLimited: 1n << 13n,
  GatewayGuildMembers: 1n << 14n,
  GatewayGuildMembersLimited: 1n << 15n,
  VerificationPendingGuildLimit: 1n << 16n,
  Embedded: 1n << 17n,
  GatewayMessageContent: 1n << 18n,
  GatewayMessageContentLimited: 1n << 19n,
  ApplicationCommandBadge: 1n << 23n,
  /** Approved for the restricted `identify.premium` scope. */
  IdentifyPremiumApproved: 1n << 48n,
  /** Approved for publisher-level linking (parent and child applications). */
  PublisherLinkingApproved: 1n << 49n,
  /** Enabled for provisional accounts (530000 otherwise). */
  ProvisionalAccountsEnabled: 1n << 50n,
  /** Past the pre-approval rate limits of the communication features. */
  CommunicationFeaturesApproved: 1n << 51n,
  /** Has accepted the Social SDK terms: its Activities may ask for `relationships.read` (seed, Authentication 2). */
  SocialSdkTermsAccepted: 1n << 52n,
} as const;

export type ApplicationFlag = keyof typeof ApplicationFlags;

/** The flags an application may set on itself with PATCH /applications/@me. */
export const SELF_SETTABLE_APPLICATION_FLAGS =
  ApplicationFlags.GatewayPresenceLimited |
  ApplicationFlags.GatewayGuildMembersLimited |
  ApplicationFlags.GatewayMessageContentLimited;

export function wireFlags(flags: bigint): { flags: number; flags_new: string } {
  return { flags: Number(BigInt.asUintN(32, flags)), flags_new: flags.toString() };
}

/** Maximum registered redirect URIs per application. */
export const MAX_REDIRECT_URIS = 10;

/** Team member roles on the wire (DOCS teams: Team Member Role Types). The owner has no wire value. */
export const TeamMemberRoles = {
  Admin: 'admin',
  Developer: 'developer',
  ReadOnly: 'read_only',
} as const;

/**
 * Every role a member may hold, the owner included, each inheriting what the ones after it may do (seed:
 * Team member `owner`, `admin`, `developer`, `read-only`). The owner is told apart by `owner_user_id`.
 */
export const TeamRoles = ['owner', 'admin', 'developer', 'read-only'] as const;
export type TeamRole = (typeof TeamRoles)[number];

/** `membership_state` of a team member (DOCS teams: Membership State Enum). */
export const TeamMembershipStates = { Invited: 1, Accepted: 2 } as const;

/** User flag of the pseudo-user that stands for a team as an application's `owner` (DOCS user flags). */
export const TEAM_PSEUDO_USER_FLAG = 1 << 10;

/** Application fields' limits (SPEC ApplicationFormPartial; DOCS emoji: 256 KiB). */
export const ApplicationLimits = {
  tagsMax: 5,
  tagMaxLength: 20,
  descriptionMaxLength: 400,
  urlMaxLength: 2048,
  emojiNameMinLength: 2,
  emojiNameMaxLength: 32,
  emojiMaxBytes: 256 * 1024,
  /** Activity URL mappings per application (Hearth's bound; the platform publishes none). */
  urlMappingsMax: 50,
} as const;

/** An emoji name: letters, digits and underscores (the platform's rule for custom emoji names). */
export const EMOJI_NAME_PATTERN = /^[A-Za-z0-9_]+$/;
