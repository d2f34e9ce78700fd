import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * The application object's editable fields (install settings, images, bot switches), teams and their members,
 * application emoji, Activity URL mappings and quest enrollments (issue 17).
 */
export const applications: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    const binary = sqlite ? 'blob' : 'bytea';
    for (const [name, type, def] of [
      ['icon', 'text', undefined],
      ['cover_image', 'text', undefined],
      ['integration_types_config', 'text', sql`'{"0":{},"1":{}}'`],
      ['role_connections_verification_url', 'text', undefined],
      ['bot_public', 'integer', sql`1`],
      ['bot_require_code_grant', 'integer', sql`0`],
      ['team_id', 'text', undefined],
    ] as const) {
      await db.schema
        .alterTable('applications')
        .addColumn(name, type, (c) => (def === undefined ? c : c.notNull().defaultTo(def)))
        .execute();
    }
    // The current icon and cover image of each application, served by the CDN-style routes.
    await db.schema
      .createTable('application_images')
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('bytes', binary, (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('application_images_pk', ['application_id', 'kind'])
      .execute();
    await db.schema
      .createTable('teams')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('owner_user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('team_members')
      .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('membership_state', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
      .execute();
    await db.schema.createIndex('team_members_user').on('team_members').column('user_id').execute();
    await db.schema
      .createTable('application_emojis')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('animated', 'integer', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('bytes', binary, (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('application_emojis_name', ['application_id', 'name'])
      .execute();
    await db.schema
      .createTable('activity_url_mappings')
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('target', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('activity_url_mappings_pk', ['application_id', 'prefix'])
      .execute();
    await db.schema
      .createTable('quest_enrollments')
      .addColumn('application_id', 'text', (c) =>
        c.notNull().references('applications.id').onDelete('cascade'),
      )
      .addColumn('quest_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('enrolled_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('quest_enrollments_pk', ['application_id', 'quest_id', 'user_id'])
      .execute();
  },
};
