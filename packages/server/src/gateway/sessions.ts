import type { GatewayCloseCode, Scope } from '@hearth/protocol';

/** One dispatch as sent: kept so that a resumed session gets every event it missed. */
export interface Sent {
  seq: number;
  t: string;
  d: unknown;
  /** The bus event it came from: how a node taking the session over merges without gaps or repeats. */
  eventId?: string;
}

/**
 * The JSON of the last bus event's data: one event reaches every session it is for one after another (and
 * their copies to the store are queued in that order), so one slot serves them all. A slot, not a map keyed
 * by the data: a map's entries lived as long as the resume buffers holding the data, each event's text
 * beside its objects, and every young-generation collection walked them. The event id tells a service's
 * later publish of the same object, changed (an edit), from this one.
 */
let lastData: { d: object; eventId: string; text: string } | undefined;

/** `JSON.stringify(d)` of a bus event's dispatch, made once per event (lastData). */
export function dataJson(d: object, eventId: string): string {
  if (lastData?.d !== d || lastData.eventId !== eventId) lastData = { d, eventId, text: JSON.stringify(d) };
  return lastData.text;
}

/** A bus event's dispatch, whose data object every session the event reaches shares; others are one-offs. */
export function isShared(sent: Sent): sent is Sent & { d: object; eventId: string } {
  return sent.eventId !== undefined && typeof sent.d === 'object' && sent.d !== null;
}

/** `JSON.stringify(sent)`, a bus event's data made once (dataJson): how a dispatch is copied to the store. */
export function sentJson(sent: Sent): string {
  if (!isShared(sent)) return JSON.stringify(sent);
  const { seq, t, d, eventId } = sent;
  return `{"seq":${seq},"t":${JSON.stringify(t)},"d":${dataJson(d, eventId)},"eventId":${JSON.stringify(eventId)}}`;
}

/** Who a session stands for (from its Identify token). */
export interface SessionIdentity {
  kind: 'bot' | 'user' | 'bearer';
  userId: string;
  applicationId: string | undefined;
  scopes: ReadonlySet<Scope>;
  /** The token it identified with, hashed: a Resume must present the same credential. */
  tokenHash: string;
}

/** What a session starts with; the rest (`shard`, `largeThreshold`, `onRecord`…) is set when there is one. */
export interface SessionInit {
  id: string;
  identity: SessionIdentity;
  intents: number;
  seq: number;
  buffer: readonly Sent[];
  attached: SessionSink | undefined;
  guildIds: ReadonlySet<string>;
}

/**
 * One gateway session. Its identity's fields are its own and `identity` is the session itself: an identity
 * object of its own cost every session 64 bytes.
 */
export class Session implements SessionIdentity {
  readonly id: string;
  readonly kind: SessionIdentity['kind'];
  readonly userId: string;
  readonly applicationId: string | undefined;
  readonly scopes: ReadonlySet<Scope>;
  readonly tokenHash: string;
  intents: number;
  seq: number;
  /** Dispatches not yet known to be received, oldest first, bounded; shared NO_DISPATCHES until the first. */
  buffer: readonly Sent[];
  /** The live connection, or undefined while the client is away and may resume (until `awaitResume`'s time). */
  attached: SessionSink | undefined;
  /**
   * Guilds it can see: what `audience.guildId` is matched against. Changed only through `joinGuild` and
   * `leaveGuild`: sessions in no guild (most players) share one empty set.
   */
  guildIds: ReadonlySet<string>;
  // Declared, not initialized: a field each session had without a value would cost every session its slot.
  /** Identify `shard`, when given: [0, 1] otherwise. */
  declare shard?: readonly [number, number];
  /** Identify `large_threshold`, when given: above it a guild's GUILD_CREATE lists fewer members. */
  declare largeThreshold?: number;
  /** Called for every recorded dispatch: the gateway copies it to the shared session store. */
  declare onRecord?: (sent: Sent) => void;
  /**
   * Set on a session taken over from another node: the newest bus event it was filled with from the event
   * log, which can be ahead of this node's live delivery. Live events up to it are skipped, then it is cleared.
   */
  declare lastEventId?: string | undefined;

