import type {
  GatewayActivity,
  GatewayChannelInfoData,
  GatewayChannelPinsUpdateData,
  GatewayGuildMembersChunkData,
  GatewayHeartbeatAckFrame,
  GatewayHelloFrame,
  GatewayIdentifyData,
  GatewayInvalidSessionFrame,
  GatewayPresence,
  GatewayPresenceUpdateFrame,
  GatewayRateLimitedData,
  GatewayReadyData,
  GatewayReadyFrame,
  GatewayRequestChannelInfoData,
  GatewayRequestGuildMembersData,
  GatewayRequestSoundboardSoundsData,
  GatewayResumeData,
  GatewayResumedFrame,
  GatewaySoundboardSoundsData,
  GatewayUser,
  GatewayVoiceChannelStartTimeUpdateData,
  GatewayVoiceChannelStatusUpdateData,
} from '@hearth/protocol';
import type {
  APIUser,
  GatewayActivity as DiscordActivity,
  GatewayIdentifyData as DiscordIdentifyData,
  GatewayRequestChannelInfoData as DiscordRequestChannelInfoData,
  GatewayRequestGuildMembersData as DiscordRequestGuildMembersData,
  GatewayRequestSoundboardSoundsData as DiscordRequestSoundboardSoundsData,
  GatewayResumeData as DiscordResumeData,
  GatewayChannelInfoDispatchData,
  GatewayChannelPinsUpdateDispatchData,
  GatewayDispatchEvents,
  GatewayGuildMembersChunkDispatchData,
  GatewayHeartbeatAck,
  GatewayHello,
  GatewayInvalidSession,
  GatewayPresenceUpdateDispatchData,
  GatewayRateLimitedDispatchData,
  GatewayReadyDispatchData,
  GatewaySoundboardSoundsDispatchData,
  GatewayVoiceChannelStartTimeUpdateDispatchData,
  GatewayVoiceChannelStatusUpdateDispatchData,
} from 'discord-api-types/v10';
import { describe, expectTypeOf, it } from 'vitest';

/**
 * Type tests, checked by `tsc -p tsconfig.json` in `npm test` (issue 23, conformance): the frames Hearth's
 * gateway sends, as `@hearth/protocol` types them, are what discord-api-types v10 (the types discord.js and
 * @discordjs/ws are built on) says a client receives; and what those clients send, Hearth's types accept.
 */

/**
 * A discord-api-types type as it is on the wire: its TypeScript enums become their values (`'online'`
 * for PresenceUpdateStatus.Online; any number for a numeric enum or bit field), so that Hearth's
 * `as const` objects compare structurally.
 */
type Wire<T> = T extends string
  ? `${T}`
  : T extends number
    ? number
    : T extends boolean | null | undefined
      ? T
      : T extends readonly [infer A, infer B]
        ? [Wire<A>, Wire<B>]
        : T extends readonly (infer U)[]
          ? Wire<U>[]
          : { [K in keyof T]: Wire<T[K]> };

