import { snowflakeTimestamp } from '@hearth/protocol';
import { type Generated, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Engine, Executor } from '../../storage/database.js';
import type { MessagesTable, Schema } from '../../storage/schema.js';
import type { SearchDocument, TermKind } from './documents.js';

/**
 * The search index's tables (0025_search). They are the search domain's own, declared here rather than in
 * the shared schema; `messages` is read (never written) as the source the documents are made from.
 */
type SearchDocumentsTable = {
  doc_id: Generated<number>;
  message_id: string;
  guild_id: string;
  channel_id: string;
  author_id: string;
  author_type: number;
  has: number;
  mention_everyone: number;
  created_at: number;
};

type SearchTermsTable = {
  message_id: string;
  guild_id: string;
  kind: string;
  value: string;
};

type SearchGuildsTable = {
  guild_id: string;
  documents_indexed: Generated<number>;
  cursor_created_at: number | null;
  cursor_id: string | null;
  not_before: Generated<number>;
  started_at: Generated<number>;
};

type SearchTables = {
  message_search_documents: SearchDocumentsTable;
  message_search_terms: SearchTermsTable;
  message_search_guilds: SearchGuildsTable;
};

export type MessageRow = Selectable<MessagesTable>;
export type IndexState = Selectable<SearchGuildsTable>;

function tables(db: Executor): Kysely<Schema & SearchTables> {
  return (db as Kysely<Schema>).withTables<SearchTables>();
}

// ---- Documents (written in the message's own transaction) ----

/** Stores a message's document: its row, its facets and its words (FTS5 row or `tsvector`). */
export async function insertDocument(db: Executor, engine: Engine, doc: SearchDocument): Promise<void> {
  const row = {
    message_id: doc.messageId,
    guild_id: doc.guildId,
    channel_id: doc.channelId,
    author_id: doc.authorId,
    author_type: doc.authorType,
    has: doc.has,
    mention_everyone: doc.mentionEveryone ? 1 : 0,
    created_at: doc.createdAt,
  };
  if (engine === 'sqlite') {
    // The key is the snowflake (below 2^63, bound as a bigint): key order is time order.
    const docId = BigInt(doc.messageId);
    await tables(db)
      .insertInto('message_search_documents')
      .values({ ...row, doc_id: sql<number>`${docId}` })
      .execute();
    await sql`INSERT INTO message_search_fts (rowid, body) VALUES (${docId}, ${doc.text})`.execute(db);
  } else {
    await tables(db)
      .insertInto('message_search_documents')
      .values({ ...row, content_tsv: sql`to_tsvector('simple', ${doc.text})` } as typeof row)
      .execute();
  }
  if (doc.terms.length > 0) {
    await tables(db)
      .insertInto('message_search_terms')
      .values(
        doc.terms.map(([kind, value]) => ({ message_id: doc.messageId, guild_id: doc.guildId, kind, value })),
      )
      .execute();
  }
}

/** Removes messages' documents (their FTS5 rows go by trigger). */
export async function deleteDocuments(db: Executor, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await tables(db)
    .deleteFrom('message_search_terms')
    .where('message_id', 'in', [...messageIds])
    .execute();
  await tables(db)
    .deleteFrom('message_search_documents')
    .where('message_id', 'in', [...messageIds])
    .execute();
}

/** Removes every document of a guild (a rebuild starts from nothing). */
export async function deleteGuildDocuments(db: Executor, guildId: string): Promise<void> {
  await tables(db).deleteFrom('message_search_terms').where('guild_id', '=', guildId).execute();
  await tables(db).deleteFrom('message_search_documents').where('guild_id', '=', guildId).execute();
}

// ---- The source: messages (read only) ----

export function findMessage(db: Executor, id: string): Promise<MessageRow | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function authorsOf(db: Executor, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'author_id'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((row) => [row.id, row.author_id]));
}

/**
 * The next `limit` messages of a guild after the cursor, in (created_at, id) order. On PostgreSQL they are
 * share-locked until the batch commits, so an edit or a delete waits instead of racing the batch.
 */
export function guildMessagesAfter(
  db: Executor,
  engine: Engine,
  guildId: string,
  cursor: { createdAt: number; id: string } | undefined,
  limit: number,
): Promise<MessageRow[]> {
  let query = db.selectFrom('messages').selectAll().where('guild_id', '=', guildId);
  if (cursor)
    query = query.where((eb) =>
      eb.or([
        eb('created_at', '>', cursor.createdAt),
        eb.and([eb('created_at', '=', cursor.createdAt), eb('id', '>', cursor.id)]),
      ]),
    );
  query = query.orderBy('created_at').orderBy('id').limit(limit);
  if (engine === 'postgres') query = query.forShare();
  return query.execute();
}

// ---- Index state per guild ----

