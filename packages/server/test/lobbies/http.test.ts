import { Limits, LobbyEvents, LobbyLimits, SocialMessageFlags } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  type Answer,
  approve,
  call,
  insertUsers,
  type LobbyPlayer,
  lobbyGame,
  lobbyPlayer,
  lobbyPlayers,
} from '../../../../test-support/lobbies.js';
import { createPlayer, grantTokens } from '../../../../test-support/oauth.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * The lobby HTTP API as a game's backend (`Bot`) and its players (`Bearer`, sdk.social_layer) see it
 * (PROTOCOL.md §A.3): shapes and statuses, every limit at its edge and one past it with the exact error
 * body, the refusals, create-or-join, the history window and the webhook outbox.
 */

/** Half way into an epoch-aligned 2-hour window: the pre-approval 429 then says exactly 5400 s. */
const T0 = Date.parse('2026-03-02T12:30:00Z');
const UNKNOWN_ID = '1000000000000000001';

type Json = Record<string, unknown>;
type Game = Awaited<ReturnType<typeof lobbyGame>>;

const invalid = (errors: Json) => ({ code: 50035, message: 'Invalid Form Body', errors });
const leaf = (code: string, message: string) => ({ _errors: [{ code, message }] });
const maxLength = (max: number) => leaf('BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
const minLength = (min: number) => leaf('BASE_TYPE_MIN_LENGTH', `Must be ${min} or more in length.`);
const REQUIRED = leaf('BASE_TYPE_REQUIRED', 'This field is required');
const ONLY_FLAG_1 = leaf('BASE_TYPE_CHOICES', "Value must be one of ('1').");
const UNKNOWN_LOBBY = { code: 10031, message: 'Unknown Lobby' };
const MISSING_ACCESS = { code: 50001, message: 'Missing Access' };
const UNAUTHORIZED = { code: 0, message: '401: Unauthorized' };

/** `n` keys `k0…`, each with `value`. */
const keys = (n: number, value = 'v') =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, value]));

let hearth: TestHearth;
const clock = new ManualClock(T0);

const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
});
afterAll(async () => {
  await hearth.close();
  for (const receiver of receivers) await receiver.close();
});

/** A receiver of the game's signed events on loopback (override URLs are PINGed before they are saved). */
async function receiverOf(game: Game): Promise<string> {
  const app = await call<{ verify_key: string }>(hearth, 'GET', '/applications/@me', game.bot);
  const receiver = await WebhookReceiver.listen(app.body.verify_key);
  receivers.push(receiver);
  return receiver.url;
}

/** Status and body only, for an exact comparison of an error answer. */
const shape = ({ status, body }: Answer) => ({ status, body });

/** A game's lobby created by its backend with these members. */
async function botLobby(game: Game, members: string[] = [], extra: Json = {}) {
  const { status, body } = await call<Json & { id: string }>(hearth, 'POST', '/lobbies', game.bot, {
    members: members.map((id) => ({ id })),
    ...extra,
  });
  expect(status).toBe(201);
  return body;
}

/** A game with two players in an SDK lobby (joined by secret). */
async function chat() {
  const game = await lobbyGame(hearth);
  const [alice, bob] = await lobbyPlayers(hearth, game, 2);
  const secret = 'chat';
  const created = await call<Json & { id: string }>(hearth, 'PUT', '/lobbies', alice.bearer, { secret });
  expect(created.status).toBe(200);
  expect((await call(hearth, 'PUT', '/lobbies', bob.bearer, { secret })).status).toBe(200);
  return { game, alice, bob, lobbyId: created.body.id, secret };
}

async function send(player: LobbyPlayer, lobbyId: string, content: string) {
  const sent = await call<Json & { id: string }>(
    hearth,
    'POST',
    `/lobbies/${lobbyId}/messages`,
    player.bearer,
    {
      content,
    },
  );
  expect(sent.status).toBe(201);
  return sent.body;
}

