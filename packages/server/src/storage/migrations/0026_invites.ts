import type { Kysely, Migration } from 'kysely';

/**
 * Guild invites (GUILDS.md §3.6): the invite with its settings and use count, the users a target users file
 * restricts it to, and the memberships a temporary invite granted (removed when the member goes offline).
 * A guild's or a channel's deletion removes its invites.
 */
export const invites: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('invites')
      .addColumn('code', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('channel_id', 'text', (c) => c.notNull().references('channels.id').onDelete('cascade'))
      .addColumn('inviter_id', 'text')
      .addColumn('max_age', 'integer', (c) => c.notNull())
      .addColumn('max_uses', 'integer', (c) => c.notNull())
      .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('temporary', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('target_type', 'integer')
      .addColumn('target_user_id', 'text')
      .addColumn('target_application_id', 'text')
      // JSON array of the role ids a member gets on joining.
      .addColumn('role_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      // The last target users file: when it was received and processed, and how many users it named.
      .addColumn('target_users_at', 'bigint')
      .addColumn('target_users_completed_at', 'bigint')
      .addColumn('target_users_total', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.createIndex('invites_guild').on('invites').columns(['guild_id', 'created_at']).execute();
    await db.schema
      .createIndex('invites_channel')
      .on('invites')
      .columns(['channel_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('invite_target_users')
      .addColumn('code', 'text', (c) => c.notNull().references('invites.code').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('invite_target_users_pk', ['code', 'user_id'])
      .execute();

    await db.schema
      .createTable('invite_temporary_members')
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      // The roles the invite gave: a role given since keeps the member when they disconnect.
      .addColumn('role_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('joined_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('invite_temporary_members_pk', ['guild_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('invite_temporary_members_user')
      .on('invite_temporary_members')
      .column('user_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('invite_temporary_members').execute();
    await db.schema.dropTable('invite_target_users').execute();
    await db.schema.dropTable('invites').execute();
  },
};
