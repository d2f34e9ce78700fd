import type { VoiceStateRow } from './voice-states-store.js';

const iso = (ms: number | string | null): string | null =>
  ms === null ? null : new Date(Number(ms)).toISOString();
const bool = (value: number | string): boolean => Number(value) === 1;

/** The voice state object (GUILDS.md §3.5); `channel_id` null is a disconnect, sent once the row is gone. */
export function toVoiceStateObject<M>(
  row: VoiceStateRow,
  member: M | undefined,
  channelId: string | null = row.channel_id,
) {
  return {
    guild_id: row.guild_id,
    channel_id: channelId,
    user_id: row.user_id,
    ...(member === undefined ? {} : { member }),
    session_id: row.session_id,
    deaf: bool(row.deaf),
    mute: bool(row.mute),
    self_deaf: bool(row.self_deaf),
    self_mute: bool(row.self_mute),
    self_stream: bool(row.self_stream),
    self_video: bool(row.self_video),
    suppress: bool(row.suppress),
    request_to_speak_timestamp: iso(row.request_to_speak_timestamp),
  };
}

export type VoiceStateObject = ReturnType<typeof toVoiceStateObject>;
