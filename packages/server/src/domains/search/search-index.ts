import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { MessageSearchIndex } from '../channel-messages/service.js';
import { documentOf, type IndexedMessage } from './documents.js';
import * as store from './store.js';

export interface SearchIndexDeps {
  storage: Storage;
  clock: Clock;
  users: { getUserIn(db: Executor, id: string): Promise<{ bot: boolean } | undefined> };
  /** Files of messages, as their objects carry them (channel-messages attachments). */
  attachments?: {
    objectsOf(
      db: Executor,
      messageIds: readonly string[],
    ): Promise<Map<string, readonly { filename: string; content_type?: string | null | undefined }[]>>;
  };
  /** Messages per background batch; default BATCH_SIZE. */
  batchSize?: number;
}

/** Messages indexed per batch of the background job. */
export const BATCH_SIZE = 500;

/** A guild's next batch is due this long after the last one (by the injected clock). */
export const BATCH_PAUSE_MS = 10;

/** Batches one run does at most; the timer's next run goes on (shutdown never waits for a whole guild). */
const BATCHES_PER_RUN = 40;

/**
 * A rebuild's first batch waits this long: the `retry_after` (seconds) a search is told meanwhile is the
 * platform's example value (GUILDS.md §4.11).
 */
export const REBUILD_DELAY_MS = 2000;

/** How a guild's index stands while it is built: what a search answers with 202 (110000). */
export interface BuildingState {
  documentsIndexed: number;
  /** Seconds until the next batch; 0: retry shortly. */
  retryAfter: number;
}

type Row = store.MessageRow;

/**
 * The guild message search index. Message writes call `index` inside their own transaction (deletes need
 * no call: a document goes with its message by cascade, 0025_search). Guilds whose messages predate the
 * index, and guilds an operator rebuilds, are indexed by a background job in batches (`runBatches`).
 */
export class SearchIndex implements MessageSearchIndex {
  readonly #deps: SearchIndexDeps;
  /** Batches never overlap, whether the timer or a caller runs them. */
  #running: Promise<number> = Promise.resolve(0);

  constructor(deps: SearchIndexDeps) {
    this.#deps = deps;
  }

  /** (Re)indexes one message in the writer's transaction: a guild message gets its current document. */
  async index(tx: Executor, messageId: string): Promise<void> {
    const row = await store.findMessage(tx, messageId);
    await store.deleteDocuments(tx, [messageId]);
    if (!row || row.guild_id === null) return;
    await this.#indexRows(tx, [row]);
  }

  /** The guild's index state: undefined when searches are answered, else how far its build has come. */
  async building(db: Executor, guildId: string): Promise<BuildingState | undefined> {
    const state = await store.findState(db, guildId);
    if (!state) return undefined;
    const wait = Number(state.not_before) - this.#deps.clock.now();
    return {
      documentsIndexed: Number(state.documents_indexed),
      retryAfter: Math.max(0, Math.round(wait / 1000)),
    };
  }

