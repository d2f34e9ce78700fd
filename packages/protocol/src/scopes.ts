import { ApplicationFlags } from './application.js';

/** OAuth2 scopes (PROTOCOL.md §C.7, §B.7). */
export const Scopes = {
  AccountGlobalNameUpdate: 'account.global_name.update',
  ActivitiesInvitesWrite: 'activities.invites.write',
  ActivitiesRead: 'activities.read',
  ActivitiesWrite: 'activities.write',
  ApplicationIdentitiesWrite: 'application_identities.write',
  ApplicationsBuildsRead: 'applications.builds.read',
  ApplicationsBuildsUpload: 'applications.builds.upload',
  ApplicationsCommands: 'applications.commands',
  ApplicationsCommandsPermissionsUpdate: 'applications.commands.permissions.update',
  ApplicationsCommandsUpdate: 'applications.commands.update',
  ApplicationsEntitlements: 'applications.entitlements',
  ApplicationsStoreUpdate: 'applications.store.update',
  Bot: 'bot',
  Connections: 'connections',
  DmChannelsMessagesRead: 'dm_channels.messages.read',
  DmChannelsMessagesWrite: 'dm_channels.messages.write',
  DmChannelsRead: 'dm_channels.read',
  Email: 'email',
  GatewayConnect: 'gateway.connect',
  GdmJoin: 'gdm.join',
  Guilds: 'guilds',
  GuildsChannelsRead: 'guilds.channels.read',
  GuildsJoin: 'guilds.join',
  GuildsMembersRead: 'guilds.members.read',
  Identify: 'identify',
  IdentifyPremium: 'identify.premium',
  LobbiesWrite: 'lobbies.write',
  MessagesRead: 'messages.read',
  OpenId: 'openid',
  PresencesRead: 'presences.read',
  PresencesWrite: 'presences.write',
  RelationshipsRead: 'relationships.read',
  RelationshipsWrite: 'relationships.write',
  RoleConnectionsWrite: 'role_connections.write',
  Rpc: 'rpc',
  RpcActivitiesWrite: 'rpc.activities.write',
  RpcNotificationsRead: 'rpc.notifications.read',
  RpcVoiceRead: 'rpc.voice.read',
  RpcVoiceWrite: 'rpc.voice.write',
  SdkSocialLayer: 'sdk.social_layer',
  SdkSocialLayerPresence: 'sdk.social_layer_presence',
  Voice: 'voice',
  WebhookIncoming: 'webhook.incoming',
} as const;

export type Scope = (typeof Scopes)[keyof typeof Scopes];

/** Scope strings the SDK returns from GetDefault*Scopes (seed, AuthorizationArgs rule 1). */
export const DEFAULT_COMMUNICATION_SCOPES = 'openid sdk.social_layer';
export const DEFAULT_PRESENCE_SCOPES = 'openid sdk.social_layer_presence';

const presenceExpansion: readonly Scope[] = [
  Scopes.ActivitiesInvitesWrite,
  Scopes.ActivitiesRead,
  Scopes.ActivitiesWrite,
  Scopes.ApplicationIdentitiesWrite,
  Scopes.GatewayConnect,
  Scopes.Identify,
  Scopes.RelationshipsRead,
  Scopes.RelationshipsWrite,
];

/** What the umbrella scopes expand to (seed rule 2; expansion per PROTOCOL.md §B.7, unofficial). */
export const ScopeExpansions: Readonly<Partial<Record<Scope, readonly Scope[]>>> = {
  [Scopes.SdkSocialLayerPresence]: presenceExpansion,
  [Scopes.SdkSocialLayer]: [
    ...presenceExpansion,
    Scopes.DmChannelsRead,
    Scopes.DmChannelsMessagesRead,
    Scopes.DmChannelsMessagesWrite,
    Scopes.Guilds,
    Scopes.GuildsChannelsRead,
    Scopes.LobbiesWrite,
  ],
};

/** Other spellings accepted as a scope: the seed writes `application.commands` (seed, Authentication). */
export const SCOPE_ALIASES: Readonly<Record<string, Scope>> = {
  'application.commands': Scopes.ApplicationsCommands,
};

/** The scope a requested name stands for, aliases included; undefined when it names none. */
export function scopeNamed(name: string): Scope | undefined {
  return SCOPE_ALIASES[name] ?? (isScope(name) ? name : undefined);
}

/** Scopes of a bot install that need no code grant, hence no redirect URI (OAuth2, Bot Authorization Flow). */
export const BOT_INSTALL_SCOPES: readonly Scope[] = [Scopes.Bot, Scopes.ApplicationsCommands];

export function isScope(value: string): value is Scope {
  return (Object.values(Scopes) as string[]).includes(value);
}

/**
 * A granted scope set with umbrella scopes expanded, for checks like `has(Scopes.Guilds)`; `withheld` are
 * left out even where an umbrella implies them (a scope the application is no longer approved for).
 */
export function expandScopes(scopes: readonly Scope[], withheld: readonly Scope[] = []): Set<Scope> {
  const out = new Set<Scope>();
  for (const scope of scopes) {
    out.add(scope);
    for (const implied of ScopeExpansions[scope] ?? []) out.add(implied);
  }
  for (const scope of withheld) out.delete(scope);
  return out;
}

