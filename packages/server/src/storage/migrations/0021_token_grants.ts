import type { Kysely, Migration } from 'kysely';

/**
 * Which grant issued an access token: a client_credentials token stands for the application's owner and
 * carries only that grant's scopes, never a player's (issue 21). Tokens issued before are user grants.
 */
export const tokenGrants: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('oauth_tokens')
      .addColumn('client_credentials', 'integer', (column) => column.notNull().defaultTo(0))
      .execute();
  },
};
