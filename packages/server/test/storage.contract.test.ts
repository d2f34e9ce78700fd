import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { type Insertable, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAvailable, postgresSchema } from '../../../test-support/services.js';
import { isUniqueViolation, openStorage, type Storage } from '../src/storage/database.js';
import { migrationProvider } from '../src/storage/migrations/index.js';
import type { ApplicationsTable, SessionsTable, UsersTable } from '../src/storage/schema.js';

/**
 * One contract for every storage engine (STYLE.md rule 6): the stores are written once against Kysely,
 * so each engine must give back exactly what was written, enforce the same constraints and keep commits.
 */
interface EngineUnderTest {
  name: string;
  /** Where the database lives; opening it twice reaches the same data when `durable`. */
  url: string;
  durable: boolean;
  cleanup(): Promise<void>;
}

const postgresUp = await postgresAvailable();
const sqliteDir = mkdtempSync(join(tmpdir(), 'hearth-storage-contract-'));
const postgres = postgresUp ? postgresSchema() : undefined;

const engines: { engine: EngineUnderTest; available: boolean }[] = [
  {
    engine: { name: 'SQLite in memory', url: 'sqlite::memory:', durable: false, cleanup: async () => {} },
    available: true,
  },
  {
    engine: {
      name: 'SQLite file',
      url: `sqlite:${join(sqliteDir, 'hearth.sqlite')}`,
      durable: true,
      cleanup: async () => rmSync(sqliteDir, { recursive: true, force: true }),
    },
    available: true,
  },
  {
    engine: {
      name: 'PostgreSQL',
      url: postgres?.url ?? '',
      durable: true,
      cleanup: async () => postgres?.drop(),
    },
    available: postgresUp,
  },
];

const MIGRATIONS = Object.keys(await migrationProvider.getMigrations()).sort();
/** 2026-01-01T00:00:00Z in ms: past 2^32, so a 32-bit column or a string read would show. */
const T0 = Date.UTC(2026, 0, 1);
/** 19 digits, above 2^63 / 2 and far above 2^53: a numeric round trip would lose the last digits. */
const SNOWFLAKE = '1234567890123456789';

// Round trips read these columns by name, so a later migration that adds a column leaves them valid.
const USER_COLUMNS = [
  'id',
  'username',
  'discriminator',
  'global_name',
  'email',
  'password_hash',
  'avatar',
  'bot',
  'flags',
  'created_at',
] as const;
const SESSION_COLUMNS = ['token_hash', 'user_id', 'created_at', 'expires_at'] as const;
const APPLICATION_COLUMNS = [
  'id',
  'name',
  'description',
  'owner_id',
  'bot_user_id',
  'bot_token_hash',
  'client_secret_hash',
  'public_client',
  'redirect_uris',
  'flags',
  'verify_key',
  'signing_key',
  'created_at',
] as const;

function userRow(id: string, username: string, overrides: Partial<Insertable<UsersTable>> = {}) {
  return {
    id,
    username,
    discriminator: '0',
    global_name: null,
    email: `${username}@example.com`,
    password_hash: null,
    avatar: null,
    bot: 0,
    flags: 0,
    created_at: T0,
    ...overrides,
  } satisfies Insertable<UsersTable>;
}

function sessionRow(tokenHash: string, userId: string): Insertable<SessionsTable> {
  return { token_hash: tokenHash, user_id: userId, created_at: T0, expires_at: null };
}

function applicationRow(
  id: string,
  botUserId: string,
  ownerId: string | null,
): Insertable<ApplicationsTable> {
  return {
    id,
    name: 'Contract Game',
    owner_id: ownerId,
    bot_user_id: botUserId,
    bot_token_hash: `bot-${id}`,
    client_secret_hash: `secret-${id}`,
    public_client: 1,
    redirect_uris: '["http://127.0.0.1/callback"]',
    flags: 2 ** 40,
    verify_key: 'ab'.repeat(32),
    signing_key: 'cd'.repeat(32),
    created_at: T0 + 1,
  };
}

async function caught(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected the operation to fail');
}