describe('shapes and statuses (PROTOCOL.md §A.1–§A.4)', () => {
  it('POST /lobbies answers 201 with metadata: null, flags: 0 and members serialized in full', async () => {
    const game = await lobbyGame(hearth);
    const alice = await lobbyPlayer(hearth, game);
    const { status, body } = await call(hearth, 'POST', '/lobbies', game.bot, {
      members: [{ id: alice.id }],
    });
    expect(status).toBe(201);
    expect(body).toEqual({
      id: expect.stringMatching(/^\d+$/),
      application_id: game.id,
      metadata: null,
      members: [{ id: alice.id, metadata: null, flags: 0 }],
      flags: 0,
      override_event_webhooks_url: null,
    });
    const empty = await call(hearth, 'POST', '/lobbies', game.bot);
    expect(empty.status).toBe(201);
    expect(empty.body).toMatchObject({ metadata: null, members: [], flags: 0 });
  });

  it('GET and PATCH answer the lobby; PATCH replaces the member list; DELETE answers 204 and is idempotent', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob] = await lobbyPlayers(hearth, game, 2);
    const hooks = await receiverOf(game);
    const lobby = await botLobby(game, [alice.id], {
      metadata: { mode: 'duel' },
      idle_timeout_seconds: 600,
      flags: 1,
      override_event_webhooks_url: hooks,
    });
    expect(lobby).toMatchObject({
      metadata: { mode: 'duel' },
      flags: 1,
      override_event_webhooks_url: hooks,
    });
    const got = await call(hearth, 'GET', `/lobbies/${lobby.id}`, game.bot);
    expect(got).toMatchObject({ status: 200, body: lobby });

    const patched = await call(hearth, 'PATCH', `/lobbies/${lobby.id}`, game.bot, {
      metadata: null,
      members: [{ id: bob.id, metadata: { team: 'red' }, flags: 1 }],
      flags: null,
      override_event_webhooks_url: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      id: lobby.id,
      application_id: game.id,
      metadata: null,
      members: [{ id: bob.id, metadata: { team: 'red' }, flags: 1 }],
      flags: 0,
      override_event_webhooks_url: null,
    });
    // Fields not given keep their value.
    const kept = await call(hearth, 'PATCH', `/lobbies/${lobby.id}`, game.bot, { metadata: { a: 'b' } });
    expect(kept.body).toMatchObject({ metadata: { a: 'b' }, members: [{ id: bob.id }] });

    const first = await call(hearth, 'DELETE', `/lobbies/${lobby.id}`, game.bot);
    expect(first).toMatchObject({ status: 204, body: null });
    expect((await call(hearth, 'DELETE', `/lobbies/${lobby.id}`, game.bot)).status).toBe(204);
    expect((await call(hearth, 'DELETE', `/lobbies/${UNKNOWN_ID}`, game.bot)).status).toBe(204);
    expect(shape(await call(hearth, 'GET', `/lobbies/${lobby.id}`, game.bot))).toEqual({
      status: 404,
      body: UNKNOWN_LOBBY,
    });
  });

  it('PUT member upserts (200 + member); additional_name omitted keeps it, null clears it; DELETE member is 204 and idempotent', async () => {
    const game = await lobbyGame(hearth);
    const alice = await lobbyPlayer(hearth, game);
    const lobby = await botLobby(game);
    const path = `/lobbies/${lobby.id}/members/${alice.id}`;

    const added = await call(hearth, 'PUT', path, game.bot, { additional_name: 'Twindly' });
    expect(added).toMatchObject({
      status: 200,
      body: { id: alice.id, metadata: null, flags: 0, additional_name: 'Twindly' },
    });
    const kept = await call(hearth, 'PUT', path, game.bot, { metadata: { hp: '10' }, flags: 1 });
    expect(kept.body).toEqual({ id: alice.id, metadata: { hp: '10' }, flags: 1, additional_name: 'Twindly' });
    const cleared = await call(hearth, 'PUT', path, game.bot, { additional_name: null, flags: null });
    expect(cleared.body).toEqual({ id: alice.id, metadata: { hp: '10' }, flags: 0 });
    const noBody = await call(hearth, 'PUT', path, game.bot);
    expect(noBody).toMatchObject({ status: 200, body: { id: alice.id } });

    expect(await call(hearth, 'DELETE', path, game.bot)).toMatchObject({ status: 204, body: null });
    expect((await call(hearth, 'DELETE', path, game.bot)).status).toBe(204);
    const lobbyNow = await call<{ members: unknown[] }>(hearth, 'GET', `/lobbies/${lobby.id}`, game.bot);
    expect(lobbyNow.body.members).toEqual([]);
    // The lobby itself must exist.
    expect(
      shape(await call(hearth, 'DELETE', `/lobbies/${UNKNOWN_ID}/members/${alice.id}`, game.bot)),
    ).toEqual({ status: 404, body: UNKNOWN_LOBBY });
  });

  it('bulk answers the upserted members and leaves out the removed ones', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob, carol] = await lobbyPlayers(hearth, game, 3);
    const lobby = await botLobby(game, [alice.id]);
    const { status, body } = await call(hearth, 'POST', `/lobbies/${lobby.id}/members/bulk`, game.bot, [
      { id: bob.id, additional_name: 'Bob' },
      { id: carol.id, metadata: { x: 'y' }, flags: 1 },
      { id: alice.id, remove_member: true },
    ]);
    expect(status).toBe(200);
    expect(body).toEqual([
      { id: bob.id, metadata: null, flags: 0, additional_name: 'Bob' },
      { id: carol.id, metadata: { x: 'y' }, flags: 1 },
    ]);
    const got = await call<{ members: { id: string }[] }>(hearth, 'GET', `/lobbies/${lobby.id}`, game.bot);
    expect(got.body.members.map((m) => m.id).toSorted()).toEqual([bob.id, carol.id].toSorted());
  });

  it('messages: 201 with the §A.4 object, GET newest first, PATCH edits, DELETE answers 204', async () => {
    const { game, alice, bob, lobbyId } = await chat();
    const first = await send(alice, lobbyId, 'hello');
    expect(first).toEqual({
      id: expect.stringMatching(/^\d+$/),
      type: 0,
      content: 'hello',
      lobby_id: lobbyId,
      channel_id: lobbyId,
      author: expect.objectContaining({ id: alice.id, username: expect.any(String) }),
      flags: SocialMessageFlags.SentBySocialLayerIntegration,
      application_id: game.id,
      timestamp: new Date(T0).toISOString(),
      edited_timestamp: null,
    });
    const second = await send(bob, lobbyId, 'hi');
    const listed = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, bob.bearer);
    expect(listed).toMatchObject({ status: 200, body: [second, first] });

    const edited = await call(hearth, 'PATCH', `/lobbies/${lobbyId}/messages/${first.id}`, alice.bearer, {
      content: 'hello again',
    });
    expect(edited).toMatchObject({
      status: 200,
      body: { ...first, content: 'hello again', edited_timestamp: new Date(T0).toISOString() },
    });
    const deleted = await call(hearth, 'DELETE', `/lobbies/${lobbyId}/messages/${second.id}`, bob.bearer);
    expect(deleted).toMatchObject({ status: 204, body: null });
    const after = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, alice.bearer);
    expect(after.body.map((m) => m['content'])).toEqual(['hello again']);
  });

  it('a message carries metadata and the author’s additional_name at send time', async () => {
    const game = await lobbyGame(hearth);
    const alice = await lobbyPlayer(hearth, game);
    const lobby = await botLobby(game);
    await call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${alice.id}`, game.bot, {
      additional_name: 'Al',
    });
    const sent = await call(hearth, 'POST', `/lobbies/${lobby.id}/messages`, alice.bearer, {
      content: 'gg',
      metadata: { emote: 'wave' },
    });
    expect(sent.body).toMatchObject({ lobby_member: { additional_name: 'Al' }, metadata: { emote: 'wave' } });
    await call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${alice.id}`, game.bot, {
      additional_name: 'Bo',
    });
    const listed = await call<Json[]>(hearth, 'GET', `/lobbies/${lobby.id}/messages`, alice.bearer);
    expect(listed.body[0]).toMatchObject({ lobby_member: { additional_name: 'Al' } });
  });
});

