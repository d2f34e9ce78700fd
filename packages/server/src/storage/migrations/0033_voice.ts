import type { Kysely, Migration } from 'kysely';

/**
 * Voice (PROTOCOL.md §G): which node hosts each call, so that every node names the same endpoint in
 * VOICE_SERVER_UPDATE, the voice tokens handed out there (stored hashed, checked by the hosting node), and
 * who is in each lobby call.
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
    // Who is in each lobby's call (the SDK's lobby calls): one call per gateway session at a time.
    await db.schema
      .createTable('lobby_voice_states')
      .addColumn('lobby_id', 'text', (c) => c.notNull().references('lobbies.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('self_mute', 'integer', (c) => c.notNull())
      .addColumn('self_deaf', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('lobby_voice_states_pk', ['lobby_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('lobby_voice_states_session')
      .on('lobby_voice_states')
      .columns(['user_id', 'session_id'])
      .execute();
    await db.schema
      .createIndex('voice_tokens_user')
      .on('voice_tokens')
      .columns(['user_id', 'server_id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('lobby_voice_states').execute();
    await db.schema.dropTable('voice_tokens').execute();
    await db.schema.dropTable('voice_calls').execute();
  },
};
