import {
  minorName,
  parseSdkVersion,
  SDK_VERSION_HEADER,
  type SdkVersion,
  sdkVersionStanding,
} from '@hearth/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../kernel/clock.js';
import { HearthError } from '../kernel/errors.js';

/**
 * What the server says to an SDK of this version (seed: Versioning): nothing to the current one, RFC 9745
 * `Deprecation` and RFC 8594 `Sunset` headers to a supported but superseded one, 530100 past the window.
 * No version, or one that is not major.minor.build (a third-party client), is left alone.
 */
export type SdkVersionVerdict =
  | { kind: 'end-of-life'; error: HearthError }
  | { kind: 'deprecated'; headers: Record<string, string> }
  | undefined;

export function judgeSdkVersion(text: unknown, nowMs: number): SdkVersionVerdict {
  const version = typeof text === 'string' ? parseSdkVersion(text) : undefined;
  if (!version) return undefined;
  const standing = sdkVersionStanding(version, nowMs);
  switch (standing.status) {
    case 'current':
      return undefined;
    case 'deprecated':
      return {
        kind: 'deprecated',
        headers: {
          deprecation: `@${Math.floor(standing.since / 1000)}`,
          sunset: new Date(standing.sunset).toUTCString(),
        },
      };
    case 'end-of-life':
      return {
        kind: 'end-of-life',
        error: new HearthError('SDKVersionEndOfLife', {
          values: {
            version: versionName(version),
            minimum: minorName(standing.oldestSupported),
            latest: minorName(standing.latest),
          },
        }),
      };
  }
}

/** Every API request of the SDK carries its version in SDK_VERSION_HEADER: refused past its window (throws). */
export function answerSdkVersion(request: FastifyRequest, reply: FastifyReply, clock: Clock): void {
  const header = request.headers[SDK_VERSION_HEADER];
  // Most requests are not the SDK's: no clock read for them.
  if (header === undefined) return;
  const verdict = judgeSdkVersion(header, clock.now());
  if (verdict?.kind === 'end-of-life') throw verdict.error;
  if (verdict?.kind === 'deprecated') reply.headers(verdict.headers);
}

function versionName(version: SdkVersion): string {
  return `${version.major}.${version.minor}.${version.build}`;
}
