/**
 * The voice network of the browser entry. Browsers have no UDP socket, so the call's datagrams travel over
 * one WebRTC data channel, unreliable and unordered (`ordered: false, maxRetransmits: 0`), signalled
 * through the voice gateway (op 1 `webrtc_datachannel` with the SDP offer, op 4 with the answer). The
 * datagrams are the UDP path's own: IP discovery, rtpsize-encrypted RTP. Opus is `opusscript`'s WASM
 * libopus; the ciphers are `@noble/ciphers` (WebCrypto has no synchronous AEAD). DAVE is the plain
 * TypeScript provider on `ts-mls` (dave-ts.ts), so browser calls are end-to-end encrypted like Node's.
 */
import { VoiceEncryptionModes, VoiceProtocols } from '@hearth/protocol';
import createOpusModule, { type OpusNativeModule } from 'opusscript/build/opusscript_native_wasm.js';
import { CHANNELS, FRAME_SAMPLES } from './audio.js';
import type { DaveProvider } from './dave.js';
import { tsMlsDave } from './dave-ts.js';
import type { OpusCodec, UdpSocketLike, VoiceNetwork, VoiceSocketLike } from './network.js';
import { nobleAesGcm, xchachaAead } from './transport-crypto.js';

/** The label of the media data channel (the server takes the connection's first channel, whatever its label). */
const DATA_CHANNEL_LABEL = 'voice';
/** libopus' VOIP application, as the Node codec uses. */
const OPUS_APPLICATION_VOIP = 2048;
/** Largest Opus packet (libopus: 1275 bytes per frame, three frames). */
const MAX_PACKET_BYTES = 1276 * 3;
/** Largest decoded frame: 60 ms at 48 kHz. */
const MAX_FRAME_SAMPLES = 2880;

export interface BrowserVoiceOptions {
  /**
   * The WASM libopus of `opusscript` (`opusscript/build/opusscript_native_wasm.wasm`): its bytes, or the URL
   * to fetch them from. Default: `opusscript_native_wasm.wasm` beside the page.
   */
  opusWasm?: ArrayBuffer | Uint8Array | string | undefined;
  /** ICE servers; none by default: the voice node answers with its own host candidates. */
  iceServers?: { urls: string | string[]; username?: string; credential?: string }[] | undefined;
  /** The DAVE implementation: `tsMlsDave()` by default; false offers none (refused with 4017 from 1 March 2026). */
  dave?: DaveProvider | false | undefined;
}

