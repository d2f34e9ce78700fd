import { sql } from 'kysely';
import type { Storage } from '../storage/database.js';
import { jsonTextArray } from '../storage/json-text-array.js';
import { RESUME_BUFFER_SIZE, type Sent, sentJson } from './sessions.js';

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
  shard: readonly [number, number];
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
  create(session: StoredSession, owner: string, now: number): Promise<void>;
  /** Appends a dispatch; false when `owner` no longer owns the session. Appends land in call order. */
  append(sessionId: string, owner: string, sent: Sent): Promise<boolean>;
  /** The session without taking it (to start capturing its live events before the claim). */
  peek(sessionId: string): Promise<StoredSession | undefined>;
  /** Takes the session for `owner`; answers its buffered dispatches, oldest first. */
  claim(
    sessionId: string,
    owner: string,
    now: number,
  ): Promise<{ session: StoredSession; buffer: Sent[] } | undefined>;
  remove(sessionId: string): Promise<void>;
  /**
   * `owner` still holds these sessions (connected, or waiting for a Resume within their window). A session
   * lives as long as its owner keeps saying so, however long it goes without an event.
   */
  hold(owner: string, sessionIds: readonly string[], now: number): Promise<void>;
  /** Removes the sessions nobody has held since `before`: their node died and their window has passed. */
  removeAbandoned(before: number): Promise<void>;
  /** Resolves once every append made so far is written (before the storage closes). */
  flush(): Promise<void>;
}

/** The store of one process: nodes in one process (tests) share an instance. */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<
    string,
    { session: StoredSession; owner: string; buffer: Sent[]; heldAt: number }
  >();

  async create(session: StoredSession, owner: string, now: number): Promise<void> {
    this.#sessions.set(session.id, { session, owner, buffer: [], heldAt: now });
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
    now: number,
  ): Promise<{ session: StoredSession; buffer: Sent[] } | undefined> {
    const entry = this.#sessions.get(sessionId);
    if (!entry) return undefined;
    entry.owner = owner;
    entry.heldAt = now;
    return { session: entry.session, buffer: [...entry.buffer] };
  }

  async remove(sessionId: string): Promise<void> {
    this.#sessions.delete(sessionId);
  }

  async hold(owner: string, sessionIds: readonly string[], now: number): Promise<void> {
    for (const id of sessionIds) {
      const entry = this.#sessions.get(id);
      if (entry?.owner === owner) entry.heldAt = now;
    }
  }

  async removeAbandoned(before: number): Promise<void> {
    for (const [id, entry] of this.#sessions) if (entry.heldAt < before) this.#sessions.delete(id);
  }

  async flush(): Promise<void> {}
}

/** Rows one statement writes or names at most (SQLite allows 32,766 parameters; three per row). */
const CHUNK = 500;
/** Old dispatches of a session are deleted each time its seq passes a multiple of this. */
const TRIM_EVERY = 100;
/**
 * On PostgreSQL, a write of copies starts this long after the one before it began, unless a whole CHUNK
 * waits: one commit (one WAL flush) for the dispatches of that time, not one per turn. At 5,000 dispatches/s
 * the copies made about 700 commits a second, and the event log's appends waited behind them. A copy later
 * by this much loses nothing: a node taking a session over reads the event log after the last copy it
 * finds. SQLite's commits (WAL, synchronous NORMAL) do not wait for the disk: there copies go at once.
 */
const POSTGRES_WRITE_GAP_MS = 10;

interface PendingAppend {
  sessionId: string;
  owner: string;
  sent: Sent;
  settle: (owned: boolean) => void;
  fail: (error: unknown) => void;
}

/**
 * Sessions in the deployment's database: they outlive a Redis restart or outage and any one node. The
 * dispatches of one event loop turn are written together in one transaction, so fan-out to many sessions
 * costs one round trip, not one per session. An append and a claim of one session never interleave: on
 * PostgreSQL the append reads its ownership FOR SHARE and the claim updates the row; SQLite has one writer.
 */
export class DatabaseSessionStore implements SessionStore {
  readonly #storage: Storage;
  #pending: PendingAppend[] = [];
  #scheduled = false;
  #writing = false;
  /** When the last write of copies began (ms, this process's clock). */
  #lastWrite = 0;
  /** Settles when the current drain has written everything. */
  #drained: Promise<void> = Promise.resolve();

