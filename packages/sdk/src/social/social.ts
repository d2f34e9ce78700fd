import {
  DirectMessageLimits,
  GatewayOpcodes,
  MessageActivityTypes,
  PRESENCE_UPDATES_LIMIT,
  RelationshipTypes,
  Scopes,
  SocialDispatches,
} from '@hearth/protocol';
import { ClientResult, ErrorType } from '../client-result.js';
import { attempt, type FeatureContext, invalid, notReady, safely } from '../feature.js';
import { snowflakeOf } from '../ids.js';
import { LoggingSeverity } from '../logging.js';
import { type GatewayUser, RelationshipHandle, type RelationshipType, UserHandle } from '../user-handle.js';
import { Activity, ActivityInvite, type WireActivity, type WireInviteMessage } from './activity.js';

import { StatusType } from './status.js';

const WIRE_STATUS: Readonly<Record<number, string>> = {
  [StatusType.Online]: 'online',
  [StatusType.Idle]: 'idle',
  [StatusType.Dnd]: 'dnd',
  [StatusType.Invisible]: 'invisible',
};

export type RelationshipCallback = (userId: bigint, isDiscordRelationshipUpdate: boolean) => void;
export type UserUpdatedCallback = (userId: bigint) => void;
export type ActivityInviteCallback = (invite: ActivityInvite) => void;
export type ActivityJoinCallback = (joinSecret: string) => void;
export type AcceptActivityInviteCallback = (result: ClientResult, joinSecret: string) => void;

interface Presence {
  status: string;
  activities: WireActivity[];
}

/**
 * Relationships, presence and activity invites of the player (PROTOCOL.md §B.6, §B.8, §B.9): a cache the
 * gateway keeps current, and the operations that change it.
 */
export class Social {
  readonly #feature: FeatureContext;
  readonly #platform = new Map<string, RelationshipType>();
  readonly #game = new Map<string, RelationshipType>();
  readonly #users = new Map<string, GatewayUser>();
  readonly #presences = new Map<string, Presence>();
  #loaded: Promise<void> = Promise.resolve();
  #relationshipCreated: RelationshipCallback | undefined;
  #relationshipDeleted: RelationshipCallback | undefined;
  #userUpdated: UserUpdatedCallback | undefined;
  #inviteCreated: ActivityInviteCallback | undefined;
  #join: ActivityJoinCallback | undefined;
  #launchedJoin: string | undefined;
  /** What the player set, sent again on every new session. */
  #status: StatusType = StatusType.Online;
  #activity: Activity | undefined;
  #sentAt: number[] = [];
  /** Invites accepted on this device: their echo from the server is not news here. */
  readonly #acceptedHere = new Set<string>();

