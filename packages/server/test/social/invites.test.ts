import { MessageActivityTypes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import {
  answer,
  connect,
  SkewClock,
  SOCIAL_SCOPES,
  socialPlayer,
  type TestPlayer,
} from './social-support.js';

/** Activity invites (PROTOCOL.md §B.9): invite messages, accepting for the join secret, join requests. */
describe('activity invites', () => {
  let hearth: TestHearth;
  let game: TestGame;

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, new SkewClock());
    game = await createGame(hearth);
  });
  afterAll(() => hearth.close());

  const call = (player: TestPlayer, method: string, path: string, body?: unknown) =>
    hearth.api(path, { method, auth: player.bearer, ...(body === undefined ? {} : { body }) }).then(answer);

  async function friends(a: TestPlayer, b: TestPlayer): Promise<void> {
    await call(a, 'PUT', `/users/@me/relationships/${b.id}`);
    await call(b, 'PUT', `/users/@me/relationships/${a.id}`);
  }

  /** Sets a joinable party and waits until a friend has seen it (presence is what invites read). */
  async function hostParty(ws: GatewayClient, watcher: GatewayClient, host: TestPlayer, party = 'party-1') {
    ws.send({
      op: 3,
      d: {
        status: 'online',
        since: null,
        afk: false,
        activities: [
          {
            name: 'Hearth Quest',
            type: 0,
            party: { id: party, size: [1, 4] },
            secrets: { join: `secret-of-${party}` },
            supported_platforms: ['desktop'],
          },
        ],
      },
    });
    await watcher.next(
      (f) =>
        f.t === 'PRESENCE_UPDATE' &&
        (f.d as { user: { id: string }; activities: Array<{ party?: { id: string } }> }).user.id ===
          host.id &&
        (f.d as { activities: Array<{ party?: { id: string } }> }).activities[0]?.party?.id === party,
    );
  }

  it('an invite carries the text SendActivityInvite gives it, also under activities.invites.write alone', async () => {
    const host = await socialPlayer(
      hearth,
      game,
      'identify gateway.connect activities.write activities.invites.write relationships.read relationships.write',
    );
    const guest = await socialPlayer(hearth, game);
    await friends(host, guest);
    const hostWs = await connect(hearth, host);
    const guestWs = await connect(hearth, guest);
    await hostParty(hostWs, guestWs, host, 'party-text');

    const sent = await call(host, 'POST', `/users/${guest.id}/messages`, {
      content: 'come play',
      activity: { type: MessageActivityTypes.Join },
      application_id: game.id,
    });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({
      content: 'come play',
      activity: { type: 1, party_id: 'party-text' },
      application_id: game.id,
    });
    expect((await guestWs.nextDispatch('MESSAGE_CREATE')).d).toEqual(sent.body);
    // Without an activity, the same scopes send nothing.
    expect(await call(host, 'POST', `/users/${guest.id}/messages`, { content: 'come play' })).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { content: { _errors: [{ code: 'UNKNOWN_FIELD' }] } } },
    });
    await Promise.all([hostWs.close(), guestWs.close()]);
  });

  it('invite, then accept: the join secret reaches the accepter; their other device hears of it', async () => {
    const host = await socialPlayer(hearth, game);
    const guest = await socialPlayer(hearth, game);
    await friends(host, guest);
    const hostWs = await connect(hearth, host);
    const guestWs = await connect(hearth, guest);
    const guestPhone = await connect(hearth, guest);
    await hostParty(hostWs, guestWs, host);

    const sent = await call(host, 'POST', `/users/${guest.id}/messages`, {
      activity: { type: MessageActivityTypes.Join },
      application_id: game.id,
    });
    expect(sent.status).toBe(200);
    const invite = sent.body as { id: string; activity: unknown; application_id: string; content: string };
    expect(invite).toMatchObject({
      activity: { type: 1, party_id: 'party-1' },
      application_id: game.id,
      content: '',
    });
    expect((await guestWs.nextDispatch('MESSAGE_CREATE')).d).toEqual(invite);
    // The host's own sessions get the message too; a library never reports it as an invite received.
    expect((await hostWs.nextDispatch('MESSAGE_CREATE')).d).toEqual(invite);

    const accepted = await call(
      guest,
      'POST',
      `/users/${host.id}/messages/${invite.id}/activity-invite/accept`,
    );
    expect(accepted).toEqual({ status: 200, body: { ...invite, secret: 'secret-of-party-1' } });
    expect((await guestPhone.nextDispatch('ACTIVITY_INVITE_ACCEPTED')).d).toEqual(invite);

    // The host cannot accept their own invite.
    expect(
      await call(host, 'POST', `/users/${guest.id}/messages/${invite.id}/activity-invite/accept`),
    ).toEqual({
      status: 404,
      body: { code: 10008, message: 'Unknown Message' },
    });

    // Once the party changes, the old invite no longer opens it.
    await hostParty(hostWs, guestWs, host, 'party-2');
    expect(
      await call(guest, 'POST', `/users/${host.id}/messages/${invite.id}/activity-invite/accept`),
    ).toEqual({
      status: 400,
      body: {
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          _errors: [
            { code: 'ACTIVITY_INVITE_EXPIRED', message: 'The invite no longer matches an open party.' },
          ],
        },
      },
    });
    for (const ws of [hostWs, guestWs, guestPhone]) await ws.close();
  });

  it('an invite needs a party with a size and a join secret', async () => {
    const host = await socialPlayer(hearth, game);
    const guest = await socialPlayer(hearth, game);
    await friends(host, guest);
    const hostWs = await connect(hearth, host);
    expect(await call(host, 'POST', `/users/${guest.id}/messages`, { activity: { type: 1 } })).toEqual({
      status: 400,
      body: {
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          activity: {
            _errors: [
              {
                code: 'ACTIVITY_NOT_JOINABLE',
                message: 'Set a rich presence with a party (id and size) and a join secret before inviting.',
              },
            ],
          },
        },
      },
    });
    expect(await call(host, 'POST', `/users/${guest.id}/messages`, { activity: { type: 4 } })).toMatchObject({
      status: 400,
      body: { code: 50035, errors: { activity: { type: {} } } },
    });
    await hostWs.close();
  });

  it('a join request reaches the host, who replies with an invite the requester accepts', async () => {
    const host = await socialPlayer(hearth, game);
    const requester = await socialPlayer(hearth, game, 'identify activities.invites.write gateway.connect');
    await friends(host, await socialPlayer(hearth, game));
    const hostWs = await connect(hearth, host);
    const requesterWs = await connect(hearth, requester);
    const watcher = await socialPlayer(hearth, game);
    await friends(host, watcher);
    const watcherWs = await connect(hearth, watcher);
    await hostParty(hostWs, watcherWs, host);

    // Not friends: the host is in the game, so the request may be sent (PROTOCOL.md §B.5).
    const request = await call(requester, 'POST', `/users/${host.id}/messages`, {
      activity: { type: MessageActivityTypes.JoinRequest },
    });
    expect(request.status).toBe(200);
    expect((await hostWs.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
      activity: { type: 5 },
      author: { id: requester.id },
    });
    const reply = (await call(host, 'POST', `/users/${requester.id}/messages`, { activity: { type: 1 } }))
      .body as {
      id: string;
    };
    expect(
      (await call(requester, 'POST', `/users/${host.id}/messages/${reply.id}/activity-invite/accept`)).body,
    ).toMatchObject({
      secret: 'secret-of-party-1',
    });
    for (const ws of [hostWs, requesterWs, watcherWs]) await ws.close();
  });

  it('an invite of a sibling application (same parent) is accepted from the sibling; another game’s is not', async () => {
    const parent = await createGame(hearth);
    const first = await createGame(hearth);
    const second = await createGame(hearth);
    const stranger = await createGame(hearth);
    for (const child of [first, second]) {
      await hearth.services.applications.adminUpdate(child.id, { parent_application_id: parent.id });
    }
    const host = await socialPlayer(hearth, first);
    const guest = await socialPlayer(hearth, first);
    await friends(host, guest);
    const guestInSecond = {
      ...guest,
      bearer: `Bearer ${(await grantTokens(hearth, second, guest.sessionToken, SOCIAL_SCOPES)).access_token}`,
    };
    const guestElsewhere = {
      ...guest,
      bearer: `Bearer ${(await grantTokens(hearth, stranger, guest.sessionToken, SOCIAL_SCOPES)).access_token}`,
    };
    const hostWs = await connect(hearth, host);
    const guestWs = await connect(hearth, guestInSecond);
    await hostParty(hostWs, guestWs, host);
    const invite = (await call(host, 'POST', `/users/${guest.id}/messages`, { activity: { type: 1 } }))
      .body as {
      id: string;
    };
    // The sibling's session receives it, marked with the inviting game's id.
    expect((await guestWs.nextDispatch('MESSAGE_CREATE')).d).toMatchObject({
      id: invite.id,
      application_id: first.id,
    });
    const path = `/users/${host.id}/messages/${invite.id}/activity-invite/accept`;
    expect(await call(guestElsewhere, 'POST', path)).toEqual({
      status: 404,
      body: { code: 10008, message: 'Unknown Message' },
    });
    expect((await call(guestInSecond, 'POST', path)).body).toMatchObject({
      secret: 'secret-of-party-1',
      application_id: first.id,
    });
    await hostWs.close();
    await guestWs.close();
  });
});