describe('limits at the edge and one past it, with the exact error body', () => {
  let game: Game;
  let player: LobbyPlayer;
  beforeAll(async () => {
    game = await lobbyGame(hearth);
    player = await lobbyPlayer(hearth, game);
  });
  const create = (body: unknown) => call(hearth, 'POST', '/lobbies', game.bot, body);

  it('lobby metadata: 25 keys pass, 26 fail; a value of 1024 passes, 1025 fails (create, modify, join, member)', async () => {
    expect((await create({ metadata: keys(25) })).status).toBe(201);
    expect(shape(await create({ metadata: keys(26) }))).toEqual({
      status: 400,
      body: invalid({ metadata: maxLength(25) }),
    });
    expect((await create({ metadata: { k: 'x'.repeat(1024) } })).status).toBe(201);
    expect(shape(await create({ metadata: { k: 'x'.repeat(1025) } }))).toEqual({
      status: 400,
      body: invalid({ metadata: { k: maxLength(1024) } }),
    });
    expect(shape(await create({ metadata: { k: 5 } }))).toEqual({
      status: 400,
      body: invalid({ metadata: { k: leaf('BASE_TYPE_STRING', 'Could not interpret "5" as string.') } }),
    });

    const lobby = await botLobby(game);
    const patch = (body: unknown) => call(hearth, 'PATCH', `/lobbies/${lobby.id}`, game.bot, body);
    expect((await patch({ metadata: keys(25, 'x'.repeat(1024)) })).status).toBe(200);
    expect(shape(await patch({ metadata: keys(26) }))).toEqual({
      status: 400,
      body: invalid({ metadata: maxLength(25) }),
    });

    let joins = 0;
    const join = (body: Json) =>
      call(hearth, 'PUT', '/lobbies', player.bearer, { secret: `limits-${++joins}`, ...body });
    expect(shape(await join({ lobby_metadata: keys(26) }))).toEqual({
      status: 400,
      body: invalid({ lobby_metadata: maxLength(25) }),
    });
    expect(shape(await join({ member_metadata: { k: 'x'.repeat(1025) } }))).toEqual({
      status: 400,
      body: invalid({ member_metadata: { k: maxLength(1024) } }),
    });
    expect((await join({ lobby_metadata: keys(25), member_metadata: keys(25) })).status).toBe(200);

    const member = (body: unknown) =>
      call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${player.id}`, game.bot, body);
    expect((await member({ metadata: keys(25) })).status).toBe(200);
    expect(shape(await member({ metadata: keys(26) }))).toEqual({
      status: 400,
      body: invalid({ metadata: maxLength(25) }),
    });
    expect(shape(await create({ members: [{ id: player.id, metadata: keys(26) }] }))).toEqual({
      status: 400,
      body: invalid({ members: { 0: { metadata: maxLength(25) } } }),
    });
  });

  it('idle_timeout_seconds: 4 fails, 5 passes, 604800 passes, 604801 fails', async () => {
    const min = leaf('NUMBER_TYPE_MIN', 'int value should be greater than or equal to 5.');
    const max = leaf('NUMBER_TYPE_MAX', 'int value should be less than or equal to 604800.');
    expect(shape(await create({ idle_timeout_seconds: 4 }))).toEqual({
      status: 400,
      body: invalid({ idle_timeout_seconds: min }),
    });
    expect((await create({ idle_timeout_seconds: 5 })).status).toBe(201);
    expect((await create({ idle_timeout_seconds: 604_800 })).status).toBe(201);
    expect(shape(await create({ idle_timeout_seconds: 604_801 }))).toEqual({
      status: 400,
      body: invalid({ idle_timeout_seconds: max }),
    });
    expect(shape(await create({ idle_timeout_seconds: '60' }))).toEqual({
      status: 400,
      body: invalid({ idle_timeout_seconds: leaf('NUMBER_TYPE_COERCE', 'Value "60" is not int.') }),
    });
    const join = (idle: number) =>
      call(hearth, 'PUT', '/lobbies', player.bearer, { secret: `idle-${idle}`, idle_timeout_seconds: idle });
    expect(shape(await join(4))).toEqual({ status: 400, body: invalid({ idle_timeout_seconds: min }) });
    expect(shape(await join(604_801))).toEqual({ status: 400, body: invalid({ idle_timeout_seconds: max }) });
    expect((await join(5)).status).toBe(200);
  });

  it('members of create and modify: 25 pass, 26 fail; unknown user 10013', async () => {
    const users = await insertUsers(hearth, 26, game);
    const members = users.map((id) => ({ id }));
    const full = await create({ members: members.slice(0, 25) });
    expect(full.status).toBe(201);
    expect((full.body as { members: unknown[] }).members).toHaveLength(25);
    expect(shape(await create({ members }))).toEqual({
      status: 400,
      body: invalid({ members: maxLength(25) }),
    });
    const lobbyId = (full.body as { id: string }).id;
    const patch = (body: unknown) => call(hearth, 'PATCH', `/lobbies/${lobbyId}`, game.bot, body);
    expect(shape(await patch({ members }))).toEqual({
      status: 400,
      body: invalid({ members: maxLength(25) }),
    });
    expect((await patch({ members: members.slice(1) })).status).toBe(200);
    expect(shape(await create({ members: [{ id: UNKNOWN_ID }] }))).toEqual({
      status: 404,
      body: { code: 10013, message: 'Unknown User' },
    });
    expect(shape(await create({ members: [{ id: 'not-a-snowflake' }] }))).toEqual({
      status: 400,
      body: invalid({
        members: { 0: { id: leaf('NUMBER_TYPE_COERCE', 'Value "not-a-snowflake" is not snowflake.') } },
      }),
    });
  });

  it('bulk: a JSON array of 1 and 25 passes; 0, 26 and a non-array fail', async () => {
    const lobby = await botLobby(game);
    const bulk = (body: unknown) => call(hearth, 'POST', `/lobbies/${lobby.id}/members/bulk`, game.bot, body);
    const users = await insertUsers(hearth, 26, game);
    expect(shape(await bulk([]))).toEqual({ status: 400, body: invalid(minLength(1)) });
    expect(shape(await bulk(users.map((id) => ({ id }))))).toEqual({
      status: 400,
      body: invalid(maxLength(25)),
    });
    expect(shape(await bulk({ id: users[0] }))).toEqual({
      status: 400,
      body: invalid(leaf('LIST_TYPE_CONVERT', 'Only iterables may be used in a ListType')),
    });
    expect((await bulk([{ id: users[0] }])).body).toHaveLength(1);
    expect((await bulk(users.slice(0, 25).map((id) => ({ id })))).body).toHaveLength(25);
    expect(shape(await bulk([{ id: UNKNOWN_ID }]))).toEqual({
      status: 404,
      body: { code: 10013, message: 'Unknown User' },
    });
  });

  it('flags: 1 passes, 2 fails (lobby and member)', async () => {
    expect((await create({ flags: 1, members: [{ id: player.id, flags: 1 }] })).status).toBe(201);
    expect(shape(await create({ flags: 2 }))).toEqual({ status: 400, body: invalid({ flags: ONLY_FLAG_1 }) });
    expect(shape(await create({ members: [{ id: player.id, flags: 2 }] }))).toEqual({
      status: 400,
      body: invalid({ members: { 0: { flags: ONLY_FLAG_1 } } }),
    });
    const lobby = await botLobby(game);
    expect(
      shape(await call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${player.id}`, game.bot, { flags: 2 })),
    ).toEqual({ status: 400, body: invalid({ flags: ONLY_FLAG_1 }) });
    expect(
      shape(await call(hearth, 'PUT', '/lobbies', player.bearer, { secret: 'flags', flags: 2 })),
    ).toEqual({ status: 400, body: invalid({ flags: ONLY_FLAG_1 }) });
  });

  it('additional_name: 80 passes, 81 and empty fail (add member and bulk)', async () => {
    const lobby = await botLobby(game);
    const path = `/lobbies/${lobby.id}/members/${player.id}`;
    const bad = leaf('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 80 in length.');
    const ok = await call(hearth, 'PUT', path, game.bot, { additional_name: 'n'.repeat(80) });
    expect(ok).toMatchObject({ status: 200, body: { additional_name: 'n'.repeat(80) } });
    expect(shape(await call(hearth, 'PUT', path, game.bot, { additional_name: 'n'.repeat(81) }))).toEqual({
      status: 400,
      body: invalid({ additional_name: bad }),
    });
    expect(shape(await call(hearth, 'PUT', path, game.bot, { additional_name: '' }))).toEqual({
      status: 400,
      body: invalid({ additional_name: bad }),
    });
    expect(
      shape(
        await call(hearth, 'POST', `/lobbies/${lobby.id}/members/bulk`, game.bot, [
          { id: player.id, additional_name: 'n'.repeat(81) },
        ]),
      ),
    ).toEqual({ status: 400, body: invalid({ 0: { additional_name: bad } }) });
  });

  it('secret: 250 characters pass, 251 fail, missing fails', async () => {
    const join = (body: unknown) => call(hearth, 'PUT', '/lobbies', player.bearer, body);
    expect((await join({ secret: 's'.repeat(250) })).status).toBe(200);
    expect(shape(await join({ secret: 's'.repeat(251) }))).toEqual({
      status: 400,
      body: invalid({ secret: maxLength(250) }),
    });
    expect(shape(await join({}))).toEqual({ status: 400, body: invalid({ secret: REQUIRED }) });
    expect(shape(await join({ secret: 7 }))).toEqual({
      status: 400,
      body: invalid({ secret: leaf('BASE_TYPE_STRING', 'Could not interpret "7" as string.') }),
    });
  });

  it('message content: empty and whitespace are 50006, 4000 passes, 4001 fails; edits alike', async () => {
    const lobby = await call<{ id: string }>(hearth, 'PUT', '/lobbies', player.bearer, { secret: 'content' });
    const path = `/lobbies/${lobby.body.id}/messages`;
    const empty = { code: 50006, message: 'Cannot send an empty message' };
    const post = (body: unknown) => call(hearth, 'POST', path, player.bearer, body);
    expect(shape(await post({ content: '' }))).toEqual({ status: 400, body: empty });
    expect(shape(await post({ content: ' \n\t ' }))).toEqual({ status: 400, body: empty });
    const longest = await post({ content: 'c'.repeat(4000) });
    expect(longest.status).toBe(201);
    expect(shape(await post({ content: 'c'.repeat(4001) }))).toEqual({
      status: 400,
      body: invalid({ content: maxLength(4000) }),
    });
    expect(shape(await post({}))).toEqual({ status: 400, body: invalid({ content: REQUIRED }) });

    const edit = (body: unknown) =>
      call(hearth, 'PATCH', `${path}/${(longest.body as { id: string }).id}`, player.bearer, body);
    expect(shape(await edit({ content: '  ' }))).toEqual({ status: 400, body: empty });
    expect(shape(await edit({ content: 'e'.repeat(4001) }))).toEqual({
      status: 400,
      body: invalid({ content: maxLength(4000) }),
    });
    expect((await edit({ content: 'e'.repeat(4000) })).status).toBe(200);
  });

  it('GET messages limit: 0 fails, 1 and 200 pass, 201 fails, default 50', async () => {
    const lobby = await call<{ id: string }>(hearth, 'PUT', '/lobbies', player.bearer, { secret: 'history' });
    const path = `/lobbies/${lobby.body.id}/messages`;
    for (let i = 0; i < 201; i++) await send(player, lobby.body.id, `m${i}`);
    const get = (query: string) => call<Json[]>(hearth, 'GET', `${path}${query}`, player.bearer);
    expect(shape(await get('?limit=0'))).toEqual({
      status: 400,
      body: invalid({ limit: leaf('NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.') }),
    });
    expect(shape(await get('?limit=201'))).toEqual({
      status: 400,
      body: invalid({ limit: leaf('NUMBER_TYPE_MAX', 'int value should be less than or equal to 200.') }),
    });
    expect(shape(await get('?limit=ten'))).toEqual({
      status: 400,
      body: invalid({ limit: leaf('NUMBER_TYPE_COERCE', 'Value "ten" is not int.') }),
    });
    const one = await get('?limit=1');
    expect(one.body.map((m) => m['content'])).toEqual(['m200']);
    const most = await get('?limit=200');
    expect(most.body).toHaveLength(Limits.lobbyMessagesGetMax);
    expect(most.body.at(-1)?.['content']).toBe('m1');
    const byDefault = await get('');
    expect(byDefault.body).toHaveLength(LobbyLimits.messagesDefaultLimit);
    expect(byDefault.body[0]?.['content']).toBe('m200');
  });

  it('moderation metadata: 5 keys pass, 6 fail; key 1024 passes, 1025 fails; value 2000 passes, 2001 fails', async () => {
    const lobby = await call<{ id: string }>(hearth, 'PUT', '/lobbies', player.bearer, {
      secret: 'moderation',
    });
    const message = await send(player, lobby.body.id, 'judge me');
    const put = (body: unknown) =>
      call(
        hearth,
        'PUT',
        `/lobbies/${lobby.body.id}/messages/${message.id}/moderation-metadata`,
        game.bot,
        body,
      );
    expect(await put(keys(5))).toMatchObject({ status: 204, body: null });
    expect(shape(await put(keys(6)))).toEqual({ status: 400, body: invalid(maxLength(5)) });
    expect((await put({ ['k'.repeat(1024)]: 'v' })).status).toBe(204);
    expect(shape(await put({ ['k'.repeat(1025)]: 'v' }))).toEqual({
      status: 400,
      body: invalid(maxLength(1024)),
    });
    expect((await put({ k: 'v'.repeat(2000) })).status).toBe(204);
    expect(shape(await put({ k: 'v'.repeat(2001) }))).toEqual({
      status: 400,
      body: invalid({ k: maxLength(2000) }),
    });
    expect(shape(await put(['not', 'an', 'object']))).toEqual({
      status: 400,
      body: invalid(leaf('DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType')),
    });
    const listed = await call<Json[]>(hearth, 'GET', `/lobbies/${lobby.body.id}/messages`, player.bearer);
    expect(listed.body[0]?.['moderation_metadata']).toEqual({ k: 'v'.repeat(2000) });
  });

  it('override_event_webhooks_url: 512 characters pass, 513 fail, not a URL fails', async () => {
    const base = `${await receiverOf(game)}/`;
    const url = (length: number) => `${base}${'p'.repeat(length - base.length)}`;
    expect((await create({ override_event_webhooks_url: url(512) })).status).toBe(201);
    expect(shape(await create({ override_event_webhooks_url: url(513) }))).toEqual({
      status: 400,
      body: invalid({ override_event_webhooks_url: maxLength(512) }),
    });
    expect(shape(await create({ override_event_webhooks_url: 'not a url' }))).toEqual({
      status: 400,
      body: invalid({ override_event_webhooks_url: leaf('URL_TYPE_INVALID_URL', 'Not a well formed URL.') }),
    });
  });

  it('1,000 members per lobby: the 1,001st is refused with 30100 and dropped silently by bulk', async () => {
    const users = await insertUsers(hearth, LobbyLimits.membersMax + 1, game);
    const lobby = await botLobby(game);
    const bulk = (body: unknown) => call(hearth, 'POST', `/lobbies/${lobby.id}/members/bulk`, game.bot, body);
    for (let i = 0; i < LobbyLimits.membersMax; i += Limits.lobbyMembersBulkMax) {
      const added = await bulk(users.slice(i, i + Limits.lobbyMembersBulkMax).map((id) => ({ id })));
      expect(added.body).toHaveLength(Limits.lobbyMembersBulkMax);
    }
    const last = users[LobbyLimits.membersMax]!;
    expect(shape(await call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${last}`, game.bot))).toEqual({
      status: 400,
      body: { code: 30100, message: 'Maximum number of lobby members reached (1000)' },
    });
    // A member already in still updates; the newcomer is left out of the answer.
    const mixed = await bulk([{ id: last }, { id: users[0], additional_name: 'first' }]);
    expect(mixed).toMatchObject({ status: 200, body: [{ id: users[0], additional_name: 'first' }] });
    expect(mixed.body).toHaveLength(1);
    const got = await call<{ members: unknown[] }>(hearth, 'GET', `/lobbies/${lobby.id}`, game.bot);
    expect(got.body.members).toHaveLength(LobbyLimits.membersMax);
    // One leaves, and there is room again.
    expect((await call(hearth, 'DELETE', `/lobbies/${lobby.id}/members/${users[1]}`, game.bot)).status).toBe(
      204,
    );
    expect((await call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${last}`, game.bot)).status).toBe(200);
  }, 60_000);

  it('100 lobbies per user per application: the 101st is refused with 30101 everywhere, dropped by bulk', async () => {
    const capped = await lobbyPlayer(hearth, game);
    const [other] = await insertUsers(hearth, 1, game);
    for (let i = 0; i < LobbyLimits.lobbiesPerUserPerApplication; i++) await botLobby(game, [capped.id]);
    const tooMany = { code: 30101, message: 'Maximum number of lobbies reached (100)' };
    expect(shape(await create({ members: [{ id: capped.id }] }))).toEqual({ status: 400, body: tooMany });
    const lobby = await botLobby(game);
    expect(shape(await call(hearth, 'PUT', `/lobbies/${lobby.id}/members/${capped.id}`, game.bot))).toEqual({
      status: 400,
      body: tooMany,
    });
    expect(shape(await call(hearth, 'PUT', '/lobbies', capped.bearer, { secret: 'one-too-many' }))).toEqual({
      status: 400,
      body: tooMany,
    });
    const bulk = await call(hearth, 'POST', `/lobbies/${lobby.id}/members/bulk`, game.bot, [
      { id: capped.id },
      { id: other },
    ]);
    expect(bulk).toMatchObject({ status: 200, body: [{ id: other }] });
    expect(bulk.body).toHaveLength(1);
    // The cap counts per application: another game's lobby still admits the player's account.
    const otherGame = await lobbyGame(hearth);
    await lobbyPlayer(hearth, otherGame, capped.account);
    expect(
      (await call(hearth, 'POST', '/lobbies', otherGame.bot, { members: [{ id: capped.id }] })).status,
    ).toBe(201);
  }, 60_000);

  it('pre-approval: 100 creates per 2 h, then 429 with its body and Retry-After; lifted by approval', async () => {
    const unapproved = await lobbyGame(hearth, { approved: false });
    for (let i = 0; i < 100; i++) {
      expect((await call(hearth, 'POST', '/lobbies', unapproved.bot)).status).toBe(201);
    }
    const limited = await call(hearth, 'POST', '/lobbies', unapproved.bot);
    expect(shape(limited)).toEqual({
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: 5400, global: false, code: 0 },
    });
    expect(limited.headers.get('retry-after')).toBe('5400');
    expect(limited.headers.get('x-ratelimit-scope')).toBe('shared');
    // Another route family has its own budget.
    const player2 = await lobbyPlayer(hearth, unapproved);
    expect((await call(hearth, 'PUT', '/lobbies', player2.bearer, { secret: 'pre' })).status).toBe(200);

    await approve(hearth, unapproved);
    expect((await call(hearth, 'POST', '/lobbies', unapproved.bot)).status).toBe(201);
  }, 60_000);
});

