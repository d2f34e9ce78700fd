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
  // Provisional accounts (issue 7)
  external_identities: ExternalIdentitiesTable;
  identity_providers: IdentityProvidersTable;
  user_bans: UserBansTable;
}

export interface UsersTable {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  email: string | null;
  password_hash: string | null;
  avatar: string | null;
  bot: number;
  flags: number;
  created_at: number;
  premium_type: Generated<number>;
  /** 1 for a provisional account (a game-owned placeholder keyed by an external identity). */
  provisional: Generated<number>;
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
  features: string;
  created_at: number;
}

export interface GuildMembersTable {
  guild_id: string;
  user_id: string;
  permissions: string;
  joined_at: number;
}

export interface OutboxTable {
  id: string;
  type: string;
  application_id: string;
  payload: string;
  created_at: number;
}

// ---- Provisional accounts (issue 7) ----

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