  constructor(feature: FeatureContext) {
    this.#feature = feature;
    feature.on('READY', (d) => this.#ready(d as { presences?: unknown; scopes?: unknown }));
    feature.on(SocialDispatches.RelationshipAdd, (d) => this.#relationship(d, true, false));
    feature.on(SocialDispatches.RelationshipRemove, (d) => this.#relationship(d, true, true));
    feature.on(SocialDispatches.GameRelationshipAdd, (d) => this.#relationship(d, false, false));
    feature.on(SocialDispatches.GameRelationshipRemove, (d) => this.#relationship(d, false, true));
    feature.on(SocialDispatches.PresenceUpdate, (d) =>
      this.#presence(d as { user: { id: string } } & Presence),
    );
    feature.on(SocialDispatches.MessageCreate, (d) => this.#message(d as Partial<WireInviteMessage>));
    feature.on(SocialDispatches.ActivityInviteAccepted, (d) =>
      this.#acceptedElsewhere(d as WireInviteMessage),
    );
  }

  // ---- Relationships ----

  /** Every relationship of the player, platform and game, once the first load after Ready is done. */
  async getRelationships(): Promise<RelationshipHandle[]> {
    await this.#loaded;
    const ids = new Set([...this.#platform.keys(), ...this.#game.keys()]);
    return [...ids].map((id) => this.relationship(id));
  }

  relationship(id: string): RelationshipHandle {
    return new RelationshipHandle(
      BigInt(id),
      this.#platform.get(id) ?? RelationshipTypes.None,
      this.#game.get(id) ?? RelationshipTypes.None,
      () => this.user(id),
    );
  }

  user(id: string): UserHandle | undefined {
    const user = this.#users.get(id);
    return user ? this.#handle(user) : undefined;
  }

  handleOf(user: GatewayUser): UserHandle {
    return this.#handle(user);
  }

  #handle(user: GatewayUser): UserHandle {
    return new UserHandle(user, {
      status: () => this.status(user.id),
      gameActivity: () => this.gameActivity(user.id),
      relationship: () => this.relationship(user.id),
    });
  }

  sendFriendRequest(username: string, game: boolean): Promise<ClientResult> {
    const path = game ? '/users/@me/game-relationships' : '/users/@me/relationships';
    return this.#result({ method: 'POST', path, json: { username } });
  }

  sendFriendRequestById(userId: bigint | string, game: boolean): Promise<ClientResult> {
    return this.#put(userId, game, {});
  }

  /** Accepts the pending incoming request of this user: the platform one, else the game one. */
  acceptFriendRequest(userId: bigint | string): Promise<ClientResult> {
    const id = String(userId);
    const game = this.#platform.get(id) !== RelationshipTypes.PendingIncoming;
    return this.#put(userId, game, {});
  }

  /** Rejects the pending incoming requests of this user, platform and game. */
  async rejectFriendRequest(userId: bigint | string): Promise<ClientResult> {
    const id = String(userId);
    if (this.#game.get(id) === RelationshipTypes.PendingIncoming) {
      const result = await this.#delete(userId, true);
      if (!result.Successful()) return result;
    }
    return this.#platform.get(id) === RelationshipTypes.PendingIncoming
      ? this.#delete(userId, false)
      : ClientResult.success(204);
  }

  /** Ends the friendship with this user on the platform and in this game. */
  async removeFriend(userId: bigint | string): Promise<ClientResult> {
    const game = await this.#delete(userId, true);
    if (!game.Successful()) return game;
    return this.#delete(userId, false);
  }

  blockUser(userId: bigint | string): Promise<ClientResult> {
    return this.#put(userId, false, { type: RelationshipTypes.Blocked });
  }

  unblockUser(userId: bigint | string): Promise<ClientResult> {
    return this.#delete(userId, false);
  }

  setRelationshipCreatedCallback(callback: RelationshipCallback): void {
    this.#relationshipCreated = callback;
  }
  setRelationshipDeletedCallback(callback: RelationshipCallback): void {
    this.#relationshipDeleted = callback;
  }
  setUserUpdatedCallback(callback: UserUpdatedCallback): void {
    this.#userUpdated = callback;
  }

  // ---- Presence ----

  status(userId: string): StatusType {
    if (this.#platform.get(userId) === RelationshipTypes.Blocked) return StatusType.Blocked;
    if (userId === this.#feature.currentUserId()) return this.#status;
    switch (this.#presences.get(userId)?.status) {
      case 'online':
        return StatusType.Online;
      case 'idle':
        return StatusType.Idle;
      case 'dnd':
        return StatusType.Dnd;
      default:
        return StatusType.Offline;
    }
  }

  /** The user's activity in this game (the application set with SetApplicationId), if any. */
  gameActivity(userId: string): Activity | undefined {
    const applicationId = this.#feature.applicationId().toString();
    const wire = this.#presences.get(userId)?.activities.find((a) => a.application_id === applicationId);
    return wire ? Activity.fromWire(wire) : undefined;
  }

  updateRichPresence(activity: Activity | undefined): ClientResult {
    const problem = activity?.Validate();
    if (problem) return invalid(problem);
    const previous = this.#activity;
    this.#activity = activity;
    const result = this.#sendPresence();
    if (!result.Successful()) this.#activity = previous;
    return result;
  }

  setOnlineStatus(status: StatusType): ClientResult {
    if (WIRE_STATUS[status] === undefined) return invalid('status must be Online, Idle, Dnd or Invisible');
    const previous = this.#status;
    this.#status = status;
    const result = this.#sendPresence();
    if (!result.Successful()) this.#status = previous;
    return result;
  }

  /** Op 3 with what the player set; 5 per 20 s, counted here too so that the game learns it was refused. */
  #sendPresence(): ClientResult {
    const now = Date.now();
    this.#sentAt = this.#sentAt.filter((at) => now - at < PRESENCE_UPDATES_LIMIT.windowMs);
    if (this.#sentAt.length >= PRESENCE_UPDATES_LIMIT.limit) {
      const retryAfter = (this.#sentAt[0]! + PRESENCE_UPDATES_LIMIT.windowMs - now) / 1000;
      return new ClientResult({
        type: ErrorType.HTTPError,
        status: 429,
        error: 'presence updates are limited to 5 per 20 s',
        retryable: true,
        retryAfter,
      });
    }
    const sent = this.#feature.send(GatewayOpcodes.PresenceUpdate, this.#presencePayload());
    if (!sent) return notReady();
    this.#sentAt.push(now);
    return ClientResult.success();
  }

  #presencePayload(): Record<string, unknown> {
    return {
      status: WIRE_STATUS[this.#status] ?? 'online',
      activities: this.#activity ? [this.#activity.toWire()] : [],
      since: null,
      afk: false,
    };
  }

  // ---- Activity invites ----

  /** An invite or join request is a direct message with an `activity`; its `content` travels with it. */
  sendActivityInvite(userId: bigint | string, type: number, content = ''): Promise<ClientResult> {
    const id = snowflakeOf(userId, 'userId');
    if (id instanceof ClientResult) return Promise.resolve(id);
    if (content.length > DirectMessageLimits.contentMax)
      return Promise.resolve(invalid(`content is longer than ${DirectMessageLimits.contentMax}`));
    const applicationId = this.#feature.applicationId().toString();
    return this.#result({
      method: 'POST',
      path: `/users/${id}/messages`,
      route: 'POST /users/:id/messages',
      json: { ...(content === '' ? {} : { content }), activity: { type }, application_id: applicationId },
    });
  }

  async acceptActivityInvite(invite: ActivityInvite): Promise<{ result: ClientResult; joinSecret: string }> {
    if (invite.Type() !== MessageActivityTypes.Join)
      return { result: invalid('only a Join invite can be accepted'), joinSecret: '' };
    const messageId = invite.MessageId().toString();
    this.#acceptedHere.add(messageId);
    const { result, body } = await attempt(this.#feature, {
      method: 'POST',
      path: `/users/${invite.SenderId()}/messages/${messageId}/activity-invite/accept`,
      route: 'POST /users/:id/messages/:id/activity-invite/accept',
    });
    const joinSecret = (body as { secret?: string } | undefined)?.secret ?? '';
    if (result.Successful()) {
      invite.invalidate();
      const callback = this.#join;
      if (callback) safely(this.#feature, 'activity join', () => callback(joinSecret));
    } else {
      this.#acceptedHere.delete(messageId);
    }
    return { result, joinSecret };
  }

  setActivityInviteCreatedCallback(callback: ActivityInviteCallback): void {
    this.#inviteCreated = callback;
  }
  setActivityJoinCallback(callback: ActivityJoinCallback): void {
    this.#join = callback;
    const launched = this.#launchedJoin;
    this.#launchedJoin = undefined;
    if (launched !== undefined) this.joinLaunched(launched);
  }

  /** The join secret the game was launched with; held until a join callback is set. */
  joinLaunched(secret: string): void {
    const callback = this.#join;
    if (!callback) {
      this.#launchedJoin = secret;
      return;
    }
    safely(this.#feature, 'activity join', () => callback(secret));
  }

  // ---- Dispatches ----

  #ready(d: { presences?: unknown; scopes?: unknown }): void {
    this.#platform.clear();
    this.#game.clear();
    this.#presences.clear();
    for (const presence of Array.isArray(d?.presences) ? d.presences : []) {
      const p = presence as ({ user?: { id?: unknown } } & Partial<Presence>) | null;
      if (typeof p?.user?.id === 'string' && typeof p.status === 'string') {
        this.#presences.set(p.user.id, {
          status: p.status,
          activities: Array.isArray(p.activities) ? p.activities : [],
        });
      }
    }
    // A new session starts with the presence the player set before it.
    if (this.#activity || this.#status !== StatusType.Online) {
      this.#feature.send(GatewayOpcodes.PresenceUpdate, this.#presencePayload());
    }
    // Only a token that may read relationships loads them (READY lists the token's scopes, PROTOCOL.md §B.7).
    const scopes = Array.isArray(d?.scopes) ? (d.scopes as unknown[]) : [];
    this.#loaded = scopes.includes(Scopes.RelationshipsRead) ? this.#load() : Promise.resolve();
  }

  /** The relationships at Ready; a failure leaves the cache to the gateway's events and is logged. */
  async #load(): Promise<void> {
    const [platform, game] = await Promise.all([
      attempt(this.#feature, { method: 'GET', path: '/users/@me/relationships' }),
      attempt(this.#feature, { method: 'GET', path: '/users/@me/game-relationships' }),
    ]);
    for (const [answer, map] of [
      [platform, this.#platform],
      [game, this.#game],
    ] as const) {
      if (!answer.result.Successful() || !Array.isArray(answer.body)) {
        this.#feature.logger.log(
          LoggingSeverity.Warning,
          `relationships not loaded: ${answer.result.ToString()}`,
        );
        continue;
      }
      for (const row of answer.body as Array<{ id?: unknown; type?: unknown; user?: GatewayUser }>) {
        if (typeof row?.id !== 'string' || typeof row.type !== 'number') continue;
        map.set(row.id, row.type as RelationshipType);
        if (row.user) this.#users.set(row.id, row.user);
      }
    }
  }

  #relationship(d: unknown, discord: boolean, removed: boolean): void {
    const row = d as { id?: string; type?: RelationshipType; user?: GatewayUser };
    if (typeof row.id !== 'string') return;
    const map = discord ? this.#platform : this.#game;
    if (removed) map.delete(row.id);
    else if (row.type !== undefined) map.set(row.id, row.type);
    if (row.user) this.#users.set(row.id, row.user);
    const callback = removed ? this.#relationshipDeleted : this.#relationshipCreated;
    if (callback) safely(this.#feature, 'relationship', () => callback(BigInt(row.id!), discord));
  }

  #presence(d: { user: { id: string } } & Presence): void {
    if (typeof d?.user?.id !== 'string') return;
    if (d.status === 'offline') this.#presences.delete(d.user.id);
    else this.#presences.set(d.user.id, { status: d.status, activities: d.activities ?? [] });
    const callback = this.#userUpdated;
    if (callback) safely(this.#feature, 'user updated', () => callback(BigInt(d.user.id)));
  }

  /** An invite or join request from someone else; a player never receives their own (PROTOCOL.md §B.9). */
  #message(d: Partial<WireInviteMessage>): void {
    if (!d?.activity || !d.author || !d.id || !d.channel_id || !d.application_id) return;
    if (d.author.id === this.#feature.currentUserId()) return;
    const callback = this.#inviteCreated;
    if (callback)
      safely(this.#feature, 'activity invite', () => callback(new ActivityInvite(d as WireInviteMessage)));
  }

  /** Accepted on another device of the player: that invite is told again, no longer open (seed). */
  #acceptedElsewhere(d: WireInviteMessage): void {
    if (!d?.id || this.#acceptedHere.delete(d.id)) return;
    const invite = new ActivityInvite(d);
    invite.invalidate();
    const callback = this.#inviteCreated;
    if (callback) safely(this.#feature, 'activity invite', () => callback(invite));
  }

  // ---- Steps ----

  #put(userId: bigint | string, game: boolean, json: object): Promise<ClientResult> {
    const id = snowflakeOf(userId, 'userId');
    if (id instanceof ClientResult) return Promise.resolve(id);
    const base = game ? '/users/@me/game-relationships' : '/users/@me/relationships';
    return this.#result({ method: 'PUT', path: `${base}/${id}`, route: `PUT ${base}/:id`, json });
  }

  #delete(userId: bigint | string, game: boolean): Promise<ClientResult> {
    const id = snowflakeOf(userId, 'userId');
    if (id instanceof ClientResult) return Promise.resolve(id);
    const base = game ? '/users/@me/game-relationships' : '/users/@me/relationships';
    return this.#result({ method: 'DELETE', path: `${base}/${id}`, route: `DELETE ${base}/:id` });
  }

  async #result(request: Parameters<typeof attempt>[1]): Promise<ClientResult> {
    return (await attempt(this.#feature, request)).result;
  }
}