describe('refusals', () => {
  it('a player who is not a member: 50001 on messages', async () => {
    const { game, lobbyId, alice } = await chat();
    const message = await send(alice, lobbyId, 'private');
    const stranger = await lobbyPlayer(hearth, game);
    const path = `/lobbies/${lobbyId}/messages`;
    for (const [method, url, body] of [
      ['POST', path, { content: 'let me in' }],
      ['GET', path, undefined],
      ['PATCH', `${path}/${message.id}`, { content: 'mine now' }],
      ['DELETE', `${path}/${message.id}`, undefined],
    ] as const) {
      expect(shape(await call(hearth, method, url, stranger.bearer, body))).toEqual({
        status: 403,
        body: MISSING_ACCESS,
      });
    }
  });

  it("another application's bot and players see Unknown Lobby (10031) on every route", async () => {
    const { lobbyId, alice } = await chat();
    const message = await send(alice, lobbyId, 'ours');
    const otherGame = await lobbyGame(hearth);
    const outsider = await lobbyPlayer(hearth, otherGame);
    const target = `/lobbies/${lobbyId}`;
    for (const [method, url, body] of [
      ['GET', target, undefined],
      ['PATCH', target, { metadata: { x: 'y' } }],
      ['PUT', `${target}/members/${outsider.id}`, {}],
      ['DELETE', `${target}/members/${alice.id}`, undefined],
      ['POST', `${target}/members/bulk`, [{ id: outsider.id }]],
      ['PUT', `${target}/messages/${message.id}/moderation-metadata`, { k: 'v' }],
    ] as const) {
      expect(shape(await call(hearth, method, url, otherGame.bot, body))).toEqual({
        status: 404,
        body: UNKNOWN_LOBBY,
      });
    }
    for (const [method, url, body] of [
      ['POST', `${target}/messages`, { content: 'hi' }],
      ['GET', `${target}/messages`, undefined],
      ['PATCH', `${target}/messages/${message.id}`, { content: 'x' }],
      ['DELETE', `${target}/messages/${message.id}`, undefined],
      ['DELETE', `${target}/members/@me`, undefined],
    ] as const) {
      expect(shape(await call(hearth, method, url, outsider.bearer, body))).toEqual({
        status: 404,
        body: UNKNOWN_LOBBY,
      });
    }
    // Deleting another game's lobby is a no-op (idempotent), not a deletion.
    expect((await call(hearth, 'DELETE', target, otherGame.bot)).status).toBe(204);
    const stillThere = await call<Json[]>(hearth, 'GET', `${target}/messages`, alice.bearer);
    expect(stillThere.body).toHaveLength(1);
  });

  it('a revoked token is answered 401', async () => {
    const { lobbyId, bob } = await chat();
    expect((await bob.revoke()).status).toBe(200);
    for (const [method, url, body] of [
      ['POST', `/lobbies/${lobbyId}/messages`, { content: 'still here?' }],
      ['GET', `/lobbies/${lobbyId}/messages`, undefined],
      ['PUT', '/lobbies', { secret: 'again' }],
      ['DELETE', `/lobbies/${lobbyId}/members/@me`, undefined],
    ] as const) {
      expect(shape(await call(hearth, method, url, bob.bearer, body))).toEqual({
        status: 401,
        body: UNAUTHORIZED,
      });
    }
  });

  it('a bot on player routes is refused 20001; a player on bot routes 401; no token 401', async () => {
    const { game, alice, lobbyId } = await chat();
    const message = await send(alice, lobbyId, 'x');
    const botOnly = { code: 20001, message: 'Bots cannot use this endpoint' };
    for (const [method, url, body] of [
      ['PUT', '/lobbies', { secret: 'bot' }],
      ['POST', `/lobbies/${lobbyId}/messages`, { content: 'beep' }],
      ['GET', `/lobbies/${lobbyId}/messages`, undefined],
      ['PATCH', `/lobbies/${lobbyId}/messages/${message.id}`, { content: 'beep' }],
      ['DELETE', `/lobbies/${lobbyId}/messages/${message.id}`, undefined],
      ['DELETE', `/lobbies/${lobbyId}/members/@me`, undefined],
    ] as const) {
      expect(shape(await call(hearth, method, url, game.bot, body))).toEqual({ status: 403, body: botOnly });
    }
    for (const [method, url, body] of [
      ['POST', '/lobbies', {}],
      ['GET', `/lobbies/${lobbyId}`, undefined],
      ['PATCH', `/lobbies/${lobbyId}`, {}],
      ['DELETE', `/lobbies/${lobbyId}`, undefined],
      ['PUT', `/lobbies/${lobbyId}/members/${alice.id}`, {}],
      ['DELETE', `/lobbies/${lobbyId}/members/${alice.id}`, undefined],
      ['POST', `/lobbies/${lobbyId}/members/bulk`, [{ id: alice.id }]],
      ['PUT', `/lobbies/${lobbyId}/messages/${message.id}/moderation-metadata`, {}],
    ] as const) {
      expect(shape(await call(hearth, method, url, alice.bearer, body))).toEqual({
        status: 401,
        body: UNAUTHORIZED,
      });
      expect(shape(await call(hearth, method, url, undefined, body))).toEqual({
        status: 401,
        body: UNAUTHORIZED,
      });
    }
    // The lobby was left alone by all of that.
    const got = await call<{ members: unknown[] }>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
    expect(got.body.members).toHaveLength(2);
  });

  it('a player token without lobbies.write is refused 50026; a malformed lobby id is 50035', async () => {
    const { game, lobbyId } = await chat();
    const identifyOnly = await grantTokens(hearth, game, (await createPlayer(hearth)).token, 'identify');
    const bearer = `Bearer ${identifyOnly.access_token}`;
    const missingScope = { status: 403, body: { code: 50026, message: 'Missing required OAuth2 scope' } };
    expect(shape(await call(hearth, 'PUT', '/lobbies', bearer, { secret: 'scope' }))).toEqual(missingScope);
    expect(shape(await call(hearth, 'GET', `/lobbies/${lobbyId}/messages`, bearer))).toEqual(missingScope);
    expect(shape(await call(hearth, 'GET', '/lobbies/not-an-id', game.bot))).toEqual({
      status: 400,
      body: invalid({ lobby_id: leaf('NUMBER_TYPE_COERCE', 'Value "not-an-id" is not snowflake.') }),
    });
  });

  it('unknown user (10013) and unknown message (10008)', async () => {
    const { game, alice, lobbyId } = await chat();
    const unknownUser = { status: 404, body: { code: 10013, message: 'Unknown User' } };
    const unknownMessage = { status: 404, body: { code: 10008, message: 'Unknown Message' } };
    expect(
      await call(hearth, 'PUT', `/lobbies/${lobbyId}/members/${UNKNOWN_ID}`, game.bot, {}),
    ).toMatchObject(unknownUser);
    const messages = `/lobbies/${lobbyId}/messages/${UNKNOWN_ID}`;
    expect(await call(hearth, 'PATCH', messages, alice.bearer, { content: 'x' })).toMatchObject(
      unknownMessage,
    );
    expect(await call(hearth, 'DELETE', messages, alice.bearer)).toMatchObject(unknownMessage);
    expect(await call(hearth, 'PUT', `${messages}/moderation-metadata`, game.bot, {})).toMatchObject(
      unknownMessage,
    );
    // A message of another lobby is unknown in this one.
    const other = await call<{ id: string }>(hearth, 'PUT', '/lobbies', alice.bearer, {
      secret: 'elsewhere',
    });
    const elsewhere = await send(alice, other.body.id, 'elsewhere');
    expect(
      await call(hearth, 'PATCH', `/lobbies/${lobbyId}/messages/${elsewhere.id}`, alice.bearer, {
        content: 'x',
      }),
    ).toMatchObject(unknownMessage);
  });

  it("editing another's message is 50005, deleting it 50013; neither changes it", async () => {
    const { alice, bob, lobbyId } = await chat();
    const message = await send(alice, lobbyId, 'mine');
    const path = `/lobbies/${lobbyId}/messages/${message.id}`;
    expect(shape(await call(hearth, 'PATCH', path, bob.bearer, { content: 'yours' }))).toEqual({
      status: 403,
      body: { code: 50005, message: 'Cannot edit a message authored by another user' },
    });
    expect(shape(await call(hearth, 'DELETE', path, bob.bearer))).toEqual({
      status: 403,
      body: { code: 50013, message: 'Missing Permissions' },
    });
    const listed = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, bob.bearer);
    expect(listed.body).toEqual([message]);
  });

  it('leave: 204 and idempotent for an SDK lobby; an API-created lobby cannot be left (50001) nor joined by secret', async () => {
    const { game, alice, bob, lobbyId } = await chat();
    const leave = (player: LobbyPlayer, id: string) =>
      call(hearth, 'DELETE', `/lobbies/${id}/members/@me`, player.bearer);
    expect(await leave(bob, lobbyId)).toMatchObject({ status: 204, body: null });
    expect((await leave(bob, lobbyId)).status).toBe(204);
    const got = await call<{ members: { id: string }[] }>(hearth, 'GET', `/lobbies/${lobbyId}`, game.bot);
    expect(got.body.members.map((m) => m.id)).toEqual([alice.id]);
    expect(
      shape(await call(hearth, 'POST', `/lobbies/${lobbyId}/messages`, bob.bearer, { content: 'x' })),
    ).toEqual({
      status: 403,
      body: MISSING_ACCESS,
    });

    const apiLobby = await botLobby(game, [alice.id]);
    expect(shape(await leave(alice, apiLobby.id))).toEqual({ status: 403, body: MISSING_ACCESS });
    expect(await leave(bob, apiLobby.id)).toMatchObject({ status: 204 });
    expect(shape(await leave(bob, UNKNOWN_ID))).toEqual({ status: 404, body: UNKNOWN_LOBBY });
    const still = await call<{ members: { id: string }[] }>(
      hearth,
      'GET',
      `/lobbies/${apiLobby.id}`,
      game.bot,
    );
    expect(still.body.members.map((m) => m.id)).toEqual([alice.id]);
  });
});

