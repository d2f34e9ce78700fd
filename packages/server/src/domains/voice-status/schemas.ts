import { Limits } from '@hearth/protocol';
import { type Static, Type } from 'typebox';

/** Request shapes of Set Voice Channel Status (OAS `update_voice_channel_status`; PROTOCOL.md §D.7). */

export const ChannelParams = Type.Object({ channel_id: Type.String({ format: 'snowflake' }) });

/** `status`: at most 500 characters; null, empty or absent clears it. */
export const SetVoiceChannelStatus = Type.Object({
  status: Type.Optional(
    Type.Union([Type.String({ maxLength: Limits.voiceChannelStatusMaxLength }), Type.Null()]),
  ),
});
export type SetVoiceChannelStatus = Static<typeof SetVoiceChannelStatus>;
