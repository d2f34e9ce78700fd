import { API } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  GatewayIntents,
  GatewayOpcodes,
  GROUP_DM_MAX_USERS,
  MessageTypes,
} from '@hearth/protocol';
import { Routes } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  createGame,
  createPlayer,
  grantTokens,
  type TestGame,
  tokenRequest,
} from '../../../../test-support/oauth.js';
import { ManualClock } from '../../src/kernel/clock.js';

/*
 * The bots' `gdm.join` path (User resource "Create Group DM", Channel resource "Group DM Add Recipient"):
 * a bot opens a group DM of users whose OAuth2 access tokens (scope `gdm.join`) it holds, owns and manages
 * it without being a recipient, adds more users the same way with a nickname each, and removes them.
 */

const clock = new ManualClock('2026-02-01T00:00:00Z');
let hearth: TestHearth;

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
});

afterAll(() => hearth.close());

type Data = Record<string, unknown>;
type Player = Awaited<ReturnType<typeof createPlayer>>;
type Joiner = { player: Player; id: string; token: string };

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const INTENTS = GatewayIntents.Guilds | GatewayIntents.DirectMessages;

async function call(method: string, path: string, auth: string, body?: unknown) {
  const response = await hearth.api(path, { method, auth, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as Data) };
}

/** A new person who granted `game` the `gdm.join` scope (or `scope`): their access token. */
async function joiner(game: TestGame, scope = 'identify gdm.join'): Promise<Joiner> {
  const player = await createPlayer(hearth);
  const tokens = await grantTokens(hearth, game, player.token, scope);
  return { player, id: player.user.id, token: tokens.access_token };
}

async function session(token: string): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token, intents: INTENTS, properties: PROPERTIES } });
  await client.nextDispatch('READY');
  return client;
}

const ids = (users: unknown) => (users as Array<{ id: string }>).map((user) => user.id).sort();
const invalidToken = { status: 403, body: { code: 50025, message: 'Invalid OAuth2 access token provided' } };

