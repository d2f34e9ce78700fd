import { REST } from '@discordjs/rest';
import { WebSocketManager, WebSocketShardEvents } from '@discordjs/ws';
import {
  ChannelTypes,
  GatewayCloseCodes,
  GatewayIntents,
  GatewayOpcodes,
  OverwriteTypes,
  PermissionFlags,
} from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import {
  type GatewayChannelInfoDispatchData,
  GatewayDispatchEvents,
  GatewayOpcodes as V10Opcodes,
} from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, type GatewayFrame } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  createTestGuild,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import { call, recordEvents } from '../guilds/moderation-support.js';

/**
 * Gateway op 43 Request Channel Info and the voice channel events (PROTOCOL.md §D.7): CHANNEL_INFO carries
 * the asked fields of the guild's voice channels the session can see; `voice_start_time` starts with the
 * first member to connect and ends, with the status, when the last one leaves; VOICE_CHANNEL_STATUS_UPDATE
 * and VOICE_CHANNEL_START_TIME_UPDATE belong to the GUILDS intent.
 */

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const T0 = Date.parse('2026-05-02T08:00:00Z');
const clock = new ManualClock(T0);
const BOTH = ['status', 'voice_start_time'];

let hearth: TestHearth;
let guild: TestGuild;
let other: TestGuild;
let voice: string;
let quiet: string;
/** A voice channel only `insider` may see. */
let hidden: string;
let observer: GatewayClient;
const sessions: GatewayClient[] = [];

async function identify(game: TestGame, intents: number): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  sessions.push(client);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: GatewayOpcodes.Identify, d: { token: game.botToken, intents, properties: PROPERTIES } });
  await client.nextDispatch('READY');
  if (intents & GatewayIntents.Guilds) await client.nextDispatch('GUILD_CREATE');
  return client;
}

/** A bot of the guild with a session of its own (one bot identifies once per 5 s). */
async function newSession(intents: number = GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates) {
  const game = await addTestBot(hearth, guild);
  return { game, session: await identify(game, intents) };
}

async function channelInfo(client: GatewayClient, fields: unknown = BOTH, guildId = guild.id) {
  client.send({ op: GatewayOpcodes.RequestChannelInfo, d: { guild_id: guildId, fields } });
  return (await client.nextDispatch('CHANNEL_INFO')).d as GatewayChannelInfoDispatchData;
}

/** Joins (or with null leaves) a voice channel and waits for the session's own VOICE_STATE_UPDATE. */
async function connect(client: GatewayClient, channelId: string | null): Promise<void> {
  client.send({
    op: GatewayOpcodes.VoiceStateUpdate,
    d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: false },
  });
  await client.nextDispatch('VOICE_STATE_UPDATE');
}

const seconds = (ms: number) => Math.floor(ms / 1000);
const eventsOf = (client: GatewayClient, t: string) => client.frames.filter((frame) => frame.t === t);

beforeAll(async () => {
  hearth = await startHearth({}, clock);
  guild = await createTestGuild(hearth);
  other = await createTestGuild(hearth);
  voice = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
  quiet = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
  hidden = await seedTestChannel(hearth, guild.id, {
    type: ChannelTypes.GuildVoice,
    overwrites: [{ id: guild.id, type: OverwriteTypes.Role, allow: 0n, deny: PermissionFlags.ViewChannel }],
  });
  await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildText });
  await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildStageVoice });
  observer = (await newSession(GatewayIntents.Guilds)).session;
});

afterAll(async () => {
  for (const session of sessions) await session.close();
  await hearth.close();
});

