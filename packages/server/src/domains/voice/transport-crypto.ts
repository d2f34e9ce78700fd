import { createCipheriv, createDecipheriv } from 'node:crypto';
import { Rtp, type VoiceEncryptionMode, VoiceEncryptionModes } from '@hearth/protocol';
import sodium from 'libsodium-wrappers';

/**
 * rtpsize transport encryption (PROTOCOL.md §G.5): `header ‖ ciphertext ‖ tag(16) ‖ nonce(4, u32 BE)`, the
 * unencrypted header as AAD, the nonce counter at the front of a zeroed 12-byte (AES-GCM) or 24-byte
 * (XChaCha20) nonce. `open` answers the plaintext (extension body included) or undefined when it fails.
 */
export interface TransportCipher {
  open(packet: Buffer, headerBytes: number): Buffer | undefined;
  seal(header: Buffer, plaintext: Buffer, counter: number): Buffer;
}

/** libsodium's WebAssembly must be loaded once before an XChaCha20 cipher is made. */
export const transportCryptoReady: Promise<void> = sodium.ready;

export function transportCipher(mode: VoiceEncryptionMode, key: Uint8Array): TransportCipher {
  return mode === VoiceEncryptionModes.AeadAes256GcmRtpSize ? aesGcm(key) : xchacha(key);
}

const TRAILER = Rtp.TagBytes + Rtp.NonceBytes;

function aesGcm(key: Uint8Array): TransportCipher {
  const iv = Buffer.alloc(12);
  return {
    open(packet, headerBytes) {
      if (packet.length < headerBytes + TRAILER) return undefined;
      const end = packet.length - TRAILER;
      packet.copy(iv, 0, packet.length - Rtp.NonceBytes);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(packet.subarray(0, headerBytes));
        decipher.setAuthTag(packet.subarray(end, end + Rtp.TagBytes));
        const first = decipher.update(packet.subarray(headerBytes, end));
        const last = decipher.final();
        return last.length === 0 ? first : Buffer.concat([first, last]);
      } catch {
        return undefined;
      }
    },
    seal(header, plaintext, counter) {
      const out = Buffer.allocUnsafe(header.length + plaintext.length + TRAILER);
      header.copy(out, 0);
      iv.fill(0);
      iv.writeUInt32BE(counter, 0);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(header);
      const body = cipher.update(plaintext);
      cipher.final();
      body.copy(out, header.length);
      cipher.getAuthTag().copy(out, header.length + plaintext.length);
      out.writeUInt32BE(counter, out.length - Rtp.NonceBytes);
      return out;
    },
  };
}

function xchacha(key: Uint8Array): TransportCipher {
  const nonce = new Uint8Array(24);
  const nonceView = new DataView(nonce.buffer);
  return {
    open(packet, headerBytes) {
      if (packet.length < headerBytes + TRAILER) return undefined;
      nonce.fill(0);
      nonce.set(packet.subarray(packet.length - Rtp.NonceBytes), 0);
      try {
        const plain = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
          null,
          packet.subarray(headerBytes, packet.length - Rtp.NonceBytes),
          packet.subarray(0, headerBytes),
          nonce,
          key,
        );
        return Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
      } catch {
        return undefined;
      }
    },
    seal(header, plaintext, counter) {
      nonce.fill(0);
      nonceView.setUint32(0, counter);
      const sealed = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, header, null, nonce, key);
      const out = Buffer.allocUnsafe(header.length + sealed.length + Rtp.NonceBytes);
      header.copy(out, 0);
      out.set(sealed, header.length);
      out.writeUInt32BE(counter, out.length - Rtp.NonceBytes);
      return out;
    },
  };
}
