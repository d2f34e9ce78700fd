import { SNOWFLAKE_EPOCH, snowflakeTimestamp } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame, createPlayer } from '../../../test-support/oauth.js';
import { SnowflakeGenerator } from '../src/kernel/snowflake.js';

describe('snowflake ids (PROTOCOL.md §E.4)', () => {
  it('carry the clock time, the worker id in bits 21..17 and the process id in bits 16..12', () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const id = BigInt(new SnowflakeGenerator(clock, 21, 9).next());
    expect(snowflakeTimestamp(id.toString())).toBe(clock.now());
    expect(Number((id & 0x3e0000n) >> 17n)).toBe(21);
    expect(Number((id & 0x1f000n) >> 12n)).toBe(9);
  });

  it('are unique and increasing even when the clock stands still for 5,000 ids', () => {
    const generator = new SnowflakeGenerator(new ManualClock('2026-11-22T12:00:00Z'));
    const ids = Array.from({ length: 5000 }, () => BigInt(generator.next()));
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it('never go backwards when the clock does', () => {
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const generator = new SnowflakeGenerator(clock);
    const before = BigInt(generator.next());
    clock.advance(-60_000);
    expect(BigInt(generator.next()) > before).toBe(true);
  });

  it('refuse worker and process ids outside 0..31', () => {
    const clock = new ManualClock(SNOWFLAKE_EPOCH);
    expect(() => new SnowflakeGenerator(clock, 32, 0)).toThrow(RangeError);
    expect(() => new SnowflakeGenerator(clock, 0, -1)).toThrow(RangeError);
  });
});

describe('GET /gateway and /gateway/bot (PROTOCOL.md §D.1)', () => {
  let hearth: TestHearth;
  beforeAll(async () => {
    hearth = await startHearth({ publicUrl: 'https://hearth.example:8443' });
  });
  afterAll(() => hearth.close());

  it('answers the gateway URL without a query string, wss for an https public URL', async () => {
    const response = await hearth.api('/gateway');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ url: 'wss://hearth.example:8443/gateway' });
  });

  it('answers the session start limit of a bot: 1000 per day, full at first', async () => {
    const game = await createGame(hearth);
    const response = await hearth.api('/gateway/bot', { auth: `Bot ${game.botToken}` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { session_start_limit: { reset_after: number } };
    expect(body).toEqual({
      url: 'wss://hearth.example:8443/gateway',
      shards: 1,
      session_start_limit: {
        total: 1000,
        remaining: 1000,
        reset_after: expect.any(Number),
        max_concurrency: 1,
      },
    });
    expect(body.session_start_limit.reset_after).toBeGreaterThan(0);
    expect(body.session_start_limit.reset_after).toBeLessThanOrEqual(24 * 60 * 60 * 1000);
  });

  it('refuses /gateway/bot without a bot token', async () => {
    expect((await hearth.api('/gateway/bot')).status).toBe(401);
  });
});

describe('--now: a server started at a chosen date follows the dated rules of that day', () => {
  it.each([
    ['2026-07-09T12:00:00Z', ['steam', 'battlenet']],
    ['2026-07-10T12:00:00Z', ['steam']],
  ])('started at %s, the connections list is %j', async (now, expected) => {
    const hearth = await startHearth({ now: Date.parse(now) });
    try {
      const player = await createPlayer(hearth);
      await hearth.services.accounts.addConnection(player.user.id, { type: 'steam', id: '1', name: 'a' });
      await hearth.services.accounts.addConnection(player.user.id, {
        type: 'battlenet',
        id: '2',
        name: 'b',
        legacyPublisher: true,
      });
      const response = await hearth.api('/users/@me/connections', { auth: player.token });
      expect(((await response.json()) as { type: string }[]).map((c) => c.type)).toEqual(expected);
    } finally {
      await hearth.close();
    }
  });
});
