import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';

/**
 * Migration 0042 on every engine: a code spent before it keeps the family of the token it was exchanged
 * for (a replay still revokes that family, RFC 6749 §4.1.2), the token table loses its code index, and
 * its parent index holds only tokens that have a parent.
 */

const postgresUp = await postgresAvailable();
const sqliteDir = mkdtempSync(join(tmpdir(), 'hearth-token-storage-'));
const postgres = postgresUp ? postgresSchema() : undefined;
afterAll(async () => {
  rmSync(sqliteDir, { recursive: true, force: true });
  await postgres?.drop();
});

const engines = [
  { name: 'SQLite', url: `sqlite:${join(sqliteDir, 'hearth.sqlite')}`, available: true, schema: undefined },
  {
    name: 'PostgreSQL',
    url: postgres?.url ?? '',
    available: postgresUp,
    schema: postgres ? (new URL(postgres.url).searchParams.get('schema') ?? undefined) : undefined,
  },
];
const T0 = Date.UTC(2026, 10, 1);

/** Every migration before 0042 only, as a database written by an older server has them. */
async function migrateBefore0042(storage: Storage, schema: string | undefined): Promise<void> {
  const all = await migrationProvider.getMigrations();
  const older = Object.fromEntries(Object.entries(all).filter(([name]) => name < '0042'));
  const { error } = await new Migrator({
    db: storage.db,
    provider: { getMigrations: async () => older },
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  }).migrateToLatest();
  if (error) throw error;
}

async function codeRow(storage: Storage, codeHash: string, usedAt: number | null): Promise<void> {
  await storage.db
    .insertInto('oauth_codes')
    .columns([
      'code_hash',
      'application_id',
      'user_id',
      'scopes',
      'auth_time',
      'expires_at',
      'used_at',
      'created_at',
    ])
    .values([
      {
        code_hash: codeHash,
        application_id: '2',
        user_id: '1',
        scopes: 'identify',
        auth_time: T0,
        expires_at: T0 + 600_000,
        used_at: usedAt,
        created_at: T0,
      },
    ])
    .execute();
}

async function tokenRow(storage: Storage, id: string, familyId: string, codeHash: string | null) {
  await storage.db
    .insertInto('oauth_tokens')
    .values({
      id,
      access_hash: `access-${id}`,
      refresh_hash: `refresh-${id}`,
      refresh_spent: 0,
      refresh_expires_at: T0 + 1,
      family_id: familyId,
      code_hash: codeHash,
      parent_family_id: null,
      application_id: '2',
      user_id: '1',
      scopes: 'identify',
      expires_at: T0 + 1,
      created_at: T0,
      client_credentials: 0,
    })
    .execute();
}

for (const engine of engines) {
  describe.skipIf(!engine.available)(`oauth tokens storage after 0042: ${engine.name}`, () => {
    it('a code spent before 0042 gets the family of its token; unspent codes and codes without tokens none', async () => {
      const storage = await openStorage(engine.url);
      try {
        await migrateBefore0042(storage, engine.schema);
        await storage.db
          .insertInto('users')
          .values({ id: '1', username: 'player', discriminator: '0', bot: 0, flags: 0, created_at: T0 })
          .execute();
        await storage.db
          .insertInto('applications')
          .values({
            id: '2',
            name: 'Game',
            owner_id: '1',
            bot_user_id: '1',
            bot_token_hash: 'bot',
            client_secret_hash: 'secret',
            public_client: 0,
            redirect_uris: '[]',
            flags: 0,
            verify_key: 'ab',
            signing_key: 'cd',
            created_at: T0,
          })
          .execute();
        await codeRow(storage, 'spent', T0 + 5);
        await codeRow(storage, 'unspent', null);
        await codeRow(storage, 'spent-revoked', T0 + 5);
        await tokenRow(storage, '10', '10', 'spent');
        await tokenRow(storage, '11', '10', null); // a refresh of it: same family, no code

        // 0042 first, then whatever follows it.
        expect((await storage.migrate())[0]).toBe('0042_token_indexes');

        const codes = await storage.db
          .selectFrom('oauth_codes')
          .select(['code_hash', 'family_id'])
          .orderBy('code_hash')
          .execute();
        expect(codes).toEqual([
          { code_hash: 'spent', family_id: '10' },
          { code_hash: 'spent-revoked', family_id: null },
          { code_hash: 'unspent', family_id: null },
        ]);
      } finally {
        await storage.close();
      }
    });

    it('the token table has no code index, and its parent index is partial (only rows with a parent)', async () => {
      const storage = await openStorage(engine.url);
      try {
        await storage.migrate();
        const indexes =
          storage.engine === 'sqlite'
            ? await sql<{ name: string; definition: string | null }>`
                SELECT name, sql AS definition FROM sqlite_master
                WHERE type = 'index' AND tbl_name = 'oauth_tokens'`.execute(storage.db)
            : await sql<{ name: string; definition: string | null }>`
                SELECT indexname AS name, indexdef AS definition FROM pg_indexes
                WHERE tablename = 'oauth_tokens' AND schemaname = current_schema()`.execute(storage.db);
        const byName = new Map(indexes.rows.map((row) => [row.name, row.definition ?? '']));
        expect(byName.has('oauth_tokens_code')).toBe(false);
        expect(byName.get('oauth_tokens_parent')).toMatch(/where\s+\(*"?parent_family_id"?\s+is not null/i);
        if (storage.engine === 'sqlite') {
          // The revocation's child delete still finds its rows through that index.
          const plan = await sql<{ detail: string }>`EXPLAIN QUERY PLAN
            DELETE FROM oauth_tokens WHERE parent_family_id IN ('1', '2')`.execute(storage.db);
          expect(plan.rows.map((row) => row.detail).join('\n')).toContain('oauth_tokens_parent');
        }
      } finally {
        await storage.close();
      }
    });
  });
}
