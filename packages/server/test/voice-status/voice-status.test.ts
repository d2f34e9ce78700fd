import {
  AuditLogEvents,
  ChannelTypes,
  GatewayIntents,
  GatewayOpcodes,
  Limits,
  OverwriteTypes,
  PermissionFlags,
} from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../../test-support/gateway.js';
import {
  addTestBot,
  addTestMember,
  createTestGuild,
  grantTestRole,
  seedTestChannel,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import type { TestGame } from '../../../../test-support/oauth.js';
import { type Answer, call, expectError, recordEvents } from '../guilds/moderation-support.js';

/**
 * Set Voice Channel Status, PUT /channels/{channel.id}/voice-status (PROTOCOL.md §D.7; seed, Endpoints):
 * SET_VOICE_CHANNEL_STATUS, plus MANAGE_CHANNELS when the caller is not connected to the channel; 204;
 * audit entries 192 (with the status) and 193; VOICE_CHANNEL_STATUS_UPDATE to the guild.
 */

const P = PermissionFlags;
const PROPERTIES = { os: 'linux', browser: 'hearth-test', device: 'hearth-test' };
const clock = new ManualClock('2026-05-01T12:00:00Z');

let hearth: TestHearth;
let guild: TestGuild;
/** A bot with @everyone's permissions only: SET_VOICE_CHANNEL_STATUS, no MANAGE_CHANNELS. */
let speaker: TestGame;
/** A member holding MANAGE_CHANNELS, never connected. */
let manager: { id: string; token: string };
/** A member with @everyone's permissions, never connected. */
let plain: { id: string; token: string };
let voice: string;
/** A voice channel where @everyone is denied SET_VOICE_CHANNEL_STATUS. */
let locked: string;
/** A voice channel @everyone cannot see. */
let hidden: string;
let text: string;
let stage: string;
let observer: GatewayClient;
let speakerSession: GatewayClient;

const put = (channelId: string, auth: string, body: unknown, headers: Record<string, string> = {}) =>
  call(hearth, auth, 'PUT', `/channels/${channelId}/voice-status`, body, headers);

async function identify(game: TestGame, intents: number): Promise<GatewayClient> {
  const client = await GatewayClient.connect(hearth.url);
  await client.nextOp(GatewayOpcodes.Hello);
  client.send({ op: GatewayOpcodes.Identify, d: { token: game.botToken, intents, properties: PROPERTIES } });
  await client.nextDispatch('READY');
  await client.nextDispatch('GUILD_CREATE');
  return client;
}

interface AuditEntry {
  action_type: number;
  user_id: string;
  target_id: string;
  reason?: string;
  options?: Record<string, string>;
}

async function auditEntries(actionType: number): Promise<AuditEntry[]> {
  const answer = await call(
    hearth,
    guild.owner.token,
    'GET',
    `/guilds/${guild.id}/audit-logs?action_type=${actionType}`,
  );
  expect(answer.status).toBe(200);
  return answer.body['audit_log_entries'] as AuditEntry[];
}

function expectNoContent(answer: Answer): void {
  expect(answer.status).toBe(204);
  expect(answer.empty).toBe(true);
}

beforeAll(async () => {
  hearth = await startHearth({}, clock);
  guild = await createTestGuild(hearth);
  speaker = await addTestBot(hearth, guild);
  const watcher = await addTestBot(hearth, guild);
  manager = await addTestMember(hearth, guild);
  plain = await addTestMember(hearth, guild);
  await grantTestRole(hearth, guild, P.ManageChannels, [manager.id]);
  voice = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildVoice });
  const everyone = { id: guild.id, type: OverwriteTypes.Role, allow: 0n };
  locked = await seedTestChannel(hearth, guild.id, {
    type: ChannelTypes.GuildVoice,
    overwrites: [{ ...everyone, deny: P.SetVoiceChannelStatus }],
  });
  hidden = await seedTestChannel(hearth, guild.id, {
    type: ChannelTypes.GuildVoice,
    overwrites: [{ ...everyone, deny: P.ViewChannel }],
  });
  text = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildText });
  stage = await seedTestChannel(hearth, guild.id, { type: ChannelTypes.GuildStageVoice });
  observer = await identify(watcher, GatewayIntents.Guilds);
  speakerSession = await identify(speaker, GatewayIntents.Guilds | GatewayIntents.GuildVoiceStates);
  speakerSession.send({
    op: GatewayOpcodes.VoiceStateUpdate,
    d: { guild_id: guild.id, channel_id: voice, self_mute: false, self_deaf: false },
  });
  await speakerSession.nextDispatch('VOICE_STATE_UPDATE');
});

