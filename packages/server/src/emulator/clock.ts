import type { Clock } from '../kernel/clock.js';

/** What the test clock reads as: the instant, and whether it stands still. */
export interface ClockState {
  now: number;
  frozen: boolean;
}

/**
 * The emulator's clock: the server's clock moved by an offset that the admin API sets or advances, running
 * at real speed from there, or frozen at one instant. Every service holds this one object, so a jump is
 * seen by all of them at once.
 */
export class AdjustableClock implements Clock {
  readonly #base: Clock;
  #offset = 0;
  #frozenAt: number | undefined;

  constructor(base: Clock) {
    this.#base = base;
  }

  now(): number {
    return this.#frozenAt ?? this.#base.now() + this.#offset;
  }

  state(): ClockState {
    return { now: this.now(), frozen: this.#frozenAt !== undefined };
  }

  /** Moves to `to`; `frozen` keeps it there (undefined: keeps the current mode). */
  set(to: number, frozen?: boolean): ClockState {
    const freeze = frozen ?? this.#frozenAt !== undefined;
    this.#offset = to - this.#base.now();
    this.#frozenAt = freeze ? to : undefined;
    return this.state();
  }

  advance(ms: number, frozen?: boolean): ClockState {
    return this.set(this.now() + ms, frozen);
  }
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `30d`, `15m`, `1h30m`, `500ms`: a duration in milliseconds, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d|w))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) {
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  }
  return Number.isSafeInteger(total) ? total : undefined;
}
