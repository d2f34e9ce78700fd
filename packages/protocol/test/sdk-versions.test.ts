import { describe, expect, it } from 'vitest';
import {
  minorName,
  parseSdkVersion,
  releasedSdkMinors,
  SDK_MINOR_RELEASES,
  sdkMinorCalendar,
  sdkVersionStanding,
  supportedSdkMinors,
  Timeline,
} from '../src/index.js';

const at = (iso: string) => Date.parse(iso);
const before = (iso: string) => Date.parse(iso) - 1;
const window = (nowMs: number) => supportedSdkMinors(nowMs).map(minorName);
const v = (text: string) => parseSdkVersion(text)!;

describe('SDK versions: major.minor.build (seed: Versioning)', () => {
  it('reads major.minor.build and nothing else', () => {
    expect(parseSdkVersion('1.10.18247')).toEqual({ major: 1, minor: 10, build: 18247 });
    expect(parseSdkVersion('0.0.0')).toEqual({ major: 0, minor: 0, build: 0 });
    for (const bad of [
      '1.10',
      '1.10.0.1',
      'v1.10.0',
      '1.010.0',
      '-1.2.3',
      '1.2.x',
      '',
      ' 1.2.3',
      '1.2.99999999999',
    ]) {
      expect(parseSdkVersion(bad)).toBeUndefined();
    }
  });
});

describe('the release calendar (seed: Versioning: minors in April, July and November)', () => {
  it('knows the published minors, 1.10 in July 2026, as the timeline does', () => {
    expect(SDK_MINOR_RELEASES.at(-1)).toEqual({ minor: '1.10', released: '2026-07-28T00:00:00Z' });
    expect(SDK_MINOR_RELEASES.at(-1)?.released).toBe(Timeline.sdkMinor1_10);
  });

  it('schedules the following minors on the 1st of November, April and July', () => {
    expect(
      sdkMinorCalendar(15)
        .slice(10)
        .map((r) => [minorName(r), new Date(r.releasedAt).toISOString()]),
    ).toEqual([
      ['1.10', '2026-07-28T00:00:00.000Z'],
      ['1.11', '2026-11-01T00:00:00.000Z'],
      ['1.12', '2027-04-01T00:00:00.000Z'],
      ['1.13', '2027-07-01T00:00:00.000Z'],
      ['1.14', '2027-11-01T00:00:00.000Z'],
    ]);
  });

  it('counts a minor released from its day on, not before', () => {
    expect(releasedSdkMinors(before('2026-07-28T00:00:00Z')).at(-1)).toMatchObject({ minor: 9 });
    expect(releasedSdkMinors(at('2026-07-28T00:00:00Z')).at(-1)).toMatchObject({ minor: 10 });
    expect(releasedSdkMinors(before('2026-11-01T00:00:00Z')).at(-1)).toMatchObject({ minor: 10 });
    expect(releasedSdkMinors(at('2026-11-01T00:00:00Z')).at(-1)).toMatchObject({ minor: 11 });
  });
});

describe('the support window: the five most recent minors (seed: Versioning)', () => {
  it('with 1.10 (July 2026) is 1.6 to 1.10; the day before, 1.5 to 1.9', () => {
    expect(window(at('2026-07-28T00:00:00Z'))).toEqual(['1.10', '1.9', '1.8', '1.7', '1.6']);
    expect(window(before('2026-07-28T00:00:00Z'))).toEqual(['1.9', '1.8', '1.7', '1.6', '1.5']);
  });

  it('moves on with each scheduled minor: 1.7 to 1.11 from 1 November 2026, 1.8 to 1.12 from 1 April 2027', () => {
    expect(window(before('2026-11-01T00:00:00Z'))).toEqual(['1.10', '1.9', '1.8', '1.7', '1.6']);
    expect(window(at('2026-11-01T00:00:00Z'))).toEqual(['1.11', '1.10', '1.9', '1.8', '1.7']);
    expect(window(before('2027-04-01T00:00:00Z'))).toEqual(['1.11', '1.10', '1.9', '1.8', '1.7']);
    expect(window(at('2027-04-01T00:00:00Z'))).toEqual(['1.12', '1.11', '1.10', '1.9', '1.8']);
  });
});

describe('where a version stands', () => {
  const july2026 = at('2026-07-28T00:00:00Z');

  it('the newest minor is current, whatever its build; so is a minor newer than the calendar has reached', () => {
    expect(sdkVersionStanding(v('1.10.18247'), july2026)).toEqual({ status: 'current' });
    expect(sdkVersionStanding(v('1.10.0'), july2026)).toEqual({ status: 'current' });
    expect(sdkVersionStanding(v('1.11.0'), july2026)).toEqual({ status: 'current' });
    expect(sdkVersionStanding(v('2.0.0'), july2026)).toEqual({ status: 'current' });
  });

  it('1.6 is deprecated with 1.10: superseded when 1.7 shipped, sunset when 1.11 ships', () => {
    expect(sdkVersionStanding(v('1.6.14448'), july2026)).toEqual({
      status: 'deprecated',
      since: at('2025-11-12T00:00:00Z'),
      sunset: at('2026-11-01T00:00:00Z'),
      latest: { major: 1, minor: 10, releasedAt: july2026 },
    });
  });

  it('1.5 is end of life from 1.10 on, and names 1.6 as the version to move to; the day before it is deprecated', () => {
    expect(sdkVersionStanding(v('1.5.12211'), july2026)).toEqual({
      status: 'end-of-life',
      oldestSupported: { major: 1, minor: 6, releasedAt: at('2025-09-26T00:00:00Z') },
      latest: { major: 1, minor: 10, releasedAt: july2026 },
    });
    expect(sdkVersionStanding(v('1.5.12211'), july2026 - 1)).toMatchObject({
      status: 'deprecated',
      sunset: july2026,
    });
    expect(sdkVersionStanding(v('0.9.1'), july2026)).toMatchObject({ status: 'end-of-life' });
  });

  it('1.10 is deprecated from 1 November 2026 (1.11) and end of life from 1 April 2028 (1.15)', () => {
    expect(sdkVersionStanding(v('1.10.0'), before('2026-11-01T00:00:00Z'))).toEqual({ status: 'current' });
    expect(sdkVersionStanding(v('1.10.0'), at('2026-11-01T00:00:00Z'))).toMatchObject({
      status: 'deprecated',
      since: at('2026-11-01T00:00:00Z'),
      sunset: at('2028-04-01T00:00:00Z'),
    });
    expect(sdkVersionStanding(v('1.10.0'), before('2028-04-01T00:00:00Z'))).toMatchObject({
      status: 'deprecated',
    });
    expect(sdkVersionStanding(v('1.10.0'), at('2028-04-01T00:00:00Z'))).toMatchObject({
      status: 'end-of-life',
      oldestSupported: { minor: 11 },
    });
  });
});
