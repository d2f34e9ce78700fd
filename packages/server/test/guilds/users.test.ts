import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addTestBot, addTestMember, createTestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { requiredKeys } from '../../../../test-support/openapi.js';
import { call, invalidForm, PNG, UNAUTHORIZED, UNKNOWN_GUILD } from './core-helpers.js';

let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth({}, new ManualClock('2026-03-01T00:00:00Z'));
});
afterAll(() => hearth.close());

describe('Get User (GET /users/{user.id})', () => {
  it('answers a user with every key SPEC UserResponse requires, flags beside public_flags', async () => {
    const viewer = await createPlayer(hearth);
    const target = await createPlayer(hearth, 'shown_user');
    const { status, body } = await call(hearth, `/users/${target.user.id}`, { auth: viewer.token });
    expect(status).toBe(200);
    expect(requiredKeys('UserResponse').filter((key) => !(key in (body as object)))).toEqual([]);
    expect(body).toEqual({
      id: target.user.id,
      username: 'shown_user',
      discriminator: '0',
      global_name: null,
      avatar: null,
      public_flags: 0,
      flags: 0,
      banner: null,
      accent_color: null,
      avatar_decoration_data: null,
      collectibles: null,
      primary_guild: null,
    });
  });

  it('answers a bot user to a bot token, with bot: true', async () => {
    const guild = await createTestGuild(hearth);
    const bot = await addTestBot(hearth, guild);
    const { body } = await call(hearth, `/users/${bot.botUserId}`, { auth: `Bot ${bot.botToken}` });
    expect(body).toMatchObject({ id: bot.botUserId, bot: true, flags: 0, public_flags: 0 });
  });

  it('answers 404 10013 for an unknown user, 50035 for a non-snowflake, 401 without a valid token', async () => {
    const viewer = await createPlayer(hearth);
    expect(await call(hearth, '/users/123456789012345678', { auth: viewer.token })).toEqual({
      status: 404,
      body: { code: 10013, message: 'Unknown User' },
    });
    expect(await call(hearth, '/users/someone', { auth: viewer.token })).toMatchObject({
      status: 400,
      body: { code: 50035 },
    });
    expect(await call(hearth, `/users/${viewer.user.id}`, { auth: 'revoked-token' })).toEqual({
      status: 401,
      body: UNAUTHORIZED,
    });
  });
});

describe('Guild tags: primary_guild on every user object (GUILDS.md §3.4)', () => {
  it('a guild sets a tag and badge; a member wears it; /users/@me and /users/{id} show it', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    const patched = await call(hearth, `/guilds/${guild.id}`, {
      auth: guild.owner.token,
      method: 'PATCH',
      body: { tag: 'HRTH', badge: PNG },
    });
    expect(patched.status).toBe(200);
    const wear = await call(hearth, '/users/@me/primary-guild', {
      auth: member.token,
      method: 'PUT',
      body: { identity_guild_id: guild.id, identity_enabled: true },
    });
    expect(wear.status).toBe(204);
    const expected = {
      identity_guild_id: guild.id,
      identity_enabled: true,
      tag: 'HRTH',
      badge: expect.stringMatching(/^[0-9a-f]{32}$/),
    };
    expect((await call(hearth, '/users/@me', { auth: member.token })).body).toMatchObject({
      primary_guild: expected,
    });
    expect((await call(hearth, `/users/${member.id}`, { auth: guild.owner.token })).body).toMatchObject({
      primary_guild: expected,
    });

    await call(hearth, '/users/@me/primary-guild', {
      auth: member.token,
      method: 'PUT',
      body: { identity_guild_id: guild.id, identity_enabled: false },
    });
    expect((await call(hearth, '/users/@me', { auth: member.token })).body).toMatchObject({
      primary_guild: { ...expected, identity_enabled: false },
    });
  });

  it('leaving the guild clears identity_enabled to null, as the system does', async () => {
    const guild = await createTestGuild(hearth);
    const member = await addTestMember(hearth, guild);
    await call(hearth, `/guilds/${guild.id}`, {
      auth: guild.owner.token,
      method: 'PATCH',
      body: { tag: 'AB' },
    });
    await call(hearth, '/users/@me/primary-guild', {
      auth: member.token,
      method: 'PUT',
      body: { identity_guild_id: guild.id },
    });
    await call(hearth, `/users/@me/guilds/${guild.id}`, { auth: member.token, method: 'DELETE' });
    expect((await call(hearth, '/users/@me', { auth: member.token })).body).toMatchObject({
      primary_guild: { identity_guild_id: guild.id, identity_enabled: null, tag: 'AB', badge: null },
    });
  });

  it('null removes the primary guild', async () => {
    const guild = await createTestGuild(hearth);
    await call(hearth, `/guilds/${guild.id}`, {
      auth: guild.owner.token,
      method: 'PATCH',
      body: { tag: 'AB' },
    });
    const auth = guild.owner.token;
    await call(hearth, '/users/@me/primary-guild', {
      auth,
      method: 'PUT',
      body: { identity_guild_id: guild.id },
    });
    await call(hearth, '/users/@me/primary-guild', {
      auth,
      method: 'PUT',
      body: { identity_guild_id: null },
    });
    expect((await call(hearth, '/users/@me', { auth })).body).toMatchObject({ primary_guild: null });
  });

  it('refuses a tag over 4 characters, a guild without a tag, a guild one is not in, and bots', async () => {
    const guild = await createTestGuild(hearth);
    expect(
      await call(hearth, `/guilds/${guild.id}`, {
        auth: guild.owner.token,
        method: 'PATCH',
        body: { tag: 'HEART' },
      }),
    ).toEqual({
      status: 400,
      body: invalidForm({
        tag: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 4 in length.' }] },
      }),
    });
    const wear = (auth: string, body: unknown) =>
      call(hearth, '/users/@me/primary-guild', { auth, method: 'PUT', body });
    expect(await wear(guild.owner.token, { identity_guild_id: guild.id })).toEqual({
      status: 400,
      body: invalidForm({
        identity_guild_id: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] },
      }),
    });
    const stranger = await createPlayer(hearth);
    expect(await wear(stranger.token, { identity_guild_id: guild.id })).toEqual({
      status: 404,
      body: UNKNOWN_GUILD,
    });
    expect(await wear(stranger.token, {})).toMatchObject({ status: 400, body: { code: 50035 } });
    const bot = await addTestBot(hearth, guild);
    expect(await wear(`Bot ${bot.botToken}`, { identity_guild_id: guild.id })).toEqual({
      status: 403,
      body: { code: 20001, message: 'Bots cannot use this endpoint' },
    });
  });
});
