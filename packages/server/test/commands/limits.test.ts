import { ApplicationCommandTypes as T } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, createTestGuild, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { type Answer, call, expectError } from '../guilds/moderation-support.js';

/**
 * Command limits per scope (seed, Limits: context menu commands 15 per type, one global entry point per
 * app; docs: 100 chat input), each at its edge and one past it, through create and through bulk overwrite.
 */

let hearth: TestHearth;
let guild: TestGuild;

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth);
});

afterAll(async () => {
  await hearth.close();
});

/** A fresh application whose bot is in the guild: its own empty scopes. */
async function freshBot() {
  const game = await addTestBot(hearth, guild);
  const auth = `Bot ${game.botToken}`;
  return {
    game,
    api: (method: string, path: string, body?: unknown): Promise<Answer> =>
      call(hearth, auth, method, path, body),
    global: `/applications/${game.id}/commands`,
    guild: `/applications/${game.id}/guilds/${guild.id}/commands`,
  };
}

const maximum = (max: number) =>
  [400, 30032, `Maximum number of application commands reached (${max})`] as const;
const chatInput = (i: number) => ({ name: `cmd-${i}`, description: `Command ${i}` });
const userCommand = (i: number) => ({ name: `User ${i}`, type: T.User });
const messageCommand = (i: number) => ({ name: `Message ${i}`, type: T.Message });
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('Limits by create (POST)', () => {
  it('takes a 100th chat input command and refuses the 101st, globally and in a guild', async () => {
    const bot = await freshBot();
    for (const path of [bot.global, bot.guild]) {
      // Bulk-create 99, then the 100th by POST is still accepted.
      expect((await bot.api('PUT', path, range(99).map(chatInput))).status).toBe(200);
      expect((await bot.api('POST', path, chatInput(99))).status).toBe(201);
      expectError(await bot.api('POST', path, chatInput(100)), ...maximum(100));
      // An upsert of an existing name is no new command.
      expect((await bot.api('POST', path, { ...chatInput(5), description: 'again' })).status).toBe(200);
    }
  });

  it('takes a 15th user and a 15th message command and refuses the 16th of each', async () => {
    const bot = await freshBot();
    for (const path of [bot.global, bot.guild]) {
      for (const make of [userCommand, messageCommand]) {
        // 14 at once (few requests, under the route's rate limit), then the 15th and 16th one by one.
        expect(
          (
            await bot.api(
              'PUT',
              path,
              range(14).map((i) => make(i)),
            )
          ).status,
        ).toBe(200);
        expect((await bot.api('POST', path, make(14))).status).toBe(201);
        expectError(await bot.api('POST', path, make(15)), ...maximum(15));
      }
    }
  });

  it('takes one global entry point and refuses a second', async () => {
    const bot = await freshBot();
    const launch = {
      name: 'launch',
      description: 'Launch the activity',
      type: T.PrimaryEntryPoint,
      handler: 2,
    };
    // Without Activities enabled (EMBEDDED) there is nothing to launch: refused, alone and in a bulk list.
    const refusal = {
      _errors: [
        {
          code: 'APPLICATION_COMMAND_PRIMARY_ENTRY_POINT_ACTIVITIES_DISABLED',
          message: 'Primary entry point commands require Activities to be enabled',
        },
      ],
    };
    expectError(await bot.api('POST', bot.global, launch), 400, 50035, 'Invalid Form Body', {
      type: refusal,
    });
    expectError(await bot.api('PUT', bot.global, [chatInput(1), launch]), 400, 50035, 'Invalid Form Body', {
      1: { type: refusal },
    });
    await hearth.services.applications.adminUpdate(bot.game.id, { grant_flags: ['Embedded'] });
    const created = await bot.api('POST', bot.global, launch);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ type: T.PrimaryEntryPoint, handler: 2 });
    expectError(await bot.api('POST', bot.global, { ...launch, name: 'start', handler: 1 }), ...maximum(1));
    // Without a handler it is no entry point; `handler` on another type is refused.
    const noHandler = await freshBot();
    await hearth.services.applications.adminUpdate(noHandler.game.id, { grant_flags: ['Embedded'] });
    expectError(
      await noHandler.api('POST', noHandler.global, { ...launch, handler: undefined }),
      400,
      50035,
      'Invalid Form Body',
      { handler: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
    );
    expectError(
      await noHandler.api('POST', noHandler.global, { ...chatInput(1), handler: 1 }),
      400,
      50035,
      'Invalid Form Body',
      {
        handler: {
          _errors: [
            {
              code: 'APPLICATION_COMMAND_FIELD_NOT_ALLOWED',
              message: 'This field is not allowed for this type',
            },
          ],
        },
      },
    );
  });
});

describe('Limits by bulk overwrite (PUT)', () => {
  it('takes 100 chat input, 15 user, 15 message and 1 entry point at once, and refuses one more of each', async () => {
    const bot = await freshBot();
    await hearth.services.applications.adminUpdate(bot.game.id, { grant_flags: ['Embedded'] });
    const launch = { name: 'launch', description: 'Launch', type: T.PrimaryEntryPoint, handler: 2 };
    const full = [
      ...range(100).map(chatInput),
      ...range(15).map(userCommand),
      ...range(15).map(messageCommand),
    ];
    const set = await bot.api('PUT', bot.global, full);
    expect(set.status).toBe(200);
    expect(set.items).toHaveLength(130);
    expectError(await bot.api('PUT', bot.global, [...range(101).map(chatInput)]), ...maximum(100));
    expectError(await bot.api('PUT', bot.global, [...range(16).map(userCommand)]), ...maximum(15));
    expectError(await bot.api('PUT', bot.global, [...range(16).map(messageCommand)]), ...maximum(15));
    expectError(await bot.api('PUT', bot.global, [launch, { ...launch, name: 'start' }]), ...maximum(1));
    // All or nothing: the refused lists changed nothing.
    expect((await bot.api('GET', bot.global)).items).toHaveLength(130);
    // 131 entries are past what a list may hold.
    expectError(await bot.api('PUT', bot.global, [...full, launch]), 400, 50035, 'Invalid Form Body', {
      _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 130 or fewer in length.' }],
    });
    expect((await bot.api('PUT', bot.guild, [...range(16).map(userCommand)])).status).toBe(400);
    expect((await bot.api('PUT', bot.guild, range(15).map(userCommand))).status).toBe(200);
  });
});
