import { ApplicationCommandOptionTypes as O, ApplicationCommandTypes as T } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { type Answer, call, expectError } from '../guilds/moderation-support.js';

/**
 * The rules of a command body (docs: Application Command Option Structure, choices, naming, localization,
 * size): each refusal at its own path of the 50035 tree.
 */

let hearth: TestHearth;
let game: TestGame;

beforeAll(async () => {
  hearth = await startHearth();
  game = await createGame(hearth);
});

afterAll(async () => {
  await hearth.close();
});

const post = (body: unknown): Promise<Answer> =>
  call(hearth, `Bot ${game.botToken}`, 'POST', `/applications/${game.id}/commands`, body);
const invalid = (errors: unknown) => [400, 50035, 'Invalid Form Body', errors] as const;
const leaf = (code: string, message: string) => ({ _errors: [{ code, message }] });
const str = (name: string, extra: Record<string, unknown> = {}) => ({
  type: O.String,
  name,
  description: `The ${name}`,
  ...extra,
});
let n = 0;
const command = (options: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `opt-${++n}`,
  description: 'Options',
  options,
  ...extra,
});

describe('Options', () => {
  it('stores options with choices, bounds and channel types, and answers them', async () => {
    const created = await post(
      command([
        str('query', { required: true, min_length: 0, max_length: 6000 }),
        {
          type: O.Integer,
          name: 'count',
          description: 'How many',
          min_value: -5,
          max_value: 5,
          choices: [{ name: 'one', value: 1 }],
        },
        { type: O.Number, name: 'ratio', description: 'Ratio', autocomplete: true, min_value: 0.5 },
        { type: O.Channel, name: 'where', description: 'Where', channel_types: [0, 2] },
        { type: O.Boolean, name: 'loud', description: 'Loud' },
      ]),
    );
    expect(created.status).toBe(201);
    expect(created.body.options).toEqual([
      {
        type: O.String,
        name: 'query',
        description: 'The query',
        required: true,
        min_length: 0,
        max_length: 6000,
      },
      {
        type: O.Integer,
        name: 'count',
        description: 'How many',
        choices: [{ name: 'one', value: 1 }],
        min_value: -5,
        max_value: 5,
      },
      { type: O.Number, name: 'ratio', description: 'Ratio', autocomplete: true, min_value: 0.5 },
      { type: O.Channel, name: 'where', description: 'Where', channel_types: [0, 2] },
      { type: O.Boolean, name: 'loud', description: 'Loud' },
    ]);
  });

  it('nests subcommands in groups, and refuses a group in a group or parameters beside subcommands', async () => {
    const sub = { type: O.Subcommand, name: 'add', description: 'Add', options: [str('what')] };
    const group = { type: O.SubcommandGroup, name: 'items', description: 'Items', options: [sub] };
    const nested = await post(command([group, { type: O.Subcommand, name: 'list', description: 'List' }]));
    expect(nested.status).toBe(201);
    expect(nested.body.options).toEqual([
      {
        type: O.SubcommandGroup,
        name: 'items',
        description: 'Items',
        options: [{ type: O.Subcommand, name: 'add', description: 'Add', options: [str('what')] }],
      },
      { type: O.Subcommand, name: 'list', description: 'List', options: [] },
    ]);
    const nesting = leaf(
      'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID',
      'Subcommands and groups cannot be mixed with parameters, nor nested deeper',
    );
    expectError(
      await post(command([{ ...group, options: [{ ...group, name: 'deeper' }] }])),
      ...invalid({ options: { '0': { options: { '0': { type: nesting } } } } }),
    );
    expectError(
      await post(command([sub, str('loose')])),
      ...invalid({ options: { '1': { type: nesting } } }),
    );
  });

  it('refuses a required option after an optional one, and two options of one name', async () => {
    expectError(
      await post(command([str('a'), str('b', { required: true })])),
      ...invalid({
        options: leaf(
          'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
          'Required options must be placed before non-required options',
        ),
      }),
    );
    expectError(
      await post(command([str('a'), str('a')])),
      ...invalid({
        options: {
          '1': {
            name: leaf(
              'APPLICATION_COMMAND_OPTIONS_DUPLICATE_NAME',
              'Option name a is already used in these options',
            ),
          },
        },
      }),
    );
  });

  it('takes 25 options and 25 choices, refuses 26 of either', async () => {
    const many = Array.from({ length: 25 }, (_, i) => str(`o${i}`));
    expect((await post(command(many))).status).toBe(201);
    expectError(
      await post(command([...many, str('o25')])),
      ...invalid({ options: leaf('BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.') }),
    );
    const choices = Array.from({ length: 25 }, (_, i) => ({ name: `c${i}`, value: `v${i}` }));
    expect((await post(command([str('pick', { choices })]))).status).toBe(201);
    expectError(
      await post(command([str('pick', { choices: [...choices, { name: 'c25', value: 'v25' }] })])),
      ...invalid({
        options: { '0': { choices: leaf('BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.') } },
      }),
    );
  });

  it('refuses autocomplete with choices, a choice value of the wrong type, and bounds out of range', async () => {
    expectError(
      await post(command([str('a', { autocomplete: true, choices: [{ name: 'x', value: 'x' }] })])),
      ...invalid({
        options: {
          '0': {
            autocomplete: leaf(
              'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID',
              'Autocomplete cannot be enabled on an option with choices',
            ),
          },
        },
      }),
    );
    expectError(
      await post(
        command([{ type: O.Integer, name: 'i', description: 'i', choices: [{ name: 'x', value: 'x' }] }]),
      ),
      ...invalid({
        options: {
          '0': { choices: { '0': { value: leaf('NUMBER_TYPE_COERCE', 'Value "x" is not int.') } } },
        },
      }),
    );
    expectError(
      await post(command([str('s', { max_length: 6001, min_length: -1 })])),
      ...invalid({
        options: {
          '0': {
            min_length: leaf('NUMBER_TYPE_MIN', 'int value should be greater than or equal to 0.'),
            max_length: leaf('NUMBER_TYPE_MAX', 'int value should be less than or equal to 6000.'),
          },
        },
      }),
    );
    expectError(
      await post(command([str('s', { max_length: 0 })])),
      ...invalid({
        options: {
          '0': { max_length: leaf('NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.') },
        },
      }),
    );
    expectError(
      await post(command([{ type: O.Boolean, name: 'b', description: 'b', min_value: 1 }])),
      ...invalid({
        options: {
          '0': {
            min_value: leaf(
              'APPLICATION_COMMAND_FIELD_NOT_ALLOWED',
              'This field is not allowed for this type',
            ),
          },
        },
      }),
    );
  });

  it('refuses options and a description on a context menu command', async () => {
    expectError(
      await post({ name: 'Menu', type: T.User, options: [str('a')] }),
      ...invalid({
        options: leaf('APPLICATION_COMMAND_FIELD_NOT_ALLOWED', 'This field is not allowed for this type'),
      }),
    );
    expectError(
      await post({ name: 'Menu', type: T.Message, description: 'words' }),
      ...invalid({
        description: leaf('APPLICATION_COMMAND_FIELD_NOT_ALLOWED', 'This field is not allowed for this type'),
      }),
    );
  });
});