function storageContract({ engine, available }: { engine: EngineUnderTest; available: boolean }): void {
  describe.skipIf(!available)(`storage contract: ${engine.name}`, () => {
    let storage: Storage;
    let firstMigration: string[];

    beforeAll(async () => {
      storage = await openStorage(engine.url);
      firstMigration = await storage.migrate();
    });
    afterAll(async () => {
      await storage?.close();
      await engine.cleanup();
    });
    beforeEach(async () => {
      await storage.db.deleteFrom('lobbies').execute();
      await storage.db.deleteFrom('applications').execute();
      await storage.db.deleteFrom('sessions').execute();
      await storage.db.deleteFrom('users').execute();
    });

    const countUsers = async () =>
      (await storage.db.selectFrom('users').select('id').execute()).map((r) => r.id).sort();

    it('applies every migration, in order, on a fresh database', () => {
      expect(firstMigration).toEqual(MIGRATIONS);
    });

    it('a second migrate() is a no-op and answers []', async () => {
      expect(await storage.migrate()).toEqual([]);
    });

    it('a users row round-trips with exact types (19-digit text id, ms instants as numbers, 0/1 integers)', async () => {
      await storage.db
        .insertInto('users')
        .values(
          userRow(SNOWFLAKE, 'round.trip', {
            global_name: 'Round Trip',
            password_hash: 'scrypt$hash',
            bot: 1,
            flags: 2 ** 40 + 1,
            created_at: T0 + 999,
          }),
        )
        .execute();
      const row = await storage.db
        .selectFrom('users')
        .select(USER_COLUMNS)
        .where('id', '=', SNOWFLAKE)
        .executeTakeFirst();
      expect(row).toStrictEqual({
        id: SNOWFLAKE,
        username: 'round.trip',
        discriminator: '0',
        global_name: 'Round Trip',
        email: 'round.trip@example.com',
        password_hash: 'scrypt$hash',
        avatar: null,
        bot: 1,
        flags: 2 ** 40 + 1,
        created_at: T0 + 999,
      });
    });

    it('a sessions row round-trips with its bigint instants as numbers and a null expiry', async () => {
      await storage.db.insertInto('users').values(userRow(SNOWFLAKE, 'session.owner')).execute();
      await storage.db.insertInto('sessions').values(sessionRow('hash-a', SNOWFLAKE)).execute();
      await storage.db
        .insertInto('sessions')
        .values({ ...sessionRow('hash-b', SNOWFLAKE), expires_at: T0 + 86_400_000 })
        .execute();
      const rows = await storage.db
        .selectFrom('sessions')
        .select(SESSION_COLUMNS)
        .orderBy('token_hash')
        .execute();
      expect(rows).toStrictEqual([
        { token_hash: 'hash-a', user_id: SNOWFLAKE, created_at: T0, expires_at: null },
        { token_hash: 'hash-b', user_id: SNOWFLAKE, created_at: T0, expires_at: T0 + 86_400_000 },
      ]);
    });

    it('an applications row round-trips, with column defaults filled in', async () => {
      await storage.db.insertInto('users').values(userRow('100', 'owner')).execute();
      await storage.db
        .insertInto('users')
        .values(userRow(SNOWFLAKE, 'contract.bot', { email: null, bot: 1, discriminator: '0042' }))
        .execute();
      await storage.db
        .insertInto('applications')
        .values(applicationRow('200', SNOWFLAKE, '100'))
        .execute();
      const row = await storage.db.selectFrom('applications').select(APPLICATION_COLUMNS).executeTakeFirst();
      expect(row).toStrictEqual({
        id: '200',
        name: 'Contract Game',
        description: '',
        owner_id: '100',
        bot_user_id: SNOWFLAKE,
        bot_token_hash: 'bot-200',
        client_secret_hash: 'secret-200',
        public_client: 1,
        redirect_uris: '["http://127.0.0.1/callback"]',
        flags: 2 ** 40,
        verify_key: 'ab'.repeat(32),
        signing_key: 'cd'.repeat(32),
        created_at: T0 + 1,
      });
    });

    it('refuses a second users row with the same (username, discriminator) as a unique violation', async () => {
      await storage.db.insertInto('users').values(userRow('1', 'taken')).execute();
      const error = await caught(
        storage.db
          .insertInto('users')
          .values(userRow('2', 'taken', { email: 'other@example.com' }))
          .execute(),
      );
      expect(isUniqueViolation(error)).toBe(true);
      expect(await countUsers()).toEqual(['1']);
    });

    it('allows the same username with another discriminator (bots keep four-digit ones)', async () => {
      await storage.db
        .insertInto('users')
        .values(userRow('1', 'shared', { email: null }))
        .execute();
      await storage.db
        .insertInto('users')
        .values(userRow('2', 'shared', { email: null, discriminator: '0001' }))
        .execute();
      expect(await countUsers()).toEqual(['1', '2']);
    });

    it('refuses a second users row with the same email as a unique violation', async () => {
      await storage.db
        .insertInto('users')
        .values(userRow('1', 'first', { email: 'same@example.com' }))
        .execute();
      const error = await caught(
        storage.db
          .insertInto('users')
          .values(userRow('2', 'second', { email: 'same@example.com' }))
          .execute(),
      );
      expect(isUniqueViolation(error)).toBe(true);
      expect(await countUsers()).toEqual(['1']);
    });

    it('lets many users have no email (NULLs are not equal in a unique index)', async () => {
      await storage.db
        .insertInto('users')
        .values(userRow('1', 'bot.one', { email: null }))
        .execute();
      await storage.db
        .insertInto('users')
        .values(userRow('2', 'bot.two', { email: null }))
        .execute();
      expect(await countUsers()).toEqual(['1', '2']);
    });

    it('isUniqueViolation answers false for a foreign key violation', async () => {
      const error = await caught(
        storage.db.insertInto('sessions').values(sessionRow('orphan', '404')).execute(),
      );
      expect(error).toBeInstanceOf(Error);
      expect(isUniqueViolation(error)).toBe(false);
    });

    it('a transaction that throws rolls back everything it wrote and rejects with the thrown error', async () => {
      const thrown = new Error('abort the transaction');
      const error = await caught(
        storage.transaction(async (tx) => {
          await tx.insertInto('users').values(userRow('1', 'rolled.back')).execute();
          await tx.insertInto('sessions').values(sessionRow('rolled-back', '1')).execute();
          expect(await tx.selectFrom('users').select('id').execute()).toEqual([{ id: '1' }]);
          throw thrown;
        }),
      );
      expect(error).toBe(thrown);
      expect(await countUsers()).toEqual([]);
      expect(await storage.db.selectFrom('sessions').select('token_hash').execute()).toEqual([]);
    });

    it('a unique violation inside a transaction rolls back its earlier writes and is still detected', async () => {
      await storage.db.insertInto('users').values(userRow('1', 'existing')).execute();
      const error = await caught(
        storage.transaction(async (tx) => {
          await tx.insertInto('users').values(userRow('2', 'newcomer')).execute();
          await tx
            .insertInto('users')
            .values(userRow('3', 'existing', { email: 'x@example.com' }))
            .execute();
        }),
      );
      expect(isUniqueViolation(error)).toBe(true);
      expect(await countUsers()).toEqual(['1']);
    });

    it('a transaction that completes commits and answers its result', async () => {
      const answer = await storage.transaction(async (tx) => {
        await tx.insertInto('users').values(userRow('1', 'committed')).execute();
        return 'done';
      });
      expect(answer).toBe('done');
      expect(await countUsers()).toEqual(['1']);
    });

    it('deleting a user cascades to its sessions and clears applications.owner_id', async () => {
      await storage.db.insertInto('users').values(userRow('1', 'leaving')).execute();
      await storage.db.insertInto('users').values(userRow('2', 'staying')).execute();
      await storage.db
        .insertInto('users')
        .values(userRow('3', 'game.bot', { email: null, bot: 1 }))
        .execute();
      await storage.db
        .insertInto('sessions')
        .values([sessionRow('leaving-1', '1'), sessionRow('leaving-2', '1'), sessionRow('staying-1', '2')])
        .execute();
      await storage.db
        .insertInto('applications')
        .values(applicationRow('10', '3', '1'))
        .execute();

      await storage.db.deleteFrom('users').where('id', '=', '1').execute();

      const sessions = await storage.db.selectFrom('sessions').select(['token_hash', 'user_id']).execute();
      expect(sessions).toEqual([{ token_hash: 'staying-1', user_id: '2' }]);
      const application = await storage.db.selectFrom('applications').select(['id', 'owner_id']).execute();
      expect(application).toEqual([{ id: '10', owner_id: null }]);
    });

    it('refuses to delete a user that is still an application bot (no cascade on bot_user_id)', async () => {
      await storage.db
        .insertInto('users')
        .values(userRow('3', 'game.bot', { email: null, bot: 1 }))
        .execute();
      await storage.db
        .insertInto('applications')
        .values(applicationRow('10', '3', null))
        .execute();
      const error = await caught(storage.db.deleteFrom('users').where('id', '=', '3').execute());
      expect(error).toBeInstanceOf(Error);
      expect(isUniqueViolation(error)).toBe(false);
      expect(await countUsers()).toEqual(['3']);
    });

    if (engine.url.startsWith('sqlite:')) {
      /** A lobby of a new application, with one member (users '1', application '10'). */
      const lobbyWithMember = async () => {
        await storage.db
          .insertInto('users')
          .values([userRow('1', 'member'), userRow('2', 'bot')])
          .execute();
        await storage.db
          .insertInto('applications')
          .values(applicationRow('10', '2', null))
          .execute();
        await storage.db
          .insertInto('lobbies')
          .values({
            id: '20',
            application_id: '10',
            metadata: null,
            flags: 0,
            idle_timeout_seconds: 5,
            secret: null,
            secret_expires_at: null,
            sdk_created: 1,
            override_event_webhooks_url: null,
            created_at: T0,
            active_at: T0,
          })
          .execute();
        await storage.db
          .insertInto('lobby_members')
          .values({
            lobby_id: '20',
            user_id: '1',
            application_id: '10',
            metadata: null,
            flags: 0,
            additional_name: null,
            joined_at: T0,
          })
          .execute();
      };

      it('change stamps: a commit that wrote only a lobby message, the event log and the outbox keeps the stamp; one that wrote a session, or a member through a cascade, changes it', async () => {
        await lobbyWithMember();
        const kept = storage.changeStamps();
        expect(kept).toBeDefined();
        await storage.transaction(async (tx) => {
          await tx
            .insertInto('lobby_messages')
            .values({
              id: '30',
              lobby_id: '20',
              author_id: '1',
              application_id: '10',
              content: 'gg',
              metadata: null,
              moderation_metadata: null,
              author_additional_name: null,
              flags: 0,
              created_at: T0,
              edited_at: null,
            })
            .execute();
          await tx
            .updateTable('lobbies')
            .set({ active_at: T0 + 1 })
            .where('id', '=', '20')
            .execute();
          await tx.insertInto('event_log').values({ ms: T0, event: '{}' }).execute();
          await tx
            .insertInto('outbox')
            .values({
              id: '40',
              type: 'LOBBY_MESSAGE_CREATE',
              application_id: '10',
              payload: '{}',
              created_at: T0,
            })
            .execute();
        });
        await storage.db.deleteFrom('event_log').execute();
        expect(storage.changeStamps()).toBe(kept);

        await storage.db.insertInto('sessions').values(sessionRow('s', '1')).execute();
        const afterSession = storage.changeStamps();
        expect(afterSession).toBeDefined();
        expect(afterSession).not.toBe(kept);
        // Deleting the lobby (unwatched) deletes its member row (watched) by cascade.
        await storage.db.deleteFrom('lobbies').execute();
        expect(storage.changeStamps()).not.toBe(afterSession);
      });

      it('change stamps: none while a transaction that wrote a watched table is open; a new one after it rolled back', async () => {
        const before = storage.changeStamps();
        const seen: (string | undefined)[] = [];
        await caught(
          storage.transaction(async (tx) => {
            await tx.insertInto('users').values(userRow('1', 'never')).execute();
            seen.push(storage.changeStamps());
            throw new Error('roll back');
          }),
        );
        expect(seen).toEqual([undefined]);
        const after = storage.changeStamps();
        expect(after).toBeDefined();
        expect(after).not.toBe(before);
      });
    }

    if (engine.url.startsWith('postgres')) {
      it('change stamps: never known (nothing is kept from one request to the next)', async () => {
        await storage.db.insertInto('users').values(userRow('1', 'pg')).execute();
        expect(storage.changeStamps()).toBeUndefined();
      });
    }

    if (engine.durable && engine.url.startsWith('sqlite:')) {
      it('change stamps: a commit by another connection changes the stamp, whatever it wrote; a table it created is watched', async () => {
        const path = engine.url.slice('sqlite:'.length);
        const other = new SQLite(path);
        try {
          const before = storage.changeStamps();
          other.prepare('INSERT INTO event_log (ms, event) VALUES (?, ?)').run(T0, '{}');
          const afterForeign = storage.changeStamps();
          expect(afterForeign).toBeDefined();
          expect(afterForeign).not.toBe(before);
          // Written by this connection before any stamp was read: the foreign commit's new stamp covers it.
          other.exec('CREATE TABLE contract_added (x INTEGER)');
          await sql`INSERT INTO contract_added (x) VALUES (1)`.execute(storage.db);
          const afterCreate = storage.changeStamps();
          expect(afterCreate).toBeDefined();
          expect(afterCreate).not.toBe(afterForeign);
          await sql`INSERT INTO contract_added (x) VALUES (2)`.execute(storage.db);
          const afterOwn = storage.changeStamps();
          expect(afterOwn).toBeDefined();
          expect(afterOwn).not.toBe(afterCreate);
        } finally {
          other.exec('DROP TABLE IF EXISTS contract_added');
          other.close();
        }
      });
    }

    if (engine.durable) {
      it('a committed write is visible after close() and reopen, and migrate() stays a no-op', async () => {
        await storage.transaction(async (tx) => {
          await tx
            .insertInto('users')
            .values(userRow(SNOWFLAKE, 'durable', { created_at: T0 + 5 }))
            .execute();
          await tx.insertInto('sessions').values(sessionRow('durable-session', SNOWFLAKE)).execute();
        });
        await storage.close();

        storage = await openStorage(engine.url);
        expect(await storage.migrate()).toEqual([]);
        const user = await storage.db
          .selectFrom('users')
          .select(['id', 'username', 'created_at'])
          .executeTakeFirst();
        expect(user).toStrictEqual({ id: SNOWFLAKE, username: 'durable', created_at: T0 + 5 });
        const session = await storage.db.selectFrom('sessions').select(SESSION_COLUMNS).executeTakeFirst();
        expect(session).toStrictEqual(sessionRow('durable-session', SNOWFLAKE));
      });

      it('a rolled-back write stays absent after close() and reopen', async () => {
        await caught(
          storage.transaction(async (tx) => {
            await tx.insertInto('users').values(userRow('1', 'never')).execute();
            throw new Error('roll back');
          }),
        );
        await storage.close();
        storage = await openStorage(engine.url);
        expect(await countUsers()).toEqual([]);
      });

      it('foreign keys are enforced again after reopen (cascade still deletes sessions)', async () => {
        await storage.db.insertInto('users').values(userRow('1', 'reopened')).execute();
        await storage.db.insertInto('sessions').values(sessionRow('reopened-1', '1')).execute();
        await storage.close();
        storage = await openStorage(engine.url);
        await storage.db.deleteFrom('users').where('id', '=', '1').execute();
        expect(await storage.db.selectFrom('sessions').select('token_hash').execute()).toEqual([]);
      });
    }
  });
}

