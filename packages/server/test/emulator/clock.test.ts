import { GatewayOpcodes, SubscriptionStatus } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { type EmulatorHearth, startEmulator } from './support.js';

const START = Date.parse('2026-04-01T00:00:00.000Z');
const DAY = 24 * 60 * 60 * 1000;
let hearth: EmulatorHearth;
let seeded: {
  applications: { game: { id: string; bot_token: string } };
  users: { alice: { id: string; token: string } };
  entitlements: { pass: { id: string; subscription_id: string } };
};
let bot: GatewayClient;

beforeAll(async () => {
  hearth = await startEmulator(new ManualClock(START));
  seeded = await hearth.adminJson('POST', '/seed', {
    applications: { game: { name: 'Clocked Game' } },
    users: { alice: { username: 'alice' } },
    skus: { pass: { application: 'game', name: 'Pass', type: 'subscription' } },
    entitlements: { pass: { sku: 'pass', user: 'alice' } },
  });
  bot = await GatewayClient.connect(hearth.url);
  await bot.nextOp(GatewayOpcodes.Hello);
  bot.send({
    op: 2,
    d: {
      token: seeded.applications.game.bot_token,
      intents: 0,
      properties: { os: 'l', browser: 'b', device: 'd' },
    },
  });
  await bot.nextDispatch('READY');
});
afterAll(async () => {
  await bot.close();
  await hearth.close();
});

describe('README, Emulator mode: the test clock', () => {
  it('reads the injected clock', async () => {
    expect(await hearth.adminJson('GET', '/clock')).toEqual({
      now: '2026-04-01T00:00:00.000Z',
      now_ms: START,
      frozen: false,
    });
  });

  it('advancing past a period end renews the subscription at once, with SUBSCRIPTION_UPDATE', async () => {
    const moved = await hearth.adminJson('POST', '/clock', { advance: '30d' });
    expect(moved).toEqual({ now: '2026-05-01T00:00:00.000Z', now_ms: START + 30 * DAY, frozen: false });
    const update = await bot.nextDispatch('SUBSCRIPTION_UPDATE');
    expect(update.d).toMatchObject({
      id: seeded.entitlements.pass.subscription_id,
      user_id: seeded.users.alice.id,
      status: SubscriptionStatus.Active,
      current_period_start: '2026-05-01T00:00:00.000Z',
      current_period_end: '2026-05-31T00:00:00.000Z',
    });
  });

  it('a jump over several periods renews once per period, in order', async () => {
    await hearth.adminJson('POST', '/clock', { to: '2026-07-01T00:00:00.000Z' });
    const ends = [];
    for (let i = 0; i < 2; i++)
      ends.push(
        ((await bot.nextDispatch('SUBSCRIPTION_UPDATE')).d as { current_period_end: string })
          .current_period_end,
      );
    expect(ends).toEqual(['2026-06-30T00:00:00.000Z', '2026-07-30T00:00:00.000Z']);
  });

  it('token expiry follows: a 30-day user session ends once the clock passes it', async () => {
    const me = await hearth.api('/users/@me', { auth: seeded.users.alice.token });
    expect(me.status).toBe(401);
  });

  it('freezes and unfreezes', async () => {
    const frozen = await hearth.adminJson('POST', '/clock', { freeze: true });
    expect(frozen['frozen']).toBe(true);
    expect(await hearth.adminJson('POST', '/clock', { advance: '15m', freeze: false })).toEqual({
      now: '2026-07-01T00:15:00.000Z',
      now_ms: Date.parse('2026-07-01T00:15:00.000Z'),
      frozen: false,
    });
  });

  it('refuses to go back, and a malformed change, with the field named', async () => {
    const back = await hearth.admin('POST', '/clock', { to: '2026-01-01T00:00:00.000Z' });
    expect(back.status).toBe(400);
    expect(await back.json()).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { to: { _errors: [{ code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }] } },
    });
    for (const body of [
      { advance: '30 days' },
      { advance: 5 },
      {},
      { advance: '1d', to: 0 },
      { later: '1d' },
    ]) {
      const response = await hearth.admin('POST', '/clock', body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(((await response.json()) as { code: number }).code).toBe(50035);
    }
  });
});
