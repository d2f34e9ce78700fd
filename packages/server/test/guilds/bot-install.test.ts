import { AuditLogEvents, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestMember, createTestGuild, grantTestRole } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { consent, createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';

const PERMISSIONS = (PermissionFlags.SendMessages | PermissionFlags.ViewChannel).toString();

let hearth: TestHearth;
beforeAll(async () => {
  hearth = await startHearth();
});
afterAll(() => hearth.close());

function botParams(game: TestGame, extra: Record<string, string> = {}) {
  return { client_id: game.id, scope: 'bot', permissions: PERMISSIONS, ...extra };
}

async function managedRole(guildId: string, botUserId: string) {
  return hearth.storage.db
    .selectFrom('guild_roles')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('bot_id', '=', botUserId)
    .executeTakeFirst();
}

describe('OAuth2 Bot Authorization Flow: the bot scope', () => {
  it('adds the bot with a managed role named after the application holding the requested permissions', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth, { name: 'Lantern' });
    const response = await consent(hearth, guild.owner.token, botParams(game, { guild_id: guild.id }));
    expect(response.status).toBe(200);
    const { location } = (await response.json()) as { location: string };
    // No redirect URI was asked for and no code grant: the flow ends on the server's page.
    const url = new URL(location);
    expect(url.pathname).toBe('/oauth2/authorized');
    expect(Object.fromEntries(url.searchParams)).toEqual({ guild_id: guild.id, permissions: PERMISSIONS });

    const role = await managedRole(guild.id, game.botUserId);
    expect(role).toMatchObject({ name: 'Lantern', managed: 1, permissions: PERMISSIONS, position: 1 });
    const member = await hearth.api(`/users/@me/guilds`, { auth: `Bot ${game.botToken}` });
    expect(((await member.json()) as Array<{ id: string }>).map((g) => g.id)).toEqual([guild.id]);
    const roles = await hearth.storage.db
      .selectFrom('guild_member_roles')
      .select('role_id')
      .where('user_id', '=', game.botUserId)
      .execute();
    expect(roles).toEqual([{ role_id: role!.id }]);
  });

  it('records BOT_ADD in the audit log: the installer as its user, the bot as its target', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    await consent(hearth, guild.owner.token, botParams(game, { guild_id: guild.id }));
    const entries = await hearth.storage.db
      .selectFrom('audit_log_entries')
      .selectAll()
      .where('guild_id', '=', guild.id)
      .execute();
    expect(entries).toEqual([
      expect.objectContaining({
        action_type: AuditLogEvents.BotAdd,
        user_id: guild.owner.id,
        target_id: game.botUserId,
      }),
    ]);
  });

  it('queues APPLICATION_AUTHORIZED with integration_type 0, the installer and the guild', async () => {
    const guild = await createTestGuild(hearth, 'Webhook Guild');
    const game = await createGame(hearth);
    await consent(hearth, guild.owner.token, botParams(game, { guild_id: guild.id }));
    const rows = await hearth.storage.db
      .selectFrom('outbox')
      .selectAll()
      .where('type', '=', 'APPLICATION_AUTHORIZED')
      .where('application_id', '=', game.id)
      .execute();
    expect(rows).toHaveLength(1);
    const payload = JSON.parse(rows[0]!.payload) as Record<string, unknown>;
    const data = (payload['data'] ?? payload) as Record<string, unknown>;
    expect(data).toMatchObject({
      integration_type: 0,
      user: expect.objectContaining({ id: guild.owner.id }),
      scopes: ['bot'],
      guild: expect.objectContaining({ id: guild.id, name: 'Webhook Guild' }),
    });
  });

  it('authorizing again updates the managed role permissions instead of adding a second role', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    await consent(hearth, guild.owner.token, botParams(game, { guild_id: guild.id }));
    const admin = PermissionFlags.Administrator.toString();
    await consent(hearth, guild.owner.token, botParams(game, { guild_id: guild.id, permissions: admin }));
    const roles = await hearth.storage.db
      .selectFrom('guild_roles')
      .select(['permissions'])
      .where('bot_id', '=', game.botUserId)
      .execute();
    expect(roles).toEqual([{ permissions: admin }]);
  });

  it('the guild and permissions chosen on the consent page win over the URL', async () => {
    const first = await createTestGuild(hearth);
    const chosen = await createTestGuild(hearth);
    const game = await createGame(hearth);
    const response = await hearth.api(
      `/oauth2/authorize?${new URLSearchParams(botParams(game, { guild_id: first.id }))}`,
      {
        method: 'POST',
        auth: chosen.owner.token,
        body: { authorize: true, guild_id: chosen.id, permissions: '2048' },
      },
    );
    expect(response.status).toBe(200);
    expect(await managedRole(chosen.id, game.botUserId)).toMatchObject({ permissions: '2048' });
    expect(await managedRole(first.id, game.botUserId)).toBeUndefined();
  });

  it('with a code grant too (bot identify + redirect_uri), the redirect carries code, guild_id and permissions', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    const response = await consent(
      hearth,
      guild.owner.token,
      botParams(game, {
        scope: 'bot identify',
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1/callback',
        guild_id: guild.id,
      }),
    );
    const url = new URL(((await response.json()) as { location: string }).location);
    expect(url.origin + url.pathname).toBe('http://127.0.0.1/callback');
    expect(url.searchParams.get('code')).toMatch(/.+/);
    expect(url.searchParams.get('guild_id')).toBe(guild.id);
    expect(url.searchParams.get('permissions')).toBe(PERMISSIONS);
  });

  it('accepts the seed spelling application.commands as applications.commands', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    const response = await consent(
      hearth,
      guild.owner.token,
      botParams(game, { scope: 'bot application.commands', guild_id: guild.id }),
    );
    expect(response.status).toBe(200);
    const authorizePage = await fetch(
      `${hearth.url}/oauth2/authorize?${new URLSearchParams({ client_id: game.id, scope: 'bot application.commands' })}`,
    );
    expect(authorizePage.status).toBe(200);
    expect(await authorizePage.text()).toContain('data-scope="applications.commands"');
  });
});

