import type { Kysely, Migration } from 'kysely';

/**
 * Calls in DMs (PROTOCOL.md §G; the platform's private calls): the call of each DM channel while it has
 * someone in it, with its system message and who is still being rung; who is in which call (one private
 * call per user, as one voice connection outside guilds); and the `call` object of CALL (type 3) messages.
 */
export const dmCalls: Migration = {
  async up(db: Kysely<unknown>) {
    // `{participants, ended_timestamp}` as JSON on CALL messages; null on every other message.
    await db.schema.alterTable('messages').addColumn('call', 'text').execute();
    await db.schema
      .createTable('dm_calls')
      .addColumn('channel_id', 'text', (c) => c.primaryKey())
      .addColumn('message_id', 'text', (c) => c.notNull())
      // JSON array of the recipients rung and not yet in the call.
      .addColumn('ringing', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('dm_voice_states')
      .addColumn('user_id', 'text', (c) => c.primaryKey())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('self_mute', 'integer', (c) => c.notNull())
      .addColumn('self_deaf', 'integer', (c) => c.notNull())
      .addColumn('self_video', 'integer', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('dm_voice_states_channel')
      .on('dm_voice_states')
      .column('channel_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('dm_voice_states').execute();
    await db.schema.dropTable('dm_calls').execute();
    await db.schema.alterTable('messages').dropColumn('call').execute();
  },
};
