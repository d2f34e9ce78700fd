import { createRequire } from 'node:module';
import { RpcCloseCodes, RpcErrorCodes, RpcLimits } from '@hearth/protocol';
import { Client as XhayperClient } from '@xhayper/discord-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import type { RpcAgent } from '../../src/rpc/agent.js';
import { agentUser, ipcDir, rpcGame, startAgent } from './rpc-support.js';

// discord-rpc is CommonJS without types: the parts the tests drive.
interface DiscordRpcClient {
  fetch: { endpoint: string };
  user: { id: string } | null;
  application: { id: string } | null;
  transport: { once(event: 'close', listener: (event: { code: number }) => void): void };
  login(options: Record<string, unknown>): Promise<DiscordRpcClient>;
  setActivity(args: Record<string, unknown>, pid?: number): Promise<unknown>;
  subscribe(event: string, args?: Record<string, unknown>): Promise<unknown>;
  request(cmd: string, args?: Record<string, unknown>, evt?: string): Promise<unknown>;
  on(event: string, listener: (data: unknown) => void): void;
  destroy(): Promise<void>;
}
const { Client: DiscordRpc } = createRequire(import.meta.url)('discord-rpc') as {
  Client: new (options: { transport: 'ipc' | 'websocket'; origin?: string }) => DiscordRpcClient;
};

/** Quirk 1 (VOICE-RPC.md §5): xhayper exchanges the code through its `rest`, pointed at the server here. */
function pointRest(client: XhayperClient, hearth: TestHearth): void {
  (client as unknown as { rest: { options: { api: string } } }).rest.options.api = `${hearth.url}/api`;
}

const ORIGIN = 'https://game.example';
const REDIRECT = 'http://127.0.0.1/callback';

/**
 * Done when (issue 19): the unmodified clients `@xhayper/discord-rpc@1.5.1` (IPC) and `discord-rpc@4.0.1`
 * (IPC and WebSocket) connect, authorize through the consent flow, authenticate, set an activity a friend's
 * gateway session receives, subscribe to an event and receive it, and get the errors of the interface.
 */