/**
 * Scopes an application needs a flag for before players may grant them, and that stop reading through once
 * it is withdrawn (seed, Authentication 2): `identify.premium` for every application (approved partners);
 * `relationships.read` for Activities (`Embedded`) until the Social SDK terms are accepted.
 */
export const SCOPE_APPROVALS: ReadonlyArray<{ scope: Scope; flag: bigint; onlyFor?: bigint }> = [
  { scope: Scopes.IdentifyPremium, flag: ApplicationFlags.IdentifyPremiumApproved },
  {
    scope: Scopes.RelationshipsRead,
    flag: ApplicationFlags.SocialSdkTermsAccepted,
    onlyFor: ApplicationFlags.Embedded,
  },
];

/** The scopes of SCOPE_APPROVALS: a grant holding one (umbrella scopes expanded) is checked against its application. */
export const RESTRICTED_SCOPES: readonly Scope[] = SCOPE_APPROVALS.map(({ scope }) => scope);

/** Whether an application with these flags may be granted `scope`, and may read through it. */
export function scopeAvailable(scope: Scope, applicationFlags: bigint): boolean {
  return SCOPE_APPROVALS.every(
    ({ scope: restricted, flag, onlyFor }) =>
      restricted !== scope ||
      (onlyFor !== undefined && (applicationFlags & onlyFor) !== onlyFor) ||
      (applicationFlags & flag) === flag,
  );
}

/** Scopes only the client credentials grant may ask for (PROTOCOL.md §C.4). */
export const CLIENT_CREDENTIALS_ONLY_SCOPES: readonly Scope[] = [Scopes.ApplicationsCommandsUpdate];

/**
 * Everything a client_credentials token may hold: the owner's own identity and the application's
 * management, never a player's social actions (lobbies, friends, DMs, presence, gateway; issue 21).
 */
export const CLIENT_CREDENTIALS_SCOPES: readonly Scope[] = [
  Scopes.ApplicationsBuildsRead,
  Scopes.ApplicationsBuildsUpload,
  Scopes.ApplicationsCommandsPermissionsUpdate,
  Scopes.ApplicationsCommandsUpdate,
  Scopes.ApplicationsEntitlements,
  Scopes.ApplicationsStoreUpdate,
  Scopes.Connections,
  Scopes.Email,
  Scopes.Guilds,
  Scopes.GuildsMembersRead,
  Scopes.Identify,
  Scopes.IdentifyPremium,
  Scopes.RoleConnectionsWrite,
];

/** Scopes that need a target this server cannot offer on the consent page yet (a guild, a channel). */
export const TARGETED_SCOPES: readonly Scope[] = [Scopes.WebhookIncoming];

/** Words the consent page shows for each scope a player grants. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  'account.global_name.update': 'Change your display name',
  'activities.invites.write': 'Send game invites on your behalf',
  'activities.read': 'See the games you are playing',
  'activities.write': 'Update your game activity',
  'application_identities.write': 'Link your game identities',
  'applications.builds.read': 'Read the builds of this application',
  'applications.builds.upload': 'Upload builds of this application',
  'applications.commands': 'Add commands',
  'applications.commands.permissions.update': 'Update command permissions',
  'applications.commands.update': 'Update commands',
  'applications.entitlements': 'See what you own of this application',
  'applications.store.update': 'Manage the store listing',
  bot: 'Add a bot to a server',
  connections: 'See your linked accounts',
  'dm_channels.messages.read': 'Read your direct messages with players of this game',
  'dm_channels.messages.write': 'Send direct messages to players of this game',
  'dm_channels.read': 'See your direct message channels',
  email: 'See your email address',
  'gateway.connect': 'Connect to the realtime gateway as you',
  'gdm.join': 'Join group direct messages for you',
  guilds: 'See the servers you are in',
  'guilds.channels.read': 'See the channels of your servers',
  'guilds.join': 'Join servers for you',
  'guilds.members.read': 'See your member profile in your servers',
  identify: 'See your username, avatar and banner',
  'identify.premium': 'See your subscription type',
  'lobbies.write': 'Create, join and chat in game lobbies',
  'messages.read': 'Read messages from your channels',
  openid: 'Sign you in with your account',
  'presences.read': 'See your online status',
  'presences.write': 'Update your online status',
  'relationships.read': 'See your friends list',
  'relationships.write': 'Manage your friends and friend requests',
  'role_connections.write': 'Update your role connection metadata',
  rpc: 'Control your platform client locally',
  'rpc.activities.write': 'Update your activity locally',
  'rpc.notifications.read': 'Read your notifications locally',
  'rpc.voice.read': 'Read your voice settings locally',
  'rpc.voice.write': 'Change your voice settings locally',
  'sdk.social_layer': 'Use your friends, presence, invites, messages and lobbies in this game',
  'sdk.social_layer_presence': 'Use your friends, presence and invites in this game',
  voice: 'Join voice for you',
  'webhook.incoming': 'Post messages to a channel',
};