  /**
   * `hearth search rebuild --guild <id>`: drops the guild's documents and builds them again in the
   * background; until done, its searches answer 202 (110000). 10004 for an unknown guild.
   */
  async rebuild(guildId: string): Promise<void> {
    await this.#deps.storage.transaction(async (tx) => {
      const guild = await tx.selectFrom('guilds').select('id').where('id', '=', guildId).executeTakeFirst();
      if (!guild) throw new HearthError('UnknownGuild');
      await store.deleteGuildDocuments(tx, guildId);
      const now = this.#deps.clock.now();
      await store.startBuilding(tx, guildId, now, now + REBUILD_DELAY_MS);
    });
  }

  /**
   * Runs the batches that are due by the injected clock, one guild's after another, until none is (or
   * BATCHES_PER_RUN); answers how many messages were indexed. The server's timer calls it; so may a test or
   * a command, never overlapping another run.
   */
  runBatches(): Promise<number> {
    const run = this.#running.then(
      () => this.#drain(),
      () => this.#drain(),
    );
    this.#running = run.catch(() => 0);
    return run;
  }

  async #drain(): Promise<number> {
    const { storage, clock } = this.#deps;
    let indexed = 0;
    for (let batches = 0; batches < BATCHES_PER_RUN; ) {
      const due = await store.dueGuilds(storage.db, clock.now());
      if (due.length === 0) {
        // The next batch is a pause away: wait for it, unless the clock does not move on (a test's clock
        // moves only when told, so each of its steps runs the batches then due and no more).
        const next = await store.nextDue(storage.db);
        if (next === undefined || next - clock.now() > BATCH_PAUSE_MS) return indexed;
        await delay(BATCH_PAUSE_MS);
        if (clock.now() < next) return indexed;
        continue;
      }
      for (const state of due) {
        indexed += await this.#batch(state.guild_id);
        batches += 1;
      }
    }
    return indexed;
  }

  /** One batch of a guild: the next messages after the cursor; the last (short) batch completes the index. */
  async #batch(guildId: string): Promise<number> {
    const size = this.#deps.batchSize ?? BATCH_SIZE;
    const { storage } = this.#deps;
    return storage.transaction(async (tx) => {
      const state = await store.findState(tx, guildId);
      if (!state) return 0;
      const cursor =
        state.cursor_id === null || state.cursor_created_at === null
          ? undefined
          : { createdAt: Number(state.cursor_created_at), id: state.cursor_id };
      const rows = await store.guildMessagesAfter(tx, storage.engine, guildId, cursor, size);
      await store.deleteDocuments(
        tx,
        rows.map((row) => row.id),
      );
      await this.#indexRows(tx, rows);
      const last = rows.at(-1);
      if (last)
        await store.advanceState(tx, guildId, rows.length, {
          createdAt: Number(last.created_at),
          id: last.id,
        });
      if (rows.length < size) await store.finishBuilding(tx, guildId);
      else await store.pauseBuilding(tx, guildId, this.#deps.clock.now() + BATCH_PAUSE_MS);
      return rows.length;
    });
  }

  /** Documents of guild messages without one (the caller removed any earlier document). */
  async #indexRows(tx: Executor, rows: readonly Row[]): Promise<void> {
    const ids = rows.map((row) => row.id);
    const files = (await this.#deps.attachments?.objectsOf(tx, ids)) ?? new Map();
    const replies = new Map(rows.flatMap((row) => (repliedId(row) ? [[row.id, repliedId(row)!]] : [])));
    const repliedAuthors = await store.authorsOf(tx, [...new Set(replies.values())]);
    const bots = new Map<string, boolean>();
    for (const row of rows) {
      if (row.guild_id === null) continue;
      if (!bots.has(row.author_id))
        bots.set(row.author_id, (await this.#deps.users.getUserIn(tx, row.author_id))?.bot === true);
      const replied = replies.get(row.id);
      const message: IndexedMessage = {
        id: row.id,
        guildId: row.guild_id,
        channelId: row.channel_id,
        authorId: row.author_id,
        authorBot: bots.get(row.author_id) === true,
        webhookId: row.webhook_id,
        content: row.content,
        mentionEveryone: Number(row.mention_everyone) === 1,
        mentions: jsonArray(row.mentions).filter((id): id is string => typeof id === 'string'),
        mentionRoles: jsonArray(row.mention_roles).filter((id): id is string => typeof id === 'string'),
        embeds: jsonArray(row.embeds).filter(isObject),
        attachments: files.get(row.id) ?? [],
        repliedTo: replied ? { messageId: replied, authorId: repliedAuthors.get(replied) } : undefined,
        hasSnapshot: jsonArray(row.message_snapshots).length > 0,
        hasPoll: false,
        hasSticker: false,
        createdAt: Number(row.created_at),
      };
      await store.insertDocument(tx, this.#deps.storage.engine, documentOf(message));
    }
  }
}

/** The message a reply (reference type DEFAULT) answers; forwards reference without replying. */
function repliedId(row: Row): string | undefined {
  if (row.message_reference === null) return undefined;
  const reference = parseJson(row.message_reference) as { type?: unknown; message_id?: unknown } | undefined;
  if (!reference || (reference.type !== undefined && reference.type !== 0)) return undefined;
  return typeof reference.message_id === 'string' ? reference.message_id : undefined;
}

function jsonArray(text: string | null): unknown[] {
  const value = text === null ? undefined : parseJson(text);
  return Array.isArray(value) ? value : [];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
