import { ApplicationCommandTypes as T } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, createTestGuild, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { type Answer, call, expectError } from '../guilds/moderation-support.js';

/**
 * Application commands over HTTP (GUILDS.md §6; docs: Application Commands): create-or-upsert, get, edit,
 * delete, list, global and per guild, with the platform's codes for refusals.
 */

let hearth: TestHearth;
let guild: TestGuild;
let game: TestGame;
let other: TestGame;
let bot: string;

const api = (auth: string, method: string, path: string, body?: unknown): Promise<Answer> =>
  call(hearth, auth, method, path, body);
const globalPath = (app = game.id) => `/applications/${app}/commands`;
const guildPath = (guildId = guild.id, app = game.id) => `/applications/${app}/guilds/${guildId}/commands`;

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth);
  game = await addTestBot(hearth, guild);
  other = await createGame(hearth);
  bot = `Bot ${game.botToken}`;
});

afterAll(async () => {
  await hearth.close();
});

describe('Create Global Application Command', () => {
  it('answers 201 with the command object, then 200 keeping the id when the name and type exist', async () => {
    const created = await api(bot, 'POST', globalPath(), { name: 'ping', description: 'Answers pong' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      type: T.ChatInput,
      application_id: game.id,
      name: 'ping',
      name_localizations: null,
      description: 'Answers pong',
      description_localizations: null,
      options: [],
      default_member_permissions: null,
      dm_permission: true,
      contexts: null,
      integration_types: [0, 1],
      nsfw: false,
      version: expect.any(String),
    });
    const again = await api(bot, 'POST', globalPath(), { name: 'ping', description: 'Answers pong again' });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(created.body.id);
    expect(again.body.description).toBe('Answers pong again');
    expect(again.body.version).not.toBe(created.body.version);

    const fetched = await api(bot, 'GET', `${globalPath()}/${created.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(again.body);
    const listed = await api(bot, 'GET', globalPath());
    expect(listed.items.map((c) => c.name)).toContain('ping');
    // Lists leave localizations out unless asked for.
    expect(listed.items[0]).not.toHaveProperty('name_localizations');
    const localized = await api(bot, 'GET', `${globalPath()}?with_localizations=true`);
    expect(localized.items[0]).toHaveProperty('name_localizations', null);
  });

  it('takes a user and a message command with the same name as a chat input one', async () => {
    const user = await api(bot, 'POST', globalPath(), { name: 'Ping Me', type: T.User });
    expect(user.status).toBe(201);
    expect(user.body).toMatchObject({ type: T.User, name: 'Ping Me', description: '' });
    expect(user.body).not.toHaveProperty('options');
    const message = await api(bot, 'POST', globalPath(), { name: 'ping', type: T.Message, description: '' });
    expect(message.status).toBe(201);
  });

  it('refuses a body without a name, a name in capitals, too long, or with a space (chat input)', async () => {
    expectError(await api(bot, 'POST', globalPath(), { description: 'x' }), 400, 50035, 'Invalid Form Body', {
      name: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
    });
    const invalid = {
      _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' }],
    };
    expectError(
      await api(bot, 'POST', globalPath(), { name: 'Ping', description: 'x' }),
      400,
      50035,
      'Invalid Form Body',
      {
        name: invalid,
      },
    );
    expectError(
      await api(bot, 'POST', globalPath(), { name: 'two words', description: 'x' }),
      400,
      50035,
      'Invalid Form Body',
      { name: invalid },
    );
    expectError(
      await api(bot, 'POST', globalPath(), { name: 'a'.repeat(33), description: 'x' }),
      400,
      50035,
      'Invalid Form Body',
      {
        name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 32 in length.' }] },
      },
    );
    // 32 characters, Devanagari and apostrophes included, is a name.
    const edge = await api(bot, 'POST', globalPath(), {
      name: `नमस्ते-it's_${'x'.repeat(20)}`,
      description: 'x',
    });
    expect(edge.status).toBe(201);
  });

  it('refuses a wrong type of field: a number as name, a string as type, an unknown type', async () => {
    expectError(
      await api(bot, 'POST', globalPath(), { name: 5, description: 'x' }),
      400,
      50035,
      'Invalid Form Body',
      {
        name: { _errors: [{ code: 'BASE_TYPE_STRING', message: 'Could not interpret "5" as string.' }] },
      },
    );
    expectError(
      await api(bot, 'POST', globalPath(), { name: 'a', description: 'x', type: '1' }),
      400,
      50035,
      'Invalid Form Body',
      {
        type: { _errors: [{ code: 'NUMBER_TYPE_COERCE', message: 'Value "1" is not int.' }] },
      },
    );
    expectError(
      await api(bot, 'POST', globalPath(), { name: 'a', description: 'x', type: 9 }),
      400,
      50035,
      'Invalid Form Body',
      {
        type: {
          _errors: [{ code: 'BASE_TYPE_CHOICES', message: "Value must be one of ('1', '2', '3', '4')." }],
        },
      },
    );
    expectError(await api(bot, 'POST', globalPath(), [1]), 400, 50035, 'Invalid Form Body', {
      _errors: [{ code: 'MODEL_TYPE_CONVERT', message: 'Only dictionaries may be used in a ModelType' }],
    });
  });

  it("refuses another application's token (20012) and a user's session (20002)", async () => {
    expectError(
      await api(`Bot ${other.botToken}`, 'POST', globalPath(), { name: 'x', description: 'x' }),
      403,
      20012,
      'You are not authorized to perform this action on this application',
    );
    expectError(
      await api(guild.owner.token, 'GET', globalPath()),
      403,
      20002,
      'Only bots can use this endpoint',
    );
  });
});

