import type { Redis } from 'ioredis';
import { RESUME_BUFFER_SIZE, RESUME_WINDOW_MS, type Sent } from './sessions.js';

/** What other nodes need to take a session over: everything but the live connection. */
export interface StoredSession {
  id: string;
  identity: {
    kind: 'bot' | 'user' | 'bearer';
    userId: string;
    applicationId: string | undefined;
    scopes: string[];
    tokenHash: string;
  };
  intents: number;
  shard: [number, number];
  guildIds: string[];
  /** The last bus event before the session began: where its history starts. */
  sinceEventId: string | undefined;
}

/**
 * Sessions shared by the nodes of a deployment, so that a client may resume on any node (PROTOCOL.md §D.3).
 * The owning node appends every dispatch; a node that takes a session over claims it, and from then on the
 * former owner's appends are refused.
 */
export interface SessionStore {
  create(session: StoredSession, owner: string): Promise<void>;
  /** Appends a dispatch; false when `owner` no longer owns the session. */
  append(sessionId: string, owner: string, sent: Sent): Promise<boolean>;
  /** The session without taking it (to start capturing its live events before the claim). */
  peek(sessionId: string): Promise<StoredSession | undefined>;
  /** Takes the session for `owner`; answers its buffered dispatches, oldest first. */
  claim(sessionId: string, owner: string): Promise<{ session: StoredSession; buffer: Sent[] } | undefined>;
  remove(sessionId: string): Promise<void>;
}

/** The store of one process: nodes in one process (tests) share an instance. */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, { session: StoredSession; owner: string; buffer: Sent[] }>();

  async create(session: StoredSession, owner: string): Promise<void> {
    this.#sessions.set(session.id, { session, owner, buffer: [] });
  }

  async append(sessionId: string, owner: string, sent: Sent): Promise<boolean> {
    const entry = this.#sessions.get(sessionId);
    if (!entry || entry.owner !== owner) return false;
    entry.buffer.push(sent);
    if (entry.buffer.length > RESUME_BUFFER_SIZE)
      entry.buffer.splice(0, entry.buffer.length - RESUME_BUFFER_SIZE);
    return true;
  }

  async peek(sessionId: string): Promise<StoredSession | undefined> {
    return this.#sessions.get(sessionId)?.session;
  }

  async claim(
    sessionId: string,
    owner: string,
  ): Promise<{ session: StoredSession; buffer: Sent[] } | undefined> {
    const entry = this.#sessions.get(sessionId);
    if (!entry) return undefined;
    entry.owner = owner;
    return { session: entry.session, buffer: [...entry.buffer] };
  }

  async remove(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }
}

// Append only while the caller still owns the session; keep the buffer bounded and both keys alive.
const APPEND = `if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`;

const CLAIM = `if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'owner', ARGV[1])
return {redis.call('HGET', KEYS[1], 'session'), redis.call('LRANGE', KEYS[2], 0, -1)}`;

type WithScripts = Redis & {
  hearthSessionAppend(
    meta: string,
    buffer: string,
    owner: string,
    sent: string,
    size: string,
    ttl: string,
  ): Promise<number>;
  hearthSessionClaim(meta: string, buffer: string, owner: string): Promise<[string, string[]] | null>;
};

/** Sessions in Redis: a hash (session, owner) and a list (the buffer), expiring with the resume window. */
export class RedisSessionStore implements SessionStore {
  readonly #redis: WithScripts;
  readonly #ttl = String(RESUME_WINDOW_MS * 2);

  constructor(redis: Redis) {
    redis.defineCommand('hearthSessionAppend', { numberOfKeys: 2, lua: APPEND });
    redis.defineCommand('hearthSessionClaim', { numberOfKeys: 2, lua: CLAIM });
    this.#redis = redis as WithScripts;
  }

  async create(session: StoredSession, owner: string): Promise<void> {
    await this.#redis
      .multi()
      .hset(meta(session.id), { session: JSON.stringify(session), owner })
      .pexpire(meta(session.id), Number(this.#ttl))
      .del(buffer(session.id))
      .exec();
  }

  async append(sessionId: string, owner: string, sent: Sent): Promise<boolean> {
    const appended = await this.#redis.hearthSessionAppend(
      meta(sessionId),
      buffer(sessionId),
      owner,
      JSON.stringify(sent),
      String(RESUME_BUFFER_SIZE),
      this.#ttl,
    );
    return appended === 1;
  }

  async peek(sessionId: string): Promise<StoredSession | undefined> {
    const raw = await this.#redis.hget(meta(sessionId), 'session');
    return raw === null ? undefined : (JSON.parse(raw) as StoredSession);
  }

  async claim(
    sessionId: string,
    owner: string,
  ): Promise<{ session: StoredSession; buffer: Sent[] } | undefined> {
    const answer = await this.#redis.hearthSessionClaim(meta(sessionId), buffer(sessionId), owner);
    if (!answer) return undefined;
    const [session, sent] = answer;
    return { session: JSON.parse(session) as StoredSession, buffer: sent.map((s) => JSON.parse(s) as Sent) };
  }

  async remove(sessionId: string): Promise<void> {
    await this.#redis.del(meta(sessionId), buffer(sessionId));
  }
}

const meta = (id: string) => `gw:session:${id}`;
const buffer = (id: string) => `gw:buffer:${id}`;
