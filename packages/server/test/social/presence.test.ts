import { ActivityFlags, ActivityLimits, PRESENCE_UPDATES_LIMIT } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import { connect, SkewClock, socialPlayer, type TestPlayer } from './social-support.js';

/** Presence and rich presence (PROTOCOL.md §B.8, §D.6): status from sessions, activities, who is told. */
describe('presence', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let clock: SkewClock;

  beforeAll(async () => {
    clock = new SkewClock();
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await createGame(hearth);
  });
  afterAll(() => hearth.close());

  const put = (player: TestPlayer, path: string, body?: unknown) =>
    hearth.api(path, { method: 'PUT', auth: player.bearer, ...(body === undefined ? {} : { body }) });

  async function friends(a: TestPlayer, b: TestPlayer): Promise<void> {
    await put(a, `/users/@me/relationships/${b.id}`);
    await put(b, `/users/@me/relationships/${a.id}`);
  }

  const presenceOf = (ws: GatewayClient, userId: string) =>
    ws.next((f) => f.t === 'PRESENCE_UPDATE' && (f.d as { user: { id: string } }).user.id === userId);

  /** Every activity field of §B.8 that a game sets. */
  const activity = {
    name: 'Hearth Quest',
    type: 0,
    details: 'Ranked match',
    details_url: 'https://example.com/details',
    state: 'In a party',
    state_url: 'https://example.com/state',
    status_display_type: 1,
    timestamps: { start: 1_700_000_000_000 },
    assets: {
      large_image: 'map',
      large_text: 'The map',
      large_url: 'https://example.com/large',
      small_image: 'hero',
      small_text: 'The hero',
      small_url: 'https://example.com/small',
      invite_cover_image: 'https://example.com/cover.png',
    },
    party: { id: 'party-1', size: [1, 4] },
    secrets: { join: 'join-secret' },
    flags: ActivityFlags.PartyPrivacyFriends | ActivityFlags.PartyPrivacyVoiceChannel,
    supported_platforms: ['desktop', 'ios'],
    buttons: [{ label: 'Watch', url: 'https://example.com/watch' }],
  };

  it('friends see a player come online, change activity, go invisible (as offline) and leave', async () => {
    const alice = await socialPlayer(hearth, game);
    const bob = await socialPlayer(hearth, game);
    await friends(alice, bob);
    const bobWs = await connect(hearth, bob);

    const aliceWs = await connect(hearth, alice);
    expect((await presenceOf(bobWs, alice.id)).d).toEqual({
      user: { id: alice.id },
      status: 'online',
      activities: [],
      client_status: { desktop: 'online' },
    });

    aliceWs.send({ op: 3, d: { status: 'dnd', activities: [activity], since: null, afk: false } });
    const update = (await presenceOf(bobWs, alice.id)).d as { status: string; activities: unknown[] };
    expect(update.status).toBe('dnd');
    const { secrets: _secrets, buttons: _buttons, ...visible } = activity;
    expect(update.activities).toEqual([
      {
        ...visible,
        application_id: game.id,
        created_at: expect.any(Number),
        buttons: ['Watch'],
        // The join secret stays on the server; friends see that the party is joinable (§B.9).
        flags: activity.flags | ActivityFlags.Join,
      },
    ]);

    aliceWs.send({ op: 3, d: { status: 'invisible', activities: [activity], since: null, afk: false } });
    expect((await presenceOf(bobWs, alice.id)).d).toEqual({
      user: { id: alice.id },
      status: 'offline',
      activities: [],
      client_status: {},
    });

    aliceWs.send({ op: 3, d: { status: 'online', activities: [], since: null, afk: false } });
    expect((await presenceOf(bobWs, alice.id)).d).toMatchObject({ status: 'online' });
    await aliceWs.close(1000);
    expect((await presenceOf(bobWs, alice.id)).d).toMatchObject({ status: 'offline', activities: [] });
    await bobWs.close();
  });

  it('READY carries the presences of online friends', async () => {
    const alice = await socialPlayer(hearth, game);
    const bob = await socialPlayer(hearth, game);
    await friends(alice, bob);
    const aliceWs = await connect(hearth, alice);
    const bobWs = await connect(hearth, bob);
    const ready = bobWs.frames.find((f) => f.t === 'READY')!.d as { presences: unknown[] };
    expect(ready.presences).toEqual([
      { user: { id: alice.id }, status: 'online', activities: [], client_status: { desktop: 'online' } },
    ]);
    await aliceWs.close();
    await bobWs.close();
  });

  it('strangers and blocked users are never told; a block tells the blocked one "offline"', async () => {
    const alice = await socialPlayer(hearth, game);
    const friend = await socialPlayer(hearth, game);
    const stranger = await socialPlayer(hearth, game);
    const blocked = await socialPlayer(hearth, game);
    await friends(alice, friend);
    await friends(alice, blocked);
    const aliceWs = await connect(hearth, alice);
    const blockedWs = await connect(hearth, blocked);
    const strangerWs = await connect(hearth, stranger);
    const friendWs = await connect(hearth, friend);

    expect((await put(alice, `/users/@me/relationships/${blocked.id}`, { type: 2 })).status).toBe(204);
    expect((await presenceOf(blockedWs, alice.id)).d).toMatchObject({ status: 'offline' });

    aliceWs.send({ op: 3, d: { status: 'idle', activities: [activity], since: null, afk: true } });
    expect((await presenceOf(friendWs, alice.id)).d).toMatchObject({ status: 'idle' });
    // A later event each of them does receive proves nothing of Alice's came before it.
    await put(alice, `/users/@me/relationships/${stranger.id}`);
    await put(blocked, `/users/@me/relationships/${stranger.id}`);
    expect((await strangerWs.next((f) => f.op === 0 && f.t !== 'READY')).t).toBe('RELATIONSHIP_ADD');
    expect((await blockedWs.next((f) => f.op === 0)).t).toBe('RELATIONSHIP_ADD');
    for (const ws of [aliceWs, blockedWs, strangerWs, friendWs]) await ws.close();
  });

  it(`5 updates per 20 s: the 6th is dropped, the next window takes one again`, async () => {
    const alice = await socialPlayer(hearth, game);
    const bob = await socialPlayer(hearth, game);
    await friends(alice, bob);
    const bobWs = await connect(hearth, bob);
    const aliceWs = await connect(hearth, alice);
    await presenceOf(bobWs, alice.id);
    for (let i = 1; i <= PRESENCE_UPDATES_LIMIT.limit + 1; i++) {
      aliceWs.send({
        op: 3,
        d: { status: 'online', activities: [{ name: `step ${i}`, type: 0 }], since: null, afk: false },
      });
    }
    // Friends may see quick changes coalesced, but the last one they see is the 5th, never the 6th.
    const names = async () =>
      ((await presenceOf(bobWs, alice.id)).d as { activities: Array<{ name: string }> }).activities.map(
        (a) => a.name,
      );
    while ((await names())[0] !== `step ${PRESENCE_UPDATES_LIMIT.limit}`);
    clock.advance(PRESENCE_UPDATES_LIMIT.windowMs);
    aliceWs.send({
      op: 3,
      d: { status: 'online', activities: [{ name: 'next window', type: 0 }], since: null, afk: false },
    });
    const d = (await presenceOf(bobWs, alice.id)).d as { activities: Array<{ name: string }> };
    expect(d.activities.map((a) => a.name)).toEqual(['next window']);
    await aliceWs.close();
    await bobWs.close();
  });

  describe('field limits (PROTOCOL.md §B.8): at the limit accepted, past it the connection closes 4002', () => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      [
        'name',
        { name: 'n'.repeat(ActivityLimits.nameMax) },
        { name: 'n'.repeat(ActivityLimits.nameMax + 1) },
      ],
      ['empty name', { name: 'n' }, { name: '' }],
      [
        'details',
        { details: 'd'.repeat(ActivityLimits.detailsMax) },
        { details: 'd'.repeat(ActivityLimits.detailsMax + 1) },
      ],
      [
        'state',
        { state: 's'.repeat(ActivityLimits.stateMax) },
        { state: 's'.repeat(ActivityLimits.stateMax + 1) },
      ],
      [
        'state_url',
        { state_url: 'u'.repeat(ActivityLimits.urlMax) },
        { state_url: 'u'.repeat(ActivityLimits.urlMax + 1) },
      ],
      [
        'details_url',
        { details_url: 'u'.repeat(ActivityLimits.urlMax) },
        { details_url: 'u'.repeat(ActivityLimits.urlMax + 1) },
      ],
      [
        'assets.large_url',
        { assets: { large_url: 'u'.repeat(ActivityLimits.urlMax) } },
        { assets: { large_url: 'u'.repeat(ActivityLimits.urlMax + 1) } },
      ],
      [
        'assets.small_url',
        { assets: { small_url: 'u'.repeat(ActivityLimits.urlMax) } },
        { assets: { small_url: 'u'.repeat(ActivityLimits.urlMax + 1) } },
      ],
      [
        'buttons',
        {
          buttons: [
            { label: 'a', url: 'b' },
            { label: 'c', url: 'd' },
          ],
        },
        {
          buttons: [
            { label: 'a', url: 'b' },
            { label: 'c', url: 'd' },
            { label: 'e', url: 'f' },
          ],
        },
      ],
      [
        'supported_platforms',
        {
          supported_platforms: [
            'desktop',
            'xbox',
            'samsung',
            'ios',
            'android',
            'embedded',
            'ps4',
            'ps5',
            'meta_quest',
            'desktop',
          ],
        },
        {
          supported_platforms: [
            'desktop',
            'xbox',
            'samsung',
            'ios',
            'android',
            'embedded',
            'ps4',
            'ps5',
            'meta_quest',
            'desktop',
            'ios',
          ],
        },
      ],
      ['a platform', { supported_platforms: ['meta_quest'] }, { supported_platforms: ['switch'] }],
      ['type', { type: 6 }, { type: 7 }],
      ['flags', { flags: ActivityFlags.Embedded }, { flags: ActivityFlags.Embedded << 1 }],
      ['wrong type of name', { name: 'x' }, { name: 5 }],
    ];
    for (const [field, good, bad] of cases) {
      it(field, async () => {
        const player = await socialPlayer(hearth, game);
        const ws = await connect(hearth, player);
        const self = await socialPlayer(hearth, game);
        await friends(player, self);
        const selfWs = await connect(hearth, self);
        ws.send({
          op: 3,
          d: { status: 'online', activities: [{ name: 'x', type: 0, ...good }], since: null, afk: false },
        });
        expect(
          ((await presenceOf(selfWs, player.id)).d as { activities: unknown[] }).activities,
        ).toHaveLength(1);
        ws.send({
          op: 3,
          d: { status: 'online', activities: [{ name: 'x', type: 0, ...bad }], since: null, afk: false },
        });
        expect(await ws.waitClose()).toEqual({ code: 4002, reason: 'Invalid presence update' });
        await selfWs.close();
      });
    }
  });
});
