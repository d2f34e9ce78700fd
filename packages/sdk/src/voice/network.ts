/**
 * What a call needs of its platform, injected so the core runs anywhere: a WebSocket that carries binary
 * frames, a UDP socket, the transport ciphers, an Opus codec and, for end-to-end encryption, DAVE. The
 * Node entry supplies them all (node-voice.ts); browsers, which have no UDP socket, carry the same
 * datagrams over a WebRTC data channel that the voice gateway signals (browser-voice.ts).
 */
import type { DaveProvider } from './dave.js';
import type { Aead, TransportMode } from './transport-crypto.js';

/** The voice gateway's socket: the WHATWG WebSocket with binary frames (DAVE's ops are binary). */
export interface VoiceSocketLike {
  readonly readyState: number;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
}

/** A UDP socket bound to one remote address (the voice server's, from Ready), or what stands in for one. */
export interface UdpSocketLike {
  send(packet: Uint8Array): void;
  onMessage(listener: (packet: Uint8Array) => void): void;
  close(): void;
  /** Present on a transport the voice gateway must set up (a browser's data channel); absent on UDP. */
  readonly signalling?: DatagramSignalling;
}

/** Op 1 names `protocol` and carries `offer()`; op 4's `sdp` goes to `answer`, which ends once datagrams flow. */
export interface DatagramSignalling {
  readonly protocol: string;
  offer(): Promise<string>;
  answer(sdp: string): Promise<void>;
}

/** 20 ms frames of 48 kHz stereo int16 in, Opus packets out, and back. */
export interface OpusCodec {
  encode(pcm: Int16Array): Uint8Array;
  decode(packet: Uint8Array): Int16Array;
  close(): void;
}

export interface VoiceNetwork {
  openSocket(url: string): VoiceSocketLike;
  openUdp(host: string, port: number): Promise<UdpSocketLike>;
  /** The modes this platform can seal and open; the server's order picks among them. */
  readonly ciphers: Partial<Record<TransportMode, Aead>>;
  /** One codec per use (one encoder for the call, one decoder per participant). */
  opus(): OpusCodec;
  /** Absent where no DAVE implementation is available: the call then offers protocol version 0. */
  readonly dave?: DaveProvider;
}
