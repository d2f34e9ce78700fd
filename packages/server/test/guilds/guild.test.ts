import { ALL_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS, PermissionFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { requiredKeys } from '../../../../test-support/openapi.js';
import {
  call,
  invalidForm,
  MISSING_ACCESS,
  MISSING_PERMISSIONS,
  PNG,
  recordEvents,
  UNAUTHORIZED,
  UNKNOWN_GUILD,
} from './core-helpers.js';

let hearth: TestHearth;
const clock = new ManualClock('2026-03-01T00:00:00Z');

beforeAll(async () => {
  hearth = await startHearth({}, clock);
});
afterAll(() => hearth.close());

const missingKeys = (schema: string, object: unknown) =>
  requiredKeys(schema).filter((key) => !(key in (object as Record<string, unknown>)));

/** A voice or text channel of the guild, written directly (channels are another part's routes). */
async function insertChannel(guildId: string, type: number, name = 'c') {
  const id = String(BigInt(guildId) + BigInt(Math.floor(Math.random() * 1_000_000) + 1));
  await hearth.storage.db
    .insertInto('channels')
    .values({
      id,
      guild_id: guildId,
      type,
      name,
      position: 0,
      nsfw: 0,
      rate_limit_per_user: 0,
      created_at: 0,
    })
    .execute();
  return id;
}

describe('Get Guild (GET /guilds/{guild.id})', () => {
  let guild: TestGuild;
  beforeAll(async () => {
    guild = await createTestGuild(hearth, 'Hearthside');
  });

  it('answers the guild object with every key SPEC GuildResponse requires, @everyone among its roles', async () => {
    const { status, body } = await call(hearth, `/guilds/${guild.id}`, { auth: guild.owner.token });
    expect(status).toBe(200);
    expect(missingKeys('GuildResponse', body)).toEqual([]);
    expect(body).toMatchObject({
      id: guild.id,
      name: 'Hearthside',
      owner_id: guild.owner.id,
      icon: null,
      features: [],
      verification_level: 0,
      afk_timeout: 300,
      preferred_locale: 'en-US',
      premium_progress_bar_enabled: false,
      safety_alerts_channel_id: null,
      roles: [
        {
          id: guild.id,
          name: '@everyone',
          permissions: DEFAULT_EVERYONE_PERMISSIONS.toString(),
          position: 0,
          color: 0,
          colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
          managed: false,
        },
      ],
    });
    expect(body).not.toHaveProperty('approximate_member_count');
  });

  it('adds approximate_member_count and approximate_presence_count with with_counts=true', async () => {
    const member = await addTestMember(hearth, guild);
    const { body } = await call(hearth, `/guilds/${guild.id}?with_counts=true`, { auth: member.token });
    expect(body).toMatchObject({ approximate_member_count: 2, approximate_presence_count: 0 });
  });

  it('admits a member bot', async () => {
    const bot = await addTestBot(hearth, guild);
    expect((await call(hearth, `/guilds/${guild.id}`, { auth: `Bot ${bot.botToken}` })).status).toBe(200);
  });

  it('refuses a non-member with 403 50001 and an unknown guild with 404 10004', async () => {
    const stranger = await createPlayer(hearth);
    expect(await call(hearth, `/guilds/${guild.id}`, { auth: stranger.token })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(await call(hearth, '/guilds/123456789012345678', { auth: stranger.token })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
  });

  it('refuses a missing or unknown token with 401', async () => {
    expect(await call(hearth, `/guilds/${guild.id}`)).toEqual({ status: 401, body: UNAUTHORIZED });
    expect((await call(hearth, `/guilds/${guild.id}`, { auth: 'Bot nope' })).status).toBe(401);
  });
});

describe('Modify Guild (PATCH /guilds/{guild.id})', () => {
  it('changes the settings, records GUILD_UPDATE with its changes and reason, and publishes GUILD_UPDATE', async () => {
    const guild = await createTestGuild(hearth, 'Before');
    const events = recordEvents(hearth, guild.id);
    const { status, body } = await call(hearth, `/guilds/${guild.id}`, {
      auth: guild.owner.token,
      method: 'PATCH',
      headers: { 'x-audit-log-reason': encodeURIComponent('tidy up ✓') },
      body: { name: 'After', verification_level: 2, afk_timeout: 60, preferred_locale: 'fr', icon: PNG },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      name: 'After',
      verification_level: 2,
      afk_timeout: 60,
      preferred_locale: 'fr',
      icon: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const update = await events.next('GUILD_UPDATE');
    expect(update).toMatchObject({ id: guild.id, name: 'After' });
    expect(update).not.toHaveProperty('channels');
    const entry = await events.next('GUILD_AUDIT_LOG_ENTRY_CREATE');
    expect(entry).toMatchObject({
      guild_id: guild.id,
      action_type: 1,
      user_id: guild.owner.id,
      target_id: guild.id,
      reason: 'tidy up ✓',
    });
    expect(entry['changes']).toEqual(
      expect.arrayContaining([
        { key: 'name', old_value: 'Before', new_value: 'After' },
        { key: 'verification_level', old_value: 0, new_value: 2 },
        { key: 'afk_timeout', old_value: 300, new_value: 60 },
      ]),
    );
    events.stop();
  });

  it('clears an image with null', async () => {
    const guild = await createTestGuild(hearth);
    const auth = guild.owner.token;
    await call(hearth, `/guilds/${guild.id}`, { auth, method: 'PATCH', body: { banner: PNG } });
    const { body } = await call(hearth, `/guilds/${guild.id}`, {
      auth,
      method: 'PATCH',
      body: { banner: null },
    });
    expect(body).toMatchObject({ banner: null });
  });

  it('sets channels of the guild and refuses another guild’s channel with 10003', async () => {
    const guild = await createTestGuild(hearth);
    const other = await createTestGuild(hearth);
    const text = await insertChannel(guild.id, 0);
    const voice = await insertChannel(guild.id, 2);
    const foreign = await insertChannel(other.id, 0);
    const auth = guild.owner.token;
    const { body } = await call(hearth, `/guilds/${guild.id}`, {
      auth,
      method: 'PATCH',
      body: { system_channel_id: text, afk_channel_id: voice, safety_alerts_channel_id: text },
    });
    expect(body).toMatchObject({
      system_channel_id: text,
      afk_channel_id: voice,
      safety_alerts_channel_id: text,
    });
    expect(
      await call(hearth, `/guilds/${guild.id}`, {
        auth,
        method: 'PATCH',
        body: { rules_channel_id: foreign },
      }),
    ).toEqual({ status: 404, body: { code: 10003, message: 'Unknown Channel' } });
    expect(
      await call(hearth, `/guilds/${guild.id}`, { auth, method: 'PATCH', body: { afk_channel_id: text } }),
    ).toEqual({
      status: 400,
      body: invalidForm({
        afk_channel_id: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] },
      }),
    });
  });

  it('toggles mutable features with their bit and refuses the others', async () => {
    const guild = await createTestGuild(hearth);
    const manager = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [manager.id]);
    const patch = (features: string[]) =>
      call(hearth, `/guilds/${guild.id}`, { auth: manager.token, method: 'PATCH', body: { features } });
    expect((await patch(['INVITES_DISABLED', 'RAID_ALERTS_DISABLED'])).body).toMatchObject({
      features: ['INVITES_DISABLED', 'RAID_ALERTS_DISABLED'],
    });
    expect(await patch(['COMMUNITY'])).toEqual({ status: 403, body: MISSING_PERMISSIONS });
    expect(await patch(['VERIFIED'])).toEqual({
      status: 400,
      body: invalidForm({
        features: {
          0: {
            _errors: [
              {
                code: 'BASE_TYPE_CHOICES',
                message:
                  "Value must be one of ('COMMUNITY', 'DISCOVERABLE', 'INVITES_DISABLED', 'RAID_ALERTS_DISABLED').",
              },
            ],
          },
        },
      }),
    });
  });

  it('refuses a member without MANAGE_GUILD with 403 50013 and a non-member with 50001', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const stranger = await createPlayer(hearth);
    const body = { name: 'Mine now' };
    expect(await call(hearth, `/guilds/${guild.id}`, { auth: member.token, method: 'PATCH', body })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    expect(
      await call(hearth, `/guilds/${guild.id}`, { auth: stranger.token, method: 'PATCH', body }),
    ).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
  });

  it('answers 50035 with the field path for bad values', async () => {
    const guild = await createTestGuild(hearth);
    const patch = (body: unknown) =>
      call(hearth, `/guilds/${guild.id}`, { auth: guild.owner.token, method: 'PATCH', body });
    expect(await patch({ name: 'x' })).toEqual({
      status: 400,
      body: invalidForm({
        name: {
          _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 2 and 100 in length.' }],
        },
      }),
    });
    expect(await patch({ name: 'x'.repeat(101) })).toMatchObject({ status: 400, body: { code: 50035 } });
    expect(await patch({ verification_level: 5 })).toEqual({
      status: 400,
      body: invalidForm({
        verification_level: {
          _errors: [{ code: 'NUMBER_TYPE_MAX', message: 'int value should be less than or equal to 4.' }],
        },
      }),
    });
    expect(await patch({ verification_level: 'high' })).toEqual({
      status: 400,
      body: invalidForm({
        verification_level: {
          _errors: [{ code: 'NUMBER_TYPE_COERCE', message: 'Value "high" is not int.' }],
        },
      }),
    });
    expect(await patch({ afk_timeout: 61 })).toEqual({
      status: 400,
      body: invalidForm({
        afk_timeout: {
          _errors: [
            {
              code: 'BASE_TYPE_CHOICES',
              message: "Value must be one of ('60', '300', '900', '1800', '3600').",
            },
          ],
        },
      }),
    });
    expect(await patch({ icon: 'data:image/png;base64,AAAA' })).toEqual({
      status: 400,
      body: invalidForm({ icon: { _errors: [{ code: 'IMAGE_INVALID', message: 'Invalid image data' }] } }),
    });
    expect(await patch({ system_channel_id: 'general' })).toMatchObject({
      status: 400,
      body: { code: 50035 },
    });
  });
});

describe('Delete Guild (DELETE /guilds/{guild.id})', () => {
  it('lets only the owner delete: 204, GUILD_DELETE, then 10004', async () => {
    const guild = await createTestGuild(hearth);
    const admin = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.Administrator, [admin.id]);
    expect(await call(hearth, `/guilds/${guild.id}`, { auth: admin.token, method: 'DELETE' })).toEqual({
      status: 403,
      body: MISSING_PERMISSIONS,
    });
    const events = recordEvents(hearth, guild.id);
    expect(
      (await call(hearth, `/guilds/${guild.id}`, { auth: guild.owner.token, method: 'DELETE' })).status,
    ).toBe(204);
    expect(await events.next('GUILD_DELETE')).toEqual({ id: guild.id });
    expect(await call(hearth, `/guilds/${guild.id}`, { auth: guild.owner.token })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
    events.stop();
  });
});

describe('Get Guild Preview (GET /guilds/{guild.id}/preview)', () => {
  it('answers the preview with every key SPEC GuildPreviewResponse requires', async () => {
    const guild = await createTestGuild(hearth, 'Previewed');
    const { status, body } = await call(hearth, `/guilds/${guild.id}/preview`, { auth: guild.owner.token });
    expect(status).toBe(200);
    expect(missingKeys('GuildPreviewResponse', body)).toEqual([]);
    expect(body).toEqual({
      id: guild.id,
      name: 'Previewed',
      icon: null,
      description: null,
      home_header: null,
      splash: null,
      discovery_splash: null,
      features: [],
      approximate_member_count: 1,
      approximate_presence_count: 0,
      emojis: [],
      stickers: [],
    });
  });

  it('answers 10004 to a non-member of a guild that is not discoverable', async () => {
    const guild = await createTestGuild(hearth);
    const stranger = await createPlayer(hearth);
    expect(await call(hearth, `/guilds/${guild.id}/preview`, { auth: stranger.token })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
  });
});

describe('Leave Guild (DELETE /users/@me/guilds/{guild.id})', () => {
  it('removes the member: 204, GUILD_MEMBER_REMOVE, then 50001', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const events = recordEvents(hearth, guild.id);
    const left = await call(hearth, `/users/@me/guilds/${guild.id}`, {
      auth: member.token,
      method: 'DELETE',
    });
    expect(left.status).toBe(204);
    expect(await events.next('GUILD_MEMBER_REMOVE')).toMatchObject({
      guild_id: guild.id,
      user: { id: member.id },
    });
    expect(await call(hearth, `/guilds/${guild.id}`, { auth: member.token })).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });
    expect(
      await call(hearth, `/users/@me/guilds/${guild.id}`, { auth: member.token, method: 'DELETE' }),
    ).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
    events.stop();
  });

  it('refuses the owner with 400 50055', async () => {
    const guild = await createTestGuild(hearth);
    expect(
      await call(hearth, `/users/@me/guilds/${guild.id}`, { auth: guild.owner.token, method: 'DELETE' }),
    ).toEqual({ status: 400, body: { code: 50055, message: 'Invalid Guild' } });
  });
});

