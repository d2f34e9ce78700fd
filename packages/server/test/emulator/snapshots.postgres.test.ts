import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { type EmulatorHearth, startEmulator } from './support.js';

/** README, Snapshots on PostgreSQL: a schema per snapshot, restored in place. */
const postgresUp = await postgresAvailable();
const postgres = postgresUp ? postgresSchema() : undefined;

describe.skipIf(!postgresUp)('README, Snapshots on PostgreSQL', () => {
  let hearth: EmulatorHearth;
  let seeded: {
    users: { alice: { token: string } };
    guilds: { home: { id: string; channels: { general: string } } };
  };
  beforeAll(async () => {
    hearth = await startEmulator(undefined, { databaseUrl: postgres?.url ?? '' });
    seeded = await hearth.adminJson('POST', '/seed', {
      users: { alice: { username: 'alice' } },
      guilds: { home: { name: 'Home', owner: 'alice', channels: { general: { name: 'general' } } } },
    });
  });
  afterAll(async () => {
    for (const { name } of (await hearth?.adminJson<{ name: string }[]>('GET', '/snapshots')) ?? [])
      await hearth.admin('DELETE', `/snapshots/${name}`);
    await hearth?.close();
    await postgres?.drop();
  });

  const channel = () => `/channels/${seeded.guilds.home.channels.general}/messages`;
  const contents = async () =>
    (
      (await (await hearth.api(channel(), { auth: seeded.users.alice.token })).json()) as {
        content: string;
      }[]
    ).map((m) => m.content);
  const say = (content: string) =>
    hearth.api(channel(), { method: 'POST', auth: seeded.users.alice.token, body: { content } });

  it('saves a schema, restores it in place, lists and deletes it', async () => {
    expect((await say('before')).status).toBe(200);
    await hearth.adminJson('PUT', '/snapshots/clean');
    expect((await say('after')).status).toBe(200);
    const created = await hearth.api(`/guilds/${seeded.guilds.home.id}/channels`, {
      method: 'POST',
      auth: seeded.users.alice.token,
      body: { name: 'later' },
    });
    expect(created.status).toBe(201);
    expect(await contents()).toEqual(['after', 'before']);

    expect((await hearth.admin('POST', '/snapshots/clean/restore')).status).toBe(204);
    expect(await contents()).toEqual(['before']);
    expect((await say('again')).status).toBe(200);
    expect(await contents()).toEqual(['again', 'before']);

    expect((await hearth.adminJson<{ name: string }[]>('GET', '/snapshots')).map((s) => s.name)).toEqual([
      'clean',
    ]);
    expect((await hearth.admin('DELETE', '/snapshots/clean')).status).toBe(204);
    expect((await hearth.admin('POST', '/snapshots/clean/restore')).status).toBe(404);
  });
});
