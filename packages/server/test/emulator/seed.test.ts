import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorHearth, startEmulator } from './support.js';

let hearth: EmulatorHearth;

beforeAll(async () => {
  hearth = await startEmulator();
});
afterAll(async () => {
  await hearth.close();
});

const FIXTURE = {
  applications: {
    game: {
      name: 'Fixture Game',
      redirect_uris: ['http://localhost:9999/callback'],
      flags: ['ProvisionalAccountsEnabled'],
    },
  },
  users: {
    alice: { username: 'alice', global_name: 'Alice' },
    bob: { username: 'bob' },
  },
  provisional_accounts: { p1: { application: 'game', external_user_id: 'player-1', display_name: 'One' } },
  guilds: {
    home: {
      name: 'Home',
      owner: 'alice',
      members: ['bob'],
      roles: { mods: { name: 'Mods', permissions: '8' } },
      channels: {
        text: { name: 'Text', type: 4 },
        general: { name: 'general', parent: 'text', topic: 'hello' },
        voice: { name: 'Voice', type: 2 },
      },
      bots: [{ application: 'game', permissions: '2048' }],
    },
  },
  lobbies: { room: { application: 'game', members: ['p1'], metadata: { mode: 'duel' } } },
  friendships: [['alice', 'bob']],
  skus: { pass: { application: 'game', name: 'Season Pass', type: 'subscription' } },
  entitlements: { alice_pass: { sku: 'pass', user: 'alice' } },
};

describe('README, Fixtures: hearth seed and POST /_hearth/seed', () => {
  interface Seeded {
    applications: Record<string, Record<string, string>>;
    users: Record<string, { id: string; token: string }>;
    guilds: Record<string, { id: string; channels: Record<string, string> }>;
    entitlements: Record<string, { subscription_id: string }>;
    lobbies: Record<string, unknown>;
    provisional_accounts: Record<string, unknown>;
  }
  let first: Seeded;

  it('creates every object through the services and prints ids and tokens', async () => {
    first = await hearth.adminJson('POST', '/seed', FIXTURE);
    const app = first.applications['game'] ?? {};
    const alice = first.users['alice'] ?? { id: '', token: '' };
    const home = first.guilds['home'] ?? { id: '', channels: {} };

    // The bot token works on the platform's own API, and its bot is in the guild.
    const me = await hearth.api('/users/@me/guilds', { auth: `Bot ${app['bot_token']}` });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }[]).map((g) => g.id)).toEqual([home.id]);
    // The user token works, the channel is under its category, the friendship holds.
    const channel = await hearth.api(`/channels/${home.channels['general']}`, { auth: alice.token });
    expect(await channel.json()).toMatchObject({
      name: 'general',
      parent_id: home.channels['text'],
      topic: 'hello',
    });
    const friends = await hearth.api('/users/@me/relationships', { auth: alice.token });
    expect(await friends.json()).toEqual([expect.objectContaining({ id: first.users['bob']?.id, type: 1 })]);
    const subscriptionId = first.entitlements['alice_pass']?.subscription_id;
    expect(subscriptionId).toMatch(/^\d+$/);
    expect(first.lobbies['room']).toEqual({ id: expect.stringMatching(/^\d+$/) });
    expect(first.provisional_accounts['p1']).toEqual({
      id: expect.stringMatching(/^\d+$/),
      access_token: expect.any(String),
    });
  });

  it('is idempotent: a second run creates nothing and prints the same', async () => {
    const count = async () =>
      Number(
        (
          await hearth.storage.db
            .selectFrom('users')
            .select((e) => e.fn.countAll().as('n'))
            .executeTakeFirst()
        )?.n,
      );
    const before = await count();
    const second = await hearth.adminJson('POST', '/seed', FIXTURE);
    expect(second).toEqual(first);
    expect(await count()).toBe(before);
  });

  it('refuses a bad document with the path and reason of each problem, creating nothing', async () => {
    const response = await hearth.admin('POST', '/seed', {
      users: { carol: { username: 'carol', shoe_size: 9 } },
      guilds: { g: { name: 'G', owner: 'nobody' } },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: number; errors: unknown };
    expect(body.code).toBe(50035);
    expect(body.errors).toEqual({
      users: { carol: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
    });

    const reference = await hearth.admin('POST', '/seed', { guilds: { g: { name: 'G', owner: 'nobody' } } });
    expect(reference.status).toBe(400);
    expect(await reference.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: {
        guilds: {
          g: {
            owner: {
              _errors: [
                { code: 'FIXTURE_UNKNOWN_REFERENCE', message: 'no user named "nobody" in the fixture' },
              ],
            },
          },
        },
      },
    });
  });

  it("names the object a service refused, with the service's reason", async () => {
    const response = await hearth.admin('POST', '/seed', { users: { dave: { username: 'Dave!' } } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { users: { dave: { username: unknown } } } };
    expect(body.errors.users.dave.username).toBeDefined();
  });
});