describe('gateway frames against discord-api-types v10 (PROTOCOL.md §D.2)', () => {
  it('HELLO, HEARTBEAT_ACK, INVALID_SESSION: op, d, and null s and t', () => {
    expectTypeOf<GatewayHelloFrame>().toExtend<Wire<GatewayHello>>();
    expectTypeOf<GatewayInvalidSessionFrame>().toExtend<Wire<GatewayInvalidSession>>();
    // discord-api-types types the ack's d as undefined; the platform (and Hearth) send `"d": null`.
    expectTypeOf<Omit<GatewayHeartbeatAckFrame, 'd'>>().toExtend<Omit<Wire<GatewayHeartbeatAck>, 'd'>>();
  });

  it('the user object is an APIUser', () => {
    expectTypeOf<GatewayUser>().toExtend<Wire<APIUser>>();
  });

  it('READY of a bot or a player (application present) is GatewayReadyDispatchData', () => {
    expectTypeOf<GatewayReadyData & Required<Pick<GatewayReadyData, 'application'>>>().toExtend<
      Wire<GatewayReadyDispatchData>
    >();
    expectTypeOf<GatewayReadyFrame['op']>().toEqualTypeOf<0>();
    expectTypeOf<GatewayReadyFrame['t']>().toEqualTypeOf<`${GatewayDispatchEvents.Ready}`>();
  });

  it('RESUMED is a dispatch named RESUMED (d: {} as the platform sends it; discord-api-types leaves d out)', () => {
    expectTypeOf<GatewayResumedFrame['t']>().toEqualTypeOf<`${GatewayDispatchEvents.Resumed}`>();
    expectTypeOf<GatewayResumedFrame['op']>().toEqualTypeOf<0>();
  });

  it('PRESENCE_UPDATE is GatewayPresenceUpdateDispatchData, less the guild_id a friend presence has not', () => {
    type Presence = Wire<Omit<GatewayPresenceUpdateDispatchData, 'guild_id'>>;
    expectTypeOf<Omit<GatewayPresence, 'activities'>>().toExtend<Omit<Presence, 'activities'>>();
    // Known gap (issue 23): the platform gives each activity an `id`; Hearth's have none yet. This line
    // fails once GatewayActivity has one: then check `GatewayPresence` whole.
    // @ts-expect-error Property 'id' is missing in type 'GatewayActivity'
    expectTypeOf<GatewayActivity>().toExtend<Wire<DiscordActivity>>();
    expectTypeOf<GatewayActivity & { id: string }>().toExtend<Wire<DiscordActivity>>();
    expectTypeOf<
      GatewayPresenceUpdateFrame['t']
    >().toEqualTypeOf<`${GatewayDispatchEvents.PresenceUpdate}`>();
  });

  it('GUILD_MEMBERS_CHUNK is GatewayGuildMembersChunkDispatchData', () => {
    expectTypeOf<GatewayGuildMembersChunkData>().toExtend<Wire<GatewayGuildMembersChunkDispatchData>>();
  });

  it('RATE_LIMITED for op 8 is GatewayRateLimitedDispatchData', () => {
    expectTypeOf<GatewayRateLimitedData>().toExtend<Wire<GatewayRateLimitedDispatchData>>();
  });

  it('CHANNEL_INFO and the voice channel events are what discord-api-types reads; op 43 as it sends it (§D.7)', () => {
    expectTypeOf<GatewayChannelInfoData>().toExtend<Wire<GatewayChannelInfoDispatchData>>();
    expectTypeOf<GatewayVoiceChannelStatusUpdateData>().toExtend<
      Wire<GatewayVoiceChannelStatusUpdateDispatchData>
    >();
    expectTypeOf<GatewayVoiceChannelStartTimeUpdateData>().toExtend<
      Wire<GatewayVoiceChannelStartTimeUpdateDispatchData>
    >();
    expectTypeOf<Wire<DiscordRequestChannelInfoData>>().toExtend<GatewayRequestChannelInfoData>();
  });

  it('what discord.js sends (IDENTIFY, RESUME, REQUEST_GUILD_MEMBERS) is what Hearth reads', () => {
    expectTypeOf<Wire<DiscordIdentifyData>>().toExtend<GatewayIdentifyData>();
    expectTypeOf<Wire<DiscordResumeData>>().toExtend<GatewayResumeData>();
    expectTypeOf<Wire<DiscordRequestGuildMembersData>>().toExtend<GatewayRequestGuildMembersData>();
  });

  it('op 31 REQUEST_SOUNDBOARD_SOUNDS is read as sent; its SOUNDBOARD_SOUNDS answer is the dispatch data', () => {
    expectTypeOf<Wire<DiscordRequestSoundboardSoundsData>>().toExtend<GatewayRequestSoundboardSoundsData>();
    expectTypeOf<GatewaySoundboardSoundsData>().toExtend<Wire<GatewaySoundboardSoundsDispatchData>>();
  });

  it('CHANNEL_PINS_UPDATE is GatewayChannelPinsUpdateDispatchData', () => {
    expectTypeOf<GatewayChannelPinsUpdateData>().toExtend<Wire<GatewayChannelPinsUpdateDispatchData>>();
  });
});