describe('Descriptions, localizations, size', () => {
  it('needs a chat input description of 1 to 100 characters', async () => {
    expectError(
      await post({ name: 'nodesc' }),
      ...invalid({ description: leaf('BASE_TYPE_REQUIRED', 'This field is required') }),
    );
    const between = leaf('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    expectError(
      await post({ name: 'long', description: 'x'.repeat(101) }),
      ...invalid({ description: between }),
    );
    expectError(await post({ name: 'empty', description: '' }), ...invalid({ description: between }));
    expect((await post({ name: 'edge', description: 'x'.repeat(100) })).status).toBe(201);
  });

  it('takes localizations keyed by locale, refuses an unknown locale and a bad localized name', async () => {
    const created = await post({
      name: 'hello',
      description: 'Greets',
      name_localizations: { fr: 'bonjour', 'es-ES': 'hola' },
      description_localizations: { fr: 'Salue' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name_localizations: { fr: 'bonjour', 'es-ES': 'hola' },
      description_localizations: { fr: 'Salue' },
    });
    expectError(
      await post({ name: 'hello2', description: 'x', name_localizations: { xx: 'x', de: 'Hallo' } }),
      ...invalid({
        name_localizations: {
          xx: leaf('LOCALE_INVALID', 'Invalid locale: xx'),
          de: leaf('APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid'),
        },
      }),
    );
  });

  it('refuses a command whose texts together pass 8000 characters', async () => {
    // 25 options × (32 + 100) + choices of 25 × (100 + 100) on one option ≈ 8300.
    const options = Array.from({ length: 25 }, (_, i) =>
      str(`${'o'.repeat(30)}${String(i).padStart(2, '0')}`, {
        description: 'd'.repeat(100),
      }),
    );
    options[0] = {
      ...options[0],
      choices: Array.from({ length: 25 }, (_, i) => ({
        name: `${'n'.repeat(98)}${String(i).padStart(2, '0')}`,
        value: 'v'.repeat(100),
      })),
    } as (typeof options)[number];
    expectError(
      await post(command(options)),
      ...invalid({
        _errors: [{ code: 'APPLICATION_COMMAND_TOO_LARGE', message: 'Command exceeds maximum size (8000)' }],
      }),
    );
  });
});

describe('Contexts, install types, default permissions, deprecated dm_permission', () => {
  it('answers what was set, and dm_permission false leaves BOT_DM out of the contexts', async () => {
    const set = await post({
      name: 'ctx',
      description: 'x',
      contexts: [0, 2],
      integration_types: [1],
      default_member_permissions: '8',
      nsfw: true,
    });
    expect(set.body).toMatchObject({
      contexts: [0, 2],
      integration_types: [1],
      default_member_permissions: '8',
      nsfw: true,
      dm_permission: false,
    });
    const legacy = await post({ name: 'legacy', description: 'x', dm_permission: false });
    expect(legacy.body).toMatchObject({ contexts: [0, 2], dm_permission: false });
    const integer = await post({ name: 'intperm', description: 'x', default_member_permissions: 32 });
    expect(integer.body.default_member_permissions).toBe('32');
    expectError(
      await post({ name: 'badctx', description: 'x', contexts: [3], integration_types: [] }),
      ...invalid({
        contexts: { '0': leaf('BASE_TYPE_CHOICES', "Value must be one of ('0', '1', '2').") },
        integration_types: leaf('BASE_TYPE_MIN_LENGTH', 'Must be 1 or more in length.'),
      }),
    );
    expectError(
      await post({ name: 'badperm', description: 'x', default_member_permissions: 'all' }),
      ...invalid({ default_member_permissions: leaf('NUMBER_TYPE_COERCE', 'Value "all" is not int.') }),
    );
  });
});