export function findState(db: Executor, guildId: string): Promise<IndexState | undefined> {
  return tables(db)
    .selectFrom('message_search_guilds')
    .selectAll()
    .where('guild_id', '=', guildId)
    .executeTakeFirst();
}

/** Starts (or restarts) building a guild's index from its first message. */
export async function startBuilding(
  db: Executor,
  guildId: string,
  startedAt: number,
  notBefore: number,
): Promise<void> {
  const row = {
    guild_id: guildId,
    documents_indexed: 0,
    cursor_created_at: null,
    cursor_id: null,
    not_before: notBefore,
    started_at: startedAt,
  };
  await tables(db)
    .insertInto('message_search_guilds')
    .values(row)
    .onConflict((oc) =>
      oc.column('guild_id').doUpdateSet({
        documents_indexed: 0,
        cursor_created_at: null,
        cursor_id: null,
        not_before: notBefore,
        started_at: startedAt,
      }),
    )
    .execute();
}

export async function advanceState(
  db: Executor,
  guildId: string,
  indexed: number,
  cursor: { createdAt: number; id: string },
): Promise<void> {
  await tables(db)
    .updateTable('message_search_guilds')
    .set((eb) => ({
      documents_indexed: eb('documents_indexed', '+', indexed),
      cursor_created_at: cursor.createdAt,
      cursor_id: cursor.id,
    }))
    .where('guild_id', '=', guildId)
    .execute();
}

/** The guild's index is complete: searches are answered. */
export async function finishBuilding(db: Executor, guildId: string): Promise<void> {
  await tables(db).deleteFrom('message_search_guilds').where('guild_id', '=', guildId).execute();
}

/** The guild's next batch waits until `notBefore`. */
export async function pauseBuilding(db: Executor, guildId: string, notBefore: number): Promise<void> {
  await tables(db)
    .updateTable('message_search_guilds')
    .set({ not_before: notBefore })
    .where('guild_id', '=', guildId)
    .execute();
}

/** When the soonest batch of any guild being built is due; undefined when none is being built. */
export async function nextDue(db: Executor): Promise<number | undefined> {
  const row = await tables(db)
    .selectFrom('message_search_guilds')
    .select((eb) => eb.fn.min('not_before').as('next'))
    .executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}

/** Guilds being built whose next batch is due, oldest rebuild first. */
export async function dueGuilds(db: Executor, now: number): Promise<IndexState[]> {
  return tables(db)
    .selectFrom('message_search_guilds')
    .selectAll()
    .where('not_before', '<=', now)
    .orderBy('started_at')
    .execute();
}

// ---- Queries ----

/** A facet filter: the message has one of `values` as a `kind` term. */
export interface TermFilter {
  kind: TermKind;
  values: readonly string[];
}