describe('RPC with the real clients', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let host: Awaited<ReturnType<typeof agentUser>>;
  let friend: Awaited<ReturnType<typeof agentUser>>;
  let friendGateway: GatewayClient;
  let dir: ReturnType<typeof ipcDir>;
  let agent: RpcAgent;
  let guildId: string;
  let textChannelId: string;
  const consents: string[][] = [];
  const savedXdg = process.env['XDG_RUNTIME_DIR'];

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
    game = await rpcGame(hearth, [ORIGIN]);
    host = await agentUser(hearth);
    friend = await agentUser(hearth);
    await hearth.api(`/users/@me/relationships/${friend.id}`, { method: 'PUT', auth: host.token, body: {} });
    await hearth.api(`/users/@me/relationships/${host.id}`, { method: 'PUT', auth: friend.token, body: {} });
    const guild = await hearth.api('/guilds', {
      method: 'POST',
      auth: host.token,
      body: { name: 'RPC Guild' },
    });
    guildId = ((await guild.json()) as { id: string }).id;
    const channels = await hearth.api(`/guilds/${guildId}/channels`, { auth: host.token });
    const list = (await channels.json()) as Array<{ id: string; type: number }>;
    textChannelId = list.find((channel) => channel.type === 0)!.id;

    friendGateway = await GatewayClient.connect(hearth.url);
    await friendGateway.nextOp(10);
    friendGateway.send({ op: 2, d: { token: friend.token, properties: { os: 'linux' }, intents: 0 } });
    await friendGateway.nextDispatch('READY');

    dir = ipcDir();
    // Clients find the socket through the environment, as on a player's machine.
    process.env['XDG_RUNTIME_DIR'] = dir.path;
    agent = await startAgent(hearth, host.token, {
      ipc: {},
      consent: (request) => {
        consents.push(request.scopes);
        return true;
      },
    });
  });
  afterAll(async () => {
    if (savedXdg === undefined) delete process.env['XDG_RUNTIME_DIR'];
    else process.env['XDG_RUNTIME_DIR'] = savedXdg;
    await friendGateway?.close();
    await agent?.close();
    await hearth?.close();
    dir?.remove();
  });

  /** The friend's next PRESENCE_UPDATE of the host with an activity matching `match`. */
  function friendSees(match: (activity: Record<string, unknown>) => boolean): Promise<GatewayFrame> {
    return friendGateway.next((frame) => {
      if (frame.t !== 'PRESENCE_UPDATE') return false;
      const d = frame.d as { user: { id: string }; activities: Array<Record<string, unknown>> };
      return d.user.id === host.id && d.activities.some(match);
    });
  }

  function postMessage(content: string): Promise<Response> {
    return hearth.api(`/channels/${textChannelId}/messages`, {
      method: 'POST',
      auth: host.token,
      body: { content },
    });
  }

  describe('@xhayper/discord-rpc over IPC', () => {
    let client: XhayperClient;

    beforeAll(async () => {
      client = new XhayperClient({ clientId: game.id, clientSecret: game.clientSecret });
      pointRest(client, hearth);
    });
    afterAll(() => client?.destroy());

    it('connects, authorizes through the consent flow, exchanges the code and authenticates', async () => {
      await client.login({ scopes: ['rpc', 'identify', 'messages.read'] });
      expect(consents.at(-1)).toEqual(['rpc', 'identify', 'messages.read']);
      expect(client.user?.id).toBe(host.id);
      expect(client.application).toMatchObject({ id: game.id, rpc_origins: [ORIGIN] });
    });

    it('sets an activity that the friend’s gateway session receives as PRESENCE_UPDATE', async () => {
      const start = new Date('2026-11-20T10:00:00Z');
      const seen = friendSees((activity) => activity['details'] === 'Exploring the caves');
      await client.user!.setActivity({
        details: 'Exploring the caves',
        state: 'In a party',
        startTimestamp: start,
        partyId: 'party-x',
        partySize: 1,
        partyMax: 4,
      });
      const frame = await seen;
      const activity = (frame.d as { activities: Array<Record<string, unknown>> }).activities[0];
      expect(activity).toMatchObject({
        application_id: game.id,
        type: 0,
        details: 'Exploring the caves',
        state: 'In a party',
        timestamps: { start: start.getTime() },
        party: { id: 'party-x', size: [1, 4] },
      });
    });

    it('subscribes to MESSAGE_CREATE of a channel and receives it', async () => {
      await client.subscribe('MESSAGE_CREATE', { channel_id: textChannelId });
      const received = new Promise<unknown>((resolve) => client.once('MESSAGE_CREATE', resolve));
      await postMessage('hello from the guild');
      expect(await received).toMatchObject({
        channel_id: textChannelId,
        message: { content: 'hello from the guild', channel_id: textChannelId },
      });
    });

    it('answers an unknown command with ERROR 4002', async () => {
      await expect(client.request('NOT_A_COMMAND' as never, {})).rejects.toMatchObject({
        code: RpcErrorCodes.InvalidCommand,
        message: 'Invalid command: NOT_A_COMMAND',
      });
    });

    it('answers GET_GUILDS with the player’s guilds (rpc scope)', async () => {
      const guilds = await client.user!.fetchGuilds();
      expect(guilds.map((guild) => guild.id)).toContain(guildId);
    });
  });

  it('@xhayper/discord-rpc: a command whose scope was not granted is refused with 4006', async () => {
    const client = new XhayperClient({ clientId: game.id, clientSecret: game.clientSecret });
    pointRest(client, hearth);
    try {
      await client.login({ scopes: ['identify'] });
      await expect(client.request('GET_GUILDS')).rejects.toMatchObject({
        code: RpcErrorCodes.InvalidPermissions,
        message: 'Missing scope: one of rpc',
      });
      await expect(client.subscribe('MESSAGE_CREATE', { channel_id: textChannelId })).rejects.toMatchObject({
        code: RpcErrorCodes.InvalidPermissions,
      });
    } finally {
      await client.destroy();
    }
  });

  describe('discord-rpc over IPC', () => {
    let client: DiscordRpcClient;

    afterAll(() => client?.destroy());

    it('connects, authorizes, authenticates, and sets an activity with timestamps in seconds', async () => {
      client = new DiscordRpc({ transport: 'ipc' });
      // Quirk 3: the token exchange uses client.fetch.endpoint.
      client.fetch.endpoint = `${hearth.url}/api`;
      await client.login({
        clientId: game.id,
        clientSecret: game.clientSecret,
        scopes: ['rpc', 'messages.read'],
        redirectUri: REDIRECT,
      });
      expect(client.user?.id).toBe(host.id);
      expect(client.application?.id).toBe(game.id);

      const seconds = 1_790_000_000;
      const seen = friendSees((activity) => activity['state'] === 'discord-rpc over IPC');
      await client.setActivity({ state: 'discord-rpc over IPC', startTimestamp: seconds });
      const activity = (await seen).d as { activities: Array<Record<string, unknown>> };
      // SET_ACTIVITY timestamps in seconds become milliseconds (VOICE-RPC.md §5).
      expect(activity.activities.find((a) => a['state'] === 'discord-rpc over IPC')).toMatchObject({
        application_id: game.id,
        timestamps: { start: seconds * 1000 },
      });
    });

    it('subscribes to MESSAGE_CREATE and receives it; a bad command is refused', async () => {
      await client.subscribe('MESSAGE_CREATE', { channel_id: textChannelId });
      const received = new Promise<unknown>((resolve) => client.on('MESSAGE_CREATE', resolve));
      await postMessage('for discord-rpc');
      expect(await received).toMatchObject({ message: { content: 'for discord-rpc' } });
      await expect(client.request('NOT_A_COMMAND', {})).rejects.toMatchObject({ code: 4002 });
    });
  });

  describe('discord-rpc over WebSocket', () => {
    let client: DiscordRpcClient;

    afterAll(() => client?.destroy());

    it('connects with a registered origin, authorizes with the token exchange proxied by the agent', async () => {
      client = new DiscordRpc({ transport: 'websocket', origin: ORIGIN });
      // The token exchange goes to the agent's own port, which passes it to the server.
      client.fetch.endpoint = `http://127.0.0.1:${agent.wsPort}`;
      await client.login({
        clientId: game.id,
        clientSecret: game.clientSecret,
        scopes: ['rpc', 'messages.read'],
        redirectUri: REDIRECT,
      });
      expect(client.user?.id).toBe(host.id);
      expect(client.application?.id).toBe(game.id);
    });

    it('sets an activity the friend receives, subscribes to an event and receives it', async () => {
      const seen = friendSees((activity) => activity['state'] === 'over the WebSocket');
      await client.setActivity({ state: 'over the WebSocket', details: 'ws' });
      expect((await seen).d).toMatchObject({ user: { id: host.id } });

      await client.subscribe('MESSAGE_CREATE', { channel_id: textChannelId });
      const received = new Promise<unknown>((resolve) => client.on('MESSAGE_CREATE', resolve));
      await postMessage('for the websocket');
      expect(await received).toMatchObject({ message: { content: 'for the websocket' } });
    });

    it('refuses a bad command with 4002 and a missing scope with 4006', async () => {
      await expect(client.request('NOT_A_COMMAND', {})).rejects.toMatchObject({ code: 4002 });
      // NOTIFICATION_CREATE needs rpc.notifications.read, which this token lacks.
      await expect(client.subscribe('NOTIFICATION_CREATE', {})).rejects.toMatchObject({
        code: RpcErrorCodes.InvalidPermissions,
        message: 'Missing scope: one of rpc.notifications.read',
      });
    });

    it('an unknown origin is closed with 4001', async () => {
      const intruder = new DiscordRpc({ transport: 'websocket', origin: 'https://evil.example' });
      const closed = new Promise<number>((resolve) =>
        intruder.transport.once('close', (event) => resolve(event.code)),
      );
      const login = intruder.login({ clientId: game.id }).catch((error: Error) => error);
      expect(await closed).toBe(RpcCloseCodes.InvalidOrigin);
      expect(await login).toBeInstanceOf(Error);
    });
  });

  describe('the WebSocket handshake, raw', () => {
    function closeOf(query: string, origin?: string): Promise<{ code: number; reason: string }> {
      const socket = new WebSocket(`ws://127.0.0.1:${agent.wsPort}/?${query}`, origin ? { origin } : {});
      return new Promise((resolve, reject) => {
        socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
        socket.once('error', reject);
      });
    }

    it('closes 4004 for another version, 4005 for another encoding, 4000 for an unknown client id', async () => {
      expect(await closeOf(`v=2&client_id=${game.id}&encoding=json`, ORIGIN)).toEqual({
        code: RpcCloseCodes.InvalidVersion,
        reason: 'Invalid Version',
      });
      expect(await closeOf(`v=1&client_id=${game.id}&encoding=etf`, ORIGIN)).toEqual({
        code: RpcCloseCodes.InvalidEncoding,
        reason: 'Invalid Encoding',
      });
      expect(await closeOf('v=1&client_id=123456789012345678&encoding=json', ORIGIN)).toEqual({
        code: RpcCloseCodes.InvalidClientId,
        reason: 'Invalid Client ID',
      });
      expect(await closeOf(`v=1&client_id=${game.id}&encoding=json`)).toEqual({
        code: RpcCloseCodes.InvalidOrigin,
        reason: 'Invalid Origin',
      });
    });

    it('a command sent before READY is served after it', async () => {
      const socket = new WebSocket(`ws://127.0.0.1:${agent.wsPort}/?v=1&client_id=${game.id}&encoding=json`, {
        origin: ORIGIN,
      });
      const messages: Array<{ evt: string | null; nonce: string | null; data: { code?: number } }> = [];
      const two = new Promise<void>((resolve) =>
        socket.on('message', (raw) => {
          messages.push(JSON.parse(raw.toString()) as (typeof messages)[number]);
          if (messages.length === 2) resolve();
        }),
      );
      socket.once('open', () => socket.send(JSON.stringify({ cmd: 'NOPE', nonce: 'early', args: {} })));
      await two;
      expect(messages.map((m) => m.evt)).toEqual(['READY', 'ERROR']);
      expect(messages[1]).toMatchObject({ nonce: 'early', data: { code: RpcErrorCodes.InvalidCommand } });
      socket.close();
    });

    it('a message over the limit closes that connection with 1009, invalid JSON with 1003', async () => {
      const open = async () => {
        const socket = new WebSocket(
          `ws://127.0.0.1:${agent.wsPort}/?v=1&client_id=${game.id}&encoding=json`,
          {
            origin: ORIGIN,
          },
        );
        const ready = new Promise<void>((resolve) => socket.once('message', () => resolve()));
        const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
        await ready;
        return { socket, closed };
      };
      const big = await open();
      big.socket.send(
        JSON.stringify({ cmd: 'SET_ACTIVITY', args: { padding: 'x'.repeat(RpcLimits.frameMaxBytes) } }),
      );
      expect(await big.closed).toBe(1009);
      const broken = await open();
      broken.socket.send('{"cmd":');
      expect(await broken.closed).toBe(RpcCloseCodes.Unsupported);
    });

    it('answers GET with 404 on the same port, and proxies POST /oauth2/token to the server', async () => {
      const probe = await fetch(`http://127.0.0.1:${agent.wsPort}/`);
      expect(probe.status).toBe(404);
      const refused = await fetch(`http://127.0.0.1:${agent.wsPort}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'nope',
          client_id: game.id,
        }).toString(),
      });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'invalid_client' });
    });
  });
});
