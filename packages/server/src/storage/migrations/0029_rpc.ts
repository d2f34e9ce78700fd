import { type Kysely, type Migration, sql } from 'kysely';

/** The origins a game's web page may open the local RPC WebSocket from (PROTOCOL.md §H): a JSON array. */
export const rpc: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('applications')
      .addColumn('rpc_origins', 'text', (column) => column.notNull().defaultTo(sql`'[]'`))
      .execute();
  },
};