describe('create or join by secret (PUT /lobbies)', () => {
  it('joins the lobby of the same secret; a member calling again updates metadata; another game gets its own lobby', async () => {
    const game = await lobbyGame(hearth);
    const [alice, bob] = await lobbyPlayers(hearth, game, 2);
    const secret = 'party-42';
    const created = await call<Json & { id: string }>(hearth, 'PUT', '/lobbies', alice.bearer, {
      secret,
      lobby_metadata: { map: 'dust' },
      member_metadata: { role: 'host' },
    });
    expect(created).toMatchObject({
      status: 200,
      body: {
        application_id: game.id,
        metadata: { map: 'dust' },
        members: [{ id: alice.id, metadata: { role: 'host' }, flags: 0 }],
        flags: 0,
      },
    });
    const joined = await call<Json & { id: string }>(hearth, 'PUT', '/lobbies', bob.bearer, { secret });
    expect(joined.body.id).toBe(created.body.id);
    expect(joined.body['members']).toEqual([
      { id: alice.id, metadata: { role: 'host' }, flags: 0 },
      { id: bob.id, metadata: null, flags: 0 },
    ]);
    const again = await call(hearth, 'PUT', '/lobbies', alice.bearer, {
      secret,
      lobby_metadata: { map: 'nuke' },
      member_metadata: { role: 'captain' },
    });
    expect(again.body).toMatchObject({
      id: created.body.id,
      metadata: { map: 'nuke' },
      members: [
        { id: alice.id, metadata: { role: 'captain' } },
        { id: bob.id, metadata: null },
      ],
    });
    // Omitted metadata keeps what is stored.
    const plain = await call(hearth, 'PUT', '/lobbies', bob.bearer, { secret });
    expect(plain.body).toMatchObject({ metadata: { map: 'nuke' } });

    const otherGame = await lobbyGame(hearth);
    const outsider = await lobbyPlayer(hearth, otherGame);
    const theirs = await call<Json & { id: string }>(hearth, 'PUT', '/lobbies', outsider.bearer, { secret });
    expect(theirs.status).toBe(200);
    expect(theirs.body.id).not.toBe(created.body.id);
    expect(theirs.body).toMatchObject({ application_id: otherGame.id, members: [{ id: outsider.id }] });
  });
});