  constructor(init: SessionInit) {
    this.id = init.id;
    this.kind = init.identity.kind;
    this.userId = init.identity.userId;
    this.applicationId = init.identity.applicationId;
    this.scopes = init.identity.scopes;
    this.tokenHash = init.identity.tokenHash;
    this.intents = init.intents;
    this.seq = init.seq;
    this.buffer = init.buffer;
    this.attached = init.attached;
    this.guildIds = init.guildIds;
  }

  /** Who the session stands for: the session itself. */
  get identity(): SessionIdentity {
    return this;
  }
}

/** Where a session's dispatches go while a client is connected. */
export interface SessionSink {
  dispatch(sent: Sent): void;
  close(code: GatewayCloseCode, reason?: string): void;
}

const NO_GUILDS: ReadonlySet<string> = new Set();

/** The buffer of every session that has recorded nothing since READY (most idle players). */
export const NO_DISPATCHES: readonly Sent[] = Object.freeze([]);

/** A session's guild set: the shared empty one when there are none (an empty Set's table is ~290 bytes). */
export function guildSet(ids: Iterable<string>): ReadonlySet<string> {
  const set = new Set(ids);
  return set.size === 0 ? NO_GUILDS : set;
}

export function joinGuild(session: { guildIds: ReadonlySet<string> }, guildId: string): void {
  if (session.guildIds.has(guildId)) return;
  const set = session.guildIds === NO_GUILDS ? new Set<string>() : (session.guildIds as Set<string>);
  set.add(guildId);
  session.guildIds = set;
}

/** Whether the session was in the guild. */
export function leaveGuild(session: { guildIds: ReadonlySet<string> }, guildId: string): boolean {
  if (!session.guildIds.has(guildId)) return false;
  (session.guildIds as Set<string>).delete(guildId);
  return true;
}

/** Scope sets shared by the sessions granted the same scopes; bounded, since grants are few in practice. */
const scopeSets = new Map<string, ReadonlySet<Scope>>();
const SCOPE_SETS_KEPT = 256;

export function sharedScopes(scopes: Iterable<Scope>): ReadonlySet<Scope> {
  const sorted = [...new Set(scopes)].sort();
  const key = sorted.join(' ');
  let set = scopeSets.get(key);
  if (!set) {
    set = new Set(sorted);
    if (scopeSets.size < SCOPE_SETS_KEPT) scopeSets.set(key, set);
  }
  return set;
}

/** One copy of each game's id for all its players' sessions (each token lookup reads its own); bounded. */
const applicationIds = new Map<string, string>();
const APPLICATION_IDS_KEPT = 4096;

export function sharedApplicationId(id: string): string {
  const shared = applicationIds.get(id);
  if (shared !== undefined) return shared;
  if (applicationIds.size < APPLICATION_IDS_KEPT) applicationIds.set(id, id);
  return id;
}

/** Resume windows and buffer sizes (PROTOCOL.md §D.3: sessions stay resumable "for a few minutes"). */
export const RESUME_WINDOW_MS = 5 * 60 * 1000;
export const RESUME_BUFFER_SIZE = 2000;

/** One session, or several: most users have one, and an empty Set's table costs more than a session's fields. */
type Indexed = Session | Set<Session>;

/** The sessions of this node, indexed for fan-out by user and application. */
export class SessionRegistry {
  readonly #byId = new Map<string, Session>();
  readonly #byUser = new Map<string, Indexed>();
  readonly #byApplication = new Map<string, Indexed>();
  /**
   * When each detached session is forgotten: kept here for the few waiting for a Resume rather than as a
   * field (a boxed number) of every session.
   */
  readonly #expiresAt = new Map<Session, number>();

