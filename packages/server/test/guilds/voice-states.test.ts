import { AuditLogEvents, ChannelTypes, PermissionFlags } from '@hearth/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addTestMember,
  createTestGuild,
  grantTestRole,
  setEveryonePermissions,
  type TestGuild,
} from '../../../../test-support/guilds.js';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import {
  call,
  expectError,
  insertChannel,
  type Json,
  recordEvents,
  UNKNOWN_ID,
} from './moderation-support.js';

const P = PermissionFlags;

const VOICE_STATE_KEYS = [
  'channel_id',
  'deaf',
  'guild_id',
  'member',
  'mute',
  'request_to_speak_timestamp',
  'self_deaf',
  'self_mute',
  'self_stream',
  'self_video',
  'session_id',
  'suppress',
  'user_id',
].sort();

describe('voice states (GUILDS.md §3.5, §7.4)', () => {
  let hearth: TestHearth;
  let guild: TestGuild;
  let voice: string;
  let voice2: string;
  let stage: string;
  let text: string;
  let member: { id: string; token: string };
  let moderator: { id: string; token: string };

  beforeAll(async () => {
    hearth = await startHearth({ rateLimitGlobal: 1_000_000 });
    guild = await createTestGuild(hearth, 'Voice');
    voice = await insertChannel(hearth, guild.id, ChannelTypes.GuildVoice);
    voice2 = await insertChannel(hearth, guild.id, ChannelTypes.GuildVoice);
    stage = await insertChannel(hearth, guild.id, ChannelTypes.GuildStageVoice);
    text = await insertChannel(hearth, guild.id, ChannelTypes.GuildText);
    member = await addTestMember(hearth, guild);
    moderator = await addTestMember(hearth, guild);
    await grantTestRole(hearth, guild, P.MuteMembers | P.DeafenMembers | P.MoveMembers, [moderator.id], 3);
  });
  afterAll(() => hearth.close());

  const join = (userId: string, channelId: string | null, extra: Json = {}) =>
    hearth.services.voiceStates.updateVoiceState(userId, `session-${userId}`, {
      guild_id: guild.id,
      channel_id: channelId,
      self_mute: false,
      self_deaf: false,
      ...extra,
    });

  describe('gateway op 4 (Voice State Update)', () => {
    it('joins: VOICE_STATE_UPDATE to the guild with the voice state and its member', async () => {
      const events = recordEvents(hearth);
      const state = await join(member.id, voice, { self_mute: true });
      expect(Object.keys(state!).sort()).toEqual(VOICE_STATE_KEYS);
      expect(state).toMatchObject({
        guild_id: guild.id,
        channel_id: voice,
        user_id: member.id,
        session_id: `session-${member.id}`,
        self_mute: true,
        self_deaf: false,
        suppress: false,
        request_to_speak_timestamp: null,
      });
      const [event] = events.of('VOICE_STATE_UPDATE');
      expect(event!.audience).toEqual({ guildId: guild.id });
      expect((event!.data['member'] as Json)['user']).toMatchObject({ id: member.id });
      events.stop();
    });

    it('leaves with channel_id null: VOICE_STATE_UPDATE with no channel, then 10065 on read', async () => {
      await join(moderator.id, voice);
      const events = recordEvents(hearth);
      expect(await join(moderator.id, null)).toBeNull();
      expect(events.of('VOICE_STATE_UPDATE')[0]!.data['channel_id']).toBeNull();
      expectError(
        await call(hearth, moderator.token, 'GET', `/guilds/${guild.id}/voice-states/@me`),
        404,
        10065,
        'Unknown Voice State',
      );
      events.stop();
    });

    it('refuses an unknown channel (10003), a text channel (50024), no CONNECT (50013), a non-member (50001)', async () => {
      await expect(join(member.id, UNKNOWN_ID)).rejects.toMatchObject({ code: 10003 });
      await expect(join(member.id, text)).rejects.toMatchObject({ code: 50024 });
      const other = await createTestGuild(hearth);
      await expect(
        hearth.services.voiceStates.updateVoiceState(member.id, 's', {
          guild_id: other.id,
          channel_id: null,
          self_mute: false,
          self_deaf: false,
        }),
      ).rejects.toMatchObject({ code: 50001 });
      await expect(
        hearth.services.voiceStates.updateVoiceState(member.id, 's', { guild_id: guild.id }),
      ).rejects.toMatchObject({ code: 50035 });
      const locked = await createTestGuild(hearth);
      const lockedVoice = await insertChannel(hearth, locked.id, ChannelTypes.GuildVoice);
      const someone = await addTestMember(hearth, locked);
      await setEveryonePermissions(hearth, locked, P.ViewChannel);
      await expect(
        hearth.services.voiceStates.updateVoiceState(someone.id, 's', {
          guild_id: locked.id,
          channel_id: lockedVoice,
          self_mute: false,
          self_deaf: false,
        }),
      ).rejects.toMatchObject({ code: 50013 });
    });

    it('a full channel (user_limit) refuses a newcomer without MOVE_MEMBERS', async () => {
      const small = await insertChannel(hearth, guild.id, ChannelTypes.GuildVoice, { userLimit: 1 });
      const first = await addTestMember(hearth, guild);
      const second = await addTestMember(hearth, guild);
      await join(first.id, small);
      await expect(join(second.id, small)).rejects.toMatchObject({ code: 50013 });
      expect(await join(moderator.id, small)).toMatchObject({ channel_id: small });
      await join(first.id, null);
      await join(moderator.id, null);
    });

    it("voiceStatesOf lists the guild's states for GUILD_CREATE", async () => {
      const states = await hearth.services.voiceStates.voiceStatesOf(guild.id);
      expect(states.map((s) => s.user_id)).toContain(member.id);
    });
  });

  describe('Get Current User / User Voice State', () => {
    it('answers the voice state object; 10065 for a member not in voice; 50001 outside the guild', async () => {
      const mine = await call(hearth, member.token, 'GET', `/guilds/${guild.id}/voice-states/@me`);
      expect(mine.status).toBe(200);
      expect(Object.keys(mine.body).sort()).toEqual(VOICE_STATE_KEYS);
      const theirs = await call(
        hearth,
        moderator.token,
        'GET',
        `/guilds/${guild.id}/voice-states/${member.id}`,
      );
      expect(theirs.body).toEqual(mine.body);
      expectError(
        await call(hearth, member.token, 'GET', `/guilds/${guild.id}/voice-states/${moderator.id}`),
        404,
        10065,
        'Unknown Voice State',
      );
      const other = await createTestGuild(hearth);
      expectError(
        await call(hearth, other.owner.token, 'GET', `/guilds/${guild.id}/voice-states/${member.id}`),
        403,
        50001,
        'Missing Access',
      );
    });
  });

  describe('Modify Guild Member: voice fields', () => {
    it('server mute in voice: 200, VOICE_STATE_UPDATE with mute, MEMBER_UPDATE audit', async () => {
      const events = recordEvents(hearth);
      const answer = await call(
        hearth,
        moderator.token,
        'PATCH',
        `/guilds/${guild.id}/members/${member.id}`,
        {
          mute: true,
        },
      );
      expect(answer.status).toBe(200);
      expect(answer.body['mute']).toBe(true);
      expect(events.of('VOICE_STATE_UPDATE')[0]!.data).toMatchObject({ mute: true, channel_id: voice });
      expect(events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data).toMatchObject({
        action_type: AuditLogEvents.MemberUpdate,
        changes: [{ key: 'mute', old_value: false, new_value: true }],
      });
      events.stop();
    });

    it('channel_id moves (MEMBER_MOVE) and null disconnects (MEMBER_DISCONNECT); MOVE_MEMBERS needed', async () => {
      const url = `/guilds/${guild.id}/members/${member.id}`;
      expectError(
        await call(hearth, member.token, 'PATCH', url, { channel_id: voice2 }),
        403,
        50013,
        'Missing Permissions',
      );
      const events = recordEvents(hearth);
      expect((await call(hearth, moderator.token, 'PATCH', url, { channel_id: voice2 })).status).toBe(200);
      expect(events.of('VOICE_STATE_UPDATE')[0]!.data['channel_id']).toBe(voice2);
      expect(events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data).toMatchObject({
        action_type: AuditLogEvents.MemberMove,
        options: { channel_id: voice2, count: '1' },
      });
      expectError(
        await call(hearth, moderator.token, 'PATCH', url, { channel_id: text }),
        400,
        50024,
        'Cannot execute action on this channel type',
      );
      events.clear();
      expect((await call(hearth, moderator.token, 'PATCH', url, { channel_id: null })).status).toBe(200);
      expect(events.of('VOICE_STATE_UPDATE')[0]!.data['channel_id']).toBeNull();
      expect(events.of('GUILD_AUDIT_LOG_ENTRY_CREATE')[0]!.data['action_type']).toBe(
        AuditLogEvents.MemberDisconnect,
      );
      expectError(
        await call(hearth, moderator.token, 'PATCH', url, { channel_id: voice }),
        400,
        40032,
        'Target user is not connected to voice.',
      );
      events.stop();
    });
  });

  describe('Modify Current User Voice State (stage)', () => {
    it('requests to speak (204); unsuppressing oneself needs MUTE_MEMBERS; suppressing is always allowed', async () => {
      const speaker = await addTestMember(hearth, guild);
      const joined = await join(speaker.id, stage);
      expect(joined).toMatchObject({ channel_id: stage, suppress: true });
      const url = `/guilds/${guild.id}/voice-states/@me`;
      const events = recordEvents(hearth);
      const at = new Date(hearth.clock.now()).toISOString();
      expect(
        (await call(hearth, speaker.token, 'PATCH', url, { request_to_speak_timestamp: at })).status,
      ).toBe(204);
      expect(events.of('VOICE_STATE_UPDATE')[0]!.data['request_to_speak_timestamp']).toBe(at);
      expectError(
        await call(hearth, speaker.token, 'PATCH', url, { suppress: false }),
        403,
        50013,
        'Missing Permissions',
      );
      expect((await call(hearth, speaker.token, 'PATCH', url, { suppress: true })).status).toBe(204);
      const past = new Date(hearth.clock.now() - 3_600_000).toISOString();
      const old = await call(hearth, speaker.token, 'PATCH', url, { request_to_speak_timestamp: past });
      expectError(old, 400, 50035, 'Invalid Form Body');
      expect(old.body['errors']).toHaveProperty('request_to_speak_timestamp');
      expectError(
        await call(hearth, speaker.token, 'PATCH', url, { channel_id: voice, suppress: true }),
        400,
        50035,
        'Invalid Form Body',
      );
      events.stop();
    });

    it('outside a stage 50024; not in voice 10065', async () => {
      const url = `/guilds/${guild.id}/voice-states/@me`;
      await join(member.id, voice);
      expectError(
        await call(hearth, member.token, 'PATCH', url, { suppress: true }),
        400,
        50024,
        'Cannot execute action on this channel type',
      );
      expectError(
        await call(hearth, moderator.token, 'PATCH', url, { suppress: true }),
        404,
        10065,
        'Unknown Voice State',
      );
    });
  });

  describe('Modify User Voice State (stage)', () => {
    it('MUTE_MEMBERS unsuppresses a person and stamps request_to_speak_timestamp; suppressing clears it', async () => {
      const speaker = await addTestMember(hearth, guild);
      await join(speaker.id, stage);
      const url = `/guilds/${guild.id}/voice-states/${speaker.id}`;
      expectError(
        await call(hearth, member.token, 'PATCH', url, { suppress: false }),
        403,
        50013,
        'Missing Permissions',
      );
      expect((await call(hearth, moderator.token, 'PATCH', url, { suppress: false })).status).toBe(204);
      const state = (await call(hearth, moderator.token, 'GET', url)).body;
      expect(state['suppress']).toBe(false);
      expect(typeof state['request_to_speak_timestamp']).toBe('string');
      expect((await call(hearth, moderator.token, 'PATCH', url, { suppress: true })).status).toBe(204);
      expect((await call(hearth, moderator.token, 'GET', url)).body).toMatchObject({
        suppress: true,
        request_to_speak_timestamp: null,
      });
      expectError(
        await call(hearth, moderator.token, 'PATCH', `/guilds/${guild.id}/voice-states/${UNKNOWN_ID}`, {
          suppress: true,
        }),
        404,
        10065,
        'Unknown Voice State',
      );
    });
  });

  describe('leaving the guild ends the voice state', () => {
    it('a kicked member in voice: VOICE_STATE_UPDATE with no channel before GUILD_MEMBER_REMOVE', async () => {
      const guest = await addTestMember(hearth, guild);
      await join(guest.id, voice);
      const events = recordEvents(hearth);
      await grantTestRole(hearth, guild, P.KickMembers, [moderator.id], 3);
      expect(
        (await call(hearth, moderator.token, 'DELETE', `/guilds/${guild.id}/members/${guest.id}`)).status,
      ).toBe(204);
      expect(events.seen.map((e) => e.type).slice(0, 2)).toEqual([
        'VOICE_STATE_UPDATE',
        'GUILD_MEMBER_REMOVE',
      ]);
      expect(events.of('VOICE_STATE_UPDATE')[0]!.data['channel_id']).toBeNull();
      events.stop();
    });
  });
});
