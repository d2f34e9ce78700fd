/**
 * DAVE's media frames in plain TypeScript (discord/dave-protocol protocol.md, Sender Key Derivation and
 * Frame Encryption): each sender's key ratchet, and Opus frames sealed with AES-128-GCM under an 8-byte
 * truncated tag, followed by the supplemental bytes a receiver parses from the end. Synchronous, because
 * it runs once per frame on the media path; the MLS that feeds it the base secrets is in dave-ts.ts.
 */
import { DAVE_FRAME_MAGIC_MARKER } from '@hearth/protocol';
import { ctr, gcm } from '@noble/ciphers/aes.js';
import { expand } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';

const KEY_BYTES = 16;
const AEAD_NONCE_BYTES = 12;
const HASH_BYTES = 32;
const TAG_BYTES = 8;
/** The 32-bit truncated nonce sits at the end of the 12-byte AES-GCM nonce, little-endian. */
const TRUNCATED_NONCE_OFFSET = AEAD_NONCE_BYTES - 4;
/** The ratchet generation is the nonce's most significant byte, so it wraps every 256 generations. */
const GENERATION_SHIFT = 24;
const GENERATION_WRAP = 1 << 8;
/** How far ahead of the newest generation seen a frame may claim to be (as libdave). */
const MAX_GENERATION_GAP = 250;
/** How many skipped nonces a receiver remembers, so late frames decrypt once and replays never. */
const MAX_MISSING_NONCES = 1000;
/** Tag, supplemental size byte and the two marker bytes: what every frame adds besides nonce and ranges. */
const FIXED_SUPPLEMENTAL_BYTES = TAG_BYTES + 1 + 2;
const LABEL_PREFIX = 'MLS 1.0 ';

const utf8 = new TextEncoder();

/** An MLS variable-length vector prefix (RFC 9420 §2.1.2) for the short vectors of a KDFLabel. */
function mlsVarint(length: number): Uint8Array {
  if (length < 0x40) return Uint8Array.of(length);
  return Uint8Array.of(0x40 | (length >> 8), length & 0xff);
}

/** RFC 9420 DeriveTreeSecret: ExpandWithLabel(secret, label, generation as a big-endian u32, length). */
export function deriveTreeSecret(
  secret: Uint8Array,
  label: string,
  generation: number,
  length: number,
): Uint8Array {
  const fullLabel = utf8.encode(LABEL_PREFIX + label);
  const labelLength = mlsVarint(fullLabel.length);
  const info = new Uint8Array(2 + labelLength.length + fullLabel.length + 1 + 4);
  const view = new DataView(info.buffer);
  view.setUint16(0, length);
  info.set(labelLength, 2);
  info.set(fullLabel, 2 + labelLength.length);
  let at = 2 + labelLength.length + fullLabel.length;
  info[at++] = 4;
  view.setUint32(at, generation >>> 0);
  return expand(sha256, secret, info, length);
}

/** A sender's keys by generation, derived forward from the base secret as an MLS secret-tree leaf's are. */
export class HashRatchet {
  #secret: Uint8Array;
  #next = 0;
  readonly #keys = new Map<number, Uint8Array>();

  constructor(baseSecret: Uint8Array) {
    this.#secret = baseSecret;
  }

