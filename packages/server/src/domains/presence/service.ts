import { ActivityFlags, type PresenceStatus, PresenceStatuses, SocialDispatches } from '@hearth/protocol';
import type { Bus, DeliveredEvent } from '../../bus/bus.js';
import { type Clock, msAfter } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/logger.js';
import { parse } from '../../kernel/validation.js';
import type { RelationshipChange, RelationshipsService } from '../relationships/service.js';
import { type ActivityInput, PresenceInput } from './schemas.js';

/** Internal bus event (no gateway audience): one gateway session's presence, replicated to every node. */
export const PRESENCE_SESSION_EVENT = 'PRESENCE_SESSION_STATE';

/** A gateway session as presence sees it. */
export interface PresenceSession {
  id: string;
  userId: string;
  /** The game of a player's (bearer) session; undefined for the platform client's own sessions. */
  applicationId: string | undefined;
}

/** A session's presence; activities keep their secrets, which only invites reveal (PROTOCOL.md §B.9). */
interface SessionState {
  sessionId: string;
  applicationId: string | undefined;
  status: PresenceStatus;
  activities: readonly ActivityInput[];
  /** The change's time in ms after the service's `#clockOrigin` (`msAfter`): no boxed number per session. */
  updatedAt: number;
}

/** The activities of every session that sets none. */
const NO_ACTIVITIES: readonly ActivityInput[] = Object.freeze([]);

/** The presence object of PRESENCE_UPDATE and READY `presences`. */
export interface PresenceObject {
  user: { id: string };
  status: PresenceStatus;
  activities: Array<Record<string, unknown>>;
  client_status: Record<string, PresenceStatus>;
}

export interface PresenceDeps {
  bus: Bus;
  clock: Clock;
  logger: Logger;
  relationships: Pick<RelationshipsService, 'friendIds' | 'gameFriendsByApplication' | 'standing'>;
  /** This node's name: the node whose session changed is the one that tells the friends. */
  nodeId: string;
  /** Told, on the node where it happened, when a user's last session ended (temporary guild members leave). */
  lastSessionEnded?: (userId: string) => Promise<void>;
}

/**
 * Presence and rich presence (PROTOCOL.md §B.8, §D.6). Status follows the gateway sessions: online while
 * one is up, offline when the last ends, idle/dnd/invisible as set. Every node keeps a replica of every
 * session's presence from the bus; the node where a session changed tells that user's friends with
 * PRESENCE_UPDATE. Invisible users appear offline; only friends (a block ends friendship) are told.
 */
/** What a node says of one of its sessions' presence, over the bus to every node. */
type PresenceSessionData = {
  origin: string;
  session_id: string;
  user_id: string;
  application_id: string | null;
  status: PresenceStatus;
  activities: ActivityInput[];
  ended: boolean;
  at: number;
};

export class PresenceService {
  readonly #deps: PresenceDeps;
  /** The clock's reading when the service started; every session's `updatedAt` is kept relative to it. */
  readonly #clockOrigin: number;
  /** Each user's sessions: most users have one, kept alone; a few are an array (a Map's table is 450 bytes). */
  readonly #sessions = new Map<string, SessionState | SessionState[]>();
  /** What friends were last told of each user (key: user, or user and game for game friends). */
  readonly #told = new Map<string, string>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #unsubscribe: () => void;

  constructor(deps: PresenceDeps) {
    this.#deps = deps;
    this.#clockOrigin = deps.clock.now();
    this.#unsubscribe = deps.bus.subscribe((event) => this.#received(event));
  }

  close(): void {
    this.#unsubscribe();
  }

  /** Validates op 3 or Identify `presence`; throws 50035 with the field tree. */
  parse(input: unknown): PresenceInput {
    return parse(PresenceInput, input);
  }

  // ---- What the gateway reports ----

