import { randomInt } from 'node:crypto';
import { FormErrors, isInEffect, PremiumTypes } from '@hearth/protocol';
import type { Static } from 'typebox';
import type { Clock } from '../../kernel/clock.js';
import { formErrorTree, HearthError, invalidForm } from '../../kernel/errors.js';
import { generateToken, hashPassword, hashToken, verifyPassword } from '../../kernel/secrets.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { findBan } from './identities-store.js';
import { Login, ModifyCurrentUser, NewUser, type UserObject } from './schemas.js';
import * as store from './store.js';

export interface User {
  id: string;
  username: string;
  discriminator: string;
  globalName: string | null;
  email: string | null;
  avatar: string | null;
  bot: boolean;
  flags: number;
  premiumType: number;
  /** A game-owned placeholder keyed by an external identity (PROTOCOL.md §B.1). */
  provisional: boolean;
  createdAt: number;
}

export interface Connection {
  id: string;
  type: string;
  name: string;
  verified: boolean;
  visibility: number;
  legacyPublisher: boolean;
  createdAt: number;
}

export interface AccountsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
}

/** Users and their session tokens. */
export class AccountsService {
  readonly #deps: AccountsDeps;
  /** The user a request's credential already loaded, keyed by that request's principal object. */
  readonly #loaded = new WeakMap<object, User>();

  constructor(deps: AccountsDeps) {
    this.#deps = deps;
  }

  /** Registers a person; answers the user and a first session token. */
  async createUser(input: unknown): Promise<{ user: User; token: string }> {
    const { username, email, password, global_name } = parse(NewUser, input);
    const { storage, clock, snowflakes } = this.#deps;
    const normalizedEmail = email.toLowerCase();
    const passwordHash = await hashPassword(password);
    const row = {
      id: snowflakes.next(),
      username,
      discriminator: '0',
      global_name: global_name ?? null,
      email: normalizedEmail,
      password_hash: passwordHash,
      avatar: null,
      bot: 0,
      flags: 0,
      premium_type: 0,
      provisional: 0,
      created_at: clock.now(),
    };
    try {
      await storage.transaction(async (tx) => {
        const taken = [
          ...((await store.usernameTaken(tx, username))
            ? [[['username'], FormErrors.usernameTaken()] as const]
            : []),
          ...((await store.findUserByEmail(tx, normalizedEmail))
            ? [[['email'], FormErrors.emailTaken()] as const]
            : []),
        ];
        if (taken.length > 0) throw new HearthError('InvalidFormBody', { errors: formErrorTree(taken) });
        await store.insertUser(tx, row);
      });
    } catch (error) {
      // Two registrations racing for one name: the unique index decides.
      if (isUniqueViolation(error)) {
        throw new HearthError('InvalidFormBody', {
          errors: formErrorTree([[['username'], FormErrors.usernameTaken()]]),
        });
      }
      throw error;
    }
    const token = await this.createSession(row.id);
    return { user: toUser(row), token };
  }

