import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { call, lobbyGame, lobbyPlayer } from '../../../../test-support/lobbies.js';
import { WebhookReceiver } from '../../../../test-support/webhook-receiver.js';

/**
 * Lobby messages reach the game's backend as signed webhook events (PROTOCOL.md §F.4): CREATE, UPDATE
 * (an edit) and DELETE, at the application's URL or at the lobby's `override_event_webhooks_url`; a
 * moderation-metadata change sends none (§B.4). Receivers verify with tweetnacl, not Hearth code.
 */
describe('lobby message webhook events', () => {
  let hearth: TestHearth;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    hearth = await startHearth({ webhookPollMs: 10 });
  });
  afterAll(async () => {
    await hearth.close();
    for (const receiver of receivers) await receiver.close();
  });

  async function receiver(verifyKey: string): Promise<WebhookReceiver> {
    const listening = await WebhookReceiver.listen(verifyKey);
    receivers.push(listening);
    return listening;
  }

  it('delivers CREATE, UPDATE and DELETE with the HTTP objects, to the lobby override URL when set', async () => {
    const game = await lobbyGame(hearth);
    const { bot } = game;
    const app = await call<{ verify_key: string }>(hearth, 'GET', '/applications/@me', bot);
    const backend = await receiver(app.body.verify_key);
    const lobbyBackend = await receiver(app.body.verify_key);
    const types = ['LOBBY_MESSAGE_CREATE', 'LOBBY_MESSAGE_UPDATE', 'LOBBY_MESSAGE_DELETE'];
    const configured = await call(hearth, 'PATCH', '/applications/@me', bot, {
      event_webhooks_url: backend.url,
      event_webhooks_types: types,
    });
    expect(configured.status).toBe(200);

    const player = await lobbyPlayer(hearth, game);
    const plain = await call<{ id: string }>(hearth, 'POST', '/lobbies', bot, {
      members: [{ id: player.id }],
    });
    const routed = await call<{ id: string }>(hearth, 'POST', '/lobbies', bot, {
      members: [{ id: player.id }],
      override_event_webhooks_url: lobbyBackend.url,
    });

    const sent = await call<{ id: string }>(
      hearth,
      'POST',
      `/lobbies/${routed.body.id}/messages`,
      player.bearer,
      {
        content: 'to the lobby backend',
      },
    );
    const [created] = await lobbyBackend.untilEvents('LOBBY_MESSAGE_CREATE');
    expect(created?.verified).toBe(true);
    expect(created?.body.event?.data).toEqual(sent.body);

    const path = `/lobbies/${routed.body.id}/messages/${sent.body.id}`;
    await call(hearth, 'PUT', `${path}/moderation-metadata`, bot, { action: 'hide' });
    const edited = await call(hearth, 'PATCH', path, player.bearer, { content: 'edited' });
    const [updated] = await lobbyBackend.untilEvents('LOBBY_MESSAGE_UPDATE');
    // The first update the backend hears of is the edit: the moderation change sent nothing.
    expect(updated?.body.event?.data).toEqual(edited.body);
    await call(hearth, 'DELETE', path, player.bearer);
    const [deleted] = await lobbyBackend.untilEvents('LOBBY_MESSAGE_DELETE');
    expect(deleted?.body.event?.data).toEqual({ id: sent.body.id, lobby_id: routed.body.id });

    const other = await call(hearth, 'POST', `/lobbies/${plain.body.id}/messages`, player.bearer, {
      content: 'to the game backend',
    });
    const [atApp] = await backend.untilEvents('LOBBY_MESSAGE_CREATE');
    expect(atApp?.body.event?.data).toEqual(other.body);
    expect(atApp?.body).toMatchObject({ version: 1, application_id: game.id, type: 1 });
    expect(lobbyBackend.events.map((e) => e.type)).toEqual(types);
    expect(backend.events.map((e) => e.type)).toEqual(['LOBBY_MESSAGE_CREATE']);
  });

  it('a message the game has no webhook for is logged skipped at once; a subscription applies to the next one', async () => {
    const game = await lobbyGame(hearth);
    const { bot } = game;
    const player = await lobbyPlayer(hearth, game);
    const lobby = await call<{ id: string }>(hearth, 'POST', '/lobbies', bot, {
      members: [{ id: player.id }],
    });
    const path = `/lobbies/${lobby.body.id}/messages`;
    const unheard = await call<{ id: string }>(hearth, 'POST', path, player.bearer, {
      content: 'no one listens',
    });
    expect(unheard.status).toBe(201);
    const messageEvents = async () =>
      (await hearth.services.webhooks.log(game.id)).filter((event) => event.type === 'LOBBY_MESSAGE_CREATE');
    const [logged] = await messageEvents();
    expect(logged).toMatchObject({ status: 'skipped', attempts: 0 });
    expect(logged?.lastError).toBe('no event webhooks URL');

    const app = await call<{ verify_key: string }>(hearth, 'GET', '/applications/@me', bot);
    const backend = await receiver(app.body.verify_key);
    await call(hearth, 'PATCH', '/applications/@me', bot, {
      event_webhooks_url: backend.url,
      event_webhooks_types: ['LOBBY_MESSAGE_UPDATE'],
    });
    await call(hearth, 'POST', path, player.bearer, { content: 'not a subscribed type' });
    const [notSubscribed] = await messageEvents();
    expect(notSubscribed?.lastError).toBe('LOBBY_MESSAGE_CREATE not subscribed');

    await call(hearth, 'PATCH', '/applications/@me', bot, {
      event_webhooks_types: ['LOBBY_MESSAGE_CREATE'],
    });
    const heard = await call<{ id: string }>(hearth, 'POST', path, player.bearer, {
      content: 'now it listens',
    });
    const [created] = await backend.untilEvents('LOBBY_MESSAGE_CREATE');
    expect(created?.body.event?.data).toEqual(heard.body);

    // Skipped events stay replayable: the first one reaches the backend once queued again.
    expect(await hearth.services.webhooks.replay(game.id, logged?.id)).toBe(1);
    const [, replayed] = await backend.untilEvents('LOBBY_MESSAGE_CREATE', 2);
    expect(replayed?.body.event?.data).toEqual(unheard.body);
  });

  it('without a delivery worker, an unsubscribed event is settled skipped by the request itself', async () => {
    const quiet = await startHearth({}, undefined, { deliverWebhooks: false });
    try {
      const game = await lobbyGame(quiet);
      const player = await lobbyPlayer(quiet, game);
      const lobby = await call<{ id: string }>(quiet, 'POST', '/lobbies', game.bot, {
        members: [{ id: player.id }],
      });
      await call(quiet, 'POST', `/lobbies/${lobby.body.id}/messages`, player.bearer, { content: 'hi' });
      const app = await call<{ verify_key: string }>(quiet, 'GET', '/applications/@me', game.bot);
      const backend = await receiver(app.body.verify_key);
      await call(quiet, 'PATCH', '/applications/@me', game.bot, {
        event_webhooks_url: backend.url,
        event_webhooks_types: ['LOBBY_MESSAGE_CREATE'],
      });
      await call(quiet, 'POST', `/lobbies/${lobby.body.id}/messages`, player.bearer, { content: 'hello' });
      // Newest first: the subscribed message waits for a worker; the first was never going to be sent.
      const logged = await quiet.services.webhooks.log(game.id);
      const messages = logged.filter((event) => event.type === 'LOBBY_MESSAGE_CREATE');
      expect(messages.map((event) => event.status)).toEqual(['pending', 'skipped']);
    } finally {
      await quiet.close();
    }
  });
});
