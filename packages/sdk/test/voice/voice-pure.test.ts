import { randomBytes } from 'node:crypto';
import { VoiceEncryptionModes } from '@hearth/protocol';
import { gcm } from '@noble/ciphers/aes.js';
import sodium from 'libsodium-wrappers';
import { beforeAll, describe, expect, it } from 'vitest';
import { Mixer } from '../../src/voice/audio.js';
import { AudioModeType, type GateStep, SILENCE_FRAMES, TransmitGate } from '../../src/voice/gate.js';
import { nodeAesGcm, nodeVoiceNetwork } from '../../src/voice/node-voice.js';
import { parseRtpHeader, RtpPacketizer } from '../../src/voice/rtp.js';
import { chooseMode, TransportCipher, xchachaAead } from '../../src/voice/transport-crypto.js';
import { levelDbfs, VAD_HANGOVER_FRAMES, VoiceActivityDetector } from '../../src/voice/vad.js';
import { FRAME_LENGTH, rms, sineFrame } from './signal.js';

/**
 * The pure parts of the SDK's Call (VOICE-RPC.md §1): RTP numbering, rtpsize sealing in both modes checked
 * against independent implementations, the PTT/VAD gate, the VAD, Opus and the mixer.
 */

describe('RTP packetizer', () => {
  it('numbers frames: sequence +1 and timestamp +960, both wrapping, version 2, payload type 120', () => {
    const packetizer = new RtpPacketizer(0xdeadbeef, { sequence: 0xffff, timestamp: 0xffffffff - 959 });
    const first = packetizer.next();
    const second = packetizer.next();
    expect([...first.subarray(0, 2)]).toEqual([0x80, 0x78]);
    expect(parseRtpHeader(first)).toEqual({
      payloadType: 0x78,
      sequence: 0xffff,
      timestamp: 0xffffffff - 959,
      ssrc: 0xdeadbeef,
      aadLength: 12,
      extensionWords: 0,
    });
    expect(parseRtpHeader(second)).toMatchObject({ sequence: 0, timestamp: 0 });
  });

  it('counts CSRCs and the extension preamble into the header, and refuses what is not RTP v2', () => {
    const packet = new Uint8Array(12 + 8 + 4 + 8);
    packet[0] = 0x80 | 0x10 | 2; // X bit, two CSRCs
    packet[1] = 0x78;
    new DataView(packet.buffer).setUint16(20, 0xbede);
    new DataView(packet.buffer).setUint16(22, 2);
    expect(parseRtpHeader(packet)).toMatchObject({ aadLength: 24, extensionWords: 2 });
    expect(parseRtpHeader(packet.subarray(0, 11))).toBeUndefined();
    packet[0] = 0x40;
    expect(parseRtpHeader(packet)).toBeUndefined();
  });
});

