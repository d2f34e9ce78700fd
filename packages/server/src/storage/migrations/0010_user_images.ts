import { type Kysely, type Migration, SqliteAdapter } from 'kysely';

/** Users' banners, and the bytes of avatars and banners that the CDN-style routes serve. */
export const userImages: Migration = {
  async up(db: Kysely<unknown>) {
    const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
    await db.schema.alterTable('users').addColumn('banner', 'text').execute();
    // One row per user and kind (`avatar`, `banner`): the current image only; a new one replaces it.
    await db.schema
      .createTable('user_images')
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('hash', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('bytes', sqlite ? 'blob' : 'bytea', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('user_images_pk', ['user_id', 'kind'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('user_images').execute();
    await db.schema.alterTable('users').dropColumn('banner').execute();
  },
};