/** A search as the index runs it; the service has checked and resolved every field. */
export interface IndexQuery {
  guildId: string;
  /** The channels searched: readable ones only, never empty. */
  channelIds: readonly string[];
  /** Content words, all required; an empty list matches nothing. Undefined: no content filter. */
  words: readonly string[] | undefined;
  authorIds: readonly string[];
  authorTypes: { include: readonly number[]; exclude: readonly number[] };
  /** Bits every result has, and bits none has. */
  has: { all: number; none: number };
  terms: readonly TermFilter[];
  mentionEveryone: boolean | undefined;
  pinned: boolean | undefined;
  minId: string | undefined;
  maxId: string | undefined;
  /**
   * A bot without message-content access: filters on content match only messages whose content it reads
   * (its own and those mentioning it; content-access.ts).
   */
  contentReader: string | undefined;
  sortBy: 'timestamp' | 'relevance';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** The total of matching messages and one page of them. */
export async function search(
  db: Executor,
  engine: Engine,
  query: IndexQuery,
): Promise<{ total: number; rows: MessageRow[] }> {
  if (query.words !== undefined && query.words.length === 0) return { total: 0, rows: [] };
  const { from, conditions, rank, byTime } = plan(engine, query);
  const where = sql.join(conditions, sql` AND `);
  const counted = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${from} WHERE ${where}`.execute(
    db,
  );
  const total = Number(counted.rows[0]?.n ?? 0);
  if (total === 0 || query.offset >= total) return { total, rows: [] };
  const newest = byTime('DESC');
  const order =
    query.sortBy === 'relevance' && rank
      ? sql`${rank}, ${newest}`
      : byTime(query.sortOrder === 'asc' ? 'ASC' : 'DESC');
  const page = await sql<{ message_id: string }>`SELECT d.message_id FROM ${from} WHERE ${where}
    ORDER BY ${order} LIMIT ${query.limit} OFFSET ${query.offset}`.execute(db);
  const ids = page.rows.map((row) => row.message_id);
  const rows =
    ids.length === 0 ? [] : await db.selectFrom('messages').selectAll().where('id', 'in', ids).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return { total, rows: ids.flatMap((id) => byId.get(id) ?? []) };
}

function plan(
  engine: Engine,
  query: IndexQuery,
): {
  from: RawBuilder<unknown>;
  conditions: RawBuilder<unknown>[];
  rank: RawBuilder<unknown> | undefined;
  byTime: (direction: 'ASC' | 'DESC') => RawBuilder<unknown>;
} {
  const conditions: RawBuilder<unknown>[] = [
    sql`d.guild_id = ${query.guildId}`,
    sql`d.channel_id IN (${sql.join(query.channelIds)})`,
  ];
  // Messages are joined only for what the documents do not hold (`pinned` is the pin routes' to change).
  const messages = query.pinned === undefined ? sql`` : sql` JOIN messages m ON m.id = d.message_id`;
  let from = sql`message_search_documents d${messages}`;
  let rank: RawBuilder<unknown> | undefined;
  // On SQLite a document's key is its message's snowflake, so key order is time order: the FTS5 match
  // streams in it and a page stops early. PostgreSQL orders by the instant, then the id.
  let byTime = (direction: 'ASC' | 'DESC') =>
    engine === 'sqlite'
      ? sql`d.doc_id ${sql.raw(direction)}`
      : sql`d.created_at ${sql.raw(direction)}, d.message_id ${sql.raw(direction)}`;
  let onContent = false;
  if (query.words !== undefined) {
    if (engine === 'sqlite') {
      // Each word quoted: the query is words, never FTS5 syntax.
      const match = query.words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' ');
      from = sql`message_search_fts JOIN message_search_documents d ON d.doc_id = message_search_fts.rowid${messages}`;
      conditions.push(sql`message_search_fts MATCH ${match}`);
      rank = sql`message_search_fts.rank ASC`;
      byTime = (direction) => sql`message_search_fts.rowid ${sql.raw(direction)}`;
    } else {
      const text = query.words.join(' ');
      conditions.push(sql`d.content_tsv @@ plainto_tsquery('simple', ${text})`);
      rank = sql`ts_rank(d.content_tsv, plainto_tsquery('simple', ${text})) DESC`;
    }
    onContent = true;
  }
  if (query.authorIds.length > 0) conditions.push(sql`d.author_id IN (${sql.join(query.authorIds)})`);
  if (query.authorTypes.include.length > 0)
    conditions.push(sql`d.author_type IN (${sql.join(query.authorTypes.include)})`);
  if (query.authorTypes.exclude.length > 0)
    conditions.push(sql`d.author_type NOT IN (${sql.join(query.authorTypes.exclude)})`);
  if (query.has.all !== 0) {
    conditions.push(sql`(d.has & ${query.has.all}) = ${query.has.all}`);
    onContent = true;
  }
  if (query.has.none !== 0) {
    conditions.push(sql`(d.has & ${query.has.none}) = 0`);
    onContent = true;
  }
  for (const term of query.terms) {
    conditions.push(sql`d.message_id IN (SELECT t.message_id FROM message_search_terms t
      WHERE t.guild_id = ${query.guildId} AND t.kind = ${term.kind} AND t.value IN (${sql.join(term.values)}))`);
    if (CONTENT_TERMS.has(term.kind)) onContent = true;
  }
  if (query.mentionEveryone !== undefined)
    conditions.push(sql`d.mention_everyone = ${query.mentionEveryone ? 1 : 0}`);
  if (query.pinned !== undefined) conditions.push(sql`m.pinned = ${query.pinned ? 1 : 0}`);
  if (query.minId !== undefined) conditions.push(after(query.minId));
  if (query.maxId !== undefined) conditions.push(before(query.maxId));
  if (query.contentReader !== undefined && onContent) {
    const reader = query.contentReader;
    conditions.push(sql`(d.author_id = ${reader} OR EXISTS (SELECT 1 FROM message_search_terms r
      WHERE r.message_id = d.message_id AND r.kind = 'mention' AND r.value = ${reader}))`);
  }
  return { from, conditions, rank, byTime };
}

/** Facets that come from a message's content (the message-content rule covers them). */
const CONTENT_TERMS: ReadonlySet<TermKind> = new Set<TermKind>([
  'link_hostname',
  'attachment_filename',
  'attachment_extension',
  'embed_type',
  'embed_provider',
]);

/** Snowflake order: the id's instant first, then the id (ids of one millisecond have one length). */
function after(id: string): RawBuilder<unknown> {
  const ms = snowflakeTimestamp(id);
  return sql`(d.created_at > ${ms} OR (d.created_at = ${ms} AND d.message_id > ${id}))`;
}

function before(id: string): RawBuilder<unknown> {
  const ms = snowflakeTimestamp(id);
  return sql`(d.created_at < ${ms} OR (d.created_at = ${ms} AND d.message_id < ${id}))`;
}