describe('rtpsize transport encryption', () => {
  beforeAll(async () => {
    await sodium.ready;
  });
  const key = new Uint8Array(randomBytes(32));
  const header = new RtpPacketizer(1234).next();
  const payload = new TextEncoder().encode('an opus frame of some length');

  it('AES-256-GCM: header || ciphertext || tag || counter, opened by an independent AES-GCM', () => {
    const cipher = new TransportCipher(VoiceEncryptionModes.AeadAes256GcmRtpSize, key, nodeAesGcm);
    const first = cipher.seal(header, payload);
    const second = cipher.seal(header, payload);
    expect(first.length).toBe(12 + payload.length + 16 + 4);
    expect([...first.subarray(first.length - 4)]).toEqual([0, 0, 0, 0]);
    expect([...second.subarray(second.length - 4)]).toEqual([0, 0, 0, 1]);
    const iv = new Uint8Array(12);
    iv.set(second.subarray(second.length - 4), 0);
    const opened = gcm(key, iv, second.subarray(0, 12)).decrypt(second.subarray(12, second.length - 4));
    expect(new TextDecoder().decode(opened)).toBe('an opus frame of some length');
    expect(cipher.open(second)).toMatchObject({ ssrc: 1234, payload });
  });

  it('XChaCha20-Poly1305: 24-byte nonce from the counter, opened by libsodium', () => {
    const cipher = new TransportCipher(VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize, key, xchachaAead);
    cipher.seal(header, payload);
    const packet = cipher.seal(header, payload);
    const nonce = new Uint8Array(24);
    nonce.set(packet.subarray(packet.length - 4), 0);
    const opened = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      packet.subarray(12, packet.length - 4),
      packet.subarray(0, 12),
      nonce,
      key,
    );
    expect(new TextDecoder().decode(opened)).toBe('an opus frame of some length');
    expect(cipher.open(packet)?.payload).toEqual(payload);
  });

  it('drops a packet whose header, ciphertext or key differs, and strips an encrypted extension body', () => {
    for (const aead of [nodeAesGcm, xchachaAead]) {
      const mode =
        aead === nodeAesGcm
          ? VoiceEncryptionModes.AeadAes256GcmRtpSize
          : VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize;
      const cipher = new TransportCipher(mode, key, aead);
      const packet = cipher.seal(header, payload);
      const tampered = packet.slice();
      tampered[13] = (tampered[13] as number) ^ 1;
      expect(cipher.open(tampered)).toBeUndefined();
      const reheadered = packet.slice();
      reheadered[3] = (reheadered[3] as number) ^ 1;
      expect(cipher.open(reheadered)).toBeUndefined();
      expect(new TransportCipher(mode, new Uint8Array(32), aead).open(packet)).toBeUndefined();
      expect(cipher.open(packet.subarray(0, 20))).toBeUndefined();

      // X bit and a one-word extension: the preamble is AAD, the body is the front of the plaintext.
      const extended = new Uint8Array(16);
      extended.set(header, 0);
      extended[0] = 0x90;
      extended.set([0xbe, 0xde, 0, 1], 12);
      const body = new Uint8Array([1, 2, 3, 4, ...payload]);
      expect(cipher.open(cipher.seal(extended, body))?.payload).toEqual(payload);
    }
  });

  it("takes the first mode of the server's list it has a cipher for", () => {
    const both = { aead_aes256_gcm_rtpsize: nodeAesGcm, aead_xchacha20_poly1305_rtpsize: xchachaAead };
    expect(chooseMode(['aead_xchacha20_poly1305_rtpsize', 'aead_aes256_gcm_rtpsize'], both)).toBe(
      'aead_xchacha20_poly1305_rtpsize',
    );
    expect(chooseMode(['xsalsa20_poly1305', 'aead_aes256_gcm_rtpsize'], both)).toBe(
      'aead_aes256_gcm_rtpsize',
    );
    expect(chooseMode(['aead_aes256_gcm', 'xsalsa20_poly1305_lite'], both)).toBeUndefined();
  });
});

/** The decisions of `frames` steps with the given VAD verdict. */
function run(gate: TransmitGate, frames: number, voice = false): GateStep[] {
  return Array.from({ length: frames }, () => gate.step(voice));
}

const sends = (steps: GateStep[]) => steps.map((step) => step.send);

describe('the transmit gate (PTT and VAD)', () => {
  it('PTT: nothing while inactive, audio while pressed with speaking first, silence ×5 then speaking 0', () => {
    const gate = new TransmitGate();
    gate.mode = AudioModeType.MODE_PTT;
    expect(sends(run(gate, 3, true))).toEqual(['nothing', 'nothing', 'nothing']);
    gate.setPTTActive(true);
    const pressed = run(gate, 4);
    expect(pressed).toEqual([
      { send: 'audio', speaking: true },
      { send: 'audio' },
      { send: 'audio' },
      { send: 'audio' },
    ]);
    gate.setPTTActive(false);
    const released = run(gate, 7);
    expect(sends(released)).toEqual([
      'silence',
      'silence',
      'silence',
      'silence',
      'silence',
      'nothing',
      'nothing',
    ]);
    expect(released[SILENCE_FRAMES - 1]).toEqual({ send: 'silence', speaking: false });
    expect(released.slice(0, SILENCE_FRAMES - 1).every((step) => step.speaking === undefined)).toBe(true);
  });

  it('PTT release delay: audio continues for ceil(delay / 20 ms) frames, and a new press cancels the release', () => {
    const gate = new TransmitGate();
    gate.mode = AudioModeType.MODE_PTT;
    gate.releaseDelayMs = 50;
    gate.setPTTActive(true);
    run(gate, 2);
    gate.setPTTActive(false);
    expect(sends(run(gate, 9))).toEqual([
      'audio',
      'audio',
      'audio',
      'silence',
      'silence',
      'silence',
      'silence',
      'silence',
      'nothing',
    ]);
    gate.setPTTActive(true);
    run(gate, 1);
    gate.setPTTActive(false);
    run(gate, 1);
    gate.setPTTActive(true);
    expect(sends(run(gate, 5))).toEqual(['audio', 'audio', 'audio', 'audio', 'audio']);
  });

  it('VAD: follows the verdict; muting closes the stream and then sends nothing', () => {
    const gate = new TransmitGate();
    expect(run(gate, 2, true)).toEqual([{ send: 'audio', speaking: true }, { send: 'audio' }]);
    expect(sends(run(gate, 6, false))).toEqual([
      'silence',
      'silence',
      'silence',
      'silence',
      'silence',
      'nothing',
    ]);
    run(gate, 1, true);
    gate.muted = true;
    const muted = run(gate, 8, true);
    expect(sends(muted)).toEqual([
      'silence',
      'silence',
      'silence',
      'silence',
      'silence',
      'nothing',
      'nothing',
      'nothing',
    ]);
    expect(muted[4]?.speaking).toBe(false);
  });
});

