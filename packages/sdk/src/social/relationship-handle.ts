import { RelationshipTypes } from '@hearth/protocol';
import type { UserHandle } from '../user-handle.js';

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
