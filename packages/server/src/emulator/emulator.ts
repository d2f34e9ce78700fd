import { FormErrors } from '@hearth/protocol';
import { HearthError, invalidForm } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import type { ScriptedActions } from './actions.js';
import { type AdjustableClock, type ClockState, parseDuration } from './clock.js';
import type { Faults } from './faults.js';
import type { ClockChange } from './schemas.js';
import { type SeedDeps, type SeedResult, seed } from './seed.js';
import type { SnapshotInfo, Snapshots } from './snapshots.js';

export interface EmulatorDeps {
  clock: AdjustableClock;
  logger: Logger;
  faults: Faults;
  snapshots: Snapshots;
  actions: ScriptedActions;
  seed: SeedDeps;
  /** The periodic sweeps (lobby idle timeouts, thread archiving, renewals, gateway resume windows), run now. */
  sweep(): Promise<void>;
  /** Forgets in-memory state a restore made stale: gateway sessions, rate-limit counters. */
  dropLiveState(): void;
}

/** The wire form of the test clock. */
export interface ClockObject {
  now: string;
  now_ms: number;
  frozen: boolean;
}

/** Emulator mode (README "Emulator mode"): what the admin API and `hearth emulator …` drive. */
export class Emulator {
  readonly #deps: EmulatorDeps;

  constructor(deps: EmulatorDeps) {
    this.#deps = deps;
  }

  get faults(): Faults {
    return this.#deps.faults;
  }

  get actions(): ScriptedActions {
    return this.#deps.actions;
  }

  clock(): ClockObject {
    return clockObject(this.#deps.clock.state());
  }

  /**
   * Moves the clock (never back: what was issued and recorded would then lie in the future), then runs every
   * sweep at once, so that what fell due in the jump (renewals, idle lobbies, expiries) has happened when
   * the call answers.
   */
  async changeClock(change: ClockChange): Promise<ClockObject> {
    const { clock } = this.#deps;
    if ((change.advance === undefined) === (change.to === undefined) && change.freeze === undefined)
      throw invalidForm('advance', FormErrors.required());
    if (change.advance !== undefined && change.to !== undefined)
      throw invalidForm('to', FormErrors.invalid());
    const before = clock.now();
    let target = before;
    if (change.advance !== undefined) target = before + (parseDuration(change.advance) ?? 0);
    if (change.to !== undefined) target = typeof change.to === 'number' ? change.to : Date.parse(change.to);
    if (target < before) throw invalidForm('to', FormErrors.invalid());
    const state = clock.set(target, change.freeze);
    this.#deps.logger.info({ from: before, to: state.now, frozen: state.frozen }, 'emulator clock moved');
    await this.#deps.sweep();
    return clockObject(state);
  }

  seed(document: unknown): Promise<SeedResult> {
    return seed(this.#deps.seed, document);
  }

  saveSnapshot(name: string): Promise<SnapshotInfo> {
    return this.#deps.snapshots.save(name);
  }

  /** Replaces the live data with the snapshot's, then ends what remembered the old data. */
  async restoreSnapshot(name: string): Promise<void> {
    await this.#deps.snapshots.restore(name);
    this.#deps.dropLiveState();
    this.#deps.logger.info({ snapshot: name }, 'emulator snapshot restored');
  }

  listSnapshots(): Promise<SnapshotInfo[]> {
    return this.#deps.snapshots.list();
  }

  async deleteSnapshot(name: string): Promise<void> {
    if (!(await this.#deps.snapshots.delete(name))) throw new HearthError('GeneralNotFound');
  }
}

function clockObject(state: ClockState): ClockObject {
  return { now: new Date(state.now).toISOString(), now_ms: state.now, frozen: state.frozen };
}
