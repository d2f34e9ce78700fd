import type { Executor } from '../storage/database.js';

/** The recorded output of one fixture object, or undefined when no run created it yet. */
export async function findFixture(db: Executor, key: string): Promise<unknown> {
  const row = await db
    .selectFrom('emulator_fixtures')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.value) as unknown);
}

export async function recordFixture(db: Executor, key: string, value: unknown, now: number): Promise<void> {
  await db
    .insertInto('emulator_fixtures')
    .values({ key, value: JSON.stringify(value), created_at: now })
    .execute();
}