describe('POST /users/@me/channels with access_tokens (Create Group DM)', () => {
  it('opens a group DM the bot owns and manages, of the users whose tokens it holds, with their nicks', async () => {
    const game = await createGame(hearth);
    const bot = `Bot ${game.botToken}`;
    const [alice, bob] = [await joiner(game), await joiner(game)];
    const a = await session(alice.player.token);
    const b = await session(game.botToken);

    const created = await call('POST', '/users/@me/channels', bot, {
      access_tokens: [alice.token, bob.token, alice.token],
      nicks: { [alice.id]: 'Ali', [bob.id]: null, '4242424242424242': 'nobody' },
    });
    expect(created.status).toBe(200);
    const channel = created.body!;
    expect(channel).toStrictEqual({
      id: expect.stringMatching(/^\d+$/),
      type: 3,
      last_message_id: null,
      flags: 0,
      recipients: expect.any(Array),
      name: null,
      icon: null,
      owner_id: game.botUserId,
      application_id: game.id,
      managed: true,
      nicks: [{ id: alice.id, nick: 'Ali' }],
    });
    // The bot is no recipient: bots join no group DM, they manage it from outside.
    expect(ids(channel['recipients'])).toStrictEqual([alice.id, bob.id].sort());
    const id = String(channel['id']);

    // Alice and the bot learn of it; Alice sees the others (Bob) as recipients.
    const told = (await a.nextDispatch('CHANNEL_CREATE')).d as Data;
    expect(told).toMatchObject({
      id,
      type: 3,
      owner_id: game.botUserId,
      managed: true,
      application_id: game.id,
    });
    expect(ids(told['recipients'])).toStrictEqual([bob.id]);
    expect((await b.nextDispatch('CHANNEL_CREATE')).d).toMatchObject({ id, owner_id: game.botUserId });
    for (const auth of [alice.player.token, bot]) {
      expect(await call('GET', `/channels/${id}`, auth)).toMatchObject({
        status: 200,
        body: { id, managed: true },
      });
    }
    // Its recipients talk in it as in any group DM.
    const sent = await call('POST', `/channels/${id}/messages`, bob.player.token, { content: 'hi' });
    expect(sent).toMatchObject({ status: 200, body: { channel_id: id, type: MessageTypes.Default } });
    // READY lists it for Alice's next session, as GET answers it.
    clock.advance(6_000);
    const again = await GatewayClient.connect(hearth.url);
    await again.nextOp(GatewayOpcodes.Hello);
    again.send({ op: 2, d: { token: alice.player.token, intents: INTENTS, properties: PROPERTIES } });
    const ready = (await again.nextDispatch('READY')).d as { private_channels: Data[] };
    expect(ready.private_channels).toStrictEqual([
      (await call('GET', `/channels/${id}`, alice.player.token)).body,
    ]);
    for (const client of [a, b, again]) await client.close();
  });

  it('refuses tokens that are unknown, revoked, expired, of another application or without gdm.join; people may not use it', async () => {
    const game = await createGame(hearth);
    const other = await createGame(hearth);
    const bot = `Bot ${game.botToken}`;
    const alice = await joiner(game);
    const post = (body: unknown, auth = bot) => call('POST', '/users/@me/channels', auth, body);
    expect(await post({ access_tokens: [alice.token, 'not-a-token'] })).toStrictEqual(invalidToken);
    // Issued to another application: as good as unknown to this one.
    const elsewhere = await joiner(other);
    expect(await post({ access_tokens: [elsewhere.token] })).toStrictEqual(invalidToken);
    // Granted without gdm.join.
    const identify = await joiner(game, 'identify');
    expect(await post({ access_tokens: [identify.token] })).toStrictEqual({
      status: 403,
      body: { code: 50026, message: 'Missing required OAuth2 scope' },
    });
    // Revoked (RFC 7009).
    const revoked = await joiner(game);
    const revocation = await tokenRequest(
      hearth,
      { token: revoked.token },
      { path: '/oauth2/token/revoke', basic: [game.id, game.clientSecret] },
    );
    expect(revocation.status).toBe(200);
    expect(await post({ access_tokens: [revoked.token] })).toStrictEqual(invalidToken);
    // A person cannot open a group DM with tokens: that is the bots' path.
    expect(await post({ access_tokens: [alice.token] }, alice.player.token)).toStrictEqual({
      status: 403,
      body: { code: 20002, message: 'Only bots can use this endpoint' },
    });
    // Wrong types and sizes.
    const invalid = (errors: unknown) => ({ status: 400, body: { code: 50035, errors } });
    expect(await post({ access_tokens: 'everyone' })).toMatchObject(
      invalid({ access_tokens: expect.anything() }),
    );
    expect(await post({ access_tokens: [alice.token, 7] })).toMatchObject(
      invalid({ access_tokens: { 1: expect.anything() } }),
    );
    expect(await post({ access_tokens: [alice.token], nicks: { [alice.id]: 5 } })).toMatchObject(
      invalid({ nicks: expect.anything() }),
    );
    expect(await post({ access_tokens: [alice.token], nicks: { [alice.id]: 'n'.repeat(33) } })).toMatchObject(
      invalid({ nicks: expect.anything() }),
    );
    const eleven = Array.from({ length: GROUP_DM_MAX_USERS + 1 }, () => alice.token);
    expect(await post({ access_tokens: eleven })).toMatchObject(
      invalid({ access_tokens: expect.anything() }),
    );
    // Good until it expires (ACCESS_TOKEN_TTL_SECONDS), refused a moment after.
    expect((await post({ access_tokens: [alice.token] })).status).toBe(200);
    clock.advance(ACCESS_TOKEN_TTL_SECONDS * 1000);
    expect(await post({ access_tokens: [alice.token] })).toStrictEqual(invalidToken);
  });
});

