import { randomInt } from 'node:crypto';
import { FormErrors, isInEffect, PremiumTypes, USERNAME_CHANGE_LIMIT } from '@hearth/protocol';
import type { Static } from 'typebox';
import type { Bus } from '../../bus/bus.js';

import type { Clock } from '../../kernel/clock.js';
import { formErrorTree, HearthError, invalidForm, RateLimitedError } from '../../kernel/errors.js';
import { after, type MaybePromise } from '../../kernel/maybe.js';
import {
  generateToken,
  hashPassword,
  hashToken,
  type TokenLookup,
  verifyPassword,
} from '../../kernel/secrets.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Quotas } from '../../ratelimit/quota.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { ReadCache, type ReadOptions } from '../../storage/read-cache.js';
import { findBan } from './identities-store.js';
import { type Image, parseImageData } from './images.js';
import {
  ChangePassword,
  Login,
  ModifyCurrentBot,
  ModifyCurrentUser,
  NewUser,
  type UserObject,
} from './schemas.js';
import * as store from './store.js';

/** The bus event that closes gateway connections of ended user sessions (see AccountsService). */
export const USER_SESSIONS_ENDED = 'USER_SESSIONS_ENDED';

export interface User {
  id: string;
  username: string;
  discriminator: string;
  globalName: string | null;
  email: string | null;
  avatar: string | null;
  banner: string | null;
  bot: boolean;
  flags: number;
  premiumType: number;
  /** A game-owned placeholder keyed by an external identity (PROTOCOL.md §B.1). */
  provisional: boolean;
  createdAt: number;
  /** The guild tag the user wears (GUILDS.md §3.4), or null. */
  primaryGuild: PrimaryGuild | null;
}

export interface PrimaryGuild {
  identity_guild_id: string;
  identity_enabled: boolean | null;
  tag: string | null;
  badge: string | null;
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
  /** USER_UPDATE to the user's own sessions after a change. */
  bus: Bus;
  /** The username change limit, shared by every node. */
  quotas: Quotas;
  /** How long a session token lives (`--session-lifetime-days`). */
  sessionLifetimeMs: number;
}

/** What the CDN-style routes serve: an image's bytes and type. */
export interface StoredImage {
  contentType: string;
  bytes: Buffer;
}

type ImageKind = 'avatar' | 'banner';

/** Users and their session tokens. */
export class AccountsService {
  readonly #deps: AccountsDeps;
  /** Live sessions by token hash, with their user: until a commit that may change them. */
  readonly #sessions: ReadCache<{ user: User; authTime: number; expiresAt: number }>;
  /** The user a request's credential already loaded, keyed by that request's principal object. */
  readonly #loaded = new WeakMap<object, User>();
  /** Users by id, for the authors of lobby messages: until a commit that may change them. */
  readonly #users: ReadCache<User>;

