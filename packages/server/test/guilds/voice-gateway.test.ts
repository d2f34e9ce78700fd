import { ChannelTypes, GatewayIntents, GatewayOpcodes } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import { addTestBot, createTestGuild, type TestGuild } from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import { insertChannel } from './moderation-support.js';

const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const INTENTS = GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates;

let hearth: TestHearth;
let guild: TestGuild;
let speaker: TestGame;
let listener: TestGame;
/** A bot of its own per test: one bot may identify once per 5 s. */
let refused: TestGame;
let malformed: TestGame;
let voiceChannel: string;
let textChannel: string;

async function identify(game: TestGame): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: 2, d: { token: game.botToken, intents: INTENTS, properties: PROPERTIES } });
  await client.nextDispatch('READY');
  await client.nextDispatch('GUILD_CREATE');
  return client;
}

const voiceState = (channelId: string | null) => ({
  op: GatewayOpcodes.VoiceStateUpdate,
  d: { guild_id: guild.id, channel_id: channelId, self_mute: false, self_deaf: true },
});

beforeAll(async () => {
  hearth = await startHearth();
  guild = await createTestGuild(hearth);
  speaker = await addTestBot(hearth, guild);
  listener = await addTestBot(hearth, guild);
  refused = await addTestBot(hearth, guild);
  malformed = await addTestBot(hearth, guild);
  voiceChannel = await insertChannel(hearth, guild.id, ChannelTypes.GuildVoice);
  textChannel = await insertChannel(hearth, guild.id, ChannelTypes.GuildText);
});

afterAll(() => hearth.close());

describe('Voice State Update (op 4, GUILDS.md §7.4)', () => {
  it('joins a voice channel: VOICE_STATE_UPDATE reaches the guild and the voice state reads back', async () => {
    const [a, b] = [await identify(speaker), await identify(listener)];
    a.send(voiceState(voiceChannel));
    const seen = await b.nextDispatch('VOICE_STATE_UPDATE');
    expect(seen.d).toMatchObject({
      guild_id: guild.id,
      channel_id: voiceChannel,
      user_id: speaker.botUserId,
      self_mute: false,
      self_deaf: true,
      mute: false,
      deaf: false,
    });
    expect((seen.d as { session_id: string }).session_id).toMatch(/^[0-9a-f]{32}$/);
    expect((await a.nextDispatch('VOICE_STATE_UPDATE')).d).toMatchObject({ channel_id: voiceChannel });
    const read = await hearth.api(`/guilds/${guild.id}/voice-states/@me`, {
      auth: `Bot ${speaker.botToken}`,
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ channel_id: voiceChannel, user_id: speaker.botUserId });

    a.send(voiceState(null));
    expect((await b.nextDispatch('VOICE_STATE_UPDATE')).d).toMatchObject({
      channel_id: null,
      user_id: speaker.botUserId,
    });
    const gone = await hearth.api(`/guilds/${guild.id}/voice-states/@me`, {
      auth: `Bot ${speaker.botToken}`,
    });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 10065 });
    await Promise.all([a.close(), b.close()]);
  });

  it('a refused join (a text channel) changes nothing and keeps the session open', async () => {
    const a = await identify(refused);
    a.send(voiceState(textChannel));
    a.send({ op: GatewayOpcodes.Heartbeat, d: null });
    await a.nextOp(GatewayOpcodes.HeartbeatAck);
    expect(a.pending().some((frame) => frame.t === 'VOICE_STATE_UPDATE')).toBe(false);
    const read = await hearth.api(`/guilds/${guild.id}/voice-states/@me`, {
      auth: `Bot ${speaker.botToken}`,
    });
    expect(read.status).toBe(404);
    await a.close();
  });

  it('a malformed frame is ignored too: op 4 never closes a session', async () => {
    const a = await identify(malformed);
    for (const d of [
      { guild_id: 42, channel_id: voiceChannel },
      null,
      { guild_id: guild.id, channel_id: 7 },
    ]) {
      a.send({ op: GatewayOpcodes.VoiceStateUpdate, d });
    }
    a.send({ op: GatewayOpcodes.Heartbeat, d: null });
    await a.nextOp(GatewayOpcodes.HeartbeatAck);
    expect(a.socket.readyState).toBe(a.socket.OPEN);
    await a.close();
  });
});
