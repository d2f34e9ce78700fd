import { createHash, randomBytes } from 'node:crypto';
import { sdkpp } from '@hearth/sdk';
import { describe, expect, it } from 'vitest';
import { base64url, sha256 } from '../src/sha256.js';

/**
 * Client::CreateAuthorizationCodeVerifier (seed, Library operations) makes a PKCE pair as RFC 7636 defines
 * it: a high-entropy verifier and its S256 challenge, BASE64URL(SHA256(ASCII(code_verifier))).
 */

const VERIFIER = /^[A-Za-z0-9_-]{43}$/;

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

describe('CreateAuthorizationCodeVerifier (RFC 7636 §4.1–4.2)', () => {
  const client = new sdkpp.Client('http://hearth.test/api', 'http://hearth.test');

  it('Verifier() is 43 characters of [A-Za-z0-9-_] (32 random bytes, RFC 7636 §4.1)', () => {
    expect(client.CreateAuthorizationCodeVerifier().Verifier()).toMatch(VERIFIER);
  });

  it('Challenge().Challenge() is base64url(SHA-256(verifier)), as node:crypto computes it (§4.2 S256)', () => {
    for (let i = 0; i < 20; i++) {
      const pair = client.CreateAuthorizationCodeVerifier();
      expect(pair.Challenge().Challenge()).toBe(s256(pair.Verifier()));
    }
  });

  it("Method() is 'S256', and the `challenge` and `method` getters read the same values", () => {
    const challenge = client.CreateAuthorizationCodeVerifier().Challenge();
    expect(challenge.Method()).toBe('S256');
    expect(challenge.method).toBe('S256');
    expect(challenge.challenge).toBe(challenge.Challenge());
    expect(challenge.IsValid()).toBe(true);
  });

  it('fresh pairs differ', () => {
    const pairs = Array.from({ length: 8 }, () => client.CreateAuthorizationCodeVerifier());
    expect(new Set(pairs.map((pair) => pair.Verifier())).size).toBe(8);
    expect(new Set(pairs.map((pair) => pair.Challenge().Challenge())).size).toBe(8);
  });

  it('Challenge() hands out a copy: changing it leaves the pair intact', () => {
    const pair = client.CreateAuthorizationCodeVerifier();
    const handedOut = pair.Challenge();
    handedOut.SetChallenge('tampered');
    handedOut.SetMethod('plain');
    expect(pair.Challenge().Challenge()).toBe(s256(pair.Verifier()));
    expect(pair.Challenge().Method()).toBe('S256');
  });

  it('AuthorizationCodeChallenge.nullobj is uninitialized: reading or setting it throws', () => {
    const nullobj = sdkpp.AuthorizationCodeChallenge.nullobj;
    expect(nullobj.IsValid()).toBe(false);
    expect(() => nullobj.challenge).toThrow(sdkpp.UninitializedInstanceError);
    expect(() => nullobj.Method()).toThrow(sdkpp.UninitializedInstanceError);
    expect(() => nullobj.SetChallenge('x')).toThrow(sdkpp.UninitializedInstanceError);
    expect(() => nullobj.SetMethod('S256')).toThrow(sdkpp.UninitializedInstanceError);
  });
});

/**
 * The library's own SHA-256 (sha256.ts, FIPS 180-4): CreateAuthorizationCodeVerifier is synchronous and
 * must run in browsers, so Web Crypto's async digest will not do. The public verifier's input is random,
 * so the padding boundaries are checked on the pure function directly.
 */
describe('SHA-256 of the code challenge (FIPS 180-4)', () => {
  it.each([0, 1, 55, 56, 63, 64, 65, 1000])('matches node:crypto on %i bytes', (length) => {
    const message = new Uint8Array(randomBytes(length));
    const expected = createHash('sha256').update(message).digest('hex');
    expect(Buffer.from(sha256(message)).toString('hex')).toBe(expected);
  });

  it('matches the FIPS 180-2 test vector for "abc"', () => {
    expect(Buffer.from(sha256(new TextEncoder().encode('abc'))).toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it.each([0, 1, 2, 3, 31, 32, 33])(
    'base64url of %i bytes matches node:crypto, without padding',
    (length) => {
      const bytes = new Uint8Array(randomBytes(length));
      expect(base64url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    },
  );
});