  /** Email and password to a new session token; one answer for every wrong pair, as the platform gives. */
  async login(input: unknown): Promise<{ user: User; token: string }> {
    const { login, password } = parse(Login, input);
    const row = await store.findUserByEmail(this.#deps.storage.db, login.toLowerCase());
    let valid = false;
    if (row?.password_hash) valid = await verifyPassword(password, row.password_hash);
    else await hashPassword(password); // as slow as a wrong password: timing does not reveal which emails exist
    if (!row || !valid) {
      throw new HearthError('InvalidFormBody', {
        errors: formErrorTree([
          [['login'], FormErrors.invalidLogin()],
          [['password'], FormErrors.invalidLogin()],
        ]),
      });
    }
    // A banned platform account signs in nowhere while the ban is in force (seed, States: account link).
    const ban = await findBan(this.#deps.storage.db, row.id);
    if (ban && (ban.expires_at === null || ban.expires_at > this.#deps.clock.now())) {
      throw new HearthError('GeneralForbidden');
    }
    return { user: toUser(row), token: await this.createSession(row.id) };
  }

  async modifyUser(id: string, input: unknown): Promise<User> {
    const changes = parse(ModifyCurrentUser, input);
    if (changes.global_name !== undefined) {
      await store.updateUser(this.#deps.storage.db, id, { global_name: changes.global_name });
    }
    const user = await this.getUser(id);
    if (!user) throw new HearthError('UnknownUser');
    return user;
  }

  /** The bot user of a new application, inside the caller's transaction. */
  async createBotUser(tx: Executor, name: string): Promise<User> {
    const { clock, snowflakes } = this.#deps;
    const row = {
      id: snowflakes.next(),
      // Bots keep four-digit discriminators; usernames are not unique among them.
      username: name,
      discriminator: String(randomInt(1, 10000)).padStart(4, '0'),
      global_name: null,
      email: null,
      password_hash: null,
      avatar: null,
      bot: 1,
      flags: 0,
      premium_type: 0,
      provisional: 0,
      created_at: clock.now(),
    };
    await store.insertUser(tx, row);
    return toUser(row);
  }

  async createSession(userId: string): Promise<string> {
    const now = this.#deps.clock.now();
    const token = generateToken(userId, now);
    await store.insertSession(this.#deps.storage.db, {
      token_hash: hashToken(token),
      user_id: userId,
      created_at: now,
      expires_at: null,
    });
    return token;
  }

  /** The user of a live session token, and when they signed in (OIDC `auth_time`). */
  async authenticateSession(token: string): Promise<{ user: User; authTime: number } | undefined> {
    const row = await store.findSessionUser(this.#deps.storage.db, hashToken(token), this.#deps.clock.now());
    return row && { user: toUser(row), authTime: Number(row.session_created_at) };
  }

  /** Remembers the user a credential lookup loaded, for the rest of that request. */
  remember(principal: object, user: User): void {
    this.#loaded.set(principal, user);
  }

  /** The caller's own user: the one its credential already loaded, or a fresh read. */
  async currentUser(principal: { userId: string }): Promise<User | undefined> {
    return this.#loaded.get(principal) ?? this.getUser(principal.userId);
  }

  async getUser(id: string): Promise<User | undefined> {
    return this.getUserIn(this.#deps.storage.db, id);
  }

  /** Several users at once, by id; unknown ids are absent from the map. */
  async getUsers(ids: readonly string[]): Promise<Map<string, User>> {
    const rows = await store.findUsersByIds(this.#deps.storage.db, [...new Set(ids)]);
    return new Map(rows.map((row) => [row.id, toUser(row)]));
  }

  /** getUser inside a caller's transaction. */
  async getUserIn(db: Executor, id: string): Promise<User | undefined> {
    const row = await store.findUserById(db, id);
    return row && toUser(row);
  }

  // ---- Social layer ----

  /** The user with this username (migrated users, discriminator `0`), for friend requests by name. */
  async findUserByUsername(username: string): Promise<User | undefined> {
    const row = await store.findUserByUsername(this.#deps.storage.db, username);
    return row && toUser(row);
  }

  /** Operator change (CLI): the subscription a user holds, read through `identify.premium`. */
  async setPremiumType(id: string, premiumType: number): Promise<User> {
    const valid = (Object.values(PremiumTypes) as number[]).includes(premiumType);
    if (!valid) throw invalidForm('premium_type', FormErrors.choices(Object.values(PremiumTypes)));
    await store.updateUser(this.#deps.storage.db, id, { premium_type: premiumType });
    const user = await this.getUser(id);
    if (!user) throw new HearthError('UnknownUser');
    return user;
  }

  /** Links an account of another service (CLI, provider integrations). */
  async addConnection(
    userId: string,
    input: { type: string; id: string; name: string; legacyPublisher?: boolean },
  ): Promise<Connection> {
    if (!(await this.getUser(userId))) throw new HearthError('UnknownUser');
    const row = {
      id: this.#deps.snowflakes.next(),
      user_id: userId,
      type: input.type,
      external_id: input.id,
      name: input.name,
      verified: 1,
      visibility: 1,
      legacy_publisher: input.legacyPublisher ? 1 : 0,
      created_at: this.#deps.clock.now(),
    };
    await store.insertConnection(this.#deps.storage.db, row);
    return toConnection(row);
  }

  /** GET /users/@me/connections: legacy game-publisher connections leave the list on 10 July 2026 (seed). */
  async listConnections(userId: string): Promise<Array<Record<string, unknown>>> {
    const hideLegacy = isInEffect('legacyPublisherConnectionsHidden', this.#deps.clock.now());
    const rows = await store.listConnections(this.#deps.storage.db, userId);
    return rows
      .map(toConnection)
      .filter((c) => !(hideLegacy && c.legacyPublisher))
      .map((c) => ({
        id: c.id,
        name: c.name,
        type: c.type,
        friend_sync: false,
        integrations: [],
        show_activity: true,
        two_way_link: false,
        verified: c.verified,
        visibility: c.visibility,
        revoked: false,
      }));
  }

  // ---- Provisional accounts ----

  /** True for a provisional account; false for full accounts, bots and unknown ids. */
  async isProvisional(userId: string): Promise<boolean> {
    return (await this.getUser(userId))?.provisional === true;
  }

  /**
   * A provisional account inside the caller's transaction. Its username is derived from its snowflake, so
   * it never collides (530006 cannot happen); the display name is the preferred one, if any.
   */
  async createProvisionalUser(tx: Executor, displayName: string | null): Promise<User> {
    const { clock, snowflakes } = this.#deps;
    const id = snowflakes.next();
    const row = {
      id,
      username: `player_${id}`,
      discriminator: '0',
      global_name: displayName,
      email: null,
      password_hash: null,
      avatar: null,
      bot: 0,
      flags: 0,
      premium_type: 0,
      provisional: 1,
      created_at: clock.now(),
    };
    await store.insertUser(tx, row);
    return toUser(row);
  }

  /** Sets a display name inside the caller's transaction (provisional accounts: the game names them). */
  async setDisplayName(db: Executor, userId: string, displayName: string | null): Promise<void> {
    await store.updateUser(db, userId, { global_name: displayName });
  }

  /** Removes a (merged) provisional account; what references it goes with it. Refuses a full account. */
  async deleteProvisionalUser(tx: Executor, userId: string): Promise<void> {
    await store.deleteProvisionalUser(tx, userId);
  }

  /** Ends every session of a user (a ban deletes every credential at once). */
  async deleteSessions(tx: Executor, userId: string): Promise<void> {
    await store.deleteSessionsOf(tx, userId);
  }
}

function toUser(row: store.UserRow): User {
  return {
    id: row.id,
    username: row.username,
    discriminator: row.discriminator,
    globalName: row.global_name,
    email: row.email,
    avatar: row.avatar,
    bot: row.bot === 1,
    flags: Number(row.flags),
    premiumType: Number(row.premium_type),
    provisional: row.provisional === 1,
    createdAt: Number(row.created_at),
  };
}

function toConnection(row: store.ConnectionRow): Connection {
  return {
    id: row.external_id,
    type: row.type,
    name: row.name,
    verified: row.verified === 1,
    visibility: Number(row.visibility),
    legacyPublisher: row.legacy_publisher === 1,
    createdAt: Number(row.created_at),
  };
}

/**
 * The wire user object; `self` adds the fields only the user themself sees. `premium_type` reads 0 unless
 * the caller may see it: the user's own session, or a token with the approved `identify.premium` (seed).
 */
export function toUserObject(
  user: User,
  self: { email: boolean; premium: boolean } | null = null,
): Static<typeof UserObject> {
  return {
    id: user.id,
    username: user.username,
    discriminator: user.discriminator,
    global_name: user.globalName,
    avatar: user.avatar,
    ...(user.bot ? { bot: true } : {}),
    // Hearth's mark, present only on provisional accounts: the reference names no field for it.
    ...(user.provisional ? { provisional: true } : {}),
    public_flags: user.flags,
    // Every user object carries flags, nested ones too, as SPEC's UserResponse requires (issue 23).
    flags: user.flags,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    collectibles: null,
    primary_guild: null,
    ...(self
      ? {
          mfa_enabled: false,
          locale: 'en-US',
          premium_type: self.premium ? user.premiumType : PremiumTypes.None,
          ...(self.email ? { email: user.email, verified: user.email !== null } : {}),
        }
      : {}),
  };
}
