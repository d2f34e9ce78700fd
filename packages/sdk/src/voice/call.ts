/**
 * Call: one voice session in a lobby (Social SDK `Call`). It runs both audio paths (VOICE-RPC.md §1):
 * capture PCM → callback → VAD/PTT gate → Opus → DAVE → RTP, and RTP → DAVE → Opus → callback →
 * participant volume → mixer → sink. Its signalling (op 4, VOICE_SERVER_UPDATE) belongs to the Voice feature.
 */
import {
  type AudioSink,
  type AudioSource,
  FRAME_LENGTH,
  Mixer,
  type UserAudioCapturedCallback,
  type UserAudioReceivedCallback,
} from './audio.js';
import {
  CallError,
  CallStatus,
  type CallStatusChangedCallback,
  nameOfError,
  nameOfStatus,
  type ParticipantChangedCallback,
  type SpeakingStatusChangedCallback,
  type VoiceStateChangedCallback,
  type VoiceStateData,
  VoiceStateHandle,
} from './call-status.js';
import { AudioModeType, TransmitGate } from './gate.js';
import type { OpusCodec, VoiceNetwork } from './network.js';
import { CHANNELS, FRAME_MS, FRAME_SAMPLES, isSilenceFrame, SAMPLE_RATE, SILENCE_FRAME } from './rtp.js';
import { VADThresholdSettings, VoiceActivityDetector } from './vad.js';
import type { VoiceConnection } from './voice-connection.js';

/** What a call asks of the Voice feature that owns it. */
export interface CallOwner {
  /** Sends op 4 with the player's current self mute and deafen for this call. */
  updateVoiceState(call: Call): void;
  log(message: string): void;
  currentUserId(): string | undefined;
}

export interface CallOptions {
  channelId: string;
  network: VoiceNetwork;
  owner: CallOwner;
  received?: UserAudioReceivedCallback | undefined;
  captured?: UserAudioCapturedCallback | undefined;
}

export class Call {
  static readonly Status = CallStatus;
  static readonly Error = CallError;

  static StatusToString(status: CallStatus): string {
    return nameOfStatus(status);
  }

  static ErrorToString(error: CallError): string {
    return nameOfError(error);
  }

  #status: CallStatus = CallStatus.Joining;
  #statusChanged: CallStatusChangedCallback | undefined;
  #speakingChanged: SpeakingStatusChangedCallback | undefined;
  #participantChanged: ParticipantChangedCallback | undefined;
  #voiceStateChanged: VoiceStateChangedCallback | undefined;
  #selfDeaf = false;
  readonly #gate = new TransmitGate();
  readonly #vad = new VoiceActivityDetector();
  readonly #volumes = new Map<string, number>();
  readonly #localMutes = new Set<string>();
  readonly #participants = new Map<string, VoiceStateData>();
  readonly #decoders = new Map<string, OpusCodec>();
  readonly #mixer = new Mixer();
  #encoder: OpusCodec | undefined;
  #source: AudioSource | undefined;
  #sink: AudioSink | undefined;
  #playout: ReturnType<typeof setInterval> | undefined;
  /** The link to the voice server, set by the Voice feature once signalling answered. */
  connection: VoiceConnection | undefined;

  constructor(private readonly options: CallOptions) {}

  // ---- Identity and state ----

  /** The lobby this call belongs to. */
  GetChannelId(): bigint {
    return BigInt(this.options.channelId);
  }

  /** For a lobby call, the lobby too (Social SDK: both ids name the lobby). */
  GetGuildId(): bigint {
    return BigInt(this.options.channelId);
  }

  GetStatus(): CallStatus {
    return this.#status;
  }

  /** One callback, replaced by the next call. After a network loss the call reaches Disconnected and stays there: end it and start it again. */
  SetStatusChangedCallback(callback: CallStatusChangedCallback): void {
    this.#statusChanged = callback;
  }

