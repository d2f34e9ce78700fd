/** Where time comes from. Services never call Date.now(): the dated rules of the spec are tested on both sides. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * A reading as whole ms after `origin`: a small integer, which V8 keeps in an object's field, where the
 * difference of two large numbers would take a 16-byte box of its own (clocks give whole milliseconds).
 */
export function msAfter(origin: number, now: number): number {
  return Math.floor(now - origin);
}

/** A clock that starts at `startAt` and then runs at real speed: `hearth serve --now …`. */
export function startingAt(startAt: number, base: Clock = systemClock): Clock {
  const offset = startAt - base.now();
  return { now: () => base.now() + offset };
}

/** A clock that moves only when told to; for tests. */
export class ManualClock implements Clock {
  #now: number;

  constructor(start: number | string | Date = Date.now()) {
    this.#now = new Date(start).getTime();
  }

  now(): number {
    return this.#now;
  }

  set(to: number | string | Date): void {
    this.#now = new Date(to).getTime();
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}