describe('webhook outbox (PROTOCOL.md §F.4)', () => {
  it('records LOBBY_MESSAGE_CREATE/UPDATE/DELETE with the write, none for moderation metadata; an edit clears moderation_metadata', async () => {
    const { game, alice, lobbyId } = await chat();
    const outbox = () =>
      hearth.storage.db
        .selectFrom('outbox')
        .select(['type', 'payload'])
        .where('application_id', '=', game.id)
        .where('type', 'like', 'LOBBY_%')
        .orderBy('id')
        .execute();
    const message = await send(alice, lobbyId, 'original');
    const moderation = `/lobbies/${lobbyId}/messages/${message.id}/moderation-metadata`;
    expect((await call(hearth, 'PUT', moderation, game.bot, { verdict: 'ok' })).status).toBe(204);
    const moderated = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, alice.bearer);
    expect(moderated.body[0]).toMatchObject({ moderation_metadata: { verdict: 'ok' } });
    expect((await outbox()).map((row) => row.type)).toEqual([LobbyEvents.MessageCreate]);

    const edited = await call<Json>(
      hearth,
      'PATCH',
      `/lobbies/${lobbyId}/messages/${message.id}`,
      alice.bearer,
      {
        content: 'edited',
      },
    );
    expect(edited.body).not.toHaveProperty('moderation_metadata');
    const listed = await call<Json[]>(hearth, 'GET', `/lobbies/${lobbyId}/messages`, alice.bearer);
    expect(listed.body[0]).not.toHaveProperty('moderation_metadata');
    expect(listed.body[0]).toMatchObject({ content: 'edited' });

    expect(
      (await call(hearth, 'DELETE', `/lobbies/${lobbyId}/messages/${message.id}`, alice.bearer)).status,
    ).toBe(204);
    const rows = await outbox();
    expect(rows.map((row) => row.type)).toEqual([
      LobbyEvents.MessageCreate,
      LobbyEvents.MessageUpdate,
      LobbyEvents.MessageDelete,
    ]);
    const payloads = rows.map((row) => JSON.parse(row.payload) as Json);
    expect(payloads[0]).toEqual(message);
    expect(payloads[1]).toEqual(edited.body);
    expect(payloads[2]).toEqual({ id: message.id, lobby_id: lobbyId });
  });
});

