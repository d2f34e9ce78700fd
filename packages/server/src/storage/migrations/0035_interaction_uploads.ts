import type { Kysely, Migration } from 'kysely';

/**
 * Files a user sent with an interaction (an ATTACHMENT option, a modal's file upload) are stored as message
 * attachments are, served at the same `url`, but belong to the interaction rather than to a message; and
 * the guild installs of applications authorized with `applications.commands` alone (no bot in the guild),
 * whose guild commands members may then run; and the choices an autocomplete was answered with, which a
 * scripted user (no gateway session) reads back.
 */
export const interactionUploads: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('message_attachments').addColumn('interaction_id', 'text').execute();
    await db.schema.alterTable('interactions').addColumn('autocomplete_choices', 'text').execute();
    await db.schema
      .createTable('application_guild_installs')
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('installer_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('application_guild_installs_pk', ['application_id', 'guild_id'])
      .execute();
    await db.schema
      .createIndex('application_guild_installs_guild')
      .on('application_guild_installs')
      .column('guild_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('application_guild_installs').execute();
    await db.schema.alterTable('interactions').dropColumn('autocomplete_choices').execute();
    await db.schema.alterTable('message_attachments').dropColumn('interaction_id').execute();
  },
};