afterAll(async () => {
  await observer.close();
  await speakerSession.close();
  await hearth.close();
});

describe('PUT /channels/{id}/voice-status: who may set it', () => {
  it('a member connected to the channel sets it with SET_VOICE_CHANNEL_STATUS alone: 204, event, audit 192 with the status', async () => {
    const answer = await put(
      voice,
      `Bot ${speaker.botToken}`,
      { status: 'Raiding the keep' },
      { 'x-audit-log-reason': 'game night' },
    );
    expectNoContent(answer);
    const event = await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE');
    expect(event.d).toEqual({ id: voice, guild_id: guild.id, status: 'Raiding the keep' });
    const [entry] = await auditEntries(AuditLogEvents.VoiceChannelStatusUpdate);
    expect(entry).toMatchObject({
      action_type: 192,
      user_id: speaker.botUserId,
      target_id: voice,
      reason: 'game night',
      options: { status: 'Raiding the keep' },
    });
  });

  it('one not connected needs MANAGE_CHANNELS too: 50013 without it, 204 with it', async () => {
    expectError(await put(voice, plain.token, { status: 'away' }), 403, 50013, 'Missing Permissions');
    expectNoContent(await put(voice, manager.token, { status: 'Managed from afar' }));
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toEqual({
      id: voice,
      guild_id: guild.id,
      status: 'Managed from afar',
    });
  });

  it('without SET_VOICE_CHANNEL_STATUS in the channel, even MANAGE_CHANNELS is refused (50013); the owner is not', async () => {
    expectError(await put(locked, manager.token, { status: 'x' }), 403, 50013, 'Missing Permissions');
    expectNoContent(await put(locked, guild.owner.token, { status: 'Owner’s word' }));
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toEqual({
      id: locked,
      guild_id: guild.id,
      status: 'Owner’s word',
    });
  });

  it('a channel the caller cannot see is Missing Access (50001)', async () => {
    expectError(await put(hidden, manager.token, { status: 'x' }), 403, 50001, 'Missing Access');
  });

  it('a member of another guild gets Missing Access (50001) and the status stays', async () => {
    const other = await createTestGuild(hearth);
    const events = recordEvents(hearth);
    expectError(await put(voice, other.owner.token, { status: 'hijack' }), 403, 50001, 'Missing Access');
    events.stop();
    expect(events.of('VOICE_CHANNEL_STATUS_UPDATE')).toEqual([]);
  });
});

describe('PUT /channels/{id}/voice-status: the channel and the body', () => {
  it('an unknown channel is 10003', async () => {
    expectError(
      await put('999999999999999999', guild.owner.token, { status: 'x' }),
      404,
      10003,
      'Unknown Channel',
    );
  });

  it('a text or stage channel has no voice status (50024)', async () => {
    for (const channelId of [text, stage]) {
      expectError(
        await put(channelId, guild.owner.token, { status: 'x' }),
        400,
        50024,
        'Cannot execute action on this channel type',
      );
    }
  });

  it(`takes ${Limits.voiceChannelStatusMaxLength} characters and refuses one more (50035)`, async () => {
    const longest = 'a'.repeat(Limits.voiceChannelStatusMaxLength);
    expectNoContent(await put(voice, guild.owner.token, { status: longest }));
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toMatchObject({ status: longest });
    expectError(
      await put(voice, guild.owner.token, { status: `${longest}a` }),
      400,
      50035,
      'Invalid Form Body',
      {
        status: {
          _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 500 or fewer in length.' }],
        },
      },
    );
  });

  it('refuses a status that is not a string (50035) and a body that is not an object', async () => {
    for (const status of [42, true, ['a'], { text: 'a' }]) {
      const answer = await put(voice, guild.owner.token, { status });
      expectError(answer, 400, 50035, 'Invalid Form Body');
      expect(Object.keys(answer.body['errors'] as object)).toEqual(['status']);
    }
    expectError(await put(voice, guild.owner.token, ['status']), 400, 50035, 'Invalid Form Body');
  });
});

