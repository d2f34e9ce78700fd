import { GatewayOpcodes } from '@hearth/protocol';
import { ManualClock } from '@hearth/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../test-support/gateway.js';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { createGame } from '../../../test-support/oauth.js';

/**
 * The SDK's support window on the wire (seed: Versioning): the SDK names its version in
 * X-Hearth-SDK-Version and Identify `properties.sdk_version`; the server answers an end-of-life SDK with
 * 530100 (HTTP) or 4012 (gateway), and a supported but superseded one with Deprecation and Sunset headers.
 */

const JULY_2026 = '2026-07-28T00:00:00Z'; // 1.10: the window becomes 1.6–1.10
const NOVEMBER_2026 = '2026-11-01T00:00:00Z'; // 1.11, scheduled
const justBefore = (iso: string) => new Date(Date.parse(iso) - 1);

let hearth: TestHearth;
const clock = new ManualClock(JULY_2026);
const clients: GatewayClient[] = [];

beforeAll(async () => {
  hearth = await startHearth({}, clock);
});
afterAll(() => hearth.close());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  clock.set(JULY_2026);
});

async function getGateway(sdkVersion?: string): Promise<Response> {
  return hearth.api(
    '/gateway',
    sdkVersion === undefined ? {} : { headers: { 'x-hearth-sdk-version': sdkVersion } },
  );
}

function versionHeaders(response: Response) {
  return {
    status: response.status,
    deprecation: response.headers.get('deprecation'),
    sunset: response.headers.get('sunset'),
  };
}

describe('HTTP: an end-of-life SDK gets 530100 naming the version to move to', () => {
  it('1.5 from 28 July 2026 (1.10): 400, move to 1.6', async () => {
    const response = await getGateway('1.5.12211');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      code: 530100,
      message: 'SDK 1.5.12211 is end of life: move to 1.6 or newer (the latest is 1.10)',
    });
  });

  it('1.5 the moment before 1.10: served, deprecated since 1.6 shipped, sunset when 1.10 ships', async () => {
    clock.set(justBefore(JULY_2026));
    expect(versionHeaders(await getGateway('1.5.12211'))).toEqual({
      status: 200,
      deprecation: '@1758844800', // 2025-09-26, 1.6
      sunset: 'Tue, 28 Jul 2026 00:00:00 GMT',
    });
  });

  it('0.1.0 and 1.0.0 are end of life too; a build number does not matter', async () => {
    for (const version of ['0.1.0', '1.0.0', '1.5.0']) {
      const response = await getGateway(version);
      expect([response.status, ((await response.json()) as { code: number }).code]).toEqual([400, 530100]);
    }
  });
});

describe('HTTP: a supported but superseded SDK gets Deprecation (RFC 9745) and Sunset (RFC 8594)', () => {
  it('1.6 with 1.10: deprecated since 1.7 (12 November 2025), sunset when 1.11 ships', async () => {
    expect(versionHeaders(await getGateway('1.6.14448'))).toEqual({
      status: 200,
      deprecation: '@1762905600',
      sunset: 'Sun, 01 Nov 2026 00:00:00 GMT',
    });
  });

  it('1.10 is current until 1 November 2026, then deprecated with a sunset on 1 April 2028 (1.15)', async () => {
    clock.set(justBefore(NOVEMBER_2026));
    expect(versionHeaders(await getGateway('1.10.0'))).toEqual({
      status: 200,
      deprecation: null,
      sunset: null,
    });
    clock.set(NOVEMBER_2026);
    expect(versionHeaders(await getGateway('1.10.0'))).toEqual({
      status: 200,
      deprecation: '@1793491200',
      sunset: 'Sat, 01 Apr 2028 00:00:00 GMT',
    });
  });

  it('the newest minor, and one newer than the calendar has reached, get no header', async () => {
    expect(versionHeaders(await getGateway('1.10.18247'))).toEqual({
      status: 200,
      deprecation: null,
      sunset: null,
    });
    expect(versionHeaders(await getGateway('1.12.0'))).toEqual({
      status: 200,
      deprecation: null,
      sunset: null,
    });
  });
});

describe('HTTP: requests without an SDK version (third-party clients) are unaffected', () => {
  it('no header, or one that is not major.minor.build, is served as before', async () => {
    clock.set('2035-01-01T00:00:00Z');
    for (const version of [undefined, '', '1.5', 'banana', '1.5.0-beta', '01.5.0', '9'.repeat(300)]) {
      expect(versionHeaders(await getGateway(version))).toEqual({
        status: 200,
        deprecation: null,
        sunset: null,
      });
    }
  });
});

describe('gateway: Identify with an end-of-life SDK closes 4012, which no client retries', () => {
  async function identifyWith(properties: unknown): Promise<GatewayClient> {
    const game = await createGame(hearth);
    const client = await GatewayClient.connect(hearth.url);
    clients.push(client);
    await client.nextOp(GatewayOpcodes.Hello);
    client.send({ op: 2, d: { token: game.botToken, properties, intents: 0 } });
    return client;
  }

  it('properties.sdk_version 1.5.12211 from 28 July 2026', async () => {
    const client = await identifyWith({
      os: 'linux',
      browser: 'hearth-sdk',
      device: 'hearth-sdk',
      sdk_version: '1.5.12211',
    });
    expect(await client.waitClose()).toEqual({
      code: 4012,
      reason: 'SDK 1.5.12211 is end of life: move to 1.6 or newer (the latest is 1.10)',
    });
  });

  it('the moment before, and for a supported version or none, READY', async () => {
    clock.set(justBefore(JULY_2026));
    for (const properties of [
      { os: 'linux', browser: 'hearth-sdk', device: 'hearth-sdk', sdk_version: '1.5.12211' },
      { os: 'linux', browser: 'discord.js', device: 'discord.js' },
      { os: 'linux', sdk_version: 42 },
      null,
    ]) {
      const client = await identifyWith(properties);
      expect(await client.next()).toMatchObject({ op: 0, t: 'READY' });
    }
  });
});
