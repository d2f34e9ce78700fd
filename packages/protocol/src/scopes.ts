/** OAuth2 scopes (PROTOCOL.md §C.7, §B.7). */
export const Scopes = {
  ActivitiesInvitesWrite: 'activities.invites.write',
  ActivitiesRead: 'activities.read',
  ActivitiesWrite: 'activities.write',
  ApplicationIdentitiesWrite: 'application_identities.write',
  ApplicationsCommands: 'applications.commands',
  ApplicationsCommandsUpdate: 'applications.commands.update',
  ApplicationsEntitlements: 'applications.entitlements',
  Bot: 'bot',
  Connections: 'connections',
  DmChannelsMessagesRead: 'dm_channels.messages.read',
  DmChannelsMessagesWrite: 'dm_channels.messages.write',
  DmChannelsRead: 'dm_channels.read',
  Email: 'email',
  GatewayConnect: 'gateway.connect',
  Guilds: 'guilds',
  GuildsChannelsRead: 'guilds.channels.read',
  GuildsJoin: 'guilds.join',
  GuildsMembersRead: 'guilds.members.read',
  Identify: 'identify',
  IdentifyPremium: 'identify.premium',
  LobbiesWrite: 'lobbies.write',
  OpenId: 'openid',
  RelationshipsRead: 'relationships.read',
  RelationshipsWrite: 'relationships.write',
  SdkSocialLayer: 'sdk.social_layer',
  SdkSocialLayerPresence: 'sdk.social_layer_presence',
  Voice: 'voice',
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

export function isScope(value: string): value is Scope {
  return (Object.values(Scopes) as string[]).includes(value);
}

/** A granted scope set with umbrella scopes expanded, for checks like `has(Scopes.Guilds)`. */
export function expandScopes(scopes: readonly Scope[]): Set<Scope> {
  const out = new Set<Scope>();
  for (const scope of scopes) {
    out.add(scope);
    for (const implied of ScopeExpansions[scope] ?? []) out.add(implied);
  }
  return out;
}
