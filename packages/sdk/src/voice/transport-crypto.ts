/**
 * Transport encryption of voice packets in the two rtpsize modes the platform supports (seed, Versioning):
 * `header || ciphertext || tag(16) || nonce(4)`, the header (with CSRCs and extension preamble) as AAD,
 * the extension body encrypted at the front of the plaintext (VOICE-RPC.md §1 UDP media).
 */
import {
  Rtp,
  VOICE_ENCRYPTION_MODES,
  VOICE_SECRET_KEY_BYTES,
  type VoiceEncryptionMode,
} from '@hearth/protocol';
import { gcm } from '@noble/ciphers/aes.js';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { parseRtpHeader } from './rtp.js';

export type TransportMode = VoiceEncryptionMode;

const TAG_SIZE = Rtp.TagBytes;
const NONCE_SUFFIX_SIZE = Rtp.NonceBytes;

/** One AEAD primitive: seal gives ciphertext || tag; open gives undefined when authentication fails. */
export interface Aead {
  readonly nonceSize: number;
  seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array;
  open(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined;
}

/** XChaCha20-Poly1305 in JavaScript (`@noble/ciphers`): the same code in Node and browsers. */
export const xchachaAead: Aead = {
  nonceSize: 24,
  seal: (key, nonce, plaintext, aad) => xchacha20poly1305(key, nonce, aad).encrypt(plaintext),
  open: (key, nonce, sealed, aad) => {
    try {
      return xchacha20poly1305(key, nonce, aad).decrypt(sealed);
    } catch {
      return undefined;
    }
  },
};

/** AES-256-GCM in JavaScript (`@noble/ciphers`), where OpenSSL is not at hand (browsers: WebCrypto is async only). */
export const nobleAesGcm: Aead = {
  nonceSize: 12,
  seal: (key, nonce, plaintext, aad) => gcm(key, nonce, aad).encrypt(plaintext),
  open: (key, nonce, sealed, aad) => {
    try {
      return gcm(key, nonce, aad).decrypt(sealed);
    } catch {
      return undefined;
    }
  },
};

/** The first mode of the server's list that this client has a cipher for (the server's order decides). */
export function chooseMode(
  offered: readonly string[],
  ciphers: Partial<Record<TransportMode, Aead>>,
): TransportMode | undefined {
  for (const mode of offered) {
    if ((VOICE_ENCRYPTION_MODES as readonly string[]).includes(mode) && ciphers[mode as TransportMode]) {
      return mode as TransportMode;
    }
  }
  return undefined;
}

/**
 * Seals and opens packets for one session key. Every sealed packet takes the next 32-bit counter as its
 * nonce; a reused nonce under one key would break both AEADs.
 */
export class TransportCipher {
  #counter = 0;

  constructor(
    readonly mode: TransportMode,
    private readonly key: Uint8Array,
    private readonly aead: Aead,
  ) {
    if (key.length !== VOICE_SECRET_KEY_BYTES) throw new RangeError('the session key must be 32 bytes');
  }

  #nonce(suffix: Uint8Array): Uint8Array {
    const nonce = new Uint8Array(this.aead.nonceSize);
    nonce.set(suffix, 0);
    return nonce;
  }

  /** A whole UDP packet: the RTP header in clear (AAD), the sealed payload, the 4-byte counter. */
  seal(header: Uint8Array, payload: Uint8Array): Uint8Array {
    const suffix = new Uint8Array(NONCE_SUFFIX_SIZE);
    new DataView(suffix.buffer).setUint32(0, this.#counter);
    this.#counter = (this.#counter + 1) >>> 0;
    const sealed = this.aead.seal(this.key, this.#nonce(suffix), payload, header);
    const packet = new Uint8Array(header.length + sealed.length + NONCE_SUFFIX_SIZE);
    packet.set(header, 0);
    packet.set(sealed, header.length);
    packet.set(suffix, header.length + sealed.length);
    return packet;
  }

  /**
   * The payload of a received packet with any extension body removed, or undefined when the packet is not
   * RTP, is too short, or fails authentication (dropped, never decoded).
   */
  open(packet: Uint8Array): { payload: Uint8Array; ssrc: number; sequence: number } | undefined {
    const header = parseRtpHeader(packet);
    if (!header || packet.length < header.aadLength + TAG_SIZE + NONCE_SUFFIX_SIZE) return undefined;
    const suffix = packet.subarray(packet.length - NONCE_SUFFIX_SIZE);
    const sealed = packet.subarray(header.aadLength, packet.length - NONCE_SUFFIX_SIZE);
    const plain = this.aead.open(this.key, this.#nonce(suffix), sealed, packet.subarray(0, header.aadLength));
    if (!plain) return undefined;
    const skip = header.extensionWords * 4;
    if (plain.length < skip) return undefined;
    return { payload: plain.subarray(skip), ssrc: header.ssrc, sequence: header.sequence };
  }
}
