import { allChannelsPermissionId, GatewayIntents, GatewayOpcodes, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  authorizationCode,
  createGame,
  grantTokens,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';
import { type Answer, call, expectError, recordEvents } from '../guilds/moderation-support.js';

/**
 * Command permissions (docs: Permissions; GUILDS.md §6), client-credentials tokens, and the user-side
 * command index: what a member may run, by `default_member_permissions` and overwrites, and what stops
 * being offered when the bot leaves.
 */

let hearth: TestHearth;
let guild: TestGuild;
let game: TestGame;
let member: { id: string; token: string };
let bot: string;
/** The guild owner's bearer token for the game, holding applications.commands.permissions.update. */
let ownerBearer: string;

const api = (auth: string, method: string, path: string, body?: unknown): Promise<Answer> =>
  call(hearth, auth, method, path, body);
const commandsPath = () => `/applications/${game.id}/commands`;
const permissionsPath = (commandId: string) =>
  `/applications/${game.id}/guilds/${guild.id}/commands/${commandId}/permissions`;

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth);
  game = await addTestBot(hearth, guild);
  member = await addTestMember(hearth, guild);
  bot = `Bot ${game.botToken}`;
  const tokens = await grantTokens(
    hearth,
    game,
    guild.owner.token,
    'identify applications.commands.permissions.update',
  );
  ownerBearer = `Bearer ${tokens.access_token}`;
});

afterAll(async () => {
  await hearth.close();
});

describe('Client credentials tokens', () => {
  it('manage commands with applications.commands.update, and are refused without it (50026)', async () => {
    const issue = async (scope: string) => {
      const response = await tokenRequest(
        hearth,
        { grant_type: 'client_credentials', scope },
        { basic: [game.id, game.clientSecret] },
      );
      expect(response.status).toBe(200);
      return `Bearer ${((await response.json()) as { access_token: string }).access_token}`;
    };
    const manager = await issue('applications.commands.update');
    const created = await api(manager, 'POST', commandsPath(), { name: 'by-bearer', description: 'x' });
    expect(created.status).toBe(201);
    expect((await api(manager, 'GET', commandsPath())).items.map((c) => c.name)).toContain('by-bearer');
    expectError(
      await api(await issue('identify'), 'GET', commandsPath()),
      403,
      50026,
      'Missing required OAuth2 scope',
    );
  });
});

