import { FormErrors, RelationshipLimits, RelationshipTypes, SocialDispatches } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { ReadCache } from '../../storage/read-cache.js';
import { type AccountsService, toUserObject, type User } from '../accounts/service.js';
import { FriendRequestByName, GameFriendRequestByName, PutRelationship } from './schemas.js';
import * as store from './store.js';

export interface RelationshipsDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  accounts: Pick<AccountsService, 'getUser' | 'getUserIn' | 'findUserByUsername'>;
  /** Told after a pair's relationship changed and its events went out (presence re-tells each side). */
  onChange?: (change: RelationshipChange) => Promise<void>;
  /**
   * Which of these users play the application (hold its authorization), asked once inside an unmerge's
   * transaction: only platform friends who use the app follow the player to the new provisional account.
   */
  playersOf: (
    tx: Executor,
    userIds: readonly string[],
    applicationId: string,
  ) => Promise<ReadonlySet<string>>;
}

/** Two users whose relationship changed; `ended` when a relationship ended (removal, block). */
export interface RelationshipChange {
  a: string;
  b: string;
  applicationId?: string;
  ended: boolean;
}

/** What the relationships of two users allow, for presence, invites and direct messages. */
export interface Standing {
  friends: boolean;
  gameFriends: boolean;
  /** Either blocked the other: nothing passes between them (PROTOCOL.md §B.6). */
  blocked: boolean;
}

/**
 * A user without friends, or without game friends, is cached as these shared values: each player connected
 * to a game kept an empty map of its own here (about 470 bytes of heap per idle session).
 */
const NO_FRIENDS: readonly string[] = Object.freeze([]);
const NO_GAME_FRIENDS: ReadonlyMap<string, readonly string[]> = new Map();

/**
 * Relationships (PROTOCOL.md §B.6): platform friends (at most 1,000), game friends per application,
 * requests both ways, and blocks. A block ends every relationship of the pair in every application and
 * applies everywhere; unblocking restores nothing.
 */
export class RelationshipsService {
  readonly #deps: RelationshipsDeps;
  /** Friends and game friends by user, read on every presence change: until a commit that may change them. */
  readonly #friends: ReadCache<readonly string[]>;
  readonly #gameFriends: ReadCache<ReadonlyMap<string, readonly string[]>>;

  constructor(deps: RelationshipsDeps) {
    this.#deps = deps;
    this.#friends = new ReadCache(deps.storage.changeStamps);
    this.#gameFriends = new ReadCache(deps.storage.changeStamps);
  }

  // ---- Reading ----

  /** GET /users/@me/relationships. */
  async list(userId: string): Promise<Array<Record<string, unknown>>> {
    const rows = await store.listRelationships(this.#deps.storage.db, userId);
    return this.#withUsers(rows, (row, user) => relationshipObject(row, user));
  }

  /** GET /users/@me/game-relationships: the caller's game relationships in the token's application. */
  async listGame(userId: string, applicationId: string): Promise<Array<Record<string, unknown>>> {
    const rows = await store.listGameRelationships(this.#deps.storage.db, applicationId, userId);
    return this.#withUsers(rows, (row, user) => gameRelationshipObject(row, user));
  }

  async standing(userId: string, otherId: string, applicationId?: string): Promise<Standing> {
    const db = this.#deps.storage.db;
    const mine = await store.getRelationship(db, userId, otherId);
    const theirs = await store.getRelationship(db, otherId, userId);
    const game = applicationId
      ? await store.getGameRelationship(db, applicationId, userId, otherId)
      : undefined;
    return {
      friends: mine?.type === RelationshipTypes.Friend,
      gameFriends: game?.type === RelationshipTypes.Friend,
      blocked: mine?.type === RelationshipTypes.Blocked || theirs?.type === RelationshipTypes.Blocked,
    };
  }

  /** Whether the two are platform friends, read in the caller's transaction. */
  async areFriends(db: Executor, userId: string, otherId: string): Promise<boolean> {
    return (await store.getRelationship(db, userId, otherId))?.type === RelationshipTypes.Friend;
  }

  /** The user's platform friends (an empty list for none: a list is always kept). */
  async friendIds(userId: string): Promise<readonly string[]> {
    const ids = await this.#friends.get(userId, async () => {
      const found = await store.targetsOfType(this.#deps.storage.db, userId, RelationshipTypes.Friend);
      return found.length === 0 ? NO_FRIENDS : Object.freeze(found);
    });
    return ids ?? NO_FRIENDS;
  }

  /** The user's game friends, by application. */
  async gameFriendsByApplication(userId: string): Promise<ReadonlyMap<string, readonly string[]>> {
    const byApplication = await this.#gameFriends.get(userId, async () => {
      const rows = await store.allGameFriends(this.#deps.storage.db, userId);
      if (rows.length === 0) return NO_GAME_FRIENDS;
      const out = new Map<string, readonly string[]>();
      for (const row of rows) {
        out.set(row.application_id, Object.freeze([...(out.get(row.application_id) ?? []), row.target_id]));
      }
      return out;
    });
    return byApplication ?? NO_GAME_FRIENDS;
  }

