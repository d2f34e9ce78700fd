import type { Kysely, Migration } from 'kysely';

/**
 * What a fixture run created (emulator mode, `hearth seed`): one row per named fixture object, keyed by its
 * path in the document (`guilds/home/channels/general`), holding the ids and credentials printed for it. A
 * second run finds each row and creates nothing.
 */
export const emulatorFixtures: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('emulator_fixtures')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('emulator_fixtures').execute();
  },
};
