/**
 * Voice activity detection on 20 ms int16 frames: a frame is voice when its level in dBFS is above the
 * threshold (Social SDK VADThresholdSettings: −100…0, default −60), held for a short hangover so words are
 * not clipped between syllables. Automatic mode tracks the noise floor and sets the threshold above it.
 */

export const DEFAULT_VAD_THRESHOLD = -60;
/** Frames a detection is held after the level drops (200 ms). */
export const VAD_HANGOVER_FRAMES = 10;
/** Automatic mode: the threshold sits this far above the tracked noise floor. */
const AUTOMATIC_MARGIN_DB = 12;

/** VADThresholdSettings of the Social SDK: the threshold in dBFS and whether it is set automatically. */
export class VADThresholdSettings {
  #threshold: number;
  #automatic: boolean;

  constructor(threshold = DEFAULT_VAD_THRESHOLD, automatic = false) {
    this.#threshold = threshold;
    this.#automatic = automatic;
  }

  VadThreshold(): number {
    return this.#threshold;
  }

  SetVadThreshold(threshold: number): void {
    this.#threshold = threshold;
  }

  Automatic(): boolean {
    return this.#automatic;
  }

  SetAutomatic(automatic: boolean): void {
    this.#automatic = automatic;
  }
}

/** The level of a frame in dBFS (−100 for digital silence). */
export function levelDbfs(samples: Int16Array): number {
  if (samples.length === 0) return -100;
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  const rms = Math.sqrt(sum / samples.length);
  return rms === 0 ? -100 : Math.max(-100, 20 * Math.log10(rms / 32768));
}

export class VoiceActivityDetector {
  threshold = DEFAULT_VAD_THRESHOLD;
  automatic = false;
  #hold = 0;
  /** The tracked noise floor (automatic mode): falls fast to quieter frames, rises slowly. */
  #floor = -70;

  /** Whether this frame is voice; the threshold must be in −100…0. */
  detect(samples: Int16Array): boolean {
    const level = levelDbfs(samples);
    let threshold = this.threshold;
    if (this.automatic) {
      this.#floor = level < this.#floor ? level : this.#floor + (level - this.#floor) * 0.05;
      threshold = Math.min(0, this.#floor + AUTOMATIC_MARGIN_DB);
    }
    if (level > threshold) {
      this.#hold = VAD_HANGOVER_FRAMES;
      return true;
    }
    if (this.#hold > 0) {
      this.#hold -= 1;
      return true;
    }
    return false;
  }
}