describe('PUT /channels/{id}/recipients/{user_id} with access_token (Group DM Add Recipient)', () => {
  it("adds the token's user with a nick (CHANNEL_CREATE to them, CHANNEL_RECIPIENT_ADD to the others and the bot); the bot removes recipients", async () => {
    const game = await createGame(hearth);
    const bot = `Bot ${game.botToken}`;
    const [alice, carol] = [await joiner(game), await joiner(game)];
    const id = String(
      (await call('POST', '/users/@me/channels', bot, { access_tokens: [alice.token] })).body!['id'],
    );
    const a = await session(alice.player.token);
    const c = await session(carol.player.token);
    const b = await session(game.botToken);
    const path = `/channels/${id}/recipients/${carol.id}`;

    const added = await call('PUT', path, bot, { access_token: carol.token, nick: 'Caz' });
    expect(added).toStrictEqual({ status: 204, body: undefined });
    const created = (await c.nextDispatch('CHANNEL_CREATE')).d as Data;
    expect(created).toMatchObject({ id, owner_id: game.botUserId, nicks: [{ id: carol.id, nick: 'Caz' }] });
    expect(ids(created['recipients'])).toStrictEqual([alice.id]);
    for (const client of [a, b]) {
      expect((await client.nextDispatch('CHANNEL_RECIPIENT_ADD')).d).toMatchObject({
        channel_id: id,
        user: { id: carol.id },
        nick: 'Caz',
      });
    }
    expect((await a.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
      type: MessageTypes.RecipientAdd,
      author: { id: game.botUserId },
      mentions: [expect.objectContaining({ id: carol.id })],
    });
    expect((await call('GET', `/channels/${id}`, bot)).body).toMatchObject({
      nicks: [{ id: carol.id, nick: 'Caz' }],
    });
    // Already in: nothing changes.
    expect((await call('PUT', path, bot, { access_token: carol.token, nick: 'Other' })).status).toBe(204);

    // The managing bot renames the group DM and removes a recipient (CHANNEL_DELETE to them).
    expect(await call('PATCH', `/channels/${id}`, bot, { name: 'Match 12' })).toMatchObject({
      status: 200,
      body: { name: 'Match 12' },
    });
    expect((await call('DELETE', path, bot)).status).toBe(204);
    expect((await c.nextDispatch('CHANNEL_DELETE')).d).toMatchObject({ id });
    expect((await a.nextDispatch('CHANNEL_RECIPIENT_REMOVE')).d).toMatchObject({
      channel_id: id,
      user: { id: carol.id },
    });
    expect(ids((await call('GET', `/channels/${id}`, bot)).body!['recipients'])).toStrictEqual([alice.id]);
    for (const client of [a, b, c]) await client.close();
  });

  it('checks the token names that user, for this application, with gdm.join; another bot, a DM, a full group DM and bad bodies are refused', async () => {
    const game = await createGame(hearth);
    const other = await createGame(hearth);
    const bot = `Bot ${game.botToken}`;
    const [alice, carol, dave] = [await joiner(game), await joiner(game), await joiner(game)];
    const id = String(
      (await call('POST', '/users/@me/channels', bot, { access_tokens: [alice.token] })).body!['id'],
    );
    const put = (userId: string, body: unknown, auth = bot, channel = id) =>
      call('PUT', `/channels/${channel}/recipients/${userId}`, auth, body);
    // Carol's token does not add Dave.
    expect(await put(dave.id, { access_token: carol.token })).toStrictEqual(invalidToken);
    expect(await put(carol.id, { access_token: 'not-a-token' })).toStrictEqual(invalidToken);
    expect(await put(carol.id, { access_token: (await joiner(other)).token })).toStrictEqual(invalidToken);
    const identify = await joiner(game, 'identify');
    expect(await put(identify.id, { access_token: identify.token })).toMatchObject({
      status: 403,
      body: { code: 50026 },
    });
    // Another application's bot holding a good token for it cannot touch this group DM.
    const theirs = await joiner(other);
    expect(await put(theirs.id, { access_token: theirs.token }, `Bot ${other.botToken}`)).toMatchObject({
      status: 403,
      body: { code: 50001, message: 'Missing Access' },
    });
    expect(
      await call('DELETE', `/channels/${id}/recipients/${alice.id}`, `Bot ${other.botToken}`),
    ).toMatchObject({
      status: 403,
      body: { code: 50001 },
    });
    expect(await call('PATCH', `/channels/${id}`, `Bot ${other.botToken}`, { name: 'mine' })).toMatchObject({
      status: 403,
      body: { code: 50001 },
    });
    // A DM the bot has is no group DM it manages (50003); an unknown channel is 10003.
    const dm = await call('POST', '/users/@me/channels', bot, { recipient_id: alice.id });
    expect(await put(carol.id, { access_token: carol.token }, bot, String(dm.body!['id']))).toMatchObject({
      status: 403,
      body: { code: 50003 },
    });
    expect(await put(carol.id, { access_token: carol.token }, bot, '4242424242424242')).toMatchObject({
      status: 404,
      body: { code: 10003 },
    });
    // Bodies: the token is required of a bot, strings only, a nick of 32 characters at most.
    const invalid = (field: string) => ({
      status: 400,
      body: { code: 50035, errors: { [field]: expect.anything() } },
    });
    expect(await put(carol.id, {})).toMatchObject(invalid('access_token'));
    expect(await put(carol.id, { access_token: 12 })).toMatchObject(invalid('access_token'));
    expect(await put(carol.id, { access_token: carol.token, nick: 'n'.repeat(33) })).toMatchObject(
      invalid('nick'),
    );

    // Ten recipients fill it; the eleventh is refused (400).
    const more: Joiner[] = [];
    for (let i = 0; i < GROUP_DM_MAX_USERS; i++) more.push(await joiner(game));
    const full = await call('POST', '/users/@me/channels', bot, {
      access_tokens: more.map((j) => j.token),
    });
    expect(full.status).toBe(200);
    expect(full.body!['recipients']).toHaveLength(GROUP_DM_MAX_USERS);
    expect(await put(carol.id, { access_token: carol.token }, bot, String(full.body!['id']))).toStrictEqual({
      status: 400,
      body: { code: 0, message: '400: Bad Request' },
    });
  });
});