  /** The participants' user ids, the player included. */
  GetParticipants(): bigint[] {
    return [...this.#participants.keys()].map((id) => BigInt(id));
  }

  /** The participant's self mute and deafen; undefined for a user not in the call. */
  GetVoiceStateHandle(userId: bigint | string): VoiceStateHandle | undefined {
    const id = String(userId);
    if (!this.#participants.has(id)) return undefined;
    return new VoiceStateHandle(() => this.#participants.get(id));
  }

  SetParticipantChangedCallback(callback: ParticipantChangedCallback): void {
    this.#participantChanged = callback;
  }

  SetSpeakingStatusChangedCallback(callback: SpeakingStatusChangedCallback): void {
    this.#speakingChanged = callback;
  }

  /** A participant's self mute or deafen changed. */
  SetOnVoiceStateChangedCallback(callback: VoiceStateChangedCallback): void {
    this.#voiceStateChanged = callback;
  }

  // ---- The player's own audio ----

  /** Sends nothing while muted (after closing the stream with silence frames); others see the mute. */
  SetSelfMute(mute: boolean): void {
    this.#gate.muted = mute || this.#selfDeaf;
    this.#selfMute = mute;
    this.options.owner.updateVoiceState(this);
  }

  #selfMute = false;

  GetSelfMute(): boolean {
    return this.#selfMute;
  }

  /** Hears nothing and is not heard; others see the deafen. */
  SetSelfDeaf(deaf: boolean): void {
    this.#selfDeaf = deaf;
    this.#gate.muted = deaf || this.#selfMute;
    this.options.owner.updateVoiceState(this);
  }

  GetSelfDeaf(): boolean {
    return this.#selfDeaf;
  }

  /** Voice activity detection (the default) or push to talk. */
  SetAudioMode(mode: AudioModeType): void {
    this.#gate.mode = mode === AudioModeType.MODE_PTT ? AudioModeType.MODE_PTT : AudioModeType.MODE_VAD;
  }

  GetAudioMode(): AudioModeType {
    return this.#gate.mode;
  }

  /** Push to talk: call it when the game's PTT key goes down (true) and up (false). */
  SetPTTActive(active: boolean): void {
    this.#gate.setPTTActive(active);
  }

  GetPTTActive(): boolean {
    return this.#gate.pttActive;
  }

  /** How long the stream stays open after SetPTTActive(false); 0 by default (the platform's clients use 20 ms). */
  SetPTTReleaseDelay(releaseDelayMs: number): void {
    if (!Number.isInteger(releaseDelayMs) || releaseDelayMs < 0 || releaseDelayMs > 0xffffffff) {
      throw new RangeError('the PTT release delay is a whole number of milliseconds, 0 or more');
    }
    this.#gate.releaseDelayMs = releaseDelayMs;
  }

  GetPTTReleaseDelay(): number {
    return this.#gate.releaseDelayMs;
  }

  /** The VAD threshold in dBFS (−100…0, default −60), or automatic (tracks the noise floor). */
  SetVADThreshold(automatic: boolean, threshold: number): void {
    if (!Number.isFinite(threshold) || threshold < -100 || threshold > 0) {
      throw new RangeError('the VAD threshold is between -100 and 0 dBFS');
    }
    this.#vad.automatic = automatic;
    this.#vad.threshold = threshold;
  }

  GetVADThreshold(): VADThresholdSettings {
    return new VADThresholdSettings(this.#vad.threshold, this.#vad.automatic);
  }

  // ---- Other participants ----

  /** Local playback volume of one participant, 0–200 (100 unchanged); nobody else is affected. */
  SetParticipantVolume(userId: bigint | string, volume: number): void {
    if (!Number.isFinite(volume) || volume < 0 || volume > 200) {
      throw new RangeError('the participant volume is between 0 and 200');
    }
    this.#volumes.set(String(userId), volume);
  }

  GetParticipantVolume(userId: bigint | string): number {
    return this.#volumes.get(String(userId)) ?? 100;
  }

  /** Stops hearing one participant locally; nobody else is affected. */
  SetLocalMute(userId: bigint | string, mute: boolean): void {
    if (mute) this.#localMutes.add(String(userId));
    else this.#localMutes.delete(String(userId));
  }

  GetLocalMute(userId: bigint | string): boolean {
    return this.#localMutes.has(String(userId));
  }

  // ---- Audio devices (JavaScript: injected) ----

  /**
   * Where the player's voice comes from. JavaScript has no microphone of its own here: give a source of
   * 20 ms 48 kHz stereo int16 frames (a `PushAudioSource`, or a binding to a native or WebAudio device).
   */
  SetAudioSource(source: AudioSource | undefined): void {
    this.#source?.stop();
    this.#source = source;
    source?.start((frame) => this.#capture(frame));
  }

  /** Where the mixed playback goes, one 20 ms frame at a time, while anyone is heard. */
  SetAudioSink(sink: AudioSink | undefined): void {
    this.#sink = sink;
    this.#syncPlayout();
  }

  // ---- Driven by the Voice feature and the connection ----

  /** Moves the status and tells the game. */
  setStatus(status: CallStatus, error: CallError = CallError.None, detail = 0): void {
    if (status === this.#status && error === CallError.None) return;
    this.#status = status;
    this.#syncPlayout();
    try {
      this.#statusChanged?.(status, error, detail);
    } catch (thrown) {
      this.options.owner.log(`the call status callback threw: ${String(thrown)}`);
    }
  }

  /** A participant's voice state from the main gateway; `undefined` when they left the call. */
  setParticipant(userId: string, state: VoiceStateData | undefined): void {
    const known = this.#participants.get(userId);
    if (!state) {
      if (!known) return;
      this.#participants.delete(userId);
      this.#decoders.get(userId)?.close();
      this.#decoders.delete(userId);
      this.#mixer.forget(userId);
      this.#notify(() => this.#participantChanged?.(BigInt(userId), false));
      return;
    }
    this.#participants.set(userId, state);
    if (!known) this.#notify(() => this.#participantChanged?.(BigInt(userId), true));
    else if (known.selfMute !== state.selfMute || known.selfDeaf !== state.selfDeaf) {
      this.#notify(() => this.#voiceStateChanged?.(BigInt(userId)));
    }
  }

  /** The voice gateway's roster (op 11, 13): members it announces count as participants even before their voice state. */
  rosterJoined(userIds: string[]): void {
    for (const userId of userIds) {
      if (!this.#participants.has(userId)) this.setParticipant(userId, { selfMute: false, selfDeaf: false });
    }
  }

  rosterLeft(userId: string): void {
    this.setParticipant(userId, undefined);
  }

  speaking(userId: string, speaking: boolean): void {
    this.#notify(() => this.#speakingChanged?.(BigInt(userId), speaking));
  }

  #notify(run: () => void): void {
    try {
      run();
    } catch (thrown) {
      this.options.owner.log(`a call callback threw: ${String(thrown)}`);
    }
  }

  /** One captured frame through the callback, the gate, Opus and the connection. */
  #capture(input: Int16Array): void {
    const connection = this.connection;
    if (this.#status !== CallStatus.Connected || !connection?.ready) return;
    const frame = input.slice();
    let silenced = false;
    if (this.options.captured) {
      try {
        silenced = this.options.captured(frame, FRAME_SAMPLES, SAMPLE_RATE, CHANNELS) === true;
      } catch (thrown) {
        this.options.owner.log(`the captured-audio callback threw: ${String(thrown)}`);
      }
    }
    if (silenced) frame.fill(0);
    const voice = !silenced && this.#vad.detect(frame);
    const step = this.#gate.step(voice);
    if (step.speaking === true) {
      connection.setSpeaking(true);
      this.speaking(this.options.owner.currentUserId() ?? '0', true);
    }
    if (step.send === 'audio') {
      this.#encoder ??= this.options.network.opus();
      connection.sendOpus(this.#encoder.encode(frame));
    } else if (step.send === 'silence') {
      connection.sendOpus(SILENCE_FRAME);
    }
    if (step.speaking === false) {
      connection.setSpeaking(false);
      this.speaking(this.options.owner.currentUserId() ?? '0', false);
    }
  }

  /** One participant's Opus frame through the decoder, the callback, their volume and the mixer. */
  receive(userId: string, opus: Uint8Array): void {
    if (this.#selfDeaf || this.#localMutes.has(userId)) return;
    if (isSilenceFrame(opus)) return;
    let decoder = this.#decoders.get(userId);
    if (!decoder) {
      decoder = this.options.network.opus();
      this.#decoders.set(userId, decoder);
    }
    let pcm: Int16Array;
    try {
      pcm = decoder.decode(opus);
    } catch {
      return;
    }
    if (pcm.length !== FRAME_LENGTH) return;
    if (this.options.received) {
      let mute = false;
      try {
        mute = this.options.received(BigInt(userId), pcm, FRAME_SAMPLES, SAMPLE_RATE, CHANNELS) === true;
      } catch (thrown) {
        this.options.owner.log(`the received-audio callback threw: ${String(thrown)}`);
      }
      if (mute) return;
    }
    this.#mixer.push(userId, pcm, this.GetParticipantVolume(userId));
  }

  /** The playout clock runs while the call is connected and has a sink. */
  #syncPlayout(): void {
    const run = this.#status === CallStatus.Connected && this.#sink !== undefined;
    if (run && !this.#playout) {
      this.#playout = setInterval(() => {
        const mixed = this.#mixer.mix();
        if (mixed && this.#sink) this.#sink.write(mixed);
      }, FRAME_MS);
    } else if (!run && this.#playout) {
      clearInterval(this.#playout);
      this.#playout = undefined;
    }
  }

  /** Releases the codecs, the source and the playout clock (the call has ended). */
  dispose(): void {
    this.#source?.stop();
    this.#encoder?.close();
    this.#encoder = undefined;
    for (const decoder of this.#decoders.values()) decoder.close();
    this.#decoders.clear();
    if (this.#playout) clearInterval(this.#playout);
    this.#playout = undefined;
  }
}