describe('Get, Edit and Delete Global Application Command', () => {
  it('edits the given fields, keeps the others, renews the version; 40041 renaming onto another', async () => {
    const a = await api(bot, 'POST', globalPath(), { name: 'edit-a', description: 'first' });
    await api(bot, 'POST', globalPath(), { name: 'edit-b', description: 'second' });
    const edited = await api(bot, 'PATCH', `${globalPath()}/${a.body.id}`, {
      default_member_permissions: '32',
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({
      name: 'edit-a',
      description: 'first',
      default_member_permissions: '32',
    });
    expect(edited.body.version).not.toBe(a.body.version);
    expectError(
      await api(bot, 'PATCH', `${globalPath()}/${a.body.id}`, { name: 'edit-b' }),
      400,
      40041,
      'An application command with that name already exists',
    );
    const deleted = await call(hearth, bot, 'DELETE', `${globalPath()}/${a.body.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.empty).toBe(true);
    expectError(
      await api(bot, 'GET', `${globalPath()}/${a.body.id}`),
      404,
      10063,
      'Unknown application command',
    );
  });

  it("answers 10063 for another application's command id", async () => {
    const theirs = await api(`Bot ${other.botToken}`, 'POST', globalPath(other.id), {
      name: 'mine',
      description: 'x',
    });
    expect(theirs.status).toBe(201);
    expectError(
      await api(bot, 'GET', `${globalPath()}/${theirs.body.id}`),
      404,
      10063,
      'Unknown application command',
    );
    expectError(
      await api(bot, 'DELETE', `${globalPath()}/${theirs.body.id}`),
      404,
      10063,
      'Unknown application command',
    );
  });
});

describe('Guild Application Commands', () => {
  it('creates, lists and gets a guild command carrying guild_id', async () => {
    const created = await api(bot, 'POST', guildPath(), { name: 'local', description: 'Only here' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ guild_id: guild.id, name: 'local', contexts: null });
    expect(created.body).not.toHaveProperty('dm_permission');
    const listed = await api(bot, 'GET', guildPath());
    expect(listed.items.map((c) => c.id)).toEqual([created.body.id]);
    // A guild command is not one of the global ones, nor found through the global route.
    expectError(
      await api(bot, 'GET', `${globalPath()}/${created.body.id}`),
      404,
      10063,
      'Unknown application command',
    );
  });

  it('refuses a guild the bot is not in (50001) and an unknown guild (10004)', async () => {
    const elsewhere = await createTestGuild(hearth);
    expectError(await api(bot, 'GET', guildPath(elsewhere.id)), 403, 50001, 'Missing Access');
    expectError(
      await api(bot, 'POST', guildPath(elsewhere.id), { name: 'x', description: 'x' }),
      403,
      50001,
      'Missing Access',
    );
    expectError(await api(bot, 'GET', guildPath('1234567890123')), 404, 10004, 'Unknown Guild');
  });

  it('refuses a PRIMARY_ENTRY_POINT guild command', async () => {
    expectError(
      await api(bot, 'POST', guildPath(), {
        name: 'launch',
        description: 'x',
        type: T.PrimaryEntryPoint,
        handler: 2,
      }),
      400,
      50035,
      'Invalid Form Body',
      {
        type: {
          _errors: [
            {
              code: 'APPLICATION_COMMAND_PRIMARY_ENTRY_POINT_GUILD_INVALID',
              message: 'Primary entry point commands cannot be guild commands',
            },
          ],
        },
      },
    );
  });
});