describe('the gdm.join path through @discordjs/rest and @discordjs/core, unmodified', () => {
  it('creates a group DM, adds a recipient with a nick, renames it and removes the recipient', async () => {
    const game = await createGame(hearth);
    const [alice, carol] = [await joiner(game), await joiner(game)];
    const rest = new REST({ api: `${hearth.url}/api` }).setToken(game.botToken);
    const api = new API(rest);
    const channel = (await rest.post(Routes.userChannels(), {
      body: { access_tokens: [alice.token], nicks: { [alice.id]: 'Ali' } },
    })) as { id: string; type: number; owner_id: string; recipients: Array<{ id: string }> };
    expect(channel).toMatchObject({ type: 3, owner_id: game.botUserId, recipients: [{ id: alice.id }] });
    await api.channels.addGroupDMRecipient(channel.id, carol.id, { access_token: carol.token, nick: 'Caz' });
    const renamed = await api.channels.edit(channel.id, { name: 'Squad' });
    expect(renamed).toMatchObject({ id: channel.id, name: 'Squad' });
    expect(ids((renamed as { recipients: unknown }).recipients)).toStrictEqual([alice.id, carol.id].sort());
    await api.channels.removeGroupDMRecipient(channel.id, carol.id);
    const fetched = (await api.channels.get(channel.id)) as { recipients: unknown };
    expect(ids(fetched.recipients)).toStrictEqual([alice.id]);
    // A refused token surfaces as the platform's error through the client.
    await expect(
      api.channels.addGroupDMRecipient(channel.id, carol.id, { access_token: 'not-a-token' }),
    ).rejects.toMatchObject({ code: 50025, status: 403 });
  });
});
