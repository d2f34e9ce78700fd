import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Who a DM call rings, one row per recipient with when its ringing stops by itself (the ring timeout), so
 * that a ring can be restarted, declined or expire for one recipient alone. Replaces `dm_calls.ringing`
 * (a JSON array): rings of calls going on carry over and expire at the first sweep. And group DMs (channel
 * type 3): their name, icon and owner, and their recipients (the owner among them).
 */
export const ringsAndGroupDms: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('group_dm_channels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('icon', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('group_dm_recipients')
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('added_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('group_dm_recipients_pk', ['channel_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('group_dm_recipients_user')
      .on('group_dm_recipients')
      .column('user_id')
      .execute();
    await db.schema
      .createTable('dm_call_rings')
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('dm_call_rings_pk', ['channel_id', 'user_id'])
      .execute();
    await db.schema.createIndex('dm_call_rings_expiry').on('dm_call_rings').column('expires_at').execute();
    const calls = await sql<{ channel_id: string; ringing: string }>`
      SELECT channel_id, ringing FROM dm_calls`.execute(db);
    for (const call of calls.rows) {
      for (const userId of JSON.parse(call.ringing) as string[]) {
        await sql`INSERT INTO dm_call_rings (channel_id, user_id, expires_at)
          VALUES (${call.channel_id}, ${userId}, 0)`.execute(db);
      }
    }
    await db.schema.alterTable('dm_calls').dropColumn('ringing').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema
      .alterTable('dm_calls')
      .addColumn('ringing', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema.dropTable('dm_call_rings').execute();
    await db.schema.dropTable('group_dm_recipients').execute();
    await db.schema.dropTable('group_dm_channels').execute();
  },
};