// The few WebRTC and WebSocket shapes used here (the SDK compiles without the DOM library).
interface BrowserDataChannel {
  readonly readyState: string;
  binaryType: string;
  send(data: Uint8Array): void;
  close(): void;
  addEventListener(type: 'open' | 'close', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
}
interface BrowserPeerConnection {
  readonly iceGatheringState: string;
  readonly localDescription: { sdp: string } | null;
  readonly connectionState: string;
  createDataChannel(label: string, init: { ordered: boolean; maxRetransmits: number }): BrowserDataChannel;
  createOffer(): Promise<{ type: string; sdp?: string }>;
  setLocalDescription(description: { type: string; sdp?: string }): Promise<void>;
  setRemoteDescription(description: { type: 'answer'; sdp: string }): Promise<void>;
  addEventListener(type: 'icegatheringstatechange' | 'connectionstatechange', listener: () => void): void;
  close(): void;
}
interface BrowserGlobals {
  RTCPeerConnection?: new (config: {
    iceServers: NonNullable<BrowserVoiceOptions['iceServers']>;
  }) => BrowserPeerConnection;
  WebSocket?: new (url: string) => VoiceSocketLike & { binaryType: string };
  fetch?: (url: string) => Promise<{ ok: boolean; status: number; arrayBuffer(): Promise<ArrayBuffer> }>;
  document?: { baseURI: string };
}
const browser = globalThis as unknown as BrowserGlobals;

/** The voice network of browsers; `StartCall` uses it unless the game passes its own. */
export function browserVoiceNetwork(options: BrowserVoiceOptions = {}): VoiceNetwork {
  let opus: Promise<OpusNativeModule> | undefined;
  let loaded: OpusNativeModule | undefined;
  const loadOpus = async (): Promise<OpusNativeModule> => {
    opus ??= opusBytes(options.opusWasm).then((wasmBinary) => createOpusModule({ wasmBinary }));
    loaded = await opus;
    return loaded;
  };
  return {
    openSocket(url): VoiceSocketLike {
      const WebSocketClass = browser.WebSocket;
      if (!WebSocketClass) throw new Error('this browser has no WebSocket');
      const socket = new WebSocketClass(url);
      socket.binaryType = 'arraybuffer';
      return socket;
    },
    async openUdp(): Promise<UdpSocketLike> {
      // Opus is needed from the first frame on: the codec loads while the connection is signalled.
      await loadOpus();
      return openDataChannel(options.iceServers ?? []);
    },
    ciphers: {
      [VoiceEncryptionModes.AeadAes256GcmRtpSize]: nobleAesGcm,
      [VoiceEncryptionModes.AeadXChaCha20Poly1305RtpSize]: xchachaAead,
    },
    opus(): OpusCodec {
      if (!loaded) throw new Error('the Opus codec is not loaded yet');
      return opusCodec(loaded);
    },
    ...(options.dave === false ? {} : { dave: options.dave ?? tsMlsDave() }),
  };
}

async function opusBytes(source: BrowserVoiceOptions['opusWasm']): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source;
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  const url = new URL(source ?? 'opusscript_native_wasm.wasm', browser.document?.baseURI).href;
  if (!browser.fetch) throw new Error('no fetch to load the Opus codec');
  const response = await browser.fetch(url);
  if (!response.ok) throw new Error(`the Opus codec could not be loaded from ${url}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * An encoder or decoder on the WASM libopus, driven as `opusscript`'s own wrapper drives it (its heap views
 * hold one value per element, as the wrapper writes and reads them).
 */
function opusCodec(native: OpusNativeModule): OpusCodec {
  const handler = new native.OpusScriptHandler(48_000, CHANNELS, OPUS_APPLICATION_VOIP);
  const pcmLength = MAX_FRAME_SAMPLES * CHANNELS * 2;
  const inPcmPointer = native._malloc(pcmLength);
  const inOpusPointer = native._malloc(MAX_PACKET_BYTES);
  const outOpusPointer = native._malloc(MAX_PACKET_BYTES);
  const outPcmPointer = native._malloc(pcmLength);
  const inPcm = native.HEAPU16.subarray(inPcmPointer, inPcmPointer + pcmLength);
  const inOpus = native.HEAPU8.subarray(inOpusPointer, inOpusPointer + MAX_PACKET_BYTES);
  const outOpus = native.HEAPU8.subarray(outOpusPointer, outOpusPointer + MAX_PACKET_BYTES);
  const outPcm = native.HEAPU16.subarray(outPcmPointer, outPcmPointer + pcmLength);
  return {
    encode(pcm) {
      const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      inPcm.set(bytes);
      const length = handler._encode(inPcm.byteOffset, bytes.length, outOpusPointer, FRAME_SAMPLES);
      if (length < 0) throw new Error(`Opus encode error ${length}`);
      return outOpus.slice(0, length);
    },
    decode(packet) {
      inOpus.set(packet);
      const samples = handler._decode(inOpusPointer, packet.length, outPcm.byteOffset);
      if (samples < 0) throw new Error(`Opus decode error ${samples}`);
      const bytes = Uint8Array.from(outPcm.subarray(0, samples * CHANNELS * 2));
      return new Int16Array(bytes.buffer);
    },
    close() {
      native.OpusScriptHandler.destroy_handler(handler);
      for (const pointer of [inPcmPointer, inOpusPointer, outOpusPointer, outPcmPointer])
        native._free(pointer);
    },
  };
}

/**
 * A peer connection with one unreliable, unordered data channel, as a UDP socket: `signalling` gives op 1
 * its offer and takes op 4's answer; datagrams sent before the channel opens are lost, as on UDP.
 */
function openDataChannel(iceServers: NonNullable<BrowserVoiceOptions['iceServers']>): UdpSocketLike {
  const PeerConnection = browser.RTCPeerConnection;
  if (!PeerConnection) throw new Error('this browser has no RTCPeerConnection');
  const peer = new PeerConnection({ iceServers });
  const channel = peer.createDataChannel(DATA_CHANNEL_LABEL, { ordered: false, maxRetransmits: 0 });
  channel.binaryType = 'arraybuffer';
  const opened = new Promise<void>((resolve, reject) => {
    channel.addEventListener('open', () => resolve());
    channel.addEventListener('close', () => reject(new Error('the data channel closed')));
    peer.addEventListener('connectionstatechange', () => {
      if (peer.connectionState === 'failed') reject(new Error('the WebRTC connection failed'));
    });
  });
  opened.catch(() => undefined);
  return {
    send(packet) {
      if (channel.readyState === 'open') channel.send(packet);
    },
    onMessage(listener) {
      channel.addEventListener('message', (event) => {
        if (event.data instanceof ArrayBuffer) listener(new Uint8Array(event.data));
      });
    },
    close() {
      channel.close();
      peer.close();
    },
    signalling: {
      protocol: VoiceProtocols.WebRtcDataChannel,
      async offer() {
        await peer.setLocalDescription(await peer.createOffer());
        // The whole offer at once (no trickle over the voice gateway): wait for the host candidates.
        if (peer.iceGatheringState !== 'complete') {
          await new Promise<void>((resolve) => {
            peer.addEventListener('icegatheringstatechange', () => {
              if (peer.iceGatheringState === 'complete') resolve();
            });
          });
        }
        const sdp = peer.localDescription?.sdp;
        if (!sdp) throw new Error('no SDP offer');
        return sdp;
      },
      async answer(sdp) {
        await peer.setRemoteDescription({ type: 'answer', sdp });
        await opened;
      },
    },
  };
}
