import { type Kysely, type Migration, SqliteAdapter } from 'kysely';

/**
 * Group DMs a bot opens through `gdm.join` (GUILDS.md §2.2 `application_id`, `managed`): the application
 * that manages one, and the nickname each recipient was given there (`nicks`, `nick`). And a group DM's
 * icon image, served under `/channel-icons/{channel_id}/{hash}` as avatars are under `/avatars/`.
 */
export const managedGroupDms: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    await db.schema.alterTable('group_dm_channels').addColumn('application_id', 'text').execute();
    await db.schema.alterTable('group_dm_recipients').addColumn('nick', 'text').execute();
    await db.schema
      .createTable('group_dm_icons')
      .addColumn('channel_id', 'text', (c) => c.primaryKey())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('bytes', sqlite ? 'blob' : 'bytea', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('group_dm_icons').execute();
    await db.schema.alterTable('group_dm_recipients').dropColumn('nick').execute();
    await db.schema.alterTable('group_dm_channels').dropColumn('application_id').execute();
  },
};
