/** Test signals: a stereo sine of a given peak, its RMS, and frames cut from it. */
import { FRAME_SAMPLES } from '../../src/voice/rtp.js';

export const FRAME_LENGTH = FRAME_SAMPLES * 2;

/** Frame `index` of a continuous 440 Hz stereo sine with this peak amplitude. */
export function sineFrame(index: number, peak: number, hz = 440): Int16Array {
  const frame = new Int16Array(FRAME_LENGTH);
  for (let i = 0; i < FRAME_SAMPLES; i++) {
    const t = (index * FRAME_SAMPLES + i) / 48_000;
    const value = Math.round(peak * Math.sin(2 * Math.PI * hz * t));
    frame[2 * i] = value;
    frame[2 * i + 1] = value;
  }
  return frame;
}

export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/** The mean RMS of decoded frames after the codec's start-up (its first five frames). */
export function steadyRms(frames: readonly Int16Array[]): number {
  const steady = frames.slice(5);
  return steady.reduce((sum, frame) => sum + rms(frame), 0) / Math.max(1, steady.length);
}
