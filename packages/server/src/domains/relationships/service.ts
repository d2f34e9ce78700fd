import { FormErrors, RelationshipLimits, RelationshipTypes, SocialDispatches } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
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
 * Relationships (PROTOCOL.md §B.6): platform friends (at most 1,000), game friends per application,
 * requests both ways, and blocks. A block ends every relationship of the pair in every application and
 * applies everywhere; unblocking restores nothing.
 */
export class RelationshipsService {
  readonly #deps: RelationshipsDeps;

  constructor(deps: RelationshipsDeps) {
    this.#deps = deps;
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

  /** The user's platform friends. */
  friendIds(userId: string): Promise<string[]> {
    return store.targetsOfType(this.#deps.storage.db, userId, RelationshipTypes.Friend);
  }

  /** The user's game friends, by application. */
  async gameFriendsByApplication(userId: string): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const row of await store.allGameFriends(this.#deps.storage.db, userId)) {
      out.set(row.application_id, [...(out.get(row.application_id) ?? []), row.target_id]);
    }
    return out;
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
      const mine = await store.getRelationship(tx, userId, targetId);
      const theirs = await store.getRelationship(tx, targetId, userId);
      if (theirs?.type === RelationshipTypes.Blocked || mine?.type === RelationshipTypes.Blocked)
        throw new HearthError('IncomingFriendRequestsDisabled');
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
      const mine = await store.getRelationship(tx, userId, targetId);
      const theirs = await store.getRelationship(tx, targetId, userId);
      if (theirs?.type === RelationshipTypes.Blocked || mine?.type === RelationshipTypes.Blocked)
        throw new HearthError('IncomingFriendRequestsDisabled');
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

  // ---- Steps ----

  async #target(userId: string, targetId: string): Promise<User> {
    if (userId === targetId) throw new HearthError('CannotSendFriendRequestToSelf');
    const target = await this.#deps.accounts.getUser(targetId);
    if (!target) throw new HearthError('UnknownUser');
    return target;
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