describe('Create Guild (POST /guilds)', () => {
  it('creates a guild for a user account with @everyone, default text and voice channels', async () => {
    const owner = await createPlayer(hearth);
    const { status, body } = await call(hearth, '/guilds', {
      auth: owner.token,
      method: 'POST',
      body: { name: 'Mine' },
    });
    expect(status).toBe(201);
    const guild = body as { id: string; system_channel_id: string; roles: Array<{ id: string }> };
    expect(guild).toMatchObject({ name: 'Mine', owner_id: owner.user.id });
    expect(guild.roles.map((role) => role.id)).toEqual([guild.id]);
    const channels = await hearth.storage.db
      .selectFrom('channels')
      .select(['id', 'name', 'type'])
      .where('guild_id', '=', guild.id)
      .execute();
    expect(channels.map((c) => [c.name, Number(c.type)]).sort()).toEqual(
      [
        ['General', 2],
        ['Text Channels', 4],
        ['Voice Channels', 4],
        ['general', 0],
      ].sort(),
    );
    expect(channels.find((c) => c.name === 'general')?.id).toBe(guild.system_channel_id);
  });

  it('refuses a bot token with 403 20001 from 15 July 2025', async () => {
    const guild = await createTestGuild(hearth);
    const bot = await addTestBot(hearth, guild);
    expect(
      await call(hearth, '/guilds', {
        auth: `Bot ${bot.botToken}`,
        method: 'POST',
        body: { name: 'Bot land' },
      }),
    ).toEqual({ status: 403, body: { code: 20001, message: 'Bots cannot use this endpoint' } });
  });

  it('admitted a bot in fewer than 10 guilds before 15 July 2025', async () => {
    const before = await startHearth({}, new ManualClock('2025-07-14T23:59:59Z'));
    try {
      const guild = await createTestGuild(before);
      const bot = await addTestBot(before, guild);
      const auth = `Bot ${bot.botToken}`;
      const created = await call(before, '/guilds', { auth, method: 'POST', body: { name: 'Bot land' } });
      expect(created).toMatchObject({
        status: 201,
        body: { owner_id: bot.botUserId, application_id: bot.id },
      });
      for (let i = 2; i < 10; i++)
        await call(before, '/guilds', { auth, method: 'POST', body: { name: `g${i}` } });
      expect(await call(before, '/guilds', { auth, method: 'POST', body: { name: 'eleventh' } })).toEqual({
        status: 400,
        body: { code: 30001, message: 'Maximum number of guilds reached (100)' },
      });
    } finally {
      await before.close();
    }
  });

  it('answers 50035 without a name', async () => {
    const owner = await createPlayer(hearth);
    expect(await call(hearth, '/guilds', { auth: owner.token, method: 'POST', body: {} })).toEqual({
      status: 400,
      body: invalidForm({
        name: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      }),
    });
  });
});

describe('Get Current User Guilds (GET /users/@me/guilds)', () => {
  it('computes permissions from @everyone and roles, marks the owner, counts with with_counts', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, PermissionFlags.ManageGuild, [member.id]);
    const mine = await call(hearth, '/users/@me/guilds?with_counts=true', { auth: member.token });
    expect(mine.body).toEqual([
      {
        id: guild.id,
        name: expect.any(String),
        icon: null,
        banner: null,
        owner: false,
        permissions: (DEFAULT_EVERYONE_PERMISSIONS | PermissionFlags.ManageGuild).toString(),
        features: [],
        approximate_member_count: 2,
        approximate_presence_count: 0,
      },
    ]);
    const owner = await call(hearth, '/users/@me/guilds', { auth: guild.owner.token });
    expect(owner.body).toMatchObject([{ owner: true, permissions: ALL_PERMISSIONS.toString() }]);
  });
});
