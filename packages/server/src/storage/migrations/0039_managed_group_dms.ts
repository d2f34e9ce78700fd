import type { Kysely, Migration } from 'kysely';

/**
 * Group DMs a bot opens through `gdm.join` (GUILDS.md §2.2 `application_id`, `managed`): the application
 * that manages one, and the nickname each recipient was given there (`nicks`, `nick`).
 */
export const managedGroupDms: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('group_dm_channels').addColumn('application_id', 'text').execute();
    await db.schema.alterTable('group_dm_recipients').addColumn('nick', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('group_dm_recipients').dropColumn('nick').execute();
    await db.schema.alterTable('group_dm_channels').dropColumn('application_id').execute();
  },
};
