import { gcm } from '@noble/ciphers/aes.js';
import { describe, expect, it } from 'vitest';
import { FrameDecryptor, FrameEncryptor, HashRatchet, parseFrame } from '../../src/voice/dave-frames.js';

/**
 * DAVE's frame layer in plain TypeScript (protocol.md, Sender Key Derivation and Frame Encryption): the key
 * ratchet against libdave's test vector, the frame layout, the truncated tag checked against full AES-GCM,
 * replays, old ratchets across a transition, and passthrough. Interop with davey is in the server's tests.
 */

// libdave's HashRatchet test vector (also davey's): a base secret and the key of generation 0.
const BASE_SECRET = Uint8Array.from([
  206, 221, 97, 177, 184, 161, 202, 105, 4, 101, 84, 40, 44, 247, 11, 123,
]);
const KEY_0 = Uint8Array.from([117, 48, 249, 169, 148, 94, 45, 46, 6, 208, 101, 31, 123, 42, 134, 75]);

const opus = (size: number, fill: number) => new Uint8Array(size).fill(fill);

function pair(now: () => number = () => 0): { encryptor: FrameEncryptor; decryptor: FrameDecryptor } {
  const encryptor = new FrameEncryptor();
  encryptor.setRatchet(new HashRatchet(BASE_SECRET));
  const decryptor = new FrameDecryptor(now);
  decryptor.transitionToRatchet(new HashRatchet(BASE_SECRET), 10);
  return { encryptor, decryptor };
}

describe('DAVE key ratchet', () => {
  it('derives libdave’s key for generation 0, and the same keys however far it is asked at once', () => {
    expect([...(new HashRatchet(BASE_SECRET).key(0) ?? [])]).toEqual([...KEY_0]);
    const stepped = new HashRatchet(BASE_SECRET);
    for (let generation = 0; generation < 3; generation++) stepped.key(generation);
    expect(new HashRatchet(BASE_SECRET).key(3)).toEqual(stepped.key(3));
    expect(stepped.key(1)).not.toEqual(stepped.key(2));
  });

  it('forgets erased generations', () => {
    const ratchet = new HashRatchet(BASE_SECRET);
    ratchet.key(2);
    ratchet.eraseBefore(2);
    expect(ratchet.key(1)).toBeUndefined();
    expect(ratchet.key(2)).toBeDefined();
  });
});

describe('DAVE frames', () => {
  it('lays out ciphertext, an 8-byte tag, the ULEB128 nonce, the supplemental size and 0xFAFA', () => {
    const { encryptor } = pair();
    const frame = opus(40, 7);
    const wire = encryptor.encrypt(frame);
    expect(wire.length).toBe(40 + 8 + 1 + 1 + 2);
    expect([...wire.subarray(-4)]).toEqual([1, 12, 0xfa, 0xfa]);
    // The nonce is 8 zero bytes and the 32-bit counter little-endian; the tag is GCM's first 8 bytes.
    const nonce = new Uint8Array(12);
    nonce[8] = 1;
    const sealed = gcm(KEY_0, nonce).encrypt(frame);
    expect([...wire.subarray(0, 48)]).toEqual([...sealed.subarray(0, 48)]);
    expect(parseFrame(wire)).toMatchObject({ truncatedNonce: 1, ranges: [] });
  });

  it('writes nonces from 128 on in more ULEB128 bytes, and they decrypt', () => {
    const { encryptor, decryptor } = pair();
    let wire: Uint8Array = new Uint8Array();
    for (let i = 0; i < 200; i++) wire = encryptor.encrypt(opus(20, i));
    expect([...wire.subarray(-5)]).toEqual([0xc8, 0x01, 13, 0xfa, 0xfa]);
    expect([...decryptor.decrypt(wire)]).toEqual([...opus(20, 199)]);
  });

  it('refuses a changed byte, a replayed frame and a frame under another secret; late frames decrypt once', () => {
    const { encryptor, decryptor } = pair();
    const first = encryptor.encrypt(opus(30, 1));
    const late = encryptor.encrypt(opus(30, 2));
    const second = encryptor.encrypt(opus(30, 3));
    expect([...decryptor.decrypt(first)]).toEqual([...opus(30, 1)]);
    expect([...decryptor.decrypt(second)]).toEqual([...opus(30, 3)]);
    expect([...decryptor.decrypt(late)]).toEqual([...opus(30, 2)]);
    expect(() => decryptor.decrypt(late)).toThrow();
    expect(() => decryptor.decrypt(first)).toThrow();
    const third = encryptor.encrypt(opus(30, 3));
    const tampered = Uint8Array.from(third);
    tampered[0] = (tampered[0] as number) ^ 1;
    expect(() => decryptor.decrypt(tampered)).toThrow();
    const stranger = new FrameEncryptor();
    stranger.setRatchet(new HashRatchet(new Uint8Array(16)));
    expect(() => decryptor.decrypt(stranger.encrypt(opus(30, 4)))).toThrow();
    expect([...decryptor.decrypt(third)]).toEqual([...opus(30, 3)]);
  });

  it('keeps the previous ratchet for the transition’s expiry, then only the new one decrypts', () => {
    let now = 0;
    const { encryptor, decryptor } = pair(() => now);
    const old = encryptor.encrypt(opus(10, 1));
    const next = new Uint8Array(16).fill(9);
    decryptor.transitionToRatchet(new HashRatchet(next), 10);
    const renewed = new FrameEncryptor();
    renewed.setRatchet(new HashRatchet(next));
    expect([...decryptor.decrypt(renewed.encrypt(opus(10, 2)))]).toEqual([...opus(10, 2)]);
    now = 9_000;
    expect([...decryptor.decrypt(old)]).toEqual([...opus(10, 1)]);
    now = 10_001;
    expect(() => decryptor.decrypt(encryptor.encrypt(opus(10, 3)))).toThrow();
  });

  it('passes unencrypted frames only while passthrough is on, and for its expiry after it is turned off', () => {
    let now = 0;
    const { decryptor } = pair(() => now);
    const clear = opus(12, 5);
    expect(decryptor.canPassthrough).toBe(false);
    expect(() => decryptor.decrypt(clear)).toThrow();
    decryptor.transitionToPassthrough(true, 10);
    expect(decryptor.decrypt(clear)).toBe(clear);
    decryptor.transitionToPassthrough(false, 10);
    now = 9_999;
    expect(decryptor.canPassthrough).toBe(true);
    now = 10_000;
    expect(decryptor.canPassthrough).toBe(false);
    expect(() => decryptor.decrypt(clear)).toThrow();
  });

  it('does not take a frame for DAVE without the marker, or with a supplemental size out of bounds', () => {
    expect(parseFrame(opus(20, 0))).toBeUndefined();
    const wire = pair().encryptor.encrypt(opus(20, 1));
    const bad = Uint8Array.from(wire);
    bad[bad.length - 3] = 200;
    expect(parseFrame(bad)).toBeUndefined();
    bad[bad.length - 3] = 5;
    expect(parseFrame(bad)).toBeUndefined();
  });
});