describe('Request Channel Info (op 43) → CHANNEL_INFO', () => {
  it('answers the status set over HTTP, for the voice channels the session can see only', async () => {
    const put = await call(hearth, guild.owner.token, 'PUT', `/channels/${voice}/voice-status`, {
      status: 'Boss fight',
    });
    expect(put.status).toBe(204);
    expect(await channelInfo(observer)).toEqual({
      guild_id: guild.id,
      channels: [
        { id: voice, status: 'Boss fight', voice_start_time: null },
        { id: quiet, status: null, voice_start_time: null },
      ],
    });
  });

  it('carries only the fields asked; a field name it does not know is skipped', async () => {
    expect(await channelInfo(observer, ['status'])).toEqual({
      guild_id: guild.id,
      channels: [
        { id: voice, status: 'Boss fight' },
        { id: quiet, status: null },
      ],
    });
    expect(await channelInfo(observer, ['voice_start_time', 'topic'])).toEqual({
      guild_id: guild.id,
      channels: [
        { id: voice, voice_start_time: null },
        { id: quiet, voice_start_time: null },
      ],
    });
    expect((await channelInfo(observer, [])).channels).toEqual([{ id: voice }, { id: quiet }]);
  });

  it('a guild the session is not in, or no guild at all, is ignored and the session stays open', async () => {
    for (const guildId of [other.id, '999999999999999999']) {
      observer.send({ op: GatewayOpcodes.RequestChannelInfo, d: { guild_id: guildId, fields: BOTH } });
    }
    observer.send({ op: GatewayOpcodes.Heartbeat, d: null });
    await observer.nextOp(GatewayOpcodes.HeartbeatAck);
    // The reply to a request sent after them is the first CHANNEL_INFO since: nothing answered the two.
    expect((await channelInfo(observer)).guild_id).toBe(guild.id);
    expect(observer.pending()).toEqual([]);
    expect(observer.socket.readyState).toBe(observer.socket.OPEN);
  });

  it.each([
    ['no payload', null],
    ['a guild id that is not a snowflake', { guild_id: 42, fields: BOTH }],
    ['fields that are not a list', { guild_id: 'GUILD', fields: 'status' }],
    ['fields that are not strings', { guild_id: 'GUILD', fields: [1] }],
    ['no fields', { guild_id: 'GUILD' }],
  ])('a malformed request (%s) closes with 4002', async (_name, d) => {
    const { session } = await newSession(GatewayIntents.Guilds);
    const payload = d && 'guild_id' in d && d.guild_id === 'GUILD' ? { ...d, guild_id: guild.id } : d;
    session.send({ op: GatewayOpcodes.RequestChannelInfo, d: payload });
    expect((await session.waitClose()).code).toBe(GatewayCloseCodes.DecodeError);
  });

  it('before Identify it is refused with 4003, as every opcode is', async () => {
    const client = await GatewayClient.connect(hearth.url);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: GatewayOpcodes.RequestChannelInfo, d: { guild_id: guild.id, fields: BOTH } });
    expect((await client.waitClose()).code).toBe(GatewayCloseCodes.NotAuthenticated);
  });
});