for (const engine of engines) storageContract(engine);

describe.skipIf(!postgresUp)('PostgreSQL schemas (one per deployment or test run)', () => {
  it('migrates a fresh schema while another schema of the same database is already migrated', async () => {
    const first = postgresSchema();
    const second = postgresSchema();
    const opened: Storage[] = [];
    try {
      const a = await openStorage(first.url);
      opened.push(a);
      expect(await a.migrate()).toEqual(MIGRATIONS);
      const b = await openStorage(second.url);
      opened.push(b);
      expect(await b.migrate()).toEqual(MIGRATIONS);

      await a.db.insertInto('users').values(userRow('1', 'only.in.first')).execute();
      expect(await b.db.selectFrom('users').select('id').execute()).toEqual([]);
    } finally {
      for (const storage of opened) await storage.close();
      await first.drop();
      await second.drop();
    }
  });

  it("migrates looking at its own schema only: another schema's tables, which may vanish meanwhile, are never read", async () => {
    // Kysely's own introspector read every column of every schema and looked each table up again by name
    // outside its snapshot; a test file dropping its schema meanwhile failed a migration elsewhere.
    const mine = postgresSchema();
    const theirs = postgresSchema();
    const theirSchema = new URL(theirs.url).searchParams.get('schema');
    const other = new pg.Client({ connectionString: POSTGRES_URL });
    await other.connect();
    const storage = await openStorage(mine.url);
    try {
      await other.query(`CREATE SCHEMA "${theirSchema}"`);
      await other.query(`CREATE TABLE "${theirSchema}".not_ours (id serial, status integer)`);
      expect(await storage.migrate()).toEqual(MIGRATIONS);
      const tables = await storage.db.introspection.getTables({ withInternalKyselyTables: true });
      expect(new Set(tables.map((table) => table.schema))).toEqual(
        new Set([new URL(mine.url).searchParams.get('schema')]),
      );
      expect(tables.map((table) => table.name)).toContain('kysely_migration');
      expect(tables.find((table) => table.name === 'users')?.columns.map((c) => c.name)).toContain(
        'username',
      );
    } finally {
      await other.end();
      await storage.close();
      await mine.drop();
      await theirs.drop();
    }
  });
});
