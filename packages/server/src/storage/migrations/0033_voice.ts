import type { Kysely, Migration } from 'kysely';

/**
 * Voice (PROTOCOL.md §G): which node hosts each call, so that every node names the same endpoint in
 * VOICE_SERVER_UPDATE, and the voice tokens handed out there (stored hashed), checked by the hosting node.
 */
export const voice: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('voice_calls')
      // A guild voice channel or a lobby: the call's channel.
      .addColumn('channel_id', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('endpoint', 'text', (c) => c.notNull())
      .addColumn('alive_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('voice_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      // The guild, or the lobby of a lobby call: Identify's `server_id`.
      .addColumn('server_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('voice_tokens_user')
      .on('voice_tokens')
      .columns(['user_id', 'server_id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('voice_tokens').execute();
    await db.schema.dropTable('voice_calls').execute();
  },
};