  constructor(storage: Storage) {
    this.#storage = storage;
  }

  async create(session: StoredSession, owner: string, now: number): Promise<void> {
    await this.#storage.db
      .insertInto('gateway_sessions')
      .values({ id: session.id, owner, session: JSON.stringify(session), touched_at: now })
      .execute();
  }

  append(sessionId: string, owner: string, sent: Sent): Promise<boolean> {
    return new Promise((settle, fail) => {
      this.#pending.push({ sessionId, owner, sent, settle, fail });
      if (this.#scheduled || this.#writing) return;
      this.#scheduled = true;
      this.#drained = new Promise((done) => setImmediate(() => void this.#drain().finally(done)));
    });
  }

  flush(): Promise<void> {
    return this.#drained;
  }

  async peek(sessionId: string): Promise<StoredSession | undefined> {
    const row = await this.#storage.db
      .selectFrom('gateway_sessions')
      .select('session')
      .where('id', '=', sessionId)
      .executeTakeFirst();
    return row && (JSON.parse(row.session) as StoredSession);
  }

  async claim(
    sessionId: string,
    owner: string,
    now: number,
  ): Promise<{ session: StoredSession; buffer: Sent[] } | undefined> {
    return this.#storage.transaction(async (tx) => {
      const updated = await tx
        .updateTable('gateway_sessions')
        .set({ owner, touched_at: now })
        .where('id', '=', sessionId)
        .returning('session')
        .executeTakeFirst();
      if (!updated) return undefined;
      const sent = await tx
        .selectFrom('gateway_session_dispatches')
        .select('sent')
        .where('session_id', '=', sessionId)
        .orderBy('seq')
        .execute();
      return {
        session: JSON.parse(updated.session) as StoredSession,
        buffer: sent.map((row) => JSON.parse(row.sent) as Sent),
      };
    });
  }

  // One statement each (its dispatches go by the foreign key's cascade): no transaction held open.
  async remove(sessionId: string): Promise<void> {
    await this.#storage.db.deleteFrom('gateway_sessions').where('id', '=', sessionId).execute();
  }

  async hold(owner: string, sessionIds: readonly string[], now: number): Promise<void> {
    for (let i = 0; i < sessionIds.length; i += CHUNK) {
      await this.#storage.db
        .updateTable('gateway_sessions')
        .set({ touched_at: now })
        .where('owner', '=', owner)
        .where('id', 'in', sessionIds.slice(i, i + CHUNK))
        .execute();
    }
  }

  async removeAbandoned(before: number): Promise<void> {
    await this.#storage.db.deleteFrom('gateway_sessions').where('touched_at', '<', before).execute();
  }

  /** Writes what was appended meanwhile, oldest first, until nothing is left. */
  async #drain(): Promise<void> {
    this.#scheduled = false;
    this.#writing = true;
    try {
      while (this.#pending.length > 0) {
        if (this.#storage.engine === 'postgres') {
          const wait = this.#lastWrite + POSTGRES_WRITE_GAP_MS - performance.now();
          if (wait > 0 && this.#pending.length < CHUNK)
            await new Promise((resume) => setTimeout(resume, wait));
          this.#lastWrite = performance.now();
        }
        const batch = this.#pending.splice(0, CHUNK);
        try {
          const owned = await this.#write(batch);
          for (const append of batch) append.settle(owned.has(ownership(append)));
        } catch (error) {
          for (const append of batch) append.fail(error);
        }
      }
    } finally {
      this.#writing = false;
    }
  }

  /** Inserts the dispatches of the sessions their appender still owns; answers those (session, owner) pairs. */
  async #write(batch: PendingAppend[]): Promise<Set<string>> {
    return this.#storage.engine === 'postgres' ? this.#writePostgres(batch) : this.#writeSqlite(batch);
  }

  /**
   * One autocommit statement, one round trip: the ownership rows read FOR SHARE (a claim's update waits for
   * it to commit, or commits first and this one reads the new owner), the owned dispatches inserted and the
   * old ones trimmed. Arrays as parameters: one statement text whatever the batch holds.
   */
  async #writePostgres(batch: PendingAppend[]): Promise<Set<string>> {
    // Per session and appender, as on SQLite, where each owned session's rows are trimmed after the insert.
    const ranges = new Map<string, { sessionId: string; owner: string; first: number; last: number }>();
    for (const { sessionId, owner, sent } of batch) {
      const range = ranges.get(ownership({ sessionId, owner }));
      if (range) range.last = Math.max(range.last, sent.seq);
      else ranges.set(ownership({ sessionId, owner }), { sessionId, owner, first: sent.seq, last: sent.seq });
    }
    const trims = [...ranges.values()].filter(trimDue);
    const { rows } = await sql<{ id: string; owner: string }>`WITH given AS (
        SELECT * FROM unnest(${batch.map((append) => append.sessionId)}::text[],
          ${batch.map((append) => append.owner)}::text[], ${batch.map((append) => append.sent.seq)}::integer[],
          ${jsonTextArray(batch.map((append) => sentJson(append.sent)))}) AS given(session_id, owner, seq, sent)
      ), owned AS (
        SELECT id, owner FROM gateway_sessions
        WHERE (id, owner) IN (SELECT session_id, owner FROM given)
        FOR SHARE
      ), inserted AS (
        INSERT INTO gateway_session_dispatches (session_id, seq, sent)
        SELECT given.session_id, given.seq, given.sent
        FROM given JOIN owned ON owned.id = given.session_id AND owned.owner = given.owner
        ON CONFLICT (session_id, seq) DO NOTHING
      ), trimmed AS (
        DELETE FROM gateway_session_dispatches AS dispatch
        USING unnest(${trims.map((trim) => trim.sessionId)}::text[], ${trims.map((trim) => trim.owner)}::text[],
          ${trims.map((trim) => trim.last - RESUME_BUFFER_SIZE)}::integer[]) AS due(session_id, owner, through)
        WHERE (due.session_id, due.owner) IN (SELECT id, owner FROM owned)
          AND dispatch.session_id = due.session_id AND dispatch.seq <= due.through
      )
      SELECT id, owner FROM owned`.execute(this.#storage.db);
    return new Set(rows.map((row) => `${row.id} ${row.owner}`));
  }

  /** One transaction under SQLite's write lock: the ownership read, the insert, the trims. */
  async #writeSqlite(batch: PendingAppend[]): Promise<Set<string>> {
    const owners = new Map<string, Set<string>>();
    for (const { owner, sessionId } of batch) {
      const ids = owners.get(owner) ?? new Set<string>();
      ids.add(sessionId);
      owners.set(owner, ids);
    }
    return this.#storage.transaction(async (tx) => {
      const owned = new Set<string>();
      for (const [owner, ids] of owners) {
        const rows = await tx
          .selectFrom('gateway_sessions')
          .select('id')
          .where('owner', '=', owner)
          .where('id', 'in', [...ids])
          .execute();
        for (const row of rows) owned.add(`${row.id} ${owner}`);
      }
      const rows = batch
        .filter((append) => owned.has(ownership(append)))
        .map(({ sessionId, sent }) => ({ session_id: sessionId, seq: sent.seq, sent: sentJson(sent) }));
      if (rows.length === 0) return owned;
      await tx
        .insertInto('gateway_session_dispatches')
        .values(rows)
        .onConflict((conflict) => conflict.columns(['session_id', 'seq']).doNothing())
        .execute();
      for (const [sessionId, range] of seqRanges(rows)) {
        if (!trimDue(range)) continue;
        await tx
          .deleteFrom('gateway_session_dispatches')
          .where('session_id', '=', sessionId)
          .where('seq', '<=', range.last - RESUME_BUFFER_SIZE)
          .execute();
      }
      return owned;
    });
  }
}

/** A session's old dispatches go each time a batch takes its seq past a multiple of TRIM_EVERY. */
const trimDue = ({ first, last }: { first: number; last: number }) =>
  last > RESUME_BUFFER_SIZE && Math.floor(last / TRIM_EVERY) !== Math.floor((first - 1) / TRIM_EVERY);

const ownership = (append: { sessionId: string; owner: string }) => `${append.sessionId} ${append.owner}`;

function seqRanges(
  rows: { session_id: string; seq: number }[],
): Map<string, { first: number; last: number }> {
  const ranges = new Map<string, { first: number; last: number }>();
  for (const { session_id, seq } of rows) {
    const range = ranges.get(session_id);
    if (!range) ranges.set(session_id, { first: seq, last: seq });
    else range.last = Math.max(range.last, seq);
  }
  return ranges;
}
