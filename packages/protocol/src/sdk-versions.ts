/**
 * The SDK's release calendar and support window (seed: Versioning). Versions are major.minor.build; three
 * minors ship each year, in April, July and November, and the five most recent minors are supported.
 */

/** The header in which the SDK names its version on every HTTP request (Hearth's own name). */
export const SDK_VERSION_HEADER = 'x-hearth-sdk-version';
/** Where the SDK names its version in the gateway Identify: `properties.sdk_version`. */
export const SDK_VERSION_IDENTIFY_PROPERTY = 'sdk_version';

/** How many of the most recent minors are supported (seed: Versioning). */
export const SUPPORTED_SDK_MINORS = 5;
/** The months (1–12) in which minors ship from 1.10 on. */
export const SDK_RELEASE_MONTHS = [4, 7, 11] as const;

/**
 * First release day of each minor so far, from the platform's change log (1.0: the SDK's launch; 1.8: its
 * first published build, 1.8.13395). Later minors follow SDK_RELEASE_MONTHS, on the 1st of the month.
 */
export const SDK_MINOR_RELEASES = [
  { minor: '1.0', released: '2025-03-17T00:00:00Z' },
  { minor: '1.1', released: '2025-04-16T00:00:00Z' },
  { minor: '1.2', released: '2025-05-05T00:00:00Z' },
  { minor: '1.3', released: '2025-06-05T00:00:00Z' },
  { minor: '1.4', released: '2025-06-26T00:00:00Z' },
  { minor: '1.5', released: '2025-08-15T00:00:00Z' },
  { minor: '1.6', released: '2025-09-26T00:00:00Z' },
  { minor: '1.7', released: '2025-11-12T00:00:00Z' },
  { minor: '1.8', released: '2025-12-17T00:00:00Z' },
  { minor: '1.9', released: '2026-04-23T00:00:00Z' },
  { minor: '1.10', released: '2026-07-28T00:00:00Z' },
] as const;

/** A version as the SDK sends it. */
export interface SdkVersion {
  major: number;
  minor: number;
  build: number;
}

/** One minor of the calendar and when it was (or will be) released. */
export interface SdkMinorRelease {
  major: number;
  minor: number;
  releasedAt: number;
}

/** `1.10.18247` → {1, 10, 18247}; anything else (no build, signs, leading zeros, huge numbers) → undefined. */
export function parseSdkVersion(text: string): SdkVersion | undefined {
  const match = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,9})$/.exec(text);
  if (!match) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), build: Number(match[3]) };
}

/** `major.minor`, as the calendar and the error messages name a minor. */
export function minorName(version: { major: number; minor: number }): string {
  return `${version.major}.${version.minor}`;
}

const KNOWN: readonly SdkMinorRelease[] = SDK_MINOR_RELEASES.map(({ minor, released }) => {
  const [major, number] = minor.split('.').map(Number) as [number, number];
  return { major, minor: number, releasedAt: Date.parse(released) };
});

/** The first `count` minors of the calendar, oldest first: the known ones, then SDK_RELEASE_MONTHS'. */
export function sdkMinorCalendar(count: number): SdkMinorRelease[] {
  const calendar = KNOWN.slice(0, count);
  while (calendar.length < count) calendar.push(nextScheduledMinor(calendar[calendar.length - 1]!));
  return calendar;
}

/** Minors released at or before `nowMs`, oldest first. */
export function releasedSdkMinors(nowMs: number): SdkMinorRelease[] {
  const released = KNOWN.filter((release) => release.releasedAt <= nowMs);
  if (released.length < KNOWN.length) return released;
  for (let next = nextScheduledMinor(released[released.length - 1]!); next.releasedAt <= nowMs; ) {
    released.push(next);
    next = nextScheduledMinor(next);
  }
  return released;
}

/** The minor after `previous`: on the 1st of the first release month after the month `previous` shipped in. */
export function nextScheduledMinor(previous: SdkMinorRelease): SdkMinorRelease {
  const shipped = new Date(previous.releasedAt);
  const month = shipped.getUTCMonth() + 1;
  const nextMonth = SDK_RELEASE_MONTHS.find((candidate) => candidate > month);
  const releasedAt =
    nextMonth === undefined
      ? Date.UTC(shipped.getUTCFullYear() + 1, SDK_RELEASE_MONTHS[0] - 1, 1)
      : Date.UTC(shipped.getUTCFullYear(), nextMonth - 1, 1);
  return { major: previous.major, minor: previous.minor + 1, releasedAt };
}

/** The five most recent minors released by `nowMs`, newest first. */
export function supportedSdkMinors(nowMs: number): SdkMinorRelease[] {
  return releasedSdkMinors(nowMs).slice(-SUPPORTED_SDK_MINORS).reverse();
}

/**
 * Where a version stands on `nowMs`: `current` (the newest minor, or one newer than the calendar has
 * reached), `deprecated` (supported but superseded: `since` the next minor shipped, `sunset` when the fifth
 * after it ships and it leaves the window) or `end-of-life` (older than the window).
 */
export type SdkVersionStanding =
  | { status: 'current' }
  | { status: 'deprecated'; since: number; sunset: number; latest: SdkMinorRelease }
  | { status: 'end-of-life'; oldestSupported: SdkMinorRelease; latest: SdkMinorRelease };

export function sdkVersionStanding(version: SdkVersion, nowMs: number): SdkVersionStanding {
  const released = releasedSdkMinors(nowMs);
  const latest = released[released.length - 1];
  if (!latest || compareMinors(version, latest) >= 0) return { status: 'current' };
  const oldestSupported = released[Math.max(0, released.length - SUPPORTED_SDK_MINORS)]!;
  const index = released.findIndex((r) => r.major === version.major && r.minor === version.minor);
  if (index === -1 || compareMinors(version, oldestSupported) < 0) {
    return { status: 'end-of-life', oldestSupported, latest };
  }
  const calendar = sdkMinorCalendar(index + SUPPORTED_SDK_MINORS + 1);
  return {
    status: 'deprecated',
    since: calendar[index + 1]!.releasedAt,
    sunset: calendar[index + SUPPORTED_SDK_MINORS]!.releasedAt,
    latest,
  };
}

function compareMinors(a: { major: number; minor: number }, b: { major: number; minor: number }): number {
  return a.major - b.major || a.minor - b.minor;
}