describe('Edit Application Command Permissions', () => {
  it('replaces the overwrites, answers them on GET, and sends APPLICATION_COMMAND_PERMISSIONS_UPDATE', async () => {
    const command = await api(bot, 'POST', commandsPath(), { name: 'guarded', description: 'x' });
    // No overwrites yet: the platform answers 10066 rather than an empty list.
    expectError(
      await api(bot, 'GET', permissionsPath(String(command.body.id))),
      404,
      10066,
      'Unknown application command permissions',
    );
    const events = recordEvents(hearth);
    const body = { permissions: [{ id: member.id, type: 2, permission: false }] };
    const edited = await api(ownerBearer, 'PUT', permissionsPath(String(command.body.id)), body);
    expect(edited.status).toBe(200);
    const expected = {
      id: command.body.id,
      application_id: game.id,
      guild_id: guild.id,
      permissions: [{ id: member.id, type: 2, permission: false }],
    };
    expect(edited.body).toEqual(expected);
    expect((await api(bot, 'GET', permissionsPath(String(command.body.id)))).body).toEqual(expected);
    const all = await api(bot, 'GET', `/applications/${game.id}/guilds/${guild.id}/commands/permissions`);
    expect(all.items).toEqual([expected]);
    await expect.poll(() => events.of('APPLICATION_COMMAND_PERMISSIONS_UPDATE').length).toBe(1);
    expect(events.of('APPLICATION_COMMAND_PERMISSIONS_UPDATE')[0]).toMatchObject({
      data: expected,
      audience: { guildId: guild.id },
    });
    events.stop();
  });

  it("reaches the guild's gateway sessions, the application's bot among them", async () => {
    const session = await GatewayClient.connect(hearth.url);
    await session.nextOp(GatewayOpcodes.Hello);
    session.send({
      op: GatewayOpcodes.Identify,
      d: {
        token: game.botToken,
        intents: GatewayIntents.Guilds,
        properties: { os: 'linux', browser: 'hearth-test', device: 'hearth-test' },
      },
    });
    await session.nextDispatch('READY');
    await session.nextDispatch('GUILD_CREATE');
    const edited = await api(ownerBearer, 'PUT', permissionsPath(game.id), {
      permissions: [{ id: guild.id, type: 1, permission: true }],
    });
    const frame = await session.nextDispatch('APPLICATION_COMMAND_PERMISSIONS_UPDATE');
    expect(frame.d).toEqual(edited.body);
    expect(edited.body).toEqual({
      id: game.id,
      application_id: game.id,
      guild_id: guild.id,
      permissions: [{ id: guild.id, type: 1, permission: true }],
    });
    await session.close();
  });

  it('takes the application id for overwrites of every command, and 100 entries but not 101', async () => {
    const entries = Array.from({ length: 101 }, (_, i) => ({
      id: String(BigInt(guild.id) + BigInt(i + 10)),
      type: 2,
      permission: true,
    }));
    const edge = await api(ownerBearer, 'PUT', permissionsPath(game.id), {
      permissions: entries.slice(0, 100),
    });
    expect(edge.status).toBe(200);
    expect(edge.body.id).toBe(game.id);
    expectError(
      await api(ownerBearer, 'PUT', permissionsPath(game.id), { permissions: entries }),
      400,
      50035,
      'Invalid Form Body',
      {
        permissions: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 100 or fewer in length.' }],
        },
      },
    );
    expectError(
      await api(ownerBearer, 'PUT', permissionsPath(game.id), { permissions: [{ id: 'x', type: 4 }] }),
      400,
      50035,
      'Invalid Form Body',
    );
    // Clearing them again, so the index below starts from no application-wide overwrite.
    expect((await api(ownerBearer, 'PUT', permissionsPath(game.id), { permissions: [] })).status).toBe(200);
  });

  it('refuses a bot token (20001), a user who cannot manage the guild (50013), an unknown command (10063)', async () => {
    const command = await api(bot, 'POST', commandsPath(), { name: 'refusals', description: 'x' });
    const path = permissionsPath(String(command.body.id));
    expectError(
      await api(bot, 'PUT', path, { permissions: [] }),
      403,
      20001,
      'Bots cannot use this endpoint',
    );
    const memberTokens = await grantTokens(
      hearth,
      game,
      member.token,
      'applications.commands.permissions.update',
    );
    expectError(
      await api(`Bearer ${memberTokens.access_token}`, 'PUT', path, { permissions: [] }),
      403,
      50013,
      'Missing Permissions',
    );
    expectError(
      await api(ownerBearer, 'PUT', permissionsPath('123456789012345'), { permissions: [] }),
      404,
      10063,
      'Unknown application command',
    );
    const other = await addTestBot(hearth, guild);
    expectError(
      await api(
        ownerBearer,
        'PUT',
        `/applications/${other.id}/guilds/${guild.id}/commands/${other.id}/permissions`,
        { permissions: [] },
      ),
      403,
      20012,
      'You are not authorized to perform this action on this application',
    );
  });
});

