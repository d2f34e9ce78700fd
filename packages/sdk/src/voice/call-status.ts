/** Call::Status, Call::Error and the per-participant voice state of the Social SDK's Call. */

/** The call's network state; a call is usable once Connected. */
export const CallStatus = {
  Disconnected: 0,
  Joining: 1,
  Connecting: 2,
  SignalingConnected: 3,
  Connected: 4,
  Reconnecting: 5,
  Disconnecting: 6,
} as const;
export type CallStatus = (typeof CallStatus)[keyof typeof CallStatus];

/** Why a call reached Disconnected; `errorDetail` of the status callback carries the close code. */
export const CallError = {
  None: 0,
  SignalingConnectionFailed: 1,
  SignalingUnexpectedClose: 2,
  VoiceConnectionFailed: 3,
  JoinTimeout: 4,
  Forbidden: 5,
} as const;
export type CallError = (typeof CallError)[keyof typeof CallError];

export type CallStatusChangedCallback = (status: CallStatus, error: CallError, errorDetail: number) => void;
export type SpeakingStatusChangedCallback = (userId: bigint, isPlayingSound: boolean) => void;
export type ParticipantChangedCallback = (userId: bigint, added: boolean) => void;
export type VoiceStateChangedCallback = (userId: bigint) => void;

/** What the main gateway says of one participant (VOICE_STATE_UPDATE). */
export interface VoiceStateData {
  selfMute: boolean;
  selfDeaf: boolean;
}

/** VoiceStateHandle: whether a participant muted or deafened themselves; reads the live state. */
export class VoiceStateHandle {
  constructor(private readonly read: () => VoiceStateData | undefined) {}

  SelfMute(): boolean {
    return this.read()?.selfMute ?? false;
  }

  SelfDeaf(): boolean {
    return this.read()?.selfDeaf ?? false;
  }
}

export function nameOfStatus(status: CallStatus): string {
  return Object.entries(CallStatus).find(([, value]) => value === status)?.[0] ?? 'Unknown';
}

export function nameOfError(error: CallError): string {
  return Object.entries(CallError).find(([, value]) => value === error)?.[0] ?? 'Unknown';
}
