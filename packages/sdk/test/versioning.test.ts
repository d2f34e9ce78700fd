import { sdkpp } from '@hearth/sdk';
import { ManualClock } from '@hearth/server';
import { afterEach, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../test-support/hearth.js';
import { fakeFetch, json } from './fake-fetch.js';

/** The library's version on the wire (seed: Versioning): major.minor.build, on every request and at Identify. */

const API = 'http://hearth.test/api';
const WEB = 'http://hearth.test';
const APPLICATION_ID = 1234567890123456789n;

describe('the SDK names its version, major.minor.build (seed: Versioning)', () => {
  it('GetVersionMajor/Minor/Patch answer 1.10.0', () => {
    expect([
      sdkpp.Client.GetVersionMajor(),
      sdkpp.Client.GetVersionMinor(),
      sdkpp.Client.GetVersionPatch(),
    ]).toEqual([1, 10, 0]);
  });

  it('every request carries X-Hearth-SDK-Version: 1.10.0', async () => {
    const fake = fakeFetch(() =>
      json(200, { access_token: 'a', token_type: 'Bearer', expires_in: 604800, scope: 'openid' }),
    );
    const client = new sdkpp.Client(API, WEB, { fetch: fake.fetch, opener: () => undefined });
    await client.RevokeToken(APPLICATION_ID, 'an-access-token');
    await client.RefreshToken(APPLICATION_ID, 'a-refresh-token');
    expect(fake.requests.map((request) => request.headers.get('x-hearth-sdk-version'))).toEqual([
      '1.10.0',
      '1.10.0',
    ]);
  });

  it('a Deprecation header is logged once, as a Warning naming the Sunset', async () => {
    const fake = fakeFetch(() =>
      json(200, {}, { deprecation: '@1793491200', sunset: 'Sat, 01 Apr 2028 00:00:00 GMT' }),
    );
    const client = new sdkpp.Client(API, WEB, { fetch: fake.fetch, opener: () => undefined });
    const warnings: string[] = [];
    client.AddLogCallback((message) => warnings.push(message), sdkpp.LoggingSeverity.Warning);
    await client.RevokeToken(APPLICATION_ID, 'an-access-token');
    await client.RevokeToken(APPLICATION_ID, 'an-access-token');
    expect(warnings).toEqual([
      'the server deprecates this SDK version; its support ends Sat, 01 Apr 2028 00:00:00 GMT: upgrade the SDK',
    ]);
  });
});

describe('against Hearth: an SDK past its support window', () => {
  let hearth: TestHearth | undefined;
  afterEach(async () => {
    await hearth?.close();
    hearth = undefined;
  });

  it('1.10 is refused with 530100 once 1.15 ships (1 April 2028), naming 1.11 as the version to move to', async () => {
    hearth = await startHearth({}, new ManualClock('2028-04-01T00:00:00Z'));
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, { opener: () => undefined });
    const result = await client.RevokeToken(APPLICATION_ID, 'an-access-token');
    expect({
      type: result.Type(),
      status: result.Status(),
      errorCode: result.ErrorCode(),
      error: result.Error(),
    }).toEqual({
      type: sdkpp.ErrorType.HTTPError,
      status: 400,
      errorCode: 530100,
      error: 'SDK 1.10.0 is end of life: move to 1.11 or newer (the latest is 1.15)',
    });
  });

  it('the day before, 1.10 is still served', async () => {
    hearth = await startHearth({}, new ManualClock('2028-03-31T23:59:59Z'));
    const client = new sdkpp.Client(`${hearth.url}/api`, hearth.url, { opener: () => undefined });
    const result = await client.RevokeToken(APPLICATION_ID, 'an-access-token');
    expect(result.ErrorCode()).not.toBe(530100);
  });
});
