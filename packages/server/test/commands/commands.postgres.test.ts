import { ApplicationCommandTypes as T } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, createTestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { call, expectError } from '../guilds/moderation-support.js';

/**
 * The command store on PostgreSQL: the same routes as on SQLite, with counts (bigint there), the unique
 * name index per scope and type, JSON text columns, and the bulk overwrite's one transaction.
 */
const postgresUp = await postgresAvailable();
const postgres = postgresUp ? postgresSchema() : undefined;

afterAll(async () => {
  await postgres?.drop();
});

describe.skipIf(!postgresUp)('application commands on PostgreSQL', () => {
  let hearth: TestHearth;
  // Migrating a fresh schema is most of the time: it happens before the test, under the hook's limit.
  beforeAll(async () => {
    hearth = await startHearth({ databaseUrl: postgres?.url ?? '' });
  });
  afterAll(async () => {
    await hearth?.close();
  });

  it('creates, upserts, edits, overwrites, deletes and counts commands per scope', async () => {
    const guild = await createTestGuild(hearth);
    const game = await addTestBot(hearth, guild);
    const auth = `Bot ${game.botToken}`;
    const global = `/applications/${game.id}/commands`;
    const local = `/applications/${game.id}/guilds/${guild.id}/commands`;

    const created = await call(hearth, auth, 'POST', global, {
      name: 'greet',
      description: 'Greets',
      name_localizations: { fr: 'saluer' },
      options: [
        {
          type: 3,
          name: 'who',
          description: 'Who',
          required: true,
          choices: [{ name: 'all', value: 'all' }],
        },
      ],
    });
    expect(created.status).toBe(201);
    const upserted = await call(hearth, auth, 'POST', global, { name: 'greet', description: 'Greets again' });
    expect(upserted.status).toBe(200);
    expect(upserted.body.id).toBe(created.body.id);
    const edited = await call(hearth, auth, 'PATCH', `${global}/${created.body.id}`, { nsfw: true });
    expect(edited.body).toMatchObject({ nsfw: true, description: 'Greets again' });

    const users = Array.from({ length: 15 }, (_, i) => ({ name: `User ${i}`, type: T.User }));
    const overwritten = await call(hearth, auth, 'PUT', local, [
      ...users,
      { name: 'here', description: 'Here' },
    ]);
    expect(overwritten.status).toBe(200);
    expect(overwritten.items).toHaveLength(16);
    expectError(
      await call(hearth, auth, 'POST', local, { name: 'User 15', type: T.User }),
      400,
      30032,
      'Maximum number of application commands reached (15)',
    );
    // The same name in the other scope is another command.
    expect((await call(hearth, auth, 'POST', global, { name: 'User 0', type: T.User })).status).toBe(201);

    const deleted = await call(hearth, auth, 'DELETE', `${global}/${created.body.id}`);
    expect(deleted.status).toBe(204);
    expect((await call(hearth, auth, 'GET', global)).items.map((c) => c.name)).toEqual(['User 0']);
  });
});
