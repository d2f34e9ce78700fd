/**
 * Audio in and out of a call. JavaScript has no audio device here: the game gives the call a source of
 * captured PCM frames and a sink for the mixed playback, both 48 kHz stereo int16, 20 ms (960 samples
 * per channel) at a time.
 */
import { CHANNELS, FRAME_SAMPLES, SAMPLE_RATE } from './rtp.js';

/** Interleaved samples of one 20 ms stereo frame. */
export const FRAME_LENGTH = FRAME_SAMPLES * CHANNELS;

/**
 * Client::UserAudioReceivedCallback: each decoded 20 ms frame of a participant, before mixing. The samples
 * may be changed in place; returning true mutes this frame (the native `outShouldMute`).
 */
export type UserAudioReceivedCallback = (
  userId: bigint,
  data: Int16Array,
  samplesPerChannel: number,
  sampleRate: number,
  channels: number,
) => unknown;

/**
 * Client::UserAudioCapturedCallback: each captured 20 ms frame before it is gated and encoded. The samples
 * may be changed in place; returning true sends silence in its place (nothing is transmitted for it).
 */
export type UserAudioCapturedCallback = (
  data: Int16Array,
  samplesPerChannel: number,
  sampleRate: number,
  channels: number,
) => unknown;

/**
 * Where captured audio comes from: the call subscribes and the source delivers one frame (960 × 2
 * interleaved int16 samples) per 20 ms, by its own clock (a microphone binding, a file, a test).
 */
export interface AudioSource {
  start(onFrame: (frame: Int16Array) => void): void;
  stop(): void;
}

/** Where the call's mixed playback goes, one 20 ms frame at a time. */
export interface AudioSink {
  write(frame: Int16Array): void;
}

/** A source the game pushes frames into itself (for example from a WebAudio or native binding). */
export class PushAudioSource implements AudioSource {
  #onFrame: ((frame: Int16Array) => void) | undefined;

  start(onFrame: (frame: Int16Array) => void): void {
    this.#onFrame = onFrame;
  }

  stop(): void {
    this.#onFrame = undefined;
  }

  /** Delivers one frame; false when no call is listening. Frames of another length are refused. */
  push(frame: Int16Array): boolean {
    if (frame.length !== FRAME_LENGTH) throw new RangeError(`a frame holds ${FRAME_LENGTH} samples`);
    if (!this.#onFrame) return false;
    this.#onFrame(frame);
    return true;
  }
}

export { CHANNELS, FRAME_SAMPLES, SAMPLE_RATE };

/**
 * Sums the participants' frames for playback: one queued frame per participant per tick, each scaled by its
 * volume (0–200, 100 unchanged), clipped to int16. A participant more than a few frames ahead loses its
 * oldest frames rather than growing the delay.
 */
export class Mixer {
  static readonly MAX_QUEUED = 5;
  readonly #queues = new Map<string, Float32Array[]>();

  push(userId: string, frame: Int16Array, volume: number): void {
    const gain = volume / 100;
    // Float samples: an amplified int16 sample would wrap around instead of clipping.
    const scaled = Float32Array.from(frame, (sample) => sample * gain);
    const queue = this.#queues.get(userId) ?? [];
    queue.push(scaled);
    while (queue.length > Mixer.MAX_QUEUED) queue.shift();
    this.#queues.set(userId, queue);
  }

  forget(userId: string): void {
    this.#queues.delete(userId);
  }

  /** The next mixed frame, or undefined when nobody has audio queued. */
  mix(): Int16Array | undefined {
    let sum: Float64Array | undefined;
    for (const [userId, queue] of this.#queues) {
      const frame = queue.shift();
      if (queue.length === 0) this.#queues.delete(userId);
      if (!frame) continue;
      sum ??= new Float64Array(FRAME_LENGTH);
      for (let i = 0; i < FRAME_LENGTH; i++) sum[i] = (sum[i] as number) + (frame[i] ?? 0);
    }
    if (!sum) return undefined;
    const out = new Int16Array(FRAME_LENGTH);
    for (let i = 0; i < FRAME_LENGTH; i++)
      out[i] = Math.max(-32768, Math.min(32767, Math.round(sum[i] as number)));
    return out;
  }
}
