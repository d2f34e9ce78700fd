import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Fewer B-trees written per token (issue 20). A spent code keeps the family of the token it was exchanged
 * for, so a replay (RFC 6749 §4.1.2) finds what to revoke from the code row it already read, and the
 * token table loses its index of random code hashes. The parent index keeps only the rows that have a
 * parent (tokens made by exchanging another token): every other token used to add a NULL entry to it.
 */
export const tokenIndexes: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('oauth_codes').addColumn('family_id', 'text').execute();
    await sql`UPDATE oauth_codes SET family_id = (
        SELECT t.family_id FROM oauth_tokens t WHERE t.code_hash = oauth_codes.code_hash LIMIT 1
      ) WHERE used_at IS NOT NULL`.execute(db);
    await db.schema.dropIndex('oauth_tokens_code').execute();
    await db.schema.dropIndex('oauth_tokens_parent').execute();
    await db.schema
      .createIndex('oauth_tokens_parent')
      .on('oauth_tokens')
      .column('parent_family_id')
      .where(sql.ref('parent_family_id'), 'is not', null)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('oauth_tokens_parent').execute();
    await db.schema
      .createIndex('oauth_tokens_parent')
      .on('oauth_tokens')
      .column('parent_family_id')
      .execute();
    await db.schema.createIndex('oauth_tokens_code').on('oauth_tokens').column('code_hash').execute();
    await db.schema.alterTable('oauth_codes').dropColumn('family_id').execute();
  },
};