describe('dated rules (ManualClock)', () => {
  let dated: TestHearth;
  const datedClock = new ManualClock(T0);
  beforeAll(async () => {
    dated = await startHearth({ rateLimitGlobal: 1_000_000 }, datedClock);
  });
  afterAll(() => dated.close());

  it('history reaches 72 hours back and no further', async () => {
    const game = await lobbyGame(dated);
    const alice = await lobbyPlayer(dated, game);
    // The longest idle timeout keeps the lobby through the jump (the timer sweeper runs meanwhile).
    const lobby = await call<{ id: string }>(dated, 'PUT', '/lobbies', alice.bearer, {
      secret: 'history',
      idle_timeout_seconds: LobbyLimits.idleTimeoutMaxSeconds,
    });
    const path = `/lobbies/${lobby.body.id}/messages`;
    const post = (content: string) => call(dated, 'POST', path, alice.bearer, { content });
    await post('old');
    datedClock.advance(60_000);
    await post('newer');
    const contents = async () =>
      (await call<Json[]>(dated, 'GET', path, alice.bearer)).body.map((m) => m['content']);
    datedClock.set(T0 + Limits.lobbyHistoryMaxAgeMs);
    expect(await contents()).toEqual(['newer', 'old']);
    datedClock.advance(1);
    expect(await contents()).toEqual(['newer']);
    await dated.services.lobbies.sweep();
    expect(await contents()).toEqual(['newer']);
    // The sweep deleted it, finding it by age in an index rather than reading every message (issue 20).
    const kept = await dated.storage.db
      .selectFrom('lobby_messages')
      .select('content')
      .where('lobby_id', '=', lobby.body.id)
      .execute();
    expect(kept).toEqual([{ content: 'newer' }]);
    const plan = await sql<{ detail: string }>`EXPLAIN QUERY PLAN
      DELETE FROM lobby_messages WHERE created_at < ${T0}`.execute(dated.storage.db);
    expect(plan.rows.map((row) => row.detail).join('\n')).toContain('lobby_messages_created');
  });

  it('a secret admits new members for 30 days; then a new lobby takes it and the old one stays', async () => {
    const start = datedClock.now();
    const game = await lobbyGame(dated);
    const alice = await lobbyPlayer(dated, game);
    const secret = 'month-old';
    const first = await call<{ id: string }>(dated, 'PUT', '/lobbies', alice.bearer, {
      secret,
      idle_timeout_seconds: LobbyLimits.idleTimeoutMaxSeconds,
    });
    // Players keep joining through the month (each join is activity, so the idle sweeper keeps the lobby;
    // tokens live 7 days, so each is minted at its own time), the last one just before expiry.
    const members = [alice.id];
    const step = 6 * 24 * 60 * 60 * 1000;
    for (let at = start + step; ; at += step) {
      datedClock.set(Math.min(at, start + LobbyLimits.secretLifetimeMs - 1));
      const joiner = await lobbyPlayer(dated, game);
      const joined = await call<{ id: string }>(dated, 'PUT', '/lobbies', joiner.bearer, { secret });
      expect(joined.body.id).toBe(first.body.id);
      members.push(joiner.id);
      if (at >= start + LobbyLimits.secretLifetimeMs - 1) break;
    }

    datedClock.set(start + LobbyLimits.secretLifetimeMs);
    const carol = await lobbyPlayer(dated, game);
    const fresh = await call<{ id: string; members: { id: string }[] }>(
      dated,
      'PUT',
      '/lobbies',
      carol.bearer,
      {
        secret,
      },
    );
    expect(fresh.status).toBe(200);
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(fresh.body.members.map((m) => m.id)).toEqual([carol.id]);
    // The old lobby is still there with its members; the next caller of the secret joins the new one.
    const old = await call<{ members: { id: string }[] }>(
      dated,
      'GET',
      `/lobbies/${first.body.id}`,
      game.bot,
    );
    expect(old.body.members.map((m) => m.id)).toEqual(members);
    const dave = await lobbyPlayer(dated, game);
    const next = await call<{ id: string }>(dated, 'PUT', '/lobbies', dave.bearer, { secret });
    expect(next.body.id).toBe(fresh.body.id);
  });
});