describe('voice activity detection', () => {
  it('levels in dBFS: a full-scale sine is about -3, digital silence -100', () => {
    expect(levelDbfs(sineFrame(0, 32767))).toBeCloseTo(-3.01, 1);
    expect(levelDbfs(new Int16Array(FRAME_LENGTH))).toBe(-100);
  });

  it('voice above the threshold, held for the hangover, silence below', () => {
    const vad = new VoiceActivityDetector();
    const quiet = sineFrame(0, 10); // about -73 dBFS
    expect(vad.detect(quiet)).toBe(false);
    expect(vad.detect(sineFrame(0, 3000))).toBe(true); // about -24 dBFS
    const held = Array.from({ length: VAD_HANGOVER_FRAMES + 2 }, () => vad.detect(quiet));
    expect(held.filter(Boolean)).toHaveLength(VAD_HANGOVER_FRAMES);
    vad.threshold = -10;
    expect(vad.detect(sineFrame(0, 3000))).toBe(false);
  });

  it('automatic: a steady noise floor stays silent, speech well above it is voice', () => {
    const vad = new VoiceActivityDetector();
    vad.automatic = true;
    const noise = Array.from({ length: 100 }, (_, i) => vad.detect(sineFrame(i, 300))); // about -43 dBFS
    expect(noise.slice(50).some(Boolean)).toBe(false);
    expect(vad.detect(sineFrame(0, 12000))).toBe(true);
  });
});

describe('Opus (opusscript, WASM) and the mixer', () => {
  it('a sine survives encode and decode with its energy: RMS within 10 %', () => {
    const network = nodeVoiceNetwork({ dave: false });
    const encoder = network.opus();
    const decoder = network.opus();
    const sent: number[] = [];
    const heard: number[] = [];
    for (let i = 0; i < 25; i++) {
      const frame = sineFrame(i, 8000);
      sent.push(rms(frame));
      const packet = encoder.encode(frame);
      expect(packet.length).toBeGreaterThan(3);
      const pcm = decoder.decode(packet);
      expect(pcm.length).toBe(FRAME_LENGTH);
      heard.push(rms(pcm));
    }
    // The codec's look-ahead delays the first frame; from the fifth on the energy is steady.
    for (const value of heard.slice(5))
      expect(Math.abs(value - (sent[0] as number)) / (sent[0] as number)).toBeLessThan(0.1);
    encoder.close();
    decoder.close();
  });

  it('sums participants with their volume, clips instead of wrapping, and drops a backlog past five frames', () => {
    const mixer = new Mixer();
    const loud = new Int16Array(FRAME_LENGTH).fill(20000);
    mixer.push('1', loud, 100);
    mixer.push('2', loud, 200);
    const mixed = mixer.mix();
    expect(mixed?.[0]).toBe(32767);
    mixer.push('1', new Int16Array(FRAME_LENGTH).fill(1000), 50);
    expect(mixer.mix()?.[7]).toBe(500);
    expect(mixer.mix()).toBeUndefined();
    for (let i = 0; i < 8; i++) mixer.push('1', new Int16Array(FRAME_LENGTH).fill(i), 100);
    const kept = Array.from({ length: 6 }, () => mixer.mix()?.[0]);
    expect(kept).toEqual([3, 4, 5, 6, 7, undefined]);
  });
});
