/**
 * The voice network on Node: `ws` for the voice gateway, `node:dgram` for media, `node:crypto` for
 * AES-256-GCM, `@noble/ciphers` for XChaCha20-Poly1305, `opusscript` (WASM) for Opus and `@snazzah/davey`
 * for DAVE, or the plain TypeScript DAVE on `ts-mls` where davey's native addon does not load. Only the Node
 * entry imports this file.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { VoiceEncryptionModes } from '@hearth/protocol';
import type * as Davey from '@snazzah/davey';
import OpusScript from 'opusscript';
import { WebSocket } from 'ws';
import { FRAME_SAMPLES } from './audio.js';
import type { DaveProvider, DaveSessionLike } from './dave.js';
import { tsMlsDave } from './dave-ts.js';
import type { OpusCodec, UdpSocketLike, VoiceNetwork, VoiceSocketLike } from './network.js';
import { type Aead, xchachaAead } from './transport-crypto.js';

/** AES-256-GCM through OpenSSL: the fastest of the two modes on Node. */
export const nodeAesGcm: Aead = {
  nonceSize: 12,
  seal(key, nonce, plaintext, aad) {
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(aad);
    const head = cipher.update(plaintext);
    const tail = cipher.final();
    const tag = cipher.getAuthTag();
    const out = new Uint8Array(head.length + tail.length + tag.length);
    out.set(head, 0);
    out.set(tail, head.length);
    out.set(tag, head.length + tail.length);
    return out;
  },
  open(key, nonce, sealed, aad) {
    if (sealed.length < 16) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAAD(aad);
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      const head = decipher.update(sealed.subarray(0, sealed.length - 16));
      const tail = decipher.final();
      return tail.length === 0 ? new Uint8Array(head) : new Uint8Array(Buffer.concat([head, tail]));
    } catch {
      return undefined;
    }
  },
};

/** An Opus encoder or decoder at 48 kHz stereo (VOIP tuning) on the WASM libopus of `opusscript`. */
function opusCodec(): OpusCodec {
  const codec = new OpusScript(48_000, 2, OpusScript.Application.VOIP);
  return {
    encode(pcm) {
      const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      return new Uint8Array(codec.encode(bytes, FRAME_SAMPLES));
    },
    decode(packet) {
      const pcm = codec.decode(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
      // A copy on a fresh buffer: aligned for Int16Array, and not a view of the codec's memory.
      return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
    },
    close() {
      codec.delete();
    },
  };
}

/** The native addon, loaded on first use: bundlers leave it alone and calls without DAVE never load it. */
let daveyModule: typeof Davey | undefined;
function davey(): typeof Davey {
  daveyModule ??= createRequire(import.meta.url)('@snazzah/davey') as typeof Davey;
  return daveyModule;
}

/** Whether davey's addon loads on this platform (it ships prebuilt for some platforms only). */
function daveyLoads(): boolean {
  try {
    davey();
    return true;
  } catch {
    return false;
  }
}

/** DAVE through `@snazzah/davey` (openmls, prebuilt for this platform). */
const daveyProvider: DaveProvider = {
  get maxProtocolVersion() {
    return davey().DAVE_PROTOCOL_VERSION;
  },
  create(protocolVersion, userId, channelId): DaveSessionLike {
    const session = new (davey().DAVESession)(protocolVersion, userId, channelId);
    const buffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return {
      get ready() {
        return session.ready;
      },
      reinit: (version, user, channel) => session.reinit(version, user, channel),
      reset: () => session.reset(),
      setExternalSender: (data) => session.setExternalSender(buffer(data)),
      getSerializedKeyPackage: () => session.getSerializedKeyPackage(),
      processProposals: (operation, proposals, recognized) =>
        session.processProposals(operation, buffer(proposals), recognized),
      processWelcome: (welcome) => session.processWelcome(buffer(welcome)),
      processCommit: (commit) => session.processCommit(buffer(commit)),
      encryptOpus: (frame) => session.encryptOpus(buffer(frame)),
      decryptOpus: (user, frame) => session.decrypt(user, 0, buffer(frame)),
      canPassthrough: (user) => session.canPassthrough(user),
      setPassthroughMode: (passthrough, expiry) => session.setPassthroughMode(passthrough, expiry),
    };
  },
};

/** A UDP socket talking to one address; IPv4 or IPv6 from the address itself. */
function openUdp(host: string, port: number): Promise<UdpSocketLike> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(isIP(host) === 6 ? 'udp6' : 'udp4');
    socket.once('error', reject);
    socket.bind(0, () => {
      socket.off('error', reject);
      // Late errors (an unreachable port) are not fatal: the heartbeat notices a dead server.
      socket.on('error', () => undefined);
      resolve({
        send: (packet) => socket.send(packet, port, host),
        onMessage: (listener) => {
          socket.on('message', (message) => listener(new Uint8Array(message)));
        },
        close: () => {
          try {
            socket.close();
          } catch {
            // Already closed.
          }
        },
      });
    });
  });
}

export interface NodeVoiceOptions {
  /** Extra trusted certificates (PEM) for a voice gateway with a private CA; else NODE_EXTRA_CA_CERTS applies. */
  ca?: string | undefined;
  /**
   * DAVE (end-to-end encryption): `@snazzah/davey` by default, or `ts-mls` where its addon does not load;
   * 'ts-mls' asks for the plain TypeScript one; false offers none.
   */
  dave?: boolean | 'ts-mls' | undefined;
}

/** Chosen on first use, so that calls without DAVE never load the addon. */
function nodeDave(typescript: boolean): DaveProvider {
  let chosen: DaveProvider | undefined;
  const pick = () => {
    chosen ??= !typescript && daveyLoads() ? daveyProvider : tsMlsDave();
    return chosen;
  };
  return {
    get maxProtocolVersion() {
      return pick().maxProtocolVersion;
    },
    create: (protocolVersion, userId, channelId) => pick().create(protocolVersion, userId, channelId),
  };
}

/** The voice network of the Node entry. */
export function nodeVoiceNetwork(options: NodeVoiceOptions = {}): VoiceNetwork {
  return {
    openSocket(url): VoiceSocketLike {
      const socket = new WebSocket(url, options.ca ? { ca: options.ca } : {});
      return socket as unknown as VoiceSocketLike;
    },
    openUdp,
    ciphers: {
      [VoiceEncryptionModes.AeadAes256GcmRtpSize]: nodeAesGcm,
      [VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize]: xchachaAead,
    },
    opus: opusCodec,
    ...(options.dave === false ? {} : { dave: nodeDave(options.dave === 'ts-mls') }),
  };
}