  /** The key of a generation, or undefined once that generation was erased. */
  key(generation: number): Uint8Array | undefined {
    const cached = this.#keys.get(generation);
    if (cached || generation < this.#next) return cached;
    while (this.#next <= generation) {
      const current = this.#next;
      this.#keys.set(current, deriveTreeSecret(this.#secret, 'key', current, KEY_BYTES));
      this.#secret = deriveTreeSecret(this.#secret, 'secret', current, HASH_BYTES);
      this.#next++;
    }
    return this.#keys.get(generation);
  }

  /** Forgets the keys of generations before this one (forward secrecy for past frames). */
  eraseBefore(generation: number): void {
    for (const kept of this.#keys.keys()) if (kept < generation) this.#keys.delete(kept);
  }
}

/** The full generation of a truncated one, assuming it is not older than `oldest` (as libdave). */
function wrappedGeneration(oldest: number, truncated: number): number {
  const remainder = oldest % GENERATION_WRAP;
  const factor = Math.floor(oldest / GENERATION_WRAP) + (truncated < remainder ? 1 : 0);
  return factor * GENERATION_WRAP + truncated;
}

function aeadNonce(truncatedNonce: number): Uint8Array {
  const nonce = new Uint8Array(AEAD_NONCE_BYTES);
  new DataView(nonce.buffer).setUint32(TRUNCATED_NONCE_OFFSET, truncatedNonce, true);
  return nonce;
}

function writeLeb128(value: number, out: Uint8Array, at: number): number {
  let rest = value >>> 0;
  let i = at;
  while (rest >= 0x80) {
    out[i++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  out[i++] = rest;
  return i - at;
}

function leb128Size(value: number): number {
  let size = 1;
  for (let rest = value >>> 0; rest >= 0x80; rest >>>= 7) size++;
  return size;
}

/** Reads a ULEB128 value below 2^32 between `at` and `end`; undefined when it overruns either. */
function readLeb128(bytes: Uint8Array, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let i = at, shift = 0; i < end && shift < 35; i++, shift += 7) {
    const byte = bytes[i] as number;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return value > 0xffff_ffff ? undefined : { value, next: i + 1 };
  }
  return undefined;
}

/** Encrypts one sender's frames: a nonce counter whose top byte selects the ratchet generation. */
export class FrameEncryptor {
  #ratchet: HashRatchet | undefined;
  #nonce = 0;
  #generation = 0;
  #key: Uint8Array | undefined;

  setRatchet(ratchet: HashRatchet): void {
    this.#ratchet = ratchet;
    this.#nonce = 0;
    this.#generation = 0;
    this.#key = undefined;
  }

  /** `ciphertext || 8-byte tag || ULEB128 nonce || (no unencrypted ranges) || supplemental size || 0xFAFA`. */
  encrypt(frame: Uint8Array): Uint8Array {
    const ratchet = this.#ratchet;
    if (!ratchet) throw new Error('DAVE encryptor has no key ratchet');
    this.#nonce = (this.#nonce + 1) >>> 0;
    const generation = wrappedGeneration(this.#generation, this.#nonce >>> GENERATION_SHIFT);
    if (generation !== this.#generation || !this.#key) {
      this.#generation = generation;
      this.#key = ratchet.key(generation);
      ratchet.eraseBefore(generation);
    }
    const sealed = gcm(this.#key as Uint8Array, aeadNonce(this.#nonce)).encrypt(frame);
    const nonceSize = leb128Size(this.#nonce);
    const supplemental = FIXED_SUPPLEMENTAL_BYTES + nonceSize;
    const out = new Uint8Array(frame.length + supplemental);
    out.set(sealed.subarray(0, frame.length + TAG_BYTES), 0);
    let at = frame.length + TAG_BYTES;
    at += writeLeb128(this.#nonce, out, at);
    out[at++] = supplemental;
    out[at++] = DAVE_FRAME_MAGIC_MARKER >> 8;
    out[at] = DAVE_FRAME_MAGIC_MARKER & 0xff;
    return out;
  }
}

/** A received frame split into its parts; undefined when it is not a DAVE frame. */
export interface ParsedFrame {
  tag: Uint8Array;
  truncatedNonce: number;
  /** The bytes sent in clear (authenticated only), in order; empty for Opus. */
  authenticated: Uint8Array;
  ciphertext: Uint8Array;
  /** Where each encrypted and unencrypted run goes back, to rebuild the frame. */
  ranges: Array<{ offset: number; size: number }>;
}

export function parseFrame(frame: Uint8Array): ParsedFrame | undefined {
  const n = frame.length;
  if (n < FIXED_SUPPLEMENTAL_BYTES) return undefined;
  if (((frame[n - 2] as number) << 8) + (frame[n - 1] as number) !== DAVE_FRAME_MAGIC_MARKER)
    return undefined;
  const supplemental = frame[n - 3] as number;
  if (supplemental < FIXED_SUPPLEMENTAL_BYTES || supplemental > n) return undefined;
  const tagAt = n - supplemental;
  const end = n - 3;
  const nonce = readLeb128(frame, tagAt + TAG_BYTES, end);
  if (!nonce) return undefined;
  const ranges: Array<{ offset: number; size: number }> = [];
  for (let at = nonce.next; at < end; ) {
    const offset = readLeb128(frame, at, end);
    const size = offset && readLeb128(frame, offset.next, end);
    if (!offset || !size) return undefined;
    ranges.push({ offset: offset.value, size: size.value });
    at = size.next;
  }
  const body = frame.subarray(0, tagAt);
  const clear: Uint8Array[] = [];
  const secret: Uint8Array[] = [];
  let index = 0;
  for (const [i, range] of ranges.entries()) {
    const limit = i + 1 < ranges.length ? (ranges[i + 1] as { offset: number }).offset : body.length;
    if (range.offset < index || range.offset + range.size > limit) return undefined;
    secret.push(body.subarray(index, range.offset));
    clear.push(body.subarray(range.offset, range.offset + range.size));
    index = range.offset + range.size;
  }
  secret.push(body.subarray(index));
  return {
    tag: frame.subarray(tagAt, tagAt + TAG_BYTES),
    truncatedNonce: nonce.value,
    authenticated: concat(clear),
    ciphertext: concat(secret),
    ranges,
  };
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Puts the decrypted runs and the clear ranges back in their places. */
function rebuild(parsed: ParsedFrame, plaintext: Uint8Array): Uint8Array {
  if (parsed.ranges.length === 0) return plaintext;
  const out = new Uint8Array(plaintext.length + parsed.authenticated.length);
  let frameAt = 0;
  let plainAt = 0;
  let clearAt = 0;
  for (const range of parsed.ranges) {
    const run = range.offset - frameAt;
    out.set(plaintext.subarray(plainAt, plainAt + run), frameAt);
    plainAt += run;
    out.set(parsed.authenticated.subarray(clearAt, clearAt + range.size), range.offset);
    clearAt += range.size;
    frameAt = range.offset + range.size;
  }
  out.set(plaintext.subarray(plainAt), frameAt);
  return out;
}

/**
 * AES-128-GCM open with a tag truncated to 8 bytes: CTR mode from the counter after J0 gives the plaintext,
 * and sealing it again gives the full tag to compare (GCM itself only checks 16-byte tags).
 */
function openTruncated(key: Uint8Array, nonce: Uint8Array, parsed: ParsedFrame): Uint8Array | undefined {
  const counter = new Uint8Array(16);
  counter.set(nonce, 0);
  counter[15] = 2;
  const plaintext = ctr(key, counter).decrypt(parsed.ciphertext);
  const sealed = gcm(key, nonce, parsed.authenticated).encrypt(plaintext);
  let diff = 0;
  for (let i = 0; i < TAG_BYTES; i++)
    diff |= (sealed[plaintext.length + i] as number) ^ (parsed.tag[i] as number);
  return diff === 0 ? plaintext : undefined;
}

/** One key ratchet a sender may still use, with the nonces already seen under it. */
class RatchetWindow {
  expiresAt = Number.POSITIVE_INFINITY;
  #oldest = 0;
  #newest = 0;
  #newestNonce: number | undefined;
  readonly #missing = new Set<number>();

  constructor(readonly ratchet: HashRatchet) {}

  open(parsed: ParsedFrame): Uint8Array | undefined {
    const generation = wrappedGeneration(this.#oldest, parsed.truncatedNonce >>> GENERATION_SHIFT);
    if (generation > this.#newest + MAX_GENERATION_GAP) return undefined;
    const big = generation * 2 ** GENERATION_SHIFT + (parsed.truncatedNonce & 0xff_ffff);
    if (this.#newestNonce !== undefined && big <= this.#newestNonce && !this.#missing.has(big))
      return undefined;
    const key = this.ratchet.key(generation);
    if (!key) return undefined;
    const plaintext = openTruncated(key, aeadNonce(parsed.truncatedNonce), parsed);
    if (plaintext) this.#seen(generation, big);
    return plaintext;
  }

  #seen(generation: number, big: number): void {
    if (this.#newestNonce === undefined || big > this.#newestNonce) {
      const from = Math.max(big - MAX_MISSING_NONCES, (this.#newestNonce ?? big) + 1);
      for (let nonce = from; nonce < big; nonce++) this.#missing.add(nonce);
      for (const nonce of this.#missing) if (nonce < big - MAX_MISSING_NONCES) this.#missing.delete(nonce);
      this.#newestNonce = big;
    } else {
      this.#missing.delete(big);
    }
    if (generation > this.#newest) {
      // Late frames of the previous generation may still come; older keys are gone.
      this.#newest = generation;
      this.#oldest = Math.max(this.#oldest, generation - 1);
      this.ratchet.eraseBefore(this.#oldest);
    }
  }
}

/**
 * Decrypts one sender's frames: the newest ratchet first, older ones until their transition expires,
 * and unencrypted frames only while passthrough is allowed.
 */
export class FrameDecryptor {
  readonly #windows: RatchetWindow[] = [];
  #passthroughUntil = Number.NEGATIVE_INFINITY;

  constructor(private readonly now: () => number) {}

  transitionToRatchet(ratchet: HashRatchet, expirySeconds: number): void {
    const expiresAt = this.now() + expirySeconds * 1000;
    for (const window of this.#windows) window.expiresAt = Math.min(window.expiresAt, expiresAt);
    this.#windows.push(new RatchetWindow(ratchet));
  }

  transitionToPassthrough(passthrough: boolean, expirySeconds: number): void {
    this.#passthroughUntil = passthrough
      ? Number.POSITIVE_INFINITY
      : Math.min(this.#passthroughUntil, this.now() + expirySeconds * 1000);
  }

  get canPassthrough(): boolean {
    return this.#passthroughUntil > this.now();
  }

  decrypt(frame: Uint8Array): Uint8Array {
    const now = this.now();
    while (this.#windows.length > 0 && (this.#windows[0] as RatchetWindow).expiresAt < now)
      this.#windows.shift();
    const parsed = parseFrame(frame);
    if (!parsed) {
      if (this.#passthroughUntil > now) return frame;
      throw new Error('DAVE frame expected, and passthrough is off');
    }
    for (let i = this.#windows.length - 1; i >= 0; i--) {
      const plaintext = (this.#windows[i] as RatchetWindow).open(parsed);
      if (plaintext) return rebuild(parsed, plaintext);
    }
    throw new Error('DAVE frame did not decrypt with any key ratchet');
  }
}
