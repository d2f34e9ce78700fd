import { Client as CoreClient, GatewayDispatchEvents, type GatewayDispatchPayload } from '@discordjs/core';
import { REST } from '@discordjs/rest';
import { WebSocketManager } from '@discordjs/ws';
import { Client, Events, type User } from 'discord.js';
import { type APIUser, GatewayOpcodes, Routes } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';

/**
 * The full discord.js 14 Client and @discordjs/core against an in-process Hearth, changing only their base
 * URL (issue 23: real peers). Each asserts what the library itself reports, so a wire detail it depends on
 * (READY, the application object, %40me paths, the authorize URL) breaks the test when it regresses.
 */

let hearth: TestHearth;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  hearth = await startHearth();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => hearth.close());

/** Resolves with the first value `register` hands to its callback; fails after `timeoutMs`. */
function once<T>(what: string, register: (resolve: (value: T) => void) => void, timeoutMs = 10_000) {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

describe('discord.js Client', () => {
  let game: TestGame;
  let client: Client;

  beforeAll(async () => {
    game = await createGame(hearth, { name: 'djs game' });
  });

  async function login(): Promise<Client<true>> {
    client = new Client({ intents: [], rest: { api: `${hearth.url}/api` } });
    cleanups.push(() => client.destroy());
    const ready = once<Client<true>>('clientReady', (resolve) => client.once(Events.ClientReady, resolve));
    await client.login(game.botToken);
    return ready;
  }

  it('logs in as the bot through GET /gateway/bot and reaches clientReady with its user and application', async () => {
    const ready = await login();
    expect(ready.user.id).toBe(game.botUserId);
    expect(ready.user.bot).toBe(true);
    expect(ready.user.flags?.bitfield).toBe(0);
    expect(ready.application.id).toBe(game.id);
  });

  it('fetches its application: the owner is the developer (a User), not the bot', async () => {
    const ready = await login();
    const application = await ready.application.fetch();
    expect(application.id).toBe(game.id);
    expect(application.name).toBe('djs game');
    const owner = application.owner as User;
    expect(owner.id).toBe(game.ownerId);
    expect(owner.id).not.toBe(game.botUserId);
    expect(owner.bot).toBe(false);
    expect(owner.flags?.bitfield).toBe(0);
    expect(application.botPublic).toBe(true);
  });

  it('edits its own user with PATCH /users/@me and reads itself back over REST', async () => {
    const ready = await login();
    const edited = await ready.user.edit({});
    expect(edited.id).toBe(game.botUserId);
    const me = (await ready.rest.get(Routes.user())) as APIUser;
    expect(me).toMatchObject({ id: game.botUserId, bot: true, flags: 0, public_flags: 0 });
  });
});

describe('@discordjs/core', () => {
  let game: TestGame;

  beforeAll(async () => {
    game = await createGame(hearth, { name: 'core game' });
  });

  function core(): { client: CoreClient; rest: REST; gateway: WebSocketManager } {
    const rest = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(game.botToken);
    const gateway = new WebSocketManager({ token: game.botToken, intents: 0, rest });
    cleanups.push(async () => {
      await gateway.destroy();
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    });
    return { client: new CoreClient({ rest, gateway }), rest, gateway };
  }

  it('users.getCurrent() answers the bot user with flags and public_flags', async () => {
    const { client } = core();
    const user = await client.api.users.getCurrent();
    expect(user).toMatchObject({ id: game.botUserId, bot: true, flags: 0, public_flags: 0 });
  });

  it('users.edit() is served (PATCH /users/@me) and answers the user', async () => {
    const { client } = core();
    const user = await client.api.users.edit({});
    expect(user).toMatchObject({ id: game.botUserId, bot: true });
  });

  it('applications.getCurrent() answers the application with its developer as owner', async () => {
    const { client } = core();
    const application = await client.api.applications.getCurrent();
    expect(application.id).toBe(game.id);
    expect(application.owner).toMatchObject({ id: game.ownerId, flags: 0, public_flags: 0 });
  });

  it('the gateway reaches READY through the core client dispatch', async () => {
    const { client, gateway } = core();
    const ready = once<GatewayDispatchPayload>('READY', (resolve) =>
      client.on(GatewayDispatchEvents.Ready, ({ data }) =>
        resolve({ op: GatewayOpcodes.Dispatch, t: GatewayDispatchEvents.Ready, s: 1, d: data }),
      ),
    );
    await gateway.connect();
    const frame = await ready;
    expect(frame.d).toMatchObject({ user: { id: game.botUserId }, application: { id: game.id } });
  });

  it('oauth2.generateAuthorizationURL() on Hearth’s origin leads to the consent page with the same query', async () => {
    const { client } = core();
    const generated = new URL(
      client.api.oauth2.generateAuthorizationURL({
        client_id: game.id,
        response_type: 'code',
        scope: 'identify',
        redirect_uri: 'http://127.0.0.1/callback',
      }),
    );
    // The library names the platform's host; only the origin is Hearth's.
    const onHearth = `${hearth.url}${generated.pathname}${generated.search}`;
    const response = await fetch(onHearth, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(`${hearth.url}/oauth2/authorize${generated.search}`);
  });
});