describe('OAuth2 Bot Authorization Flow: refusals', () => {
  it('without guild_id: 50035 with errors.guild_id BASE_TYPE_REQUIRED', async () => {
    const player = await createPlayer(hearth);
    const game = await createGame(hearth);
    const response = await consent(hearth, player.token, botParams(game));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { guild_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
    });
  });

  it('an unknown guild: 10004 Unknown Guild', async () => {
    const player = await createPlayer(hearth);
    const game = await createGame(hearth);
    const response = await consent(hearth, player.token, botParams(game, { guild_id: '123456789012345678' }));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ code: 10004, message: 'Unknown Guild' });
  });

  it('a guild the player is not in: 50001 Missing Access', async () => {
    const guild = await createTestGuild(hearth);
    const stranger = await createPlayer(hearth);
    const game = await createGame(hearth);
    const response = await consent(hearth, stranger.token, botParams(game, { guild_id: guild.id }));
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ code: 50001, message: 'Missing Access' });
  });

  it('a member without MANAGE_GUILD: 50013 Missing Permissions; with it, the install succeeds', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const game = await createGame(hearth);
    const refused = await consent(hearth, member.token, botParams(game, { guild_id: guild.id }));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ code: 50013, message: 'Missing Permissions' });
    expect(await managedRole(guild.id, game.botUserId)).toBeUndefined();

    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [member.id]);
    const allowed = await consent(hearth, member.token, botParams(game, { guild_id: guild.id }));
    expect(allowed.status).toBe(200);
  });

  it('permissions that are not a decimal bitset: redirected back with invalid_request', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    const response = await consent(
      hearth,
      guild.owner.token,
      botParams(game, { guild_id: guild.id, permissions: 'all' }),
    );
    const url = new URL(((await response.json()) as { location: string }).location);
    expect(url.searchParams.get('error')).toBe('invalid_request');
    expect(url.searchParams.get('error_description')).toBe('Invalid permissions');
  });

  it('a revoked session token: 401', async () => {
    const guild = await createTestGuild(hearth);
    const game = await createGame(hearth);
    const response = await consent(hearth, 'not-a-token', botParams(game, { guild_id: guild.id }));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ code: 0, message: '401: Unauthorized' });
  });
});
