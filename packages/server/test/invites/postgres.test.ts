import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestGuild, grantTestRole, seedTestChannel } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createPlayer } from '../../../../test-support/oauth.js';
import { postgresAvailable, postgresSchema } from '../../../../test-support/services.js';
import { call } from '../guilds/core-helpers.js';

/** The invite store's queries on the second engine: reuse, lists, counted uses, long target lists. */

const withPostgres = await postgresAvailable();

describe.skipIf(!withPostgres)('invites on PostgreSQL', () => {
  const schema = postgresSchema();
  const clock = new ManualClock('2026-05-01T00:00:00Z');
  let hearth: TestHearth;

  beforeAll(async () => {
    hearth = await startHearth({ databaseUrl: schema.url }, clock);
  });
  afterAll(async () => {
    await hearth.close();
    await schema.drop();
  });

  it('reuses, lists, counts uses to the last one and keeps a 450-user target list', async () => {
    const guild = await createTestGuild(hearth);
    const channelId = await seedTestChannel(hearth, guild.id);
    const auth = guild.owner.token;
    const role = await grantTestRole(hearth, guild, 0n, [], 1);
    const create = (body: unknown) =>
      call(hearth, `/channels/${channelId}/invites`, { auth, method: 'POST', body });
    const first = (await create({ max_uses: 2, role_ids: [role] })).body as { code: string };
    expect(((await create({ max_uses: 2, role_ids: [role] })).body as { code: string }).code).toBe(
      first.code,
    );
    const short = (await create({ max_age: 60, unique: true })).body as { code: string };
    clock.advance(61_000);
    const listed = (await call(hearth, `/guilds/${guild.id}/invites`, { auth })).body as Array<{
      code: string;
    }>;
    expect(listed.map((invite) => invite.code)).toEqual([first.code]);
    expect(listed.some((invite) => invite.code === short.code)).toBe(false);

    for (const expected of [200, 200, 404]) {
      const joiner = await createPlayer(hearth);
      const { status } = await call(hearth, `/invites/${first.code}`, { auth: joiner.token, method: 'POST' });
      expect(status).toBe(expected);
    }

    const ids = Array.from({ length: 450 }, (_, i) => String(10n ** 17n + BigInt(i)));
    const form = new FormData();
    form.set('target_users_file', new Blob([`user_id\n${ids.join('\n')}\n`]), 'users.csv');
    form.set('unique', 'true');
    const targeted = await call(hearth, `/channels/${channelId}/invites`, {
      auth,
      method: 'POST',
      body: form,
    });
    expect(targeted.status).toBe(200);
    const code = (targeted.body as { code: string }).code;
    const csv = await (await hearth.api(`/invites/${code}/target-users`, { auth })).text();
    expect(csv).toBe(`user_id\n${ids.join('\n')}\n`);
  });
});