describe('voice start time follows who is connected (VOICE_CHANNEL_START_TIME_UPDATE)', () => {
  it('starts with the first member, stays while anyone is left, ends with the status when the last leaves', async () => {
    const first = await newSession();
    const second = await newSession();
    const noGuildsIntent = await newSession(GatewayIntents.GuildVoiceStates);
    const startedAt = clock.now();

    await connect(first.session, quiet);
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toEqual({
      id: quiet,
      guild_id: guild.id,
      voice_start_time: seconds(startedAt),
    });
    // Connected, the first member may set the status without MANAGE_CHANNELS.
    const put = await call(hearth, `Bot ${first.game.botToken}`, 'PUT', `/channels/${quiet}/voice-status`, {
      status: 'Ranked queue',
    });
    expect(put.status).toBe(204);
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toEqual({
      id: quiet,
      guild_id: guild.id,
      status: 'Ranked queue',
    });

    clock.advance(90_000);
    await connect(second.session, quiet);
    await connect(first.session, null);
    const during = await channelInfo(observer);
    expect(during.channels.find((channel) => channel.id === quiet)).toEqual({
      id: quiet,
      status: 'Ranked queue',
      voice_start_time: seconds(startedAt),
    });

    await connect(second.session, null);
    // The next start-time event is the end: neither the second join nor the first leave sent one.
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toEqual({
      id: quiet,
      guild_id: guild.id,
      voice_start_time: null,
    });
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toEqual({
      id: quiet,
      guild_id: guild.id,
      status: null,
    });
    const after = await channelInfo(observer);
    expect(after.channels.find((channel) => channel.id === quiet)).toEqual({
      id: quiet,
      status: null,
      voice_start_time: null,
    });

    // Both events belong to GUILDS: a bot without it got neither, yet its op 43 is answered.
    const answered = await channelInfo(noGuildsIntent.session);
    expect(answered.channels.map((channel) => channel.id)).toContain(quiet);
    expect(eventsOf(noGuildsIntent.session, 'VOICE_STATE_UPDATE').length).toBeGreaterThan(0);
    expect(eventsOf(noGuildsIntent.session, 'VOICE_CHANNEL_START_TIME_UPDATE')).toEqual([]);
    expect(eventsOf(noGuildsIntent.session, 'VOICE_CHANNEL_STATUS_UPDATE')).toEqual([]);
  });

  it('a member moved out by a moderator (PATCH member, channel_id null) ends the voice session too', async () => {
    const member = await newSession();
    await connect(member.session, quiet);
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toMatchObject({
      id: quiet,
      voice_start_time: seconds(clock.now()),
    });
    const moved = await call(
      hearth,
      guild.owner.token,
      'PATCH',
      `/guilds/${guild.id}/members/${member.game.botUserId}`,
      { channel_id: null },
    );
    expect(moved.status).toBe(200);
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toEqual({
      id: quiet,
      guild_id: guild.id,
      voice_start_time: null,
    });
  });

  it('a kicked member leaves voice: the channel they emptied ends its session', async () => {
    const member = await newSession();
    await connect(member.session, quiet);
    await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE');
    const kicked = await call(
      hearth,
      guild.owner.token,
      'DELETE',
      `/guilds/${guild.id}/members/${member.game.botUserId}`,
    );
    expect(kicked.status).toBe(204);
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toMatchObject({
      id: quiet,
      voice_start_time: null,
    });
  });

  it('a session that ends (the client closes with 1000) leaves voice: its channel ends its session', async () => {
    const member = await newSession();
    await connect(member.session, quiet);
    await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE');
    await member.session.close(1000);
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toMatchObject({
      id: quiet,
      voice_start_time: null,
    });
    const states = await call(
      hearth,
      guild.owner.token,
      'GET',
      `/guilds/${guild.id}/voice-states/${member.game.botUserId}`,
    );
    expect(states.status).toBe(404);
  });

  it('a member who leaves the guild leaves voice: the channel they emptied ends its session', async () => {
    const member = await newSession();
    await connect(member.session, quiet);
    await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE');
    const left = await call(hearth, `Bot ${member.game.botToken}`, 'DELETE', `/users/@me/guilds/${guild.id}`);
    expect(left.status).toBe(204);
    expect((await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE')).d).toMatchObject({
      id: quiet,
      voice_start_time: null,
    });
  });

  it('members who cannot see a channel get none of its events', async () => {
    const insider = await addTestBot(hearth, guild);
    await hearth.storage.db
      .insertInto('channel_overwrites')
      .values({
        channel_id: hidden,
        target_id: insider.botUserId,
        type: OverwriteTypes.Member,
        allow: (PermissionFlags.ViewChannel | PermissionFlags.Connect).toString(),
        deny: '0',
      })
      .execute();
    const session = await identify(insider, GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates);
    const bus = recordEvents(hearth);
    await connect(session, hidden);
    const started = await session.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE');
    expect(started.d).toMatchObject({ id: hidden });
    bus.stop();
    expect(bus.of('VOICE_CHANNEL_START_TIME_UPDATE').map((event) => event.data['id'])).toEqual([hidden]);
    // A later event reaches the observer; the hidden channel's, published before it, did not.
    await connect(session, voice);
    const next = await observer.nextDispatch('VOICE_CHANNEL_START_TIME_UPDATE');
    expect(next.d).toMatchObject({ id: voice });
    const seen = (frame: GatewayFrame) => (frame.d as { id?: unknown } | null)?.id === hidden;
    expect(observer.frames.filter(seen)).toEqual([]);
    expect((await channelInfo(session)).channels.map((channel) => channel.id)).toContain(hidden);
    await connect(session, null);
  });
});

describe('@discordjs/rest and @discordjs/ws against Hearth (no @discordjs/core method exists for either)', () => {
  it('sets the status through REST and reads it back with op 43 through the ws manager', async () => {
    const game = await addTestBot(hearth, guild);
    const rest = new REST({ api: `${hearth.url}/api`, version: '10' }).setToken(game.botToken);
    // Not connected: MANAGE_CHANNELS is needed too; an error is a DiscordAPIError with the platform's code.
    await expect(
      rest.put(`/channels/${voice}/voice-status`, { body: { status: 'from discord.js' } }),
    ).rejects.toMatchObject({ code: 50013, status: 403 });
    await call(hearth, guild.owner.token, 'PUT', `/channels/${voice}/voice-status`, {
      status: 'from discord.js',
    });

    const gateway = new WebSocketManager({ token: game.botToken, intents: GatewayIntents.Guilds, rest });
    const info = new Promise<GatewayChannelInfoDispatchData>((resolve) => {
      gateway.on(WebSocketShardEvents.Dispatch, (payload) => {
        if (payload.t === GatewayDispatchEvents.GuildCreate)
          void gateway.send(0, {
            op: V10Opcodes.RequestChannelInfo,
            d: { guild_id: guild.id, fields: ['status', 'voice_start_time'] },
          });
        if (payload.t === GatewayDispatchEvents.ChannelInfo) resolve(payload.d);
      });
    });
    try {
      await gateway.connect();
      const data = await info;
      expect(data.guild_id).toBe(guild.id);
      expect(data.channels.find((channel) => channel.id === voice)).toEqual({
        id: voice,
        status: 'from discord.js',
        voice_start_time: null,
      });
    } finally {
      await gateway.destroy();
    }
  });
});
