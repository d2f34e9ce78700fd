import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  Client,
  DiscordAPIError,
  Events,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame, type TestGame } from '../../../../test-support/oauth.js';

/**
 * The proof for commands: the unmodified discord.js 14 Client registers commands against Hearth
 * (only its base URL changed), and fails at the 16th user command with the interface's error.
 */

let hearth: TestHearth;
let guild: TestGuild;
let game: TestGame;
let client: Client;

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth, 'Commands Hall');
  game = await createGame(hearth, { name: 'djs commands' });
  const installed = await consent(hearth, guild.owner.token, {
    client_id: game.id,
    scope: 'bot applications.commands',
    permissions: '0',
    guild_id: guild.id,
  });
  expect(installed.status).toBe(200);
  client = new Client({ intents: [], rest: { api: `${hearth.url}/api` } });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(game.botToken);
  await ready;
});

afterAll(async () => {
  await client?.destroy();
  await hearth.close();
});

describe('discord.js 14 ApplicationCommandManager against Hearth', () => {
  it('sets global commands, creates one, edits it, and reads them back', async () => {
    const application = client.application;
    expect(application?.id).toBe(game.id);
    const set = await application!.commands.set([
      {
        name: 'roll',
        description: 'Rolls a die',
        options: [
          { type: ApplicationCommandOptionType.Integer, name: 'sides', description: 'Sides', minValue: 2 },
        ],
      },
      { name: 'Inspect', type: ApplicationCommandType.User },
    ]);
    expect(set.map((command) => command.name).toSorted()).toEqual(['Inspect', 'roll']);
    const roll = set.find((command) => command.name === 'roll');
    expect(roll?.options[0]).toMatchObject({ name: 'sides', minValue: 2 });

    const ping = await application!.commands.create({ name: 'ping', description: 'Pong' });
    expect(ping.applicationId).toBe(game.id);
    // discord.js patches its cached object in place: keep the first version to compare.
    const firstVersion = ping.version;
    const edited = await ping.edit({ description: 'Answers pong' });
    expect(edited.description).toBe('Answers pong');
    expect(edited.version).not.toBe(firstVersion);

    const fetched = await application!.commands.fetch();
    expect(fetched.map((command) => command.name).toSorted()).toEqual(['Inspect', 'ping', 'roll']);

    // Setting again keeps the id of a command listed by the same name.
    const again = await application!.commands.set([{ name: 'roll', description: 'Rolls dice' }]);
    expect(again.first()?.id).toBe(roll?.id);
  });

  it('registers guild commands through the guild manager', async () => {
    const created = await client.application!.commands.create(
      { name: 'local', description: 'Here only' },
      guild.id,
    );
    expect(created.guildId).toBe(guild.id);
    const listed = await client.application!.commands.fetch({ guildId: guild.id });
    expect(listed.map((command) => command.name)).toEqual(['local']);
  });

  it('fails at the 16th user command with DiscordAPIError 30032', async () => {
    const manager = client.application!.commands;
    await manager.set(
      Array.from({ length: 15 }, (_, i) => ({
        name: `Profile ${i}`,
        type: ApplicationCommandType.User as const,
      })),
    );
    const refused = await manager
      .create({ name: 'Profile 15', type: ApplicationCommandType.User })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DiscordAPIError);
    expect((refused as DiscordAPIError).code).toBe(30032);
    expect((refused as DiscordAPIError).status).toBe(400);
    expect((refused as DiscordAPIError).message).toBe('Maximum number of application commands reached (15)');
  });
});