  add(session: Session): void {
    this.#byId.set(session.id, session);
    index(this.#byUser, session.identity.userId, session);
    if (session.identity.applicationId) index(this.#byApplication, session.identity.applicationId, session);
  }

  get(id: string): Session | undefined {
    return this.#byId.get(id);
  }

  remove(session: Session): void {
    this.#byId.delete(session.id);
    this.#expiresAt.delete(session);
    unindex(this.#byUser, session.identity.userId, session);
    if (session.identity.applicationId) unindex(this.#byApplication, session.identity.applicationId, session);
  }

  /** Sessions of these users (or of this application when no users are named). */
  candidates(audience: { users?: readonly string[]; applicationId?: string }): Iterable<Session> {
    if (audience.users) {
      const out: Session[] = [];
      for (const user of audience.users) {
        const indexed = this.#byUser.get(user);
        if (indexed instanceof Set) for (const session of indexed) out.push(session);
        else if (indexed) out.push(indexed);
      }
      return out;
    }
    if (audience.applicationId) {
      const indexed = this.#byApplication.get(audience.applicationId);
      return indexed instanceof Set ? indexed : indexed ? [indexed] : [];
    }
    return this.#byId.values();
  }

  all(): IterableIterator<Session> {
    return this.#byId.values();
  }

  get size(): number {
    return this.#byId.size;
  }

  /** The session is detached: it may be resumed until `expiresAt`, then `expired` lists it. */
  awaitResume(session: Session, expiresAt: number): void {
    this.#expiresAt.set(session, expiresAt);
  }

  /** The session is attached again: it no longer expires. */
  resumed(session: Session): void {
    this.#expiresAt.delete(session);
  }

  /** Detached sessions whose resume window has passed. */
  expired(now: number): Session[] {
    const expired: Session[] = [];
    for (const [session, expiresAt] of this.#expiresAt) {
      if (!session.attached && expiresAt <= now) expired.push(session);
    }
    return expired;
  }
}

function index(map: Map<string, Indexed>, key: string, session: Session): void {
  const indexed = map.get(key);
  if (indexed === undefined) map.set(key, session);
  else if (indexed instanceof Set) indexed.add(session);
  else if (indexed !== session) map.set(key, new Set([indexed, session]));
}

function unindex(map: Map<string, Indexed>, key: string, session: Session): void {
  const indexed = map.get(key);
  if (indexed === session) map.delete(key);
  else if (indexed instanceof Set) {
    indexed.delete(session);
    if (indexed.size === 1) map.set(key, indexed.values().next().value as Session);
    else if (indexed.size === 0) map.delete(key);
  }
}

/** Records a dispatch in the session and hands it to the live connection, if any. */
export function record(session: Session, t: string, d: unknown, eventId?: string): Sent {
  session.seq += 1;
  // Two literals rather than a spread: one allocation per recipient of every bus event.
  const sent: Sent = eventId !== undefined ? { seq: session.seq, t, d, eventId } : { seq: session.seq, t, d };
  session.onRecord?.(sent);
  // READY is never replayed: whoever resumes holds its session_id, so received it. An idle session would
  // otherwise keep its largest payload for as long as it lives.
  if (t !== 'READY') {
    if (session.buffer === NO_DISPATCHES) session.buffer = [sent];
    else {
      const buffer = session.buffer as Sent[];
      buffer.push(sent);
      // shift() drops the oldest without moving the rest (V8 trims the array's start); splice copied 2,000.
      while (buffer.length > RESUME_BUFFER_SIZE) buffer.shift();
    }
  }
  session.attached?.dispatch(sent);
  return sent;
}

/** The dispatches after `seq`, or undefined when the buffer no longer reaches back that far. */
export function missedSince(session: Session, seq: number): Sent[] | undefined {
  if (seq > session.seq || seq < 0) return undefined;
  // READY, always seq 1, is not buffered (see record): a resume from 0 misses nothing more than one from 1.
  const from = Math.max(seq, 1);
  const first = session.buffer[0];
  if (from < session.seq && (!first || first.seq > from + 1)) return undefined;
  return session.buffer.filter((sent) => sent.seq > from);
}