  started(session: PresenceSession, presence: PresenceInput | undefined): Promise<void> {
    return this.#report(
      session,
      presence?.status ?? PresenceStatuses.Online,
      presence?.activities ?? [],
      false,
    );
  }

  updated(session: PresenceSession, presence: PresenceInput): Promise<void> {
    return this.#report(session, presence.status, presence.activities, false);
  }

  ended(session: PresenceSession): Promise<void> {
    return this.#report(session, PresenceStatuses.Offline, [], true);
  }

  async #report(
    session: PresenceSession,
    status: PresenceStatus,
    activities: ActivityInput[],
    ended: boolean,
  ): Promise<void> {
    const now = this.#deps.clock.now();
    // A game sets its own activity: the application is the session's, whatever the client wrote.
    const owned = activities.map((activity) => ({
      ...activity,
      created_at: activity.created_at ?? now,
      ...(session.applicationId ? { application_id: session.applicationId } : {}),
    }));
    const data: PresenceSessionData = {
      origin: this.#deps.nodeId,
      session_id: session.id,
      user_id: session.userId,
      application_id: session.applicationId ?? null,
      status,
      activities: owned,
      ended,
      at: now,
    };
    // Read your writes: this node answers from the new state at once (a DM to a player whose READY just
    // went out finds them in the game), not only once the bus has carried the change back.
    this.#apply(data);
    await this.#deps.bus.publish({ type: PRESENCE_SESSION_EVENT, data });
  }

  // ---- What others ask ----

  /** The user's presence as a friend sees it; `applicationId`: as a game friend in that game sees it. */
  presenceOf(userId: string, applicationId?: string): PresenceObject {
    const sessions = this.#statesOf(userId).filter(
      (state) => applicationId === undefined || state.applicationId === applicationId,
    );
    const latest = sessions.reduce<SessionState | undefined>(
      (a, b) => (a === undefined || b.updatedAt >= a.updatedAt ? b : a),
      undefined,
    );
    if (
      !latest ||
      latest.status === PresenceStatuses.Invisible ||
      latest.status === PresenceStatuses.Offline
    ) {
      return { user: { id: userId }, status: PresenceStatuses.Offline, activities: [], client_status: {} };
    }
    return {
      user: { id: userId },
      status: latest.status,
      activities: sessions.flatMap((state) => state.activities.map(publicActivity)),
      client_status: { desktop: latest.status },
    };
  }

  /** The user's current activity in a game, secrets included: what an invite's acceptance reveals. */
  activityOf(userId: string, applicationId: string): ActivityInput | undefined {
    for (const state of this.#statesOf(userId)) {
      const activity = state.activities.find((a) => a.application_id === applicationId);
      if (activity) return activity;
    }
    return undefined;
  }

  /** Whether the user has a session of this game ("in the game", PROTOCOL.md §B.5). */
  isPlaying(userId: string, applicationId: string): boolean {
    for (const state of this.#statesOf(userId)) {
      if (state.applicationId === applicationId) return true;
    }
    return false;
  }

  /** READY `presences`: the friends (and, in a game, its game friends) who are not offline. */
  async readyPresences(userId: string, applicationId: string | undefined): Promise<PresenceObject[]> {
    const out: PresenceObject[] = [];
    const friends = new Set(await this.#deps.relationships.friendIds(userId));
    for (const id of friends) out.push(this.presenceOf(id));
    if (applicationId) {
      const games = await this.#deps.relationships.gameFriendsByApplication(userId);
      for (const id of games.get(applicationId) ?? []) {
        if (!friends.has(id)) out.push(this.presenceOf(id, applicationId));
      }
    }
    return out.filter((presence) => presence.status !== PresenceStatuses.Offline);
  }

  /**
   * Two users' relationship changed: new friends are told each other's presence at once; when a
   * relationship ended (unfriended, blocked) each sees the other offline. Requests change nothing.
   */
  async relationshipChanged(change: RelationshipChange): Promise<void> {
    const { a, b, applicationId, ended } = change;
    const standing = await this.#deps.relationships.standing(a, b, applicationId);
    for (const [viewer, subject] of [
      [a, b],
      [b, a],
    ] as const) {
      if (standing.friends) {
        await this.#publish(this.presenceOf(subject), { users: [viewer] });
      } else if (applicationId && standing.gameFriends) {
        await this.#publish(this.presenceOf(subject, applicationId), { users: [viewer], applicationId });
      } else if (ended) {
        await this.#publish(
          offline(subject),
          applicationId ? { users: [viewer], applicationId } : { users: [viewer] },
        );
      }
    }
  }

  // ---- Replication and fan-out ----

  #received(event: DeliveredEvent): void {
    if (event.type !== PRESENCE_SESSION_EVENT) return;
    const data = event.data as PresenceSessionData;
    this.#apply(data);
    if (data.origin !== this.#deps.nodeId) return;
    const userId = data.user_id;
    if (data.ended && !this.#sessions.has(userId) && this.#deps.lastSessionEnded) {
      this.#deps
        .lastSessionEnded(userId)
        .catch((error: unknown) =>
          this.#deps.logger.error({ err: error, userId }, 'presence: last session end failed'),
        );
    }
    // One chain per user keeps that user's PRESENCE_UPDATEs in the order of the changes.
    const previous = this.#chains.get(userId) ?? Promise.resolve();
    const next = previous
      .then(() => this.#tellFriends(userId))
      .catch((error: unknown) => this.#deps.logger.error({ err: error, userId }, 'presence fan-out failed'));
    this.#chains.set(userId, next);
    void next.then(() => {
      if (this.#chains.get(userId) === next) this.#chains.delete(userId);
    });
  }

  #statesOf(userId: string): readonly SessionState[] {
    const states = this.#sessions.get(userId);
    return states === undefined ? [] : Array.isArray(states) ? states : [states];
  }

  /** One session's presence, as this node keeps it. */
  #apply(data: PresenceSessionData): void {
    const userId = data.user_id;
    const sessions = this.#statesOf(userId);
    const at = sessions.findIndex((state) => state.sessionId === data.session_id);
    if (data.ended) {
      if (at === -1) return;
      const left = sessions.filter((_, index) => index !== at);
      if (left.length === 0) this.#sessions.delete(userId);
      else this.#sessions.set(userId, left.length === 1 ? (left[0] as SessionState) : left);
      return;
    }
    const previous = sessions[at];
    const state: SessionState = {
      // A change comes twice (applied here at once, then from the bus): the first one's strings are kept.
      sessionId: previous?.sessionId ?? data.session_id,
      applicationId: previous ? previous.applicationId : (data.application_id ?? undefined),
      status: data.status,
      activities: data.activities.length === 0 ? NO_ACTIVITIES : data.activities,
      updatedAt: msAfter(this.#clockOrigin, data.at),
    };
    if (sessions.length === 0) this.#sessions.set(userId, state);
    else if (at === -1) this.#sessions.set(userId, [...sessions, state]);
    else if (sessions.length === 1) this.#sessions.set(userId, state);
    else (sessions as SessionState[])[at] = state;
  }

  async #tellFriends(userId: string): Promise<void> {
    const presence = this.presenceOf(userId);
    const friends = await this.#deps.relationships.friendIds(userId);
    // With no friends nobody is told, so nothing is remembered: a friend made later is told by `relationshipChanged`.
    if (friends.length === 0) this.#told.delete(userId);
    else if (this.#changed(userId, presence)) await this.#publish(presence, { users: friends });
    // Game friends see the player's presence in that game only, and only while the player is in it.
    const platform = new Set(friends);
    for (const [applicationId, ids] of await this.#deps.relationships.gameFriendsByApplication(userId)) {
      const inGame = this.presenceOf(userId, applicationId);
      const users = ids.filter((id) => !platform.has(id));
      const key = `${userId}:${applicationId}`;
      if (users.length === 0) this.#told.delete(key);
      else if (this.#changed(key, inGame)) await this.#publish(inGame, { users, applicationId });
    }
  }

  #changed(key: string, presence: PresenceObject): boolean {
    // Friends assume offline until told otherwise, so only online users are remembered.
    const previous = this.#told.get(key);
    if (presence.status === PresenceStatuses.Offline) {
      this.#told.delete(key);
      return previous !== undefined;
    }
    const text = JSON.stringify(presence);
    if (previous === text) return false;
    this.#told.set(key, text);
    return true;
  }

  async #publish(
    presence: PresenceObject,
    audience: { users: readonly string[]; applicationId?: string },
  ): Promise<void> {
    await this.#deps.bus.publish({
      type: SocialDispatches.PresenceUpdate,
      data: presence as unknown as Record<string, unknown>,
      audience,
    });
  }
}

function offline(userId: string): PresenceObject {
  return { user: { id: userId }, status: PresenceStatuses.Offline, activities: [], client_status: {} };
}

/** An activity as others receive it: secrets stay on the server; a join secret shows as the JOIN flag. */
function publicActivity(activity: ActivityInput): Record<string, unknown> {
  const { secrets, buttons, ...rest } = activity;
  const joinable = secrets?.join ? ActivityFlags.Join : 0;
  return {
    ...rest,
    ...(buttons ? { buttons: buttons.map((button) => button.label) } : {}),
    flags: (activity.flags ?? 0) | joinable,
  };
}
