import { ALL_PERMISSIONS, FormErrors } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer, grantTokens, type TestGame } from '../../../test-support/oauth.js';
import { requiredKeys } from '../../../test-support/openapi.js';

let hearth: TestHearth;
let game: TestGame;

beforeAll(async () => {
  hearth = await startHearth();
  game = await createGame(hearth);
});
afterAll(() => hearth.close());

async function expectError(response: Response, status: number, body: unknown): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(await response.json()).toEqual(body);
}

async function json<T>(response: Response): Promise<T> {
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

const MISSING_SCOPE = { code: 50026, message: 'Missing required OAuth2 scope' };
const invalidForm = (errors: unknown) => ({ code: 50035, message: 'Invalid Form Body', errors });

/** A registered player, and a bearer token of `game` for them with `scope`. */
async function playerWithBearer(scope: string) {
  const { user, token } = await createPlayer(hearth);
  const tokens = await grantTokens(hearth, game, token, scope);
  return { user, token, bearer: `Bearer ${tokens.access_token}` };
}

const steam = (id: string, name: string) => ({
  id,
  name,
  type: 'steam',
  friend_sync: false,
  integrations: [],
  show_activity: true,
  two_way_link: false,
  verified: true,
  visibility: 1,
  revoked: false,
});

describe('GET /users/@me/connections (SPEC ConnectedAccountResponse)', () => {
  it('lists the connections of the session’s user with every key SPEC marks required', async () => {
    const { user, token } = await createPlayer(hearth);
    const other = await createPlayer(hearth);
    await hearth.services.accounts.addConnection(user.id, { type: 'steam', id: '1', name: 'x' });
    await hearth.services.accounts.addConnection(user.id, { type: 'steam', id: '2', name: 'y' });
    await hearth.services.accounts.addConnection(other.user.id, { type: 'steam', id: '3', name: 'z' });

    const listed = await json<Array<Record<string, unknown>>>(
      await hearth.api('/users/@me/connections', { auth: token }),
    );
    expect(listed).toEqual([steam('1', 'x'), steam('2', 'y')]);
    const required = requiredKeys('ConnectedAccountResponse');
    for (const connection of listed) expect(required.filter((key) => !(key in connection))).toEqual([]);
  });

  it('answers an empty list for a user without connections', async () => {
    const { token } = await createPlayer(hearth);
    expect(await json(await hearth.api('/users/@me/connections', { auth: token }))).toEqual([]);
  });

  it('admits a bearer token with the `connections` scope', async () => {
    const { user, bearer } = await playerWithBearer('identify connections');
    await hearth.services.accounts.addConnection(user.id, { type: 'steam', id: '1', name: 'x' });
    expect(await json(await hearth.api('/users/@me/connections', { auth: bearer }))).toEqual([
      steam('1', 'x'),
    ]);
  });

  it('refuses a bearer token without `connections` with 403 code 50026', async () => {
    const { bearer } = await playerWithBearer('identify');
    await expectError(await hearth.api('/users/@me/connections', { auth: bearer }), 403, MISSING_SCOPE);
  });

  it('refuses a bot token with 403 code 20001', async () => {
    await expectError(await hearth.api('/users/@me/connections', { auth: `Bot ${game.botToken}` }), 403, {
      code: 20001,
      message: 'Bots cannot use this endpoint',
    });
  });
});

describe('legacy game-publisher connections leave GET /users/@me/connections on 10 July 2026 (seed: Versioning)', () => {
  const clock = new ManualClock('2026-07-09T23:59:59Z');
  let dated: TestHearth;

  beforeAll(async () => {
    // The clock stands still, so rate-limit windows never roll over: a budget large enough for the block.
    dated = await startHearth({ rateLimitGlobal: 10_000 }, clock);
  });
  afterAll(() => dated.close());

  it('lists a legacy publisher connection until 9 July 23:59:59 and omits it from 10 July 00:00:00', async () => {
    const { user, token } = await createPlayer(dated);
    const accounts = dated.services.accounts;
    await accounts.addConnection(user.id, {
      type: 'battlenet',
      id: 'bn-1',
      name: 'Hero',
      legacyPublisher: true,
    });
    await accounts.addConnection(user.id, { type: 'steam', id: '1', name: 'x' });
    const list = async () =>
      json<Array<{ id: string; type: string }>>(await dated.api('/users/@me/connections', { auth: token }));

    expect((await list()).map((c) => [c.type, c.id])).toEqual([
      ['battlenet', 'bn-1'],
      ['steam', '1'],
    ]);
    clock.advance(1000);
    expect(new Date(clock.now()).toISOString()).toBe('2026-07-10T00:00:00.000Z');
    expect(await list()).toEqual([steam('1', 'x')]);
  });

  it('keeps listing a connection of the same service that is not a legacy publisher connection', async () => {
    const { user, token } = await createPlayer(dated);
    await dated.services.accounts.addConnection(user.id, { type: 'battlenet', id: 'bn-2', name: 'Hero' });
    const listed = await json<Array<{ id: string }>>(
      await dated.api('/users/@me/connections', { auth: token }),
    );
    expect(listed.map((c) => c.id)).toEqual(['bn-2']);
  });
});

interface MyGuild {
  id: string;
  name: string;
  icon: string | null;
  banner: string | null;
  owner: boolean;
  permissions: string;
  features: string[];
  approximate_member_count?: number;
}

describe('GET /users/@me/guilds (SPEC MyGuildResponse; seed: Endpoints)', () => {
  let owner: { id: string; token: string };
  let member: { id: string; token: string };
  /** The owner's guilds, in creation (= id) order. */
  const ids: string[] = [];

  beforeAll(async () => {
    const a = await createPlayer(hearth);
    const b = await createPlayer(hearth);
    owner = { id: a.user.id, token: a.token };
    member = { id: b.user.id, token: b.token };
    const guilds = hearth.services.guilds;
    for (const [name, banner] of [
      ['Hearthside', 'a1b2c3'],
      ['Lantern Hall', null],
      ['Ember Den', 'd4e5f6'],
      ['Ash Grove', null],
    ] as const) {
      ids.push((await guilds.createGuild(owner.id, { name, banner })).id);
    }
    await guilds.addMember(ids[0]!, member.id);
  });

  const list = (auth: string, query = '') => hearth.api(`/users/@me/guilds${query}`, { auth });

  it('lists the guilds of the user with banner, owner, permissions and features, ascending by id', async () => {
    const guilds = await json<MyGuild[]>(await list(owner.token));
    expect(guilds).toEqual([
      {
        id: ids[0],
        name: 'Hearthside',
        icon: null,
        banner: 'a1b2c3',
        owner: true,
        permissions: ALL_PERMISSIONS.toString(),
        features: [],
      },
      {
        id: ids[1],
        name: 'Lantern Hall',
        icon: null,
        banner: null,
        owner: true,
        permissions: ALL_PERMISSIONS.toString(),
        features: [],
      },
      {
        id: ids[2],
        name: 'Ember Den',
        icon: null,
        banner: 'd4e5f6',
        owner: true,
        permissions: ALL_PERMISSIONS.toString(),
        features: [],
      },
      {
        id: ids[3],
        name: 'Ash Grove',
        icon: null,
        banner: null,
        owner: true,
        permissions: ALL_PERMISSIONS.toString(),
        features: [],
      },
    ]);
    const required = requiredKeys('MyGuildResponse');
    for (const guild of guilds) expect(required.filter((key) => !(key in guild))).toEqual([]);
  });

  it('marks owner false for a guild the user joined', async () => {
    expect(await json(await list(member.token))).toEqual([
      expect.objectContaining({ id: ids[0], owner: false, banner: 'a1b2c3' }),
    ]);
  });

  it('refuses a bearer token without `guilds` with 403 code 50026', async () => {
    const { bearer } = await playerWithBearer('identify');
    await expectError(await list(bearer), 403, MISSING_SCOPE);
  });

  it('admits a bearer token with `guilds`', async () => {
    const { user, bearer } = await playerWithBearer('identify guilds');
    const { id } = await hearth.services.guilds.createGuild(user.id, {
      name: 'Bearer Guild',
      banner: 'ffee00',
    });
    expect(await json(await list(bearer))).toEqual([
      expect.objectContaining({ id, name: 'Bearer Guild', banner: 'ffee00', owner: true }),
    ]);
  });

  it('honours limit', async () => {
    const guilds = await json<MyGuild[]>(await list(owner.token, '?limit=2'));
    expect(guilds.map((g) => g.id)).toEqual(ids.slice(0, 2));
  });

  it('honours after: the guilds with larger ids', async () => {
    const guilds = await json<MyGuild[]>(await list(owner.token, `?after=${ids[1]}`));
    expect(guilds.map((g) => g.id)).toEqual(ids.slice(2));
  });

  it('honours before: the guilds with smaller ids, ascending from the first as the platform pages (ISS discord-api-docs #625)', async () => {
    expect((await json<MyGuild[]>(await list(owner.token, `?before=${ids[2]}`))).map((g) => g.id)).toEqual(
      ids.slice(0, 2),
    );
    expect(
      (await json<MyGuild[]>(await list(owner.token, `?before=${ids[3]}&limit=1`))).map((g) => g.id),
    ).toEqual([ids[0]]);
  });

  it('honours before and after together', async () => {
    const guilds = await json<MyGuild[]>(await list(owner.token, `?after=${ids[0]}&before=${ids[3]}`));
    expect(guilds.map((g) => g.id)).toEqual(ids.slice(1, 3));
  });

  it.each([
    ['0', FormErrors.minimum(1)],
    ['201', FormErrors.maximum(200)],
  ])('refuses limit=%s with 50035 and errors.limit', async (limit, leaf) => {
    await expectError(
      await list(owner.token, `?limit=${limit}`),
      400,
      invalidForm({ limit: { _errors: [leaf] } }),
    );
  });

  it('adds approximate_member_count with with_counts=true, and only then', async () => {
    const counted = await json<MyGuild[]>(await list(owner.token, '?with_counts=true'));
    expect(counted.map((g) => [g.id, g.approximate_member_count])).toEqual([
      [ids[0], 2],
      [ids[1], 1],
      [ids[2], 1],
      [ids[3], 1],
    ]);
    const plain = await json<MyGuild[]>(await list(owner.token));
    expect(plain.every((g) => !('approximate_member_count' in g))).toBe(true);
  });
});

describe('the user object of GET /users/@me (seed: Records, User; SPEC UserPIIResponse)', () => {
  it('has discriminator "0" and global_name null for a registered user, with every key SPEC marks required', async () => {
    const { user, token } = await createPlayer(hearth);
    const me = await json<Record<string, unknown>>(await hearth.api('/users/@me', { auth: token }));
    expect(me).toEqual({
      id: user.id,
      username: user.username,
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
      mfa_enabled: false,
      locale: 'en-US',
      premium_type: 0,
      email: user.email,
      verified: true,
    });
    expect(requiredKeys('UserPIIResponse').filter((key) => !(key in me))).toEqual([]);
  });

  it('shows global_name once set, and null again once cleared', async () => {
    const { token } = await createPlayer(hearth);
    const patch = (global_name: string | null) =>
      hearth.api('/users/@me', { method: 'PATCH', auth: token, body: { global_name } });
    const me = async () =>
      (await json<{ global_name: string | null }>(await hearth.api('/users/@me', { auth: token })))
        .global_name;

    expect((await json<{ global_name: string | null }>(await patch('Ember'))).global_name).toBe('Ember');
    expect(await me()).toBe('Ember');
    expect((await json<{ global_name: string | null }>(await patch(null))).global_name).toBeNull();
    expect(await me()).toBeNull();
  });

  it('refuses a global_name over 32 characters with 50035 and errors.global_name (seed: Limits)', async () => {
    const { token } = await createPlayer(hearth);
    await expectError(
      await hearth.api('/users/@me', { method: 'PATCH', auth: token, body: { global_name: 'g'.repeat(33) } }),
      400,
      invalidForm({ global_name: { _errors: [FormErrors.badLength(1, 32)] } }),
    );
  });

  it('keeps a four-digit discriminator and bot: true for a bot user', async () => {
    const me = await json<{ id: string; discriminator: string; bot: boolean }>(
      await hearth.api('/users/@me', { auth: `Bot ${game.botToken}` }),
    );
    expect(me).toMatchObject({
      id: game.botUserId,
      bot: true,
      discriminator: expect.stringMatching(/^\d{4}$/),
    });
  });
});

describe('guild creation', () => {
  it('refuses an owner that does not exist with Unknown User (10013), not a storage error', async () => {
    const hearth = await startHearth();
    try {
      await expect(
        hearth.services.guilds.createGuild('123456789012345678', { name: 'Nobody Hall' }),
      ).rejects.toMatchObject({
        code: 10013,
        status: 404,
      });
    } finally {
      await hearth.close();
    }
  });
});
