import { GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { type EmulatorHearth, startEmulator } from './support.js';

let hearth: EmulatorHearth;
let seeded: {
  applications: { game: { bot_token: string } };
  users: { alice: { id: string; token: string } };
  guilds: { home: { id: string; channels: { general: string } } };
};

beforeAll(async () => {
  hearth = await startEmulator();
  seeded = await hearth.adminJson('POST', '/seed', {
    applications: { game: { name: 'Snap Game' } },
    users: { alice: { username: 'alice' } },
    guilds: {
      home: {
        name: 'Home',
        owner: 'alice',
        channels: { general: { name: 'general' } },
        bots: [{ application: 'game' }],
      },
    },
  });
});
afterAll(async () => {
  await hearth.close();
});

const messages = async () => {
  const response = await hearth.api(`/channels/${seeded.guilds.home.channels.general}/messages`, {
    auth: seeded.users.alice.token,
  });
  return ((await response.json()) as { content: string }[]).map((m) => m.content);
};
const say = (content: string) =>
  hearth.api(`/channels/${seeded.guilds.home.channels.general}/messages`, {
    method: 'POST',
    auth: seeded.users.alice.token,
    body: { content },
  });

describe('README, Snapshots', () => {
  it('saves the whole state by name and restores it in place, the server running', async () => {
    expect((await say('before')).status).toBe(200);
    const saved = await hearth.adminJson('PUT', '/snapshots/clean');
    expect(saved).toEqual({ name: 'clean', created_at: expect.any(String) });

    expect((await say('after')).status).toBe(200);
    const channel = await hearth.api(`/guilds/${seeded.guilds.home.id}/channels`, {
      method: 'POST',
      auth: seeded.users.alice.token,
      body: { name: 'later' },
    });
    expect(channel.status).toBe(201);
    expect(await messages()).toEqual(['after', 'before']);

    expect((await hearth.admin('POST', '/snapshots/clean/restore')).status).toBe(204);
    expect(await messages()).toEqual(['before']);
    const channels = await hearth.api(`/guilds/${seeded.guilds.home.id}/channels`, {
      auth: seeded.users.alice.token,
    });
    expect(((await channels.json()) as { name: string }[]).map((c) => c.name)).toEqual(['general']);
    // Restoring twice gives the same state; new writes work after a restore.
    expect((await hearth.admin('POST', '/snapshots/clean/restore')).status).toBe(204);
    expect((await say('again')).status).toBe(200);
    expect(await messages()).toEqual(['again', 'before']);
  });

  it('ends gateway sessions on restore with a code clients reconnect after; their Resume gets op 9', async () => {
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({
      op: 2,
      d: {
        token: seeded.applications.game.bot_token,
        intents: 1,
        properties: { os: 'l', browser: 'b', device: 'd' },
      },
    });
    const ready = await client.nextDispatch('READY');
    await hearth.adminJson('PUT', '/snapshots/with-session');
    await hearth.admin('POST', '/snapshots/with-session/restore');
    expect(await client.waitClose()).toEqual({ code: 4000, reason: 'State restored' });
    const again = await GatewayClient.connect(hearth.url);
    await again.nextOp(GatewayOpcodes.Hello);
    again.send({
      op: 6,
      d: {
        token: seeded.applications.game.bot_token,
        session_id: (ready.d as { session_id: string }).session_id,
        seq: 1,
      },
    });
    expect(await again.nextOp(GatewayOpcodes.InvalidSession)).toMatchObject({ d: false });
    await again.close();
  });

  it('lists and deletes snapshots; an unknown one is 404, a bad name 400', async () => {
    const listed = await hearth.adminJson<{ name: string }[]>('GET', '/snapshots');
    expect(listed.map((s) => s.name)).toEqual(['clean', 'with-session']);
    expect((await hearth.admin('DELETE', '/snapshots/with-session')).status).toBe(204);
    expect((await hearth.admin('DELETE', '/snapshots/with-session')).status).toBe(404);
    expect((await hearth.admin('POST', '/snapshots/missing/restore')).status).toBe(404);
    expect((await hearth.admin('PUT', '/snapshots/..%2Fescape')).status).toBe(400);
    expect((await hearth.admin('PUT', '/snapshots/has.dot')).status).toBe(400);
  });
});
