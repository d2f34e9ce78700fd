import type { Generated } from 'kysely';

/**
 * Tables as both engines store them. Portable types only: ids are snowflake strings (text), instants are
 * milliseconds (bigint, read back as number), booleans are 0/1 integers, JSON is text.
 */
export interface Schema {
  users: UsersTable;
  sessions: SessionsTable;
  applications: ApplicationsTable;
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
}
