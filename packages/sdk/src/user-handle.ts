/**
 * A user as the game sees one (UserHandle), and the player's relationship with that user (RelationshipHandle):
 * each hands out the other, so they live in one file.
 */
import { RelationshipTypes } from '@hearth/protocol';
import type { Activity } from './social/activity.js';
import { StatusType } from './social/status.js';

/** The user object as the gateway sends it in READY and USER_UPDATE (the fields the library reads). */
export interface GatewayUser {
  id: string;
  username: string;
  global_name?: string | null;
  /** Hearth marks provisional accounts; full accounts carry no such field. */
  provisional?: boolean;
}

/**
 * UserHandle: a snapshot of a user, as GetCurrentUserV2 answers it. Ids are uint64_t, so bigint.
 */
export class UserHandle {
  readonly #user: GatewayUser;
  readonly #social: UserSocial | undefined;

  /**
   * Made by the library from what the gateway sent; games receive handles, they do not build them.
   * @internal
   */
  constructor(user: GatewayUser, social?: UserSocial) {
    this.#user = { ...user };
    this.#social = social;
  }

  Id(): bigint {
    return BigInt(this.#user.id);
  }

  Username(): string {
    return this.#user.username;
  }

  /** The display name (`global_name`, at most 32 characters) or, when it is unset, the username. */
  DisplayName(): string {
    const globalName = this.#user.global_name;
    return globalName !== undefined && globalName !== null && globalName !== ''
      ? globalName
      : this.#user.username;
  }

  /** Whether this is a provisional account (a game-owned placeholder for a player without a full account). */
  IsProvisional(): boolean {
    return this.#user.provisional === true;
  }

  // ---- Social layer ----

  /** The user's online status as the player sees it: Blocked when blocked, Offline when invisible. */
  Status(): StatusType {
    return this.#social?.status() ?? StatusType.Unknown;
  }

  /** The user's rich presence in this game, if any. */
  GameActivity(): Activity | undefined {
    return this.#social?.gameActivity();
  }

  /** The player's relationship with this user. */
  Relationship(): RelationshipHandle | undefined {
    return this.#social?.relationship();
  }
}

/** What a handle reads of the library's social cache (relationships and presence). */
export interface UserSocial {
  status(): StatusType;
  gameActivity(): Activity | undefined;
  relationship(): RelationshipHandle;
}

/** RelationshipType of the library (PROTOCOL.md §B.6: the same numbers as the wire). */
export const RelationshipType = {
  None: RelationshipTypes.None,
  Friend: RelationshipTypes.Friend,
  Blocked: RelationshipTypes.Blocked,
  PendingIncoming: RelationshipTypes.PendingIncoming,
  PendingOutgoing: RelationshipTypes.PendingOutgoing,
  Implicit: RelationshipTypes.Implicit,
} as const;
export type RelationshipType = (typeof RelationshipType)[keyof typeof RelationshipType];

/** RelationshipHandle: the player's platform and game relationship with one user. */
export class RelationshipHandle {
  readonly #id: bigint;
  readonly #discord: RelationshipType;
  readonly #game: RelationshipType;
  readonly #user: () => UserHandle | undefined;

  /** Made by the library from its relationship cache. */
  constructor(
    id: bigint,
    discord: RelationshipType,
    game: RelationshipType,
    user: () => UserHandle | undefined,
  ) {
    this.#id = id;
    this.#discord = discord;
    this.#game = game;
    this.#user = user;
  }

  Id(): bigint {
    return this.#id;
  }
  /** The platform relationship: friends everywhere, capped at 1,000. */
  DiscordRelationshipType(): RelationshipType {
    return this.#discord;
  }
  /** The relationship in this game only. */
  GameRelationshipType(): RelationshipType {
    return this.#game;
  }
  User(): UserHandle | undefined {
    return this.#user();
  }
}