describe('Application command index', () => {
  it('lists what a member may run: default_member_permissions, overwrites, administrators', async () => {
    const indexed = await addTestBot(hearth, guild);
    const auth = `Bot ${indexed.botToken}`;
    const path = `/applications/${indexed.id}/commands`;
    const open = await api(auth, 'POST', path, { name: 'open', description: 'For everyone' });
    const closed = await api(auth, 'POST', path, {
      name: 'closed',
      description: 'Admins',
      default_member_permissions: '0',
    });
    const managers = await api(auth, 'POST', path, {
      name: 'managers',
      description: 'Managers',
      default_member_permissions: PermissionFlags.ManageGuild.toString(),
    });
    const dmOnly = await api(auth, 'POST', path, { name: 'dm-only', description: 'DMs', contexts: [1] });
    const namesFor = async (token: string) => {
      const index = await api(token, 'GET', `/guilds/${guild.id}/application-command-index`);
      expect(index.status).toBe(200);
      return (index.body.application_commands as Array<{ name: string; application_id: string }>)
        .filter((c) => c.application_id === indexed.id)
        .map((c) => c.name)
        .toSorted();
    };
    expect(await namesFor(member.token)).toEqual(['open']);
    // The owner holds every permission, as an administrator.
    expect(await namesFor(guild.owner.token)).toEqual(['closed', 'managers', 'open']);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [member.id]);
    expect(await namesFor(member.token)).toEqual(['managers', 'open']);
    const index = await api(member.token, 'GET', `/guilds/${guild.id}/application-command-index`);
    expect(index.body.applications).toContainEqual({
      id: indexed.id,
      name: expect.any(String),
      description: expect.any(String),
      icon: null,
      bot_id: indexed.botUserId,
    });
    expect(dmOnly.status).toBe(201);
    expect(open.status).toBe(201);

    // A user overwrite opens "closed" to the member; an all-channels deny shuts "open" everywhere.
    const ownerToken = await grantTokens(
      hearth,
      indexed,
      guild.owner.token,
      'applications.commands.permissions.update',
    );
    const put = (commandId: string, permissions: unknown[]) =>
      api(
        `Bearer ${ownerToken.access_token}`,
        'PUT',
        `/applications/${indexed.id}/guilds/${guild.id}/commands/${commandId}/permissions`,
        {
          permissions,
        },
      );
    expect((await put(String(closed.body.id), [{ id: member.id, type: 2, permission: true }])).status).toBe(
      200,
    );
    expect(
      (
        await put(String(open.body.id), [
          { id: allChannelsPermissionId(guild.id), type: 3, permission: false },
        ])
      ).status,
    ).toBe(200);
    expect(await namesFor(member.token)).toEqual(['closed', 'managers']);
    expect(managers.status).toBe(201);

    // The bot leaves: its commands stop being offered in the guild, and still exist.
    const left = await call(hearth, auth, 'DELETE', `/users/@me/guilds/${guild.id}`);
    expect(left.status).toBe(204);
    expect(await namesFor(member.token)).toEqual([]);
    expect((await api(auth, 'GET', path)).items).toHaveLength(4);
    await expect(
      hearth.services.commands.getCommand(indexed.id, String(open.body.id)),
    ).resolves.toMatchObject({
      name: 'open',
    });
  });

  it("refuses a guild's index to a non-member (50001) and to bots (20001)", async () => {
    const outsider = await createTestGuild(hearth);
    expectError(
      await api(outsider.owner.token, 'GET', `/guilds/${guild.id}/application-command-index`),
      403,
      50001,
      'Missing Access',
    );
    expectError(
      await api(bot, 'GET', `/guilds/${guild.id}/application-command-index`),
      403,
      20001,
      'Bots cannot use this endpoint',
    );
    const mine = await api(member.token, 'GET', '/users/@me/application-command-index');
    expect(mine.body).toEqual({ applications: [], application_commands: [] });
  });

  it("offers a user-installed application's commands in private channels and in guilds, by contexts and install types", async () => {
    const installed = await createGame(hearth);
    const auth = `Bot ${installed.botToken}`;
    const path = `/applications/${installed.id}/commands`;
    await api(auth, 'PUT', path, [
      { name: 'anywhere', description: 'x', integration_types: [1], contexts: [0, 1, 2] },
      { name: 'private', description: 'x', integration_types: [1], contexts: [2] },
      { name: 'guild-install', description: 'x', integration_types: [0] },
    ]);
    // Before the user installs it, nothing of it is offered.
    const before = await api(member.token, 'GET', '/users/@me/application-command-index');
    expect(before.body.application_commands).toEqual([]);
    await authorizationCode(hearth, installed, member.token, {
      scope: 'applications.commands',
      integration_type: '1',
    });
    const mine = await api(member.token, 'GET', '/users/@me/application-command-index');
    expect((mine.body.application_commands as Array<{ name: string }>).map((c) => c.name).toSorted()).toEqual(
      ['anywhere', 'private'],
    );
    expect(mine.body.applications).toEqual([
      {
        id: installed.id,
        name: expect.any(String),
        description: expect.any(String),
        icon: null,
        bot_id: installed.botUserId,
      },
    ]);
    const inGuild = await hearth.services.commandIndex.usableCommands(member.id, {
      context: 0,
      guildId: guild.id,
    });
    const ofInstalled = inGuild.filter((entry) => entry.command.application_id === installed.id);
    expect(ofInstalled.map((entry) => entry.command.name)).toEqual(['anywhere']);
    expect(ofInstalled[0]?.authorizingIntegrationOwners).toEqual({ '1': member.id });
    const inDm = await hearth.services.commandIndex.usableCommands(member.id, {
      context: 1,
      applicationId: installed.id,
    });
    expect(inDm.map((entry) => entry.command.name)).toEqual(['anywhere']);
    // Once its bot shares a guild with the user, its guild-install commands run in the bot DM too.
    await hearth.services.guilds.addMember(guild.id, installed.botUserId);
    const shared = await hearth.services.commandIndex.usableCommands(member.id, {
      context: 1,
      applicationId: installed.id,
    });
    expect(shared.map((entry) => entry.command.name)).toEqual(['anywhere', 'guild-install']);
    expect(shared[1]?.authorizingIntegrationOwners).toEqual({ '0': '0', '1': member.id });
  });
});
