import type { Kysely, Migration } from 'kysely';

/**
 * Application commands (GUILDS.md §6) and their guild permission overwrites. `scope` is the guild id of a
 * guild command and '' for a global one, so that one unique index keeps names unique per app, scope and type.
 * Options, localizations, contexts and integration types are JSON text.
 */
export const commands: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('application_commands')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('guild_id', 'text', (c) => c.references('guilds.id').onDelete('cascade'))
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('name_localizations', 'text')
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('description_localizations', 'text')
      .addColumn('options', 'text')
      .addColumn('default_member_permissions', 'text')
      .addColumn('contexts', 'text')
      .addColumn('integration_types', 'text')
      .addColumn('nsfw', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('handler', 'integer')
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('application_commands_name')
      .on('application_commands')
      .columns(['application_id', 'scope', 'type', 'name'])
      .unique()
      .execute();
    await db.schema
      .createIndex('application_commands_guild')
      .on('application_commands')
      .column('guild_id')
      .execute();
    await db.schema
      .createTable('application_command_permissions')
      .addColumn('guild_id', 'text', (c) => c.notNull().references('guilds.id').onDelete('cascade'))
      // A command's id, or the application's own id for the overwrites of all its commands.
      .addColumn('command_id', 'text', (c) => c.notNull())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('application_command_permissions_pk', ['guild_id', 'command_id'])
      .execute();
    await db.schema
      .createIndex('application_command_permissions_app')
      .on('application_command_permissions')
      .columns(['application_id', 'guild_id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('application_command_permissions').execute();
    await db.schema.dropTable('application_commands').execute();
  },
};
