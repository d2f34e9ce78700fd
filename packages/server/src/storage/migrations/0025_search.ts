import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Guild message search (GUILDS.md §4.11): one document per guild message with the columns its filters read
 * (ordinary indexes), the multi-valued facets beside it, and the words of its content in a real full-text
 * index — SQLite FTS5 (contentless, keyed by `doc_id`, the message's snowflake) or a PostgreSQL `tsvector` under GIN. A document
 * goes with its message by cascade, in the deleting transaction (FTS5 rows follow by trigger).
 */
export const search: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    await db.schema
      .createTable('message_search_documents')
      // SQLite: the message's snowflake as an integer, the FTS5 rowid too (key order is time order).
      .addColumn('doc_id', sqlite ? 'integer' : 'bigint', (c) =>
        sqlite ? c.primaryKey() : c.primaryKey().generatedAlwaysAsIdentity(),
      )
      .addColumn('message_id', 'text', (c) =>
        c.notNull().unique().references('messages.id').onDelete('cascade'),
      )
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('author_id', 'text', (c) => c.notNull())
      // 1 user, 2 bot, 3 webhook (search/documents.ts AuthorKinds).
      .addColumn('author_type', 'integer', (c) => c.notNull())
      // Bits of what the message has (search/documents.ts HasBits).
      .addColumn('has', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('mention_everyone', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    for (const [name, columns] of [
      ['message_search_documents_guild', ['guild_id', 'created_at']],
      ['message_search_documents_channel', ['guild_id', 'channel_id', 'created_at']],
      ['message_search_documents_author', ['guild_id', 'author_id', 'created_at']],
    ] as const) {
      await db.schema
        .createIndex(name)
        .on('message_search_documents')
        .columns([...columns])
        .execute();
    }

    // Facets a message has several of: mentioned users and roles, replied-to message and author, link
    // hostnames, attachment names and extensions, embed types and providers.
    await db.schema
      .createTable('message_search_terms')
      .addColumn('message_id', 'text', (c) => c.notNull().references('messages.id').onDelete('cascade'))
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_search_terms_pk', ['message_id', 'kind', 'value'])
      .execute();
    await db.schema
      .createIndex('message_search_terms_lookup')
      .on('message_search_terms')
      .columns(['guild_id', 'kind', 'value'])
      .execute();

    if (sqlite) {
      await sql`CREATE VIRTUAL TABLE message_search_fts USING fts5(body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')`.execute(
        db,
      );
      await sql`CREATE TRIGGER message_search_documents_fts_delete AFTER DELETE ON message_search_documents
        BEGIN DELETE FROM message_search_fts WHERE rowid = old.doc_id; END`.execute(db);
    } else {
      await sql`ALTER TABLE message_search_documents ADD COLUMN content_tsv tsvector NOT NULL DEFAULT ''::tsvector`.execute(
        db,
      );
      await sql`CREATE INDEX message_search_documents_tsv ON message_search_documents USING gin (content_tsv)`.execute(
        db,
      );
    }

    // A guild whose index is being built (a row) or is complete (no row): new guilds index from the start.
    await db.schema
      .createTable('message_search_guilds')
      .addColumn('guild_id', 'text', (c) => c.primaryKey().references('guilds.id').onDelete('cascade'))
      .addColumn('documents_indexed', 'bigint', (c) => c.notNull().defaultTo(0))
      // The last message indexed, in (created_at, id) order; null before the first batch.
      .addColumn('cursor_created_at', 'bigint')
      .addColumn('cursor_id', 'text')
      // No batch runs before this instant (the `retry_after` a search is told).
      .addColumn('not_before', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('started_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    // Rebuild batches walk one guild's messages in order.
    await db.schema
      .createIndex('messages_guild_order')
      .on('messages')
      .columns(['guild_id', 'created_at', 'id'])
      .execute();
    // Messages stored before this index existed are indexed by the background job, guild by guild.
    await sql`INSERT INTO message_search_guilds (guild_id)
      SELECT DISTINCT guild_id FROM messages WHERE guild_id IS NOT NULL`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('messages_guild_order').execute();
    await db.schema.dropTable('message_search_guilds').execute();
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await sql`DROP TRIGGER message_search_documents_fts_delete`.execute(db);
      await sql`DROP TABLE message_search_fts`.execute(db);
    }
    await db.schema.dropTable('message_search_terms').execute();
    await db.schema.dropTable('message_search_documents').execute();
  },
};
