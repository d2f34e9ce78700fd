/**
 * What the capture path does with each 20 ms frame: send it, send a silence frame, or send nothing
 * (VOICE-RPC.md §1, PTT rules). Time is counted in frames, so the machine needs no clock.
 */
import { FRAME_MS } from './rtp.js';

/** Call::AudioModeType of the Social SDK: voice activity detection or push to talk. */
export const AudioModeType = { MODE_UNINIT: 0, MODE_VAD: 1, MODE_PTT: 2 } as const;
export type AudioModeType = (typeof AudioModeType)[keyof typeof AudioModeType];

/** Silence frames sent when a stream pauses, before speaking 0 (§1 UDP media). */
export const SILENCE_FRAMES = 5;

/**
 * One frame's decision. `speaking` is set on the frame whose decision changes the speaking flag: true before
 * the first audio frame (op 5 must precede audio), false after the last silence frame.
 */
export interface GateStep {
  send: 'audio' | 'silence' | 'nothing';
  speaking?: boolean;
}

export class TransmitGate {
  mode: AudioModeType = AudioModeType.MODE_VAD;
  #pttActive = false;
  #releaseDelayMs = 0;
  #releaseFramesLeft = 0;
  #muted = false;
  #transmitting = false;
  #silenceLeft = 0;

  get pttActive(): boolean {
    return this.#pttActive;
  }

  /** Pressing cancels a pending release; releasing keeps the stream open for the release delay. */
  setPTTActive(active: boolean): void {
    if (this.#pttActive && !active) this.#releaseFramesLeft = Math.ceil(this.#releaseDelayMs / FRAME_MS);
    if (active) this.#releaseFramesLeft = 0;
    this.#pttActive = active;
  }

  get releaseDelayMs(): number {
    return this.#releaseDelayMs;
  }

  set releaseDelayMs(ms: number) {
    this.#releaseDelayMs = ms;
  }

  /** A muted gate closes its stream like a release (silence frames, speaking 0) and then sends nothing. */
  set muted(muted: boolean) {
    this.#muted = muted;
    if (muted) this.#releaseFramesLeft = 0;
  }

  get muted(): boolean {
    return this.#muted;
  }

  /** Decides one captured frame; `voice` is the VAD's verdict on it (ignored in PTT mode). */
  step(voice: boolean): GateStep {
    let open = false;
    if (!this.#muted) {
      if (this.mode === AudioModeType.MODE_PTT) {
        if (this.#pttActive) open = true;
        else if (this.#releaseFramesLeft > 0) {
          this.#releaseFramesLeft -= 1;
          open = true;
        }
      } else {
        open = voice;
      }
    }
    if (open) {
      this.#silenceLeft = 0;
      if (this.#transmitting) return { send: 'audio' };
      this.#transmitting = true;
      return { send: 'audio', speaking: true };
    }
    if (this.#transmitting) {
      this.#transmitting = false;
      this.#silenceLeft = SILENCE_FRAMES;
    }
    if (this.#silenceLeft > 0) {
      this.#silenceLeft -= 1;
      return this.#silenceLeft === 0 ? { send: 'silence', speaking: false } : { send: 'silence' };
    }
    return { send: 'nothing' };
  }
}
