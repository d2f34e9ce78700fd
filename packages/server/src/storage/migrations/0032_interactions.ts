import type { Kysely, Migration } from 'kysely';

/**
 * Interactions (DOCS receiving-and-responding): each one with its token's hash and its response state;
 * the modals shown to users (a submit must answer one); the messages an interaction token may edit; each
 * application's interactions endpoint URL; and the deprecated `interaction` object of messages.
 */
export const interactions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('interactions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('guild_id', 'text')
      .addColumn('channel_id', 'text', (c) => c.notNull())
      /** The interaction object as delivered, without its token (JSON). */
      .addColumn('payload', 'text', (c) => c.notNull())
      /** The message a component or a component's modal was on. */
      .addColumn('source_message_id', 'text')
      .addColumn('nonce', 'text')
      /** Only USER_INSTALL authorized it: follow-ups are capped (seed: Limits). */
      .addColumn('user_install_only', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      /** The first response's callback type, once there is one. */
      .addColumn('response_type', 'integer')
      .addColumn('original_message_id', 'text')
      .addColumn('followups', 'integer', (c) => c.notNull().defaultTo(0))
      /** Whether the user's sessions were told the outcome (INTERACTION_SUCCESS / _FAILURE). */
      .addColumn('settled', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('interactions_unsettled')
      .on('interactions')
      .columns(['settled', 'created_at'])
      .execute();
    await db.schema
      .createTable('interaction_modals')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('interaction_id', 'text', (c) => c.notNull())
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('custom_id', 'text', (c) => c.notNull())
      /** The modal's components as shown (JSON): a submit is checked against them. */
      .addColumn('components', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('submitted', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('interaction_messages')
      .addColumn('message_id', 'text', (c) => c.primaryKey())
      .addColumn('interaction_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('original', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('interaction_messages_interaction')
      .on('interaction_messages')
      .column('interaction_id')
      .execute();
    await db.schema
      .createTable('interaction_endpoints')
      .addColumn('application_id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull())
      .execute();
    await db.schema.alterTable('messages').addColumn('interaction', 'text').execute();
  },
};