  // ---- Platform relationships ----

  /** POST /users/@me/relationships: a friend request by username. */
  async sendFriendRequestByName(userId: string, input: unknown): Promise<void> {
    const { username } = parse(FriendRequestByName, input ?? {});
    const target = await this.#deps.accounts.findUserByUsername(username);
    if (!target) throw new HearthError('NoUsersWithDiscordTag');
    await this.befriend(userId, target.id);
  }

  /** PUT /users/@me/relationships/{user.id}. */
  async put(userId: string, targetId: string, input: unknown): Promise<void> {
    const type = parse(PutRelationship, input ?? null)?.type ?? -1;
    if (type === -1 || type === RelationshipTypes.Friend) return this.befriend(userId, targetId);
    if (type === RelationshipTypes.Blocked) return this.block(userId, targetId);
    throw invalidForm('type', FormErrors.choices([-1, RelationshipTypes.Friend, RelationshipTypes.Blocked]));
  }

  /** Sends a friend request, or accepts the one the target sent. */
  async befriend(userId: string, targetId: string): Promise<void> {
    const target = await this.#target(userId, targetId);
    const now = this.#deps.clock.now();
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const mine = await this.#unblocked(tx, userId, targetId);
      if (mine?.type === RelationshipTypes.Friend || mine?.type === RelationshipTypes.PendingOutgoing) return;
      const accepting = mine?.type === RelationshipTypes.PendingIncoming;
      await this.#assertFriendRoom(tx, userId, accepting ? targetId : undefined);
      const myType = accepting ? RelationshipTypes.Friend : RelationshipTypes.PendingOutgoing;
      const theirType = accepting ? RelationshipTypes.Friend : RelationshipTypes.PendingIncoming;
      const myRow = { user_id: userId, target_id: targetId, type: myType, since: now };
      const theirRow = { user_id: targetId, target_id: userId, type: theirType, since: now };
      await store.putRelationship(tx, myRow);
      await store.putRelationship(tx, theirRow);
      const me = await this.#deps.accounts.getUserIn(tx, userId);
      events.push(relationshipEvent(SocialDispatches.RelationshipAdd, myRow, target));
      if (me) events.push(relationshipEvent(SocialDispatches.RelationshipAdd, theirRow, me));
    });
    await this.#publish(events, { a: userId, b: targetId, ended: false });
  }

  /** Blocks: every relationship of the pair ends, in every application; the blocker keeps a BLOCKED row. */
  async block(userId: string, targetId: string): Promise<void> {
    if (userId === targetId) throw invalidForm('user_id', FormErrors.invalid());
    const target = await this.#deps.accounts.getUser(targetId);
    if (!target) throw new HearthError('UnknownUser');
    const now = this.#deps.clock.now();
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      await store.deleteRelationship(tx, userId, targetId);
      const theirs = await store.deleteRelationship(tx, targetId, userId);
      // The blocked user's own BLOCKED row stays: blocks are each user's own.
      if (theirs?.type === RelationshipTypes.Blocked) await store.putRelationship(tx, theirs);
      else if (theirs) events.push(removeEvent(targetId, userId, theirs.type));
      for (const row of await store.deleteGameRelationshipsBetween(tx, userId, targetId)) {
        events.push(gameRemoveEvent(row));
      }
      const row = { user_id: userId, target_id: targetId, type: RelationshipTypes.Blocked, since: now };
      await store.putRelationship(tx, row);
      events.push(relationshipEvent(SocialDispatches.RelationshipAdd, row, target));
    });
    await this.#publish(events, { a: userId, b: targetId, ended: true });
  }

  /** DELETE /users/@me/relationships/{user.id}: unfriend, cancel, reject or unblock; unblocking restores nothing. */
  async remove(userId: string, targetId: string): Promise<void> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const mine = await store.deleteRelationship(tx, userId, targetId);
      if (!mine) return;
      events.push(removeEvent(userId, targetId, mine.type));
      if (mine.type === RelationshipTypes.Blocked) return;
      const theirs = await store.getRelationship(tx, targetId, userId);
      if (theirs && theirs.type !== RelationshipTypes.Blocked) {
        await store.deleteRelationship(tx, targetId, userId);
        events.push(removeEvent(targetId, userId, theirs.type));
      }
    });
    await this.#publish(events, { a: userId, b: targetId, ended: true });
  }

  // ---- Game relationships ----

  /** POST /users/@me/game-relationships: a game friend request by username. */
  async sendGameFriendRequestByName(userId: string, applicationId: string, input: unknown): Promise<void> {
    const { username } = parse(GameFriendRequestByName, input ?? {});
    const target = await this.#deps.accounts.findUserByUsername(username);
    if (!target) throw new HearthError('NoUsersWithDiscordTag');
    await this.befriendInGame(userId, applicationId, target.id);
  }

  /** PUT /users/@me/game-relationships/{user.id}: only friending (-1 or 1) is settable. */
  async putGame(userId: string, applicationId: string, targetId: string, input: unknown): Promise<void> {
    const type = parse(PutRelationship, input ?? null)?.type ?? -1;
    if (type !== -1 && type !== RelationshipTypes.Friend)
      throw invalidForm('type', FormErrors.choices([-1, RelationshipTypes.Friend]));
    await this.befriendInGame(userId, applicationId, targetId);
  }

  /** A game friend request, or its acceptance; game friends have no cap (PROTOCOL.md §B.6). */
  async befriendInGame(userId: string, applicationId: string, targetId: string): Promise<void> {
    const target = await this.#target(userId, targetId);
    const now = this.#deps.clock.now();
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      await this.#unblocked(tx, userId, targetId);
      const current = await store.getGameRelationship(tx, applicationId, userId, targetId);
      if (current?.type === RelationshipTypes.Friend || current?.type === RelationshipTypes.PendingOutgoing)
        return;
      const accepting = current?.type === RelationshipTypes.PendingIncoming;
      const base = { application_id: applicationId, since: now };
      const myRow = {
        ...base,
        user_id: userId,
        target_id: targetId,
        type: accepting ? RelationshipTypes.Friend : RelationshipTypes.PendingOutgoing,
      };
      const theirRow = {
        ...base,
        user_id: targetId,
        target_id: userId,
        type: accepting ? RelationshipTypes.Friend : RelationshipTypes.PendingIncoming,
      };
      await store.putGameRelationship(tx, myRow);
      await store.putGameRelationship(tx, theirRow);
      const me = await this.#deps.accounts.getUserIn(tx, userId);
      events.push(gameAddEvent(myRow, target));
      if (me) events.push(gameAddEvent(theirRow, me));
    });
    await this.#publish(events, { a: userId, b: targetId, applicationId, ended: false });
  }

  /** DELETE /users/@me/game-relationships/{user.id}: unfriend, cancel or reject, in this application. */
  async removeGame(userId: string, applicationId: string, targetId: string): Promise<void> {
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const mine = await store.deleteGameRelationship(tx, applicationId, userId, targetId);
      if (!mine) return;
      events.push(gameRemoveEvent(mine));
      const theirs = await store.deleteGameRelationship(tx, applicationId, targetId, userId);
      if (theirs) events.push(gameRemoveEvent(theirs));
    });
    await this.#publish(events, { a: userId, b: targetId, applicationId, ended: true });
  }

  // ---- Account links (PROTOCOL.md §B.3): inside the merge, unmerge or ban transaction, through `tx` only ----

  /*
   * No events: the participants run inside the link's transaction, and the seam has no after-commit hook.
   * The SDK learns of the merge from USER_MERGE_OPERATION_COMPLETED and of an unmerge from its closed
   * session; either way it reads its relationships again.
   */

  /**
   * A merge: the provisional account's platform relationships (friends, requests, blocks it made or
   * received) and its game relationships in the application become the full account's. What the two
   * accounts held towards each other is dropped: it would be a relationship with oneself. Oldest first, so
   * that at the 1,000-friend cap the newest friendships are the ones left behind.
   */
  async mergeInto(
    tx: Executor,
    provisionalUserId: string,
    fullUserId: string,
    applicationId: string,
  ): Promise<void> {
    const rows = await store.relationshipsInvolving(tx, provisionalUserId);
    const others = new Set(
      rows.map((row) => (row.user_id === provisionalUserId ? row.target_id : row.user_id)),
    );
    others.delete(fullUserId);
    let room =
      RelationshipLimits.friendsMax - (await store.countOfType(tx, fullUserId, RelationshipTypes.Friend));
    for (const other of others) {
      const mine = rows.find((row) => row.user_id === provisionalUserId && row.target_id === other);
      const theirs = rows.find((row) => row.user_id === other && row.target_id === provisionalUserId);
      if (await this.#mergePair(tx, fullUserId, other, mine, theirs, room > 0)) room--;
    }
    for (const mine of await store.listGameRelationships(tx, applicationId, provisionalUserId)) {
      if (!(await this.#carriesGame(tx, applicationId, fullUserId, mine))) continue;
      const theirs = await store.getGameRelationship(tx, applicationId, mine.target_id, provisionalUserId);
      await store.putGameRelationship(tx, { ...mine, user_id: fullUserId });
      if (theirs) await store.putGameRelationship(tx, { ...theirs, target_id: fullUserId });
    }
  }

  /**
   * An unmerge or a ban: the new provisional account takes the in-game relationships of the application,
   * gets the full account's platform friends who use the app (copied: the full account keeps its own), and
   * is blocked by everyone who blocks the full account. Blocks the full account made stay with it
   * (PROTOCOL.md §B.3 names blockers only).
   */
  async unmergeInto(
    tx: Executor,
    fullUserId: string,
    newProvisionalUserId: string,
    applicationId: string,
  ): Promise<void> {
    for (const blocker of await store.holdersOfType(tx, fullUserId, RelationshipTypes.Blocked)) {
      await store.putRelationship(tx, { ...blocker, target_id: newProvisionalUserId });
    }
    await store.moveGameRelationships(tx, applicationId, fullUserId, newProvisionalUserId);
    const friends = (await store.listRelationships(tx, fullUserId)).filter(
      (relationship) => relationship.type === RelationshipTypes.Friend,
    );
    const players = await this.#deps.playersOf(
      tx,
      friends.map((f) => f.target_id),
      applicationId,
    );
    for (const friend of friends) {
      if (!players.has(friend.target_id)) continue;
      // The friend keeps the full account too: the copy must fit in the friend's 1,000.
      const count = await store.countOfType(tx, friend.target_id, RelationshipTypes.Friend);
      if (count >= RelationshipLimits.friendsMax) continue;
      await store.putRelationship(tx, { ...friend, user_id: newProvisionalUserId });
      await store.putRelationship(tx, {
        user_id: friend.target_id,
        target_id: newProvisionalUserId,
        type: RelationshipTypes.Friend,
        since: friend.since,
      });
    }
  }

  /**
   * The full account's relationship with `other` after a merge, from both accounts' rows. A block (by
   * either side, made on either account) wins and ends the rest, as `block` does; then friendship; then
   * the full account's own request; then the provisional account's. A new friendship needs `room` under
   * the full account's 1,000 (a merge does not break the cap: the friendship over it is not carried).
   * Answers whether a friendship was added.
   */
  async #mergePair(
    tx: Executor,
    to: string,
    other: string,
    mine: store.RelationshipRow | undefined,
    theirs: store.RelationshipRow | undefined,
    room: boolean,
  ): Promise<boolean> {
    const kept = await store.getRelationship(tx, to, other);
    const keptTheirs = await store.getRelationship(tx, other, to);
    const blocking = [kept, mine].find((row) => row?.type === RelationshipTypes.Blocked);
    const blocked = [keptTheirs, theirs].find((row) => row?.type === RelationshipTypes.Blocked);
    if (blocking || blocked) {
      await store.deleteRelationship(tx, to, other);
      await store.deleteRelationship(tx, other, to);
      if (blocking) await store.putRelationship(tx, { ...blocking, user_id: to, target_id: other });
      if (blocked) await store.putRelationship(tx, { ...blocked, user_id: other, target_id: to });
      await store.deleteGameRelationshipsBetween(tx, to, other);
      return false;
    }
    if (kept?.type === RelationshipTypes.Friend) return false;
    if (mine?.type === RelationshipTypes.Friend) {
      if (!room) return false;
      await store.putRelationship(tx, { ...mine, user_id: to });
      await store.putRelationship(tx, {
        user_id: other,
        target_id: to,
        type: RelationshipTypes.Friend,
        since: mine.since,
      });
      return true;
    }
    if (kept) return false;
    if (mine) await store.putRelationship(tx, { ...mine, user_id: to });
    if (theirs) await store.putRelationship(tx, { ...theirs, target_id: to });
    return false;
  }

  /** Either of the two blocks the other. */
  async #blockedIn(tx: Executor, a: string, b: string): Promise<boolean> {
    const ab = await store.getRelationship(tx, a, b);
    const ba = await store.getRelationship(tx, b, a);
    return ab?.type === RelationshipTypes.Blocked || ba?.type === RelationshipTypes.Blocked;
  }

  /**
   * Whether the provisional account's game relationship goes to the full account: not towards the full
   * account itself, not across a block, and over the full account's own only as a friendship over a request.
   */
  async #carriesGame(
    tx: Executor,
    applicationId: string,
    to: string,
    mine: store.GameRelationshipRow,
  ): Promise<boolean> {
    if (mine.target_id === to || (await this.#blockedIn(tx, to, mine.target_id))) return false;
    const kept = await store.getGameRelationship(tx, applicationId, to, mine.target_id);
    return !kept || (kept.type !== RelationshipTypes.Friend && mine.type === RelationshipTypes.Friend);
  }

  // ---- Steps ----

  async #target(userId: string, targetId: string): Promise<User> {
    if (userId === targetId) throw new HearthError('CannotSendFriendRequestToSelf');
    const target = await this.#deps.accounts.getUser(targetId);
    if (!target) throw new HearthError('UnknownUser');
    return target;
  }

  /** The user's platform relationship with the target, refused when either side blocks the other. */
  async #unblocked(tx: Executor, userId: string, targetId: string) {
    const mine = await store.getRelationship(tx, userId, targetId);
    const theirs = await store.getRelationship(tx, targetId, userId);
    if (theirs?.type === RelationshipTypes.Blocked || mine?.type === RelationshipTypes.Blocked)
      throw new HearthError('IncomingFriendRequestsDisabled');
    return mine;
  }

  /** 30002 when the user (or, on acceptance, the other user too) already has 1,000 friends. */
  async #assertFriendRoom(tx: Executor, userId: string, otherId: string | undefined): Promise<void> {
    for (const id of otherId ? [userId, otherId] : [userId]) {
      const friends = await store.countOfType(tx, id, RelationshipTypes.Friend);
      if (friends >= RelationshipLimits.friendsMax) throw new HearthError('MaximumFriends');
    }
  }

  async #withUsers<R extends { target_id: string }>(
    rows: readonly R[],
    shape: (row: R, user: User) => Record<string, unknown>,
  ): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    for (const row of rows) {
      const user = await this.#deps.accounts.getUser(row.target_id);
      if (user) out.push(shape(row, user));
    }
    return out;
  }

  async #publish(events: readonly BusEvent[], change: RelationshipChange): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
    if (events.length > 0) await this.#deps.onChange?.(change);
  }
}

