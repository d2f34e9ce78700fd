import { sql } from 'kysely';
import type { Executor } from '../storage/database.js';

/** Answers when the database does: the readiness probe's query. */
export async function ping(db: Executor): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** Webhook events still to be delivered (pending, whether or not a node holds them now). */
export async function webhookQueueDepth(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number | string>().as('count'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}