describe('clearing the status', () => {
  it('null clears it: audit 193, event with status null; clearing again changes nothing', async () => {
    expectNoContent(await put(voice, guild.owner.token, { status: 'to be cleared' }));
    await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE');
    expectNoContent(await put(voice, guild.owner.token, { status: null }));
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toEqual({
      id: voice,
      guild_id: guild.id,
      status: null,
    });
    const [entry] = await auditEntries(AuditLogEvents.VoiceChannelStatusDelete);
    expect(entry).toMatchObject({ action_type: 193, user_id: guild.owner.id, target_id: voice });
    expect(entry?.options).toBeUndefined();

    const events = recordEvents(hearth);
    const deletions = (await auditEntries(AuditLogEvents.VoiceChannelStatusDelete)).length;
    expectNoContent(await put(voice, guild.owner.token, { status: null }));
    expectNoContent(await put(voice, guild.owner.token, {}));
    events.stop();
    expect(events.seen.map((event) => event.type)).toEqual([]);
    expect(await auditEntries(AuditLogEvents.VoiceChannelStatusDelete)).toHaveLength(deletions);
  });

  it('an empty string clears it as null does', async () => {
    expectNoContent(await put(voice, guild.owner.token, { status: 'brief' }));
    await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE');
    expectNoContent(await put(voice, guild.owner.token, { status: '' }));
    expect((await observer.nextDispatch('VOICE_CHANNEL_STATUS_UPDATE')).d).toMatchObject({ status: null });
  });
});

describe('status and start time are not channel fields (seed, Channel info)', () => {
  it('GET /channels/{id} and GET /guilds/{id}/channels carry neither, while a status is set', async () => {
    expectNoContent(await put(voice, guild.owner.token, { status: 'Not a channel field' }));
    const channel = await call(hearth, guild.owner.token, 'GET', `/channels/${voice}`);
    expect(channel.status).toBe(200);
    expect(channel.body).not.toHaveProperty('status');
    expect(channel.body).not.toHaveProperty('voice_start_time');
    const list = await call(hearth, guild.owner.token, 'GET', `/guilds/${guild.id}/channels`);
    for (const item of list.items) {
      expect(item).not.toHaveProperty('status');
      expect(item).not.toHaveProperty('voice_start_time');
    }
  });
});

describe('a status goes with its channel', () => {
  it('a voice channel with a status can be deleted, and so can a guild with one', async () => {
    const doomed = await createTestGuild(hearth);
    const first = await seedTestChannel(hearth, doomed.id, { type: ChannelTypes.GuildVoice });
    const second = await seedTestChannel(hearth, doomed.id, { type: ChannelTypes.GuildVoice });
    for (const channelId of [first, second])
      expectNoContent(await put(channelId, doomed.owner.token, { status: 'soon gone' }));
    expect((await call(hearth, doomed.owner.token, 'DELETE', `/channels/${first}`)).status).toBe(200);
    expectError(await put(first, doomed.owner.token, { status: 'x' }), 404, 10003, 'Unknown Channel');
    expect((await call(hearth, doomed.owner.token, 'DELETE', `/guilds/${doomed.id}`)).status).toBe(204);
    const left = await hearth.storage.db
      .selectFrom('voice_channel_statuses')
      .select('channel_id')
      .where('channel_id', 'in', [first, second])
      .execute();
    expect(left).toEqual([]);
  });
});
