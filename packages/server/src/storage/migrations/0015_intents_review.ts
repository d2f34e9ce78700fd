import type { Kysely, Migration } from 'kysely';

/** When an operator last approved the application's privileged intents review (seed, Limits). */
export const intentsReview: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('applications').addColumn('intents_review_approved_at', 'bigint').execute();
  },
};
