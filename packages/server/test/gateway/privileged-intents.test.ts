import { GatewayIntents, GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, createPlayer, type TestGame } from '../../../../test-support/oauth.js';

/**
 * Privileged intents need a review once the application can reach 10,000 users, reapplied for once a year
 * (seed, Limits): past the threshold without an approval in force, Identify with such an intent closes 4014.
 */

const START = '2026-03-01T00:00:00Z';
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
const INTENTS = GatewayIntents.Guilds | GatewayIntents.GuildMembers;

let hearth: TestHearth;
const clock = new ManualClock(START);
const clients: GatewayClient[] = [];
let game: TestGame;
let guildId: string;
let added = 0;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
  game = await createGame(hearth);
  await hearth.services.applications.adminUpdate(game.id, { grant_flags: ['GatewayGuildMembersLimited'] });
  const { user: owner } = await createPlayer(hearth);
  guildId = (await hearth.services.guilds.createGuild(owner.id, { name: 'Big Guild' })).id;
  await hearth.services.guilds.addMember(guildId, game.botUserId);
  added = 1; // the owner
});
afterAll(() => hearth.close());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** Members the bot can reach, written straight to storage: 10,000 sign-ups would take minutes. */
async function growGuildTo(members: number): Promise<void> {
  const rows = Array.from({ length: members - added }, (_, i) => `9${String(added + i).padStart(17, '0')}`);
  const db = hearth.storage.db;
  for (let start = 0; start < rows.length; start += 500) {
    const ids = rows.slice(start, start + 500);
    await db
      .insertInto('users')
      .values(
        ids.map((id) => ({
          id,
          username: `reach${id}`,
          discriminator: '0',
          bot: 0,
          flags: 0,
          created_at: 0,
        })),
      )
      .execute();
    await db
      .insertInto('guild_members')
      .values(ids.map((id) => ({ guild_id: guildId, user_id: id, permissions: '0', joined_at: 0 })))
      .execute();
  }
  added = members;
}

async function identifyClose(): Promise<{ code: number; reason: string } | 'READY'> {
  clock.advance(6_000); // past the identify concurrency window of the bot
  const client = await GatewayClient.connect(hearth.url);
  clients.push(client);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: game.botToken, properties: { os: 'linux' }, intents: INTENTS } });
  return client.next().then(
    (frame) => (frame.t === 'READY' ? 'READY' : { code: -1, reason: String(frame.t) }),
    () => client.waitClose(),
  );
}

describe('privileged intents review (seed, Limits: 10,000 users, reapply once a year)', () => {
  it('9,999 users reached: the intent flag suffices', async () => {
    await growGuildTo(9_999);
    expect(await identifyClose()).toBe('READY');
  });

  it('10,000 users reached without a review: 4014; an operator approval admits the intent', async () => {
    await growGuildTo(10_000);
    expect(await identifyClose()).toEqual({ code: 4014, reason: 'Disallowed intent(s)' });

    const approved = await hearth.services.applications.approveIntentsReview(game.id);
    expect(approved.intentsReviewApprovedAt).toBe(clock.now());
    expect(await identifyClose()).toBe('READY');
  });

  it('an approval lapses a year after it was given', async () => {
    const approvedAt = (await hearth.services.applications.requireApplication(game.id))
      .intentsReviewApprovedAt!;
    clock.set(approvedAt + YEAR_MS - 10_000);
    expect(await identifyClose()).toBe('READY');
    clock.set(approvedAt + YEAR_MS);
    expect(await identifyClose()).toEqual({ code: 4014, reason: 'Disallowed intent(s)' });

    await hearth.services.applications.approveIntentsReview(game.id);
    expect(await identifyClose()).toBe('READY');
  });

  it('without a privileged intent, no review is asked for', async () => {
    clock.advance(2 * YEAR_MS);
    clock.advance(6_000);
    const client = await GatewayClient.connect(hearth.url);
    clients.push(client);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({
      op: 2,
      d: { token: game.botToken, properties: { os: 'linux' }, intents: GatewayIntents.Guilds },
    });
    expect(await client.next()).toMatchObject({ op: 0, t: 'READY' });
  });
});
