import {
  Client as CoreClient,
  GatewayDispatchEvents,
  type GatewayGuildCreateDispatchData,
} from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { WebSocketManager } from '@discordjs/ws';
import { PermissionFlags } from '@hearth/protocol';
import { ChannelType, Client, DiscordAPIError, Events, GatewayIntentBits } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame, type TestGame } from '../../../../test-support/oauth.js';

/**
 * The proof: unmodified discord.js 14 and @discordjs/core against Hearth, changing only the base URL.
 * The REST steps (channels, roles, members) use routes built on the other guild branches.
 */

const { ViewChannel, SendMessages, ManageChannels, ManageRoles, ManageNicknames } = PermissionFlags;
const BOT_PERMISSIONS = ViewChannel | SendMessages | ManageChannels | ManageRoles | ManageNicknames;

let hearth: TestHearth;
let guild: TestGuild;
let member: { id: string; token: string };
const clients: Array<{ destroy(): unknown }> = [];

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth, 'discord.js Hall');
  member = await addTestMember(hearth, guild);
  await seedTestChannel(hearth, guild.id, { id: String(BigInt(guild.id) + 7n), name: 'general' });
});

afterAll(async () => {
  for (const client of clients) await client.destroy();
  await hearth.close();
});

/** A bot installed through the `bot` scope by the guild's owner, as a person would on the consent page. */
async function installedBot(name: string): Promise<TestGame> {
  const game = await createGame(hearth, { name });
  const response = await consent(hearth, guild.owner.token, {
    client_id: game.id,
    scope: 'bot applications.commands',
    permissions: BOT_PERMISSIONS.toString(),
    guild_id: guild.id,
  });
  expect(response.status).toBe(200);
  return game;
}

describe('discord.js 14 Client against Hearth', () => {
  it('logs in as an installed bot and is ready with the guild, its channels and roles, without the 15 s wait', async () => {
    const game = await installedBot('djs bot');
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: `${hearth.url}/api` },
    });
    clients.push(client);
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    await client.login(game.botToken);
    await ready;

    const cached = client.guilds.cache.get(guild.id);
    expect(cached?.name).toBe('discord.js Hall');
    expect(cached?.available).toBe(true);
    expect(cached?.channels.cache.map((channel) => channel.name)).toEqual(['general']);
    const roleNames = cached?.roles.cache.map((role) => role.name).toSorted();
    expect(roleNames).toEqual(['@everyone', 'djs bot']);
    expect(cached?.members.me?.roles.cache.find((role) => role.managed)?.tags?.botId).toBe(game.botUserId);

    // REST through its own methods (routes of the guild, channel and member branches).
    const channel = await cached!.channels.create({ name: 'made-by-djs', type: ChannelType.GuildText });
    expect(channel.name).toBe('made-by-djs');
    const role = await cached!.roles.create({ name: 'djs-role' });
    expect(role.name).toBe('djs-role');
    const target = await cached!.members.fetch(member.id);
    const renamed = await target.setNickname('Renamed');
    expect(renamed.nickname).toBe('Renamed');

    // The managed role lacks KICK_MEMBERS: the platform's 50013.
    const refused = await cached!.members.kick(member.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DiscordAPIError);
    expect((refused as DiscordAPIError).code).toBe(50013);
    expect((refused as DiscordAPIError).status).toBe(403);
  }, 5_000);
});

describe('@discordjs/core Client against Hearth', () => {
  it('receives GUILD_CREATE through its gateway and reads the guild through REST', async () => {
    const game = await installedBot('core bot');
    const rest = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(game.botToken);
    const gateway = new WebSocketManager({ token: game.botToken, intents: GatewayIntentBits.Guilds, rest });
    clients.push(gateway);
    const client = new CoreClient({ rest, gateway });
    const created = new Promise<GatewayGuildCreateDispatchData>((resolve) =>
      client.on(GatewayDispatchEvents.GuildCreate, ({ data }) => resolve(data)),
    );
    await gateway.connect();
    const data = await created;
    expect(data).toMatchObject({ id: guild.id, name: 'discord.js Hall', unavailable: false });
    // The discord.js suite above may have added its channel to the same guild first.
    expect(data.channels.map((channel) => channel.name)).toContain('general');

    const fetched = await client.api.guilds.get(guild.id);
    expect(fetched).toMatchObject({ id: guild.id, name: 'discord.js Hall' });
  }, 5_000);
});
