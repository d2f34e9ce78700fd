import { IDENTIFY_WINDOW_MS, RpcErrorCodes, RpcIpcOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { grantTokens, type TestGame } from '../../../../test-support/oauth.js';
import type { RpcAgent } from '../../src/rpc/agent.js';
import { SkewClock } from '../social/social-support.js';
import { agentUser, ipcDir, type RawFrame, RawIpcClient, rpcGame, startAgent } from './rpc-support.js';

type User = Awaited<ReturnType<typeof agentUser>>;

/** The commands and events of PROTOCOL.md §H, each with its good and bad cases, over a raw IPC client. */
describe('RPC commands', () => {
  let hearth: TestHearth;
  let game: TestGame;
  let other: TestGame;
  let host: User;
  let friend: User;
  let friendGateway: GatewayClient;
  let dir: ReturnType<typeof ipcDir>;
  let agent: RpcAgent;
  let guildId: string;
  let textChannelId: string;
  let voiceChannelId: string;
  let secondVoiceChannelId: string;
  let foreignChannelId: string;
  let consent = true;
  const clock = new SkewClock();

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 }, clock);
    game = await rpcGame(hearth);
    other = await rpcGame(hearth);
    host = await agentUser(hearth);
    friend = await agentUser(hearth);
    await hearth.api(`/users/@me/relationships/${friend.id}`, { method: 'PUT', auth: host.token, body: {} });
    await hearth.api(`/users/@me/relationships/${host.id}`, { method: 'PUT', auth: friend.token, body: {} });
    const guild = await hearth.api('/guilds', {
      method: 'POST',
      auth: host.token,
      body: { name: 'Voice Hall' },
    });
    guildId = ((await guild.json()) as { id: string }).id;
    await hearth.services.guilds.addMember(guildId, friend.id);
    const made = async (name: string, type: number) => {
      const response = await hearth.api(`/guilds/${guildId}/channels`, {
        method: 'POST',
        auth: host.token,
        body: { name, type },
      });
      return ((await response.json()) as { id: string }).id;
    };
    textChannelId = await made('chat', 0);
    voiceChannelId = await made('Lounge', 2);
    secondVoiceChannelId = await made('Arena', 2);
    // A guild the host is not in: its channel is invisible to the host.
    const foreign = await hearth.api('/guilds', {
      method: 'POST',
      auth: friend.token,
      body: { name: 'Elsewhere' },
    });
    const foreignId = ((await foreign.json()) as { id: string }).id;
    const foreignChannels = await hearth.api(`/guilds/${foreignId}/channels`, { auth: friend.token });
    foreignChannelId = ((await foreignChannels.json()) as Array<{ id: string }>)[0]!.id;

    friendGateway = await GatewayClient.connect(hearth.url);
    await friendGateway.nextOp(10);
    friendGateway.send({ op: 2, d: { token: friend.token, properties: { os: 'linux' }, intents: 0 } });
    await friendGateway.nextDispatch('READY');

    dir = ipcDir();
    agent = await startAgent(hearth, host.token, {
      ipc: { directory: dir.path },
      websocket: false,
      consent: () => consent,
    });
  });
  afterAll(async () => {
    await friendGateway?.close();
    await agent?.close();
    await hearth?.close();
    dir?.remove();
  });

  async function connect(clientId = game.id): Promise<RawIpcClient> {
    const client = await RawIpcClient.connect(agent.ipcPath!);
    client.handshake(clientId);
    await client.next((frame) => (frame.data as { evt?: string }).evt === 'READY');
    return client;
  }

  /** A connection authenticated with a token of `scopes` granted by the host. */
  async function authenticated(scopes: string): Promise<RawIpcClient> {
    const client = await connect();
    const tokens = await grantTokens(hearth, game, host.token, scopes);
    const reply = await client.command('AUTHENTICATE', { access_token: tokens.access_token });
    expect((reply.data as { evt: string | null }).evt).toBeNull();
    return client;
  }

  function dataOf(frame: RawFrame): { cmd: string; evt: string | null; data: Record<string, unknown> } {
    return frame.data as { cmd: string; evt: string | null; data: Record<string, unknown> };
  }

  function expectError(frame: RawFrame, code: number, message?: string): void {
    const payload = dataOf(frame);
    expect(payload.evt).toBe('ERROR');
    expect(payload.data['code']).toBe(code);
    if (message !== undefined) expect(payload.data['message']).toBe(message);
  }

  describe('payloads', () => {
    it('a payload that is not an object, or without cmd, is 4000; an unknown or server-only cmd is 4002', async () => {
      const client = await connect();
      client.send(RpcIpcOpcodes.Frame, [1, 2]);
      expectError(await client.next(), RpcErrorCodes.InvalidPayload, 'Payload must be an object');
      client.send(RpcIpcOpcodes.Frame, { nonce: 'n-1', args: {} });
      const missing = await client.next();
      expect(dataOf(missing)).toMatchObject({ nonce: 'n-1', evt: 'ERROR', data: { code: 4000 } });
      expectError(
        await client.command('DISPATCH', {}),
        RpcErrorCodes.InvalidCommand,
        'Invalid command: DISPATCH',
      );
      expectError(await client.command('GET_GUILDS', 'not an object' as never), RpcErrorCodes.InvalidPayload);
      client.close();
    });
  });

  describe('AUTHORIZE and AUTHENTICATE', () => {
    it('commands that need authorization before AUTHENTICATE are 4006', async () => {
      const client = await connect();
      expectError(await client.command('GET_GUILDS', {}), 4006, 'Not authenticated or invalid scope');
      expectError(await client.command('SUBSCRIBE', { channel_id: textChannelId }, 'MESSAGE_CREATE'), 4006);
      // A game's own activity events need no sign-in.
      expect(dataOf(await client.command('SUBSCRIBE', {}, 'ACTIVITY_JOIN'))).toMatchObject({
        evt: null,
        data: { evt: 'ACTIVITY_JOIN' },
      });
      client.close();
    });

    it('AUTHORIZE answers a code the game exchanges; its refusals are 4000, 4007 and 5000', async () => {
      const client = await connect();
      const granted = dataOf(
        await client.command('AUTHORIZE', { client_id: game.id, scopes: ['identify', 'rpc'] }),
      );
      expect(granted.data['code']).toEqual(expect.any(String));
      const exchange = await hearth.api('/oauth2/token', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: String(granted.data['code']),
          client_id: game.id,
          client_secret: game.clientSecret,
        }).toString(),
      });
      expect(exchange.status).toBe(200);
      expect(((await exchange.json()) as { scope: string }).scope.split(' ').sort()).toEqual([
        'identify',
        'rpc',
      ]);

      expectError(await client.command('AUTHORIZE', { client_id: game.id }), 4000);
      expectError(await client.command('AUTHORIZE', { client_id: game.id, scopes: [] }), 4000);
      expectError(await client.command('AUTHORIZE', { client_id: other.id, scopes: ['identify'] }), 4007);
      const badScope = await client.command('AUTHORIZE', { client_id: game.id, scopes: ['not.a.scope'] });
      expectError(badScope, RpcErrorCodes.OAuth2Error);
      expect(String(dataOf(badScope).data['message'])).toMatch(/^OAuth2 Error: invalid_scope/);
      client.close();
    });

    it('AUTHORIZE the player declines is 5000 access_denied', async () => {
      const client = await connect();
      consent = false;
      try {
        const denied = await client.command('AUTHORIZE', { client_id: game.id, scopes: ['identify'] });
        expectError(denied, RpcErrorCodes.OAuth2Error);
        expect(String(dataOf(denied).data['message'])).toMatch(/^OAuth2 Error: access_denied/);
      } finally {
        consent = true;
        client.close();
      }
    });

    it('AUTHENTICATE answers user, scopes, expires and application; a bad or foreign token is 4009', async () => {
      const client = await connect();
      const tokens = await grantTokens(hearth, game, host.token, 'identify rpc');
      const reply = dataOf(await client.command('AUTHENTICATE', { access_token: tokens.access_token }));
      expect(reply).toMatchObject({
        cmd: 'AUTHENTICATE',
        evt: null,
        data: {
          user: { id: host.id, username: host.username },
          scopes: expect.arrayContaining(['identify', 'rpc']),
          expires: expect.any(String),
          application: { id: game.id, rpc_origins: ['https://game.example'], description: '', icon: null },
        },
      });
      expectError(
        await client.command('AUTHENTICATE', { access_token: 'not-a-token' }),
        4009,
        'Invalid access token',
      );
      const foreign = await grantTokens(hearth, other, host.token, 'identify');
      expectError(await client.command('AUTHENTICATE', { access_token: foreign.access_token }), 4009);
      // Another player's token for the same game is not the signed-in player's.
      const someoneElse = await grantTokens(hearth, game, friend.token, 'identify');
      expectError(await client.command('AUTHENTICATE', { access_token: someoneElse.access_token }), 4009);
      expectError(await client.command('AUTHENTICATE', {}), 4000);
      client.close();
    });
  });

  describe('guilds and channels', () => {
    let client: RawIpcClient;
    beforeAll(async () => {
      client = await authenticated('identify rpc messages.read');
    });
    afterAll(() => client?.close());

    it('GET_GUILD, GET_CHANNELS and GET_CHANNEL answer what the player sees', async () => {
      expect(dataOf(await client.command('GET_GUILD', { guild_id: guildId })).data).toMatchObject({
        id: guildId,
        name: 'Voice Hall',
        members: [],
      });
      const channels = dataOf(await client.command('GET_CHANNELS', { guild_id: guildId })).data['channels'];
      expect(channels).toEqual(expect.arrayContaining([{ id: voiceChannelId, name: 'Lounge', type: 2 }]));
      expect(dataOf(await client.command('GET_CHANNEL', { channel_id: textChannelId })).data).toMatchObject({
        id: textChannelId,
        guild_id: guildId,
        name: 'chat',
        type: 0,
        voice_states: [],
      });
    });

    it('another guild is 4003, an invisible or unknown channel 4005', async () => {
      expectError(await client.command('GET_GUILD', { guild_id: '123456789012345678' }), 4003);
      expectError(await client.command('GET_GUILD', {}), 4003);
      expectError(await client.command('GET_CHANNELS', { guild_id: 'abc' }), 4003);
      expectError(await client.command('GET_CHANNEL', { channel_id: foreignChannelId }), 4005);
      expectError(await client.command('GET_CHANNEL', { channel_id: 7 as never }), 4005);
    });

    it('SUBSCRIBE: an unknown event is 4004, a missing or invisible channel 4005; UNSUBSCRIBE stops it', async () => {
      expectError(await client.command('SUBSCRIBE', {}, 'NOT_AN_EVENT'), 4004, 'Invalid event: NOT_AN_EVENT');
      expectError(await client.command('SUBSCRIBE', {}, 'MESSAGE_CREATE'), 4005);
      expectError(
        await client.command('SUBSCRIBE', { channel_id: foreignChannelId }, 'MESSAGE_CREATE'),
        4005,
      );

      const args = { channel_id: textChannelId };
      expect(dataOf(await client.command('SUBSCRIBE', args, 'MESSAGE_CREATE')).data).toEqual({
        evt: 'MESSAGE_CREATE',
      });
      expect(dataOf(await client.command('UNSUBSCRIBE', args, 'MESSAGE_CREATE')).data).toEqual({
        evt: 'MESSAGE_CREATE',
      });
      const post = (content: string) =>
        hearth.api(`/channels/${textChannelId}/messages`, {
          method: 'POST',
          auth: friend.token,
          body: { content },
        });
      await post('while unsubscribed');
      await client.command('SUBSCRIBE', args, 'MESSAGE_CREATE');
      await post('subscribed again');
      const event = await client.next((frame) => dataOf(frame).evt === 'MESSAGE_CREATE');
      // The message sent while unsubscribed never arrived: the first event is the later one.
      expect(dataOf(event).data).toMatchObject({
        channel_id: textChannelId,
        message: { content: 'subscribed again' },
      });
    });
  });

  describe('SET_ACTIVITY', () => {
    it('refuses what the gateway would refuse with 4000, and never closes the agent’s session', async () => {
      const client = await connect();
      expectError(
        await client.command('SET_ACTIVITY', { activity: { state: 'x' } }),
        4000,
        'pid must be a process id',
      );
      expectError(
        await client.command('SET_ACTIVITY', { pid: 1, activity: { type: 1, state: 'streaming' } }),
        4000,
        'activity.type must be one of 0, 2, 3, 5',
      );
      const long = await client.command('SET_ACTIVITY', { pid: 1, activity: { state: 's'.repeat(129) } });
      expectError(long, 4000);
      expect(String(dataOf(long).data['message'])).toMatch(/^activity\.state: /);
      expectError(await client.command('SET_ACTIVITY', { pid: 1, activity: 'busy' }), 4000);

      // The agent's gateway session is still up: a good activity reaches the friend.
      const seen = friendGateway.next(
        (f) =>
          f.t === 'PRESENCE_UPDATE' &&
          (f.d as { activities: Array<{ state?: string }> }).activities.some(
            (a) => a.state === 'after refusals',
          ),
      );
      const set = dataOf(
        await client.command('SET_ACTIVITY', { pid: 1, activity: { state: 'after refusals' } }),
      );
      expect(set.data).toMatchObject({
        name: expect.any(String),
        type: 0,
        application_id: game.id,
        state: 'after refusals',
      });
      await seen;

      // A game that goes away takes its activity with it.
      const cleared = friendGateway.next(
        (f) =>
          f.t === 'PRESENCE_UPDATE' &&
          (f.d as { user: { id: string } }).user.id === host.id &&
          (f.d as { activities: unknown[] }).activities.length === 0,
      );
      client.close();
      await cleared;
    });
  });

  describe('activity join requests and invites', () => {
    it('ACTIVITY_JOIN_REQUEST reaches the game; CLOSE_ACTIVITY_REQUEST declines once (then 4012)', async () => {
      const client = await connect();
      await client.command('SUBSCRIBE', {}, 'ACTIVITY_JOIN_REQUEST');
      const friendTokens = await grantTokens(hearth, game, friend.token, 'identify activities.invites.write');
      const sent = await hearth.api(`/users/${host.id}/messages`, {
        method: 'POST',
        auth: `Bearer ${friendTokens.access_token}`,
        body: { activity: { type: 5 } },
      });
      expect(sent.status).toBe(200);
      const request = await client.next((frame) => dataOf(frame).evt === 'ACTIVITY_JOIN_REQUEST');
      expect(dataOf(request).data).toMatchObject({ user: { id: friend.id } });
      expect(
        dataOf(await client.command('CLOSE_ACTIVITY_JOIN_REQUEST', { user_id: friend.id })).data,
      ).toBeNull();
      expectError(await client.command('CLOSE_ACTIVITY_REQUEST', { user_id: friend.id }), 4012);
      expectError(await client.command('CLOSE_ACTIVITY_REQUEST', {}), 4010);
      client.close();
    });

    it('SEND_ACTIVITY_JOIN_INVITE sends the friend a JOIN invite to the current party; unauthenticated 4006', async () => {
      const bare = await connect();
      expectError(await bare.command('SEND_ACTIVITY_JOIN_INVITE', { user_id: friend.id }), 4006);
      bare.close();

      const client = await authenticated('identify activities.invites.write');
      await client.command('SET_ACTIVITY', {
        pid: 1,
        activity: { state: 'hosting', party: { id: 'party-9', size: [1, 4] }, secrets: { join: 'join-9' } },
      });
      const invite = friendGateway.next(
        (f) => f.t === 'MESSAGE_CREATE' && (f.d as { activity?: { type: number } }).activity?.type === 1,
      );
      expect(
        dataOf(await client.command('SEND_ACTIVITY_JOIN_INVITE', { user_id: friend.id })).data,
      ).toBeNull();
      expect((await invite).d).toMatchObject({
        author: { id: host.id },
        application_id: game.id,
        activity: { type: 1, party_id: 'party-9' },
      });
      client.close();
    });
  });

  it('the player accepts a friend’s invite in the agent: the game receives ACTIVITY_INVITE, then ACTIVITY_JOIN', async () => {
    const client = await authenticated('identify activities.invites.write');
    await client.command('SUBSCRIBE', {}, 'ACTIVITY_INVITE');
    await client.command('SUBSCRIBE', {}, 'ACTIVITY_JOIN');
    // The friend plays the game and hosts a joinable party, then invites the host.
    const friendTokens = await grantTokens(
      hearth,
      game,
      friend.token,
      'identify activities.write activities.invites.write gateway.connect',
    );
    // A second Identify of the friend: past the identify window (one per user per 5 s).
    clock.advance(IDENTIFY_WINDOW_MS);
    const friendGame = await GatewayClient.connect(hearth.url);
    await friendGame.nextOp(10);
    friendGame.send({
      op: 2,
      d: { token: `Bearer ${friendTokens.access_token}`, properties: { os: 'linux' }, intents: 0 },
    });
    await friendGame.nextDispatch('READY');
    friendGame.send({
      op: 3,
      d: {
        status: 'online',
        since: null,
        afk: false,
        activities: [
          {
            name: 'Quest',
            type: 0,
            party: { id: 'friend-party', size: [1, 4] },
            secrets: { join: 'friend-join-secret' },
            supported_platforms: ['desktop'],
          },
        ],
      },
    });
    // The invite reads the party from presence, which the op 3 above reaches through the bus: the first
    // attempts may come before it, so the invite is sent until the party is seen.
    let sent: Response | undefined;
    for (let attempt = 0; attempt < 20; attempt++) {
      sent = await hearth.api(`/users/${host.id}/messages`, {
        method: 'POST',
        auth: `Bearer ${friendTokens.access_token}`,
        body: { activity: { type: 1 } },
      });
      if (sent.status === 200) break;
    }
    expect(sent?.status).toBe(200);
    const invite = dataOf(await client.next((frame) => dataOf(frame).evt === 'ACTIVITY_INVITE'));
    expect(invite.data).toMatchObject({
      type: 1,
      user: { id: friend.id },
      activity: { type: 1, party_id: 'friend-party' },
    });
    expect(
      await agent.joinActivityInvite({ inviterId: friend.id, messageId: String(invite.data['message_id']) }),
    ).toMatchObject({ kind: 'dispatched', applicationId: game.id, delivered: 1 });
    const join = dataOf(await client.next((frame) => dataOf(frame).evt === 'ACTIVITY_JOIN'));
    expect(join.data).toEqual({ secret: 'friend-join-secret' });
    await friendGame.close();
    client.close();
  });

  it('NOTIFICATION_CREATE (rpc.notifications.read) for a DM to the player; CHANNEL_CREATE (rpc)', async () => {
    const client = await authenticated('identify rpc rpc.notifications.read');
    await client.command('SUBSCRIBE', {}, 'NOTIFICATION_CREATE');
    await client.command('SUBSCRIBE', {}, 'CHANNEL_CREATE');
    const friendTokens = await grantTokens(hearth, game, friend.token, 'identify dm_channels.messages.write');
    // Features beside the agent (the launcher) read its gateway session's dispatches too.
    const seenByHook = new Promise<Record<string, unknown>>((resolve) => {
      const stop = agent.onGatewayDispatch((dispatch) => {
        if (dispatch.t !== 'MESSAGE_CREATE') return;
        stop();
        resolve(dispatch.d);
      });
    });
    const sent = await hearth.api(`/users/${host.id}/messages`, {
      method: 'POST',
      auth: `Bearer ${friendTokens.access_token}`,
      body: { content: 'are you there?' },
    });
    expect(sent.status).toBe(200);
    const notification = dataOf(await client.next((frame) => dataOf(frame).evt === 'NOTIFICATION_CREATE'));
    expect(await seenByHook).toMatchObject({ content: 'are you there?' });
    expect(notification.data).toMatchObject({
      title: friend.username,
      body: 'are you there?',
      message: { content: 'are you there?', author: { id: friend.id } },
    });
    await hearth.api(`/guilds/${guildId}/channels`, {
      method: 'POST',
      auth: host.token,
      body: { name: 'announcements', type: 0 },
    });
    const created = dataOf(await client.next((frame) => dataOf(frame).evt === 'CHANNEL_CREATE'));
    expect(created.data).toMatchObject({ name: 'announcements', type: 0 });
    client.close();
  });

  describe('voice', () => {
    let client: RawIpcClient;
    beforeAll(async () => {
      client = await authenticated('identify rpc');
    });
    afterAll(() => client?.close());

    it('voice commands need rpc or an rpc.voice scope (4006)', async () => {
      const narrow = await authenticated('identify');
      expectError(await narrow.command('GET_VOICE_SETTINGS', {}), 4006);
      expectError(await narrow.command('SELECT_VOICE_CHANNEL', { channel_id: voiceChannelId }), 4006);
      narrow.close();
    });

    it('SELECT_VOICE_CHANNEL joins through the agent’s gateway session; others see the voice state', async () => {
      await client.command('SUBSCRIBE', {}, 'VOICE_CHANNEL_SELECT');
      await client.command('SUBSCRIBE', { channel_id: voiceChannelId }, 'VOICE_STATE_CREATE');
      expect(dataOf(await client.command('GET_SELECTED_VOICE_CHANNEL', {})).data).toBeNull();
      const selected = dataOf(await client.command('SELECT_VOICE_CHANNEL', { channel_id: voiceChannelId }));
      expect(selected.data).toMatchObject({
        id: voiceChannelId,
        guild_id: guildId,
        type: 2,
        voice_states: [{ user: { id: host.id }, voice_state: { self_mute: false, self_deaf: false } }],
      });
      expect(dataOf(await client.next((f) => dataOf(f).evt === 'VOICE_CHANNEL_SELECT')).data).toEqual({
        channel_id: voiceChannelId,
        guild_id: guildId,
      });
      expect(dataOf(await client.next((f) => dataOf(f).evt === 'VOICE_STATE_CREATE')).data).toMatchObject({
        user: { id: host.id },
      });
      expect(dataOf(await client.command('GET_SELECTED_VOICE_CHANNEL', {})).data).toMatchObject({
        id: voiceChannelId,
      });

      // The friend joins the same channel on their own session: VOICE_STATE_CREATE for the subscriber.
      friendGateway.send({
        op: 4,
        d: { guild_id: guildId, channel_id: voiceChannelId, self_mute: true, self_deaf: false },
      });
      const joined = await client.next(
        (f) =>
          dataOf(f).evt === 'VOICE_STATE_CREATE' &&
          (dataOf(f).data['user'] as { id: string }).id === friend.id,
      );
      expect(dataOf(joined).data).toMatchObject({
        voice_state: { self_mute: true },
        volume: 100,
        mute: false,
      });
    });

    it('VOICE_STATE_UPDATE when a member changes in place, VOICE_STATE_DELETE when they leave', async () => {
      await client.command('SUBSCRIBE', { channel_id: voiceChannelId }, 'VOICE_STATE_UPDATE');
      await client.command('SUBSCRIBE', { channel_id: voiceChannelId }, 'VOICE_STATE_DELETE');
      friendGateway.send({
        op: 4,
        d: { guild_id: guildId, channel_id: voiceChannelId, self_mute: false, self_deaf: true },
      });
      const updated = await client.next((f) => dataOf(f).evt === 'VOICE_STATE_UPDATE');
      expect(dataOf(updated).data).toMatchObject({
        user: { id: friend.id },
        voice_state: { self_deaf: true },
      });
      friendGateway.send({
        op: 4,
        d: { guild_id: guildId, channel_id: null, self_mute: false, self_deaf: false },
      });
      const left = await client.next((f) => dataOf(f).evt === 'VOICE_STATE_DELETE');
      expect(dataOf(left).data).toMatchObject({ user: { id: friend.id } });
    });

    it('moving needs force (5003); a text channel is 4005; null leaves', async () => {
      expectError(await client.command('SELECT_VOICE_CHANNEL', { channel_id: secondVoiceChannelId }), 5003);
      expectError(
        await client.command('SELECT_VOICE_CHANNEL', { channel_id: textChannelId, force: true }),
        4005,
      );
      const moved = dataOf(
        await client.command('SELECT_VOICE_CHANNEL', { channel_id: secondVoiceChannelId, force: true }),
      );
      expect(moved.data).toMatchObject({ id: secondVoiceChannelId });
      expect(dataOf(await client.command('SELECT_VOICE_CHANNEL', { channel_id: null })).data).toBeNull();
      expect(dataOf(await client.command('GET_SELECTED_VOICE_CHANNEL', {})).data).toBeNull();
    });

    it('GET_VOICE_SETTINGS and SET_USER_VOICE_SETTINGS, with their refusals', async () => {
      expect(dataOf(await client.command('GET_VOICE_SETTINGS', {})).data).toMatchObject({
        input: { volume: 100 },
        output: { volume: 100 },
        mode: { type: 'VOICE_ACTIVITY' },
        mute: false,
        deaf: false,
      });
      expect(
        dataOf(
          await client.command('SET_USER_VOICE_SETTINGS', {
            user_id: friend.id,
            volume: 150,
            pan: { left: 0.5, right: 1 },
          }),
        ).data,
      ).toEqual({ user_id: friend.id, volume: 150, pan: { left: 0.5, right: 1 }, mute: false });
      expectError(await client.command('SET_USER_VOICE_SETTINGS', { user_id: friend.id, volume: 201 }), 4000);
      expectError(
        await client.command('SET_USER_VOICE_SETTINGS', { user_id: friend.id, pan: { left: 2 } }),
        4000,
      );
      expectError(await client.command('SET_USER_VOICE_SETTINGS', { user_id: 'me' }), 4010);
    });
  });
});