  constructor(deps: AccountsDeps) {
    this.#deps = deps;
    this.#sessions = new ReadCache(deps.storage.changeStamps);
    this.#users = new ReadCache(deps.storage.changeStamps);
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
      banner: null,
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

  /**
   * PATCH /users/@me: username (a person's is unique, and changes at most twice an hour), display name,
   * avatar and banner; the user's sessions receive USER_UPDATE.
   */
  async modifyUser(id: string, input: unknown): Promise<User> {
    const current = await this.getUser(id);
    if (!current) throw new HearthError('UnknownUser');
    const changes: {
      username?: string;
      global_name?: string | null;
      avatar?: string | null;
      banner?: string | null;
    } = current.bot ? parse(ModifyCurrentBot, input ?? {}) : parse(ModifyCurrentUser, input ?? {});
    const images = decodeImages(changes);
    const username =
      changes.username !== undefined && changes.username !== current.username ? changes.username : undefined;
    if (username !== undefined) {
      await this.#assertUsernameFree(current, username);
      await this.#spendUsernameChange(current);
    }
    const changed = await this.#applyChanges(current, {
      ...(username !== undefined ? { username } : {}),
      ...(!current.bot && changes.global_name !== undefined ? { global_name: changes.global_name } : {}),
      images,
    });
    const user = await this.getUser(id);
    if (!user) throw new HearthError('UnknownUser');
    // After the commit: the user's own sessions (every node) learn the new object.
    if (changed)
      await this.#deps.bus.publish({
        type: 'USER_UPDATE',
        data: toUserObject(user, { email: false, premium: false }),
        audience: { users: [user.id] },
      });
    return user;
  }

  /** A person's username is unique among migrated users; bots keep their discriminator and share names. */
  async #assertUsernameFree(user: User, username: string): Promise<void> {
    if (user.bot) return;
    if (await store.usernameTaken(this.#deps.storage.db, username)) {
      throw invalidForm('username', FormErrors.usernameTaken());
    }
  }

  async #spendUsernameChange(user: User): Promise<void> {
    try {
      await this.#deps.quotas.spend(`username:${user.id}`, USERNAME_CHANGE_LIMIT);
    } catch (error) {
      if (error instanceof RateLimitedError) throw invalidForm('username', FormErrors.usernameRateLimit());
      throw error;
    }
  }

  async #applyChanges(
    user: User,
    changes: { username?: string; global_name?: string | null; images: Map<ImageKind, Image | null> },
  ): Promise<boolean> {
    const { storage, clock } = this.#deps;
    const columns: {
      username?: string;
      global_name?: string | null;
      avatar?: string | null;
      banner?: string | null;
    } = {};
    if (changes.username !== undefined) columns.username = changes.username;
    if (changes.global_name !== undefined) columns.global_name = changes.global_name;
    for (const [kind, image] of changes.images) columns[kind] = image?.hash ?? null;
    if (Object.keys(columns).length === 0) return false;
    try {
      await storage.transaction(async (tx) => {
        await store.updateUser(tx, user.id, columns);
        for (const [kind, image] of changes.images) {
          if (image === null) await store.deleteUserImage(tx, user.id, kind);
          else
            await store.saveUserImage(tx, {
              user_id: user.id,
              kind,
              hash: image.hash,
              content_type: image.type,
              bytes: image.bytes,
              created_at: clock.now(),
            });
        }
      });
    } catch (error) {
      // Two people racing for one name: the unique index decides.
      if (isUniqueViolation(error)) throw invalidForm('username', FormErrors.usernameTaken());
      throw error;
    }
    return true;
  }

  /** The bytes behind `/avatars/{user}/{hash}.…` or `/banners/…`: the user's current image of that hash. */
  async userImage(userId: string, kind: ImageKind, hash: string): Promise<StoredImage | undefined> {
    const row = await store.findUserImage(this.#deps.storage.db, userId, kind, hash);
    return row && { contentType: row.content_type, bytes: Buffer.from(row.bytes) };
  }

  /** The bot user of a new application, inside the caller's transaction. */
  createBotUser(tx: Executor, name: string): Promise<User> {
    return this.#insertWithoutSignIn(tx, name, true);
  }

  /**
   * The developer account of an application created without an owner (a CLI user who named none): a
   * person, not the bot, with no password, so `owner` is never the bot and nobody can sign in as it.
   */
  createDeveloperUser(tx: Executor, name: string): Promise<User> {
    return this.#insertWithoutSignIn(tx, name, false);
  }

  async #insertWithoutSignIn(tx: Executor, name: string, bot: boolean): Promise<User> {
    const { clock, snowflakes } = this.#deps;
    // Four-digit discriminators, as bots keep: usernames are not unique among these accounts, the pair is.
    const taken = await store.discriminatorsOf(tx, name);
    let discriminator: string;
    do discriminator = String(randomInt(1, 10000)).padStart(4, '0');
    while (taken.has(discriminator) && taken.size < 9999);
    const row = {
      id: snowflakes.next(),
      username: name,
      discriminator,
      global_name: null,
      email: null,
      password_hash: null,
      avatar: null,
      banner: null,
      bot: bot ? 1 : 0,
      flags: 0,
      premium_type: 0,
      provisional: 0,
      created_at: clock.now(),
    };
    await store.insertProvisionalUser(tx, row);
    return toUser(row);
  }

  async createSession(userId: string, db: Executor = this.#deps.storage.db): Promise<string> {
    const now = this.#deps.clock.now();
    const token = generateToken(userId, now);
    await store.insertSession(db, {
      token_hash: hashToken(token),
      user_id: userId,
      created_at: now,
      expires_at: now + this.#deps.sessionLifetimeMs,
    });
    return token;
  }

  /**
   * The user of a live session token, and when they signed in (OIDC `auth_time`). Every authenticated
   * request asks: the answer is kept until a commit that may change it (`ReadCache`), and its expiry checked
   * on each use.
   */
  authenticateSession(
    token: string,
    options?: ReadOptions & TokenLookup,
  ): MaybePromise<{ user: User; authTime: number } | undefined> {
    const { clock, storage, sessionLifetimeMs } = this.#deps;
    const now = clock.now();
    const tokenHash = options?.tokenHash ?? hashToken(token);
    const session = this.#sessions.get(
      tokenHash,
      async () => {
        const row = await store.findSessionUser(storage.db, tokenHash, now, now - sessionLifetimeMs);
        if (!row) return undefined;
        const authTime = Number(row.session_created_at);
        // Shared by the requests the entry answers: frozen, so that none can change what the next one sees.
        const user = Object.freeze(toUser(row));
        const expiresAt = Number(row.session_expires_at ?? authTime + sessionLifetimeMs);
        return Object.freeze({ user, authTime, expiresAt });
      },
      options,
    );
    return after(session, (live) => {
      if (live === undefined) return undefined;
      if (now >= live.expiresAt) {
        this.#sessions.delete(tokenHash);
        return undefined;
      }
      return live;
    });
  }

  /** Logout: the session token stops working at once; an unknown one changes nothing. */
  async endSession(token: string): Promise<void> {
    const tokenHash = hashToken(token);
    await store.deleteSession(this.#deps.storage.db, tokenHash);
    await this.#sessionsEnded({ token_hash: tokenHash });
  }

  /**
   * After ended sessions committed: gateway connections identified with them close on every node
   * (USER_SESSIONS_ENDED, Hearth's own bus event; no audience, never dispatched). Either one token's hash,
   * or every session of a user except `keep_token_hash` (the fresh one a password change hands out).
   */
  async #sessionsEnded(
    data: { token_hash: string } | { user_id: string; keep_token_hash?: string; bot?: true },
  ) {
    await this.#deps.bus.publish({ type: USER_SESSIONS_ENDED, data });
  }

  /** After a bot's token was reset: the gateway connections identified with the old one close (4004). */
  botSessionsEnded(botUserId: string): Promise<void> {
    return this.#sessionsEnded({ user_id: botUserId, bot: true });
  }

  /** After a ban or merge committed its `deleteSessions`: the user's gateway connections close too. */
  sessionsEndedFor(userId: string): Promise<void> {
    return this.#sessionsEnded({ user_id: userId });
  }

  /**
   * A new password, proven by the current one: every session of the user ends (a stolen token dies with
   * the old password) and the caller gets a fresh one, in one transaction.
   */
  async changePassword(userId: string, input: unknown): Promise<{ user: User; token: string }> {
    const { password, new_password } = parse(ChangePassword, input);
    const { storage } = this.#deps;
    const row = await store.findUserById(storage.db, userId);
    if (!row?.password_hash || !(await verifyPassword(password, row.password_hash))) {
      throw invalidForm('password', FormErrors.passwordMismatch());
    }
    const passwordHash = await hashPassword(new_password);
    const token = await storage.transaction(async (tx) => {
      await store.updateUser(tx, userId, { password_hash: passwordHash });
      await store.deleteSessionsOf(tx, userId);
      return this.createSession(userId, tx);
    });
    await this.#sessionsEnded({ user_id: userId, keep_token_hash: hashToken(token) });
    return { user: toUser(row), token };
  }

  /** Remembers the user a credential lookup loaded, for the rest of that request. */
  remember(principal: object, user: User): void {
    this.#loaded.set(principal, user);
  }

  /** The caller's own user: the one its credential already loaded, or a fresh read. */
  currentUser(principal: { userId: string }): MaybePromise<User | undefined> {
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

  /**
   * getUser answered from memory while nothing that may change the user was committed (`ReadCache`): for
   * reads that repeat between such commits, as a chat's authors do. Not for a transaction that wrote users.
   */
  keptUser(id: string): MaybePromise<User | undefined> {
    // Frozen: one object answers every later hit.
    return this.#users.get(id, async () => {
      const row = await store.findUserById(this.#deps.storage.db, id);
      return row && Object.freeze(toUser(row));
    });
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
      banner: null,
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

/** A user row; rows just inserted have no primary guild columns yet. */
type UserInput = Omit<
  store.UserRow,
  'primary_guild_id' | 'primary_guild_enabled' | 'primary_guild_tag' | 'primary_guild_badge'
> &
  Partial<
    Pick<
      store.UserRow,
      'primary_guild_id' | 'primary_guild_enabled' | 'primary_guild_tag' | 'primary_guild_badge'
    >
  >;

function toUser(row: UserInput): User {
  const guildId = row.primary_guild_id ?? null;
  return {
    id: row.id,
    username: row.username,
    discriminator: row.discriminator,
    globalName: row.global_name,
    email: row.email,
    avatar: row.avatar,
    banner: row.banner ?? null,
    bot: row.bot === 1,
    flags: Number(row.flags),
    premiumType: Number(row.premium_type),
    provisional: row.provisional === 1,
    createdAt: Number(row.created_at),
    primaryGuild:
      guildId === null
        ? null
        : {
            identity_guild_id: guildId,
            identity_enabled:
              row.primary_guild_enabled === null || row.primary_guild_enabled === undefined
                ? null
                : Number(row.primary_guild_enabled) === 1,
            tag: row.primary_guild_tag ?? null,
            badge: row.primary_guild_badge ?? null,
          },
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
    // Every user object carries both, nested ones too (the reference's UserResponse requires `flags`).
    flags: user.flags,
    banner: user.banner,
    accent_color: null,
    avatar_decoration_data: null,
    collectibles: null,
    primary_guild: user.primaryGuild,
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

/** The avatar and banner of a PATCH, decoded and checked (50035 naming the field); null removes one. */
function decodeImages(changes: {
  avatar?: string | null;
  banner?: string | null;
}): Map<ImageKind, Image | null> {
  const images = new Map<ImageKind, Image | null>();
  for (const kind of ['avatar', 'banner'] as const) {
    const value = changes[kind];
    if (value !== undefined) images.set(kind, value === null ? null : parseImageData(kind, value));
  }
  return images;
}
