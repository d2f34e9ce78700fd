/**
 * ClientCreateOptions of the Social SDK (seed: `cpuAffinityMask`, `experimentalAndroidPreventCommsForBluetooth`,
 * `experimentalAudioSystem`). They tune the native audio engine; this library has none (audio comes in and
 * goes out as PCM frames), so they are accepted and carried, and change nothing here.
 */

/** AudioSystem: the native engine's audio stack choice; `Game` is the experimental game audio system. */
export const AudioSystem = { Standard: 0, Game: 1 } as const;
export type AudioSystem = (typeof AudioSystem)[keyof typeof AudioSystem];

export class ClientCreateOptions {
  #cpuAffinityMask: bigint | undefined;
  #preventCommsForBluetooth = false;
  #audioSystem: AudioSystem = AudioSystem.Standard;

  /**
   * The CPU cores the native audio threads may run on. Not applicable in JavaScript: the runtime schedules
   * its own threads; the value is only carried.
   */
  CpuAffinityMask(): bigint | undefined {
    return this.#cpuAffinityMask;
  }

  SetCpuAffinityMask(mask: bigint | number | undefined): void {
    if (mask === undefined) {
      this.#cpuAffinityMask = undefined;
      return;
    }
    const value = BigInt(mask);
    if (value < 0n || value > 0xffff_ffff_ffff_ffffn)
      throw new RangeError('the mask is an unsigned 64-bit integer');
    this.#cpuAffinityMask = value;
  }

  /** Android's communication audio mode over Bluetooth. Not applicable: this library opens no audio device. */
  ExperimentalAndroidPreventCommsForBluetooth(): boolean {
    return this.#preventCommsForBluetooth;
  }

  SetExperimentalAndroidPreventCommsForBluetooth(prevent: boolean): void {
    this.#preventCommsForBluetooth = prevent;
  }

  /** The native audio system (`AudioSystem.Game`). Not applicable: audio is the game's PCM source and sink. */
  ExperimentalAudioSystem(): AudioSystem {
    return this.#audioSystem;
  }

  SetExperimentalAudioSystem(system: AudioSystem): void {
    if (system !== AudioSystem.Standard && system !== AudioSystem.Game) {
      throw new RangeError('the audio system is AudioSystem.Standard or AudioSystem.Game');
    }
    this.#audioSystem = system;
  }
}