/** The relationship object (PROTOCOL.md §B.6). */
export function relationshipObject(row: store.RelationshipRow, user: User): Record<string, unknown> {
  return {
    id: row.target_id,
    type: row.type,
    user: toUserObject(user),
    nickname: null,
    is_spam_request: false,
    user_ignored: false,
    since: new Date(Number(row.since)).toISOString(),
  };
}

/** The game relationship object (PROTOCOL.md §B.6). */
export function gameRelationshipObject(row: store.GameRelationshipRow, user: User): Record<string, unknown> {
  return {
    id: row.target_id,
    application_id: row.application_id,
    type: row.type,
    user: toUserObject(user),
    since: new Date(Number(row.since)).toISOString(),
    dm_access_type: 0,
    user_id: row.user_id,
  };
}

function relationshipEvent(type: string, row: store.RelationshipRow, target: User): BusEvent {
  return { type, data: relationshipObject(row, target), audience: { users: [row.user_id] } };
}

function removeEvent(userId: string, targetId: string, type: number): BusEvent {
  return {
    type: SocialDispatches.RelationshipRemove,
    data: { id: targetId, type, nickname: null },
    audience: { users: [userId] },
  };
}

/** Game relationships reach the player's sessions of that game only. */
function gameAddEvent(row: store.GameRelationshipRow, target: User): BusEvent {
  return {
    type: SocialDispatches.GameRelationshipAdd,
    data: gameRelationshipObject(row, target),
    audience: { users: [row.user_id], applicationId: row.application_id },
  };
}

function gameRemoveEvent(row: store.GameRelationshipRow): BusEvent {
  return {
    type: SocialDispatches.GameRelationshipRemove,
    data: { id: row.target_id, application_id: row.application_id, type: row.type, user_id: row.user_id },
    audience: { users: [row.user_id], applicationId: row.application_id },
  };
}
