/**
 * RTP framing of the voice protocol (VOICE-RPC.md §1 UDP media): a 12-byte header, version 2, payload type
 * 120 (Opus), a sequence number and a 48 kHz timestamp that advances 960 per 20 ms frame.
 */
import { Rtp } from '@hearth/protocol';

const RTP_HEADER_SIZE = Rtp.HeaderBytes;
/** Samples per channel of one 20 ms frame at 48 kHz. */
export const FRAME_SAMPLES = 960;
export const SAMPLE_RATE = 48_000;
export const CHANNELS = 2;
export const FRAME_MS = 20;
/** The Opus frame a client sends five of when its stream pauses (DAVE passes it through unencrypted). */
export const SILENCE_FRAME: Uint8Array = Uint8Array.of(0xf8, 0xff, 0xfe);

export function isSilenceFrame(frame: Uint8Array): boolean {
  return frame.length === 3 && frame[0] === 0xf8 && frame[1] === 0xff && frame[2] === 0xfe;
}

/** A parsed RTP header; `aadLength` covers the CSRCs and the extension preamble (rtpsize AAD). */
export interface RtpHeader {
  sequence: number;
  timestamp: number;
  ssrc: number;
  payloadType: number;
  /** Bytes of the unencrypted header: 12 + 4·CSRC count + 4 when the X bit is set. */
  aadLength: number;
  /** 32-bit words of extension body, which sits encrypted at the front of the payload. */
  extensionWords: number;
}

/** The header of a packet, or undefined when it is not RTP version 2 or is too short. */
export function parseRtpHeader(packet: Uint8Array): RtpHeader | undefined {
  if (packet.length < RTP_HEADER_SIZE) return undefined;
  const first = packet[0] as number;
  if (first >> 6 !== Rtp.Version) return undefined;
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  const csrcCount = first & 0x0f;
  const hasExtension = (first & Rtp.ExtensionBit) !== 0;
  let aadLength = RTP_HEADER_SIZE + 4 * csrcCount;
  let extensionWords = 0;
  if (hasExtension) {
    if (packet.length < aadLength + 4) return undefined;
    extensionWords = view.getUint16(aadLength + 2);
    aadLength += 4;
  }
  if (packet.length < aadLength) return undefined;
  return {
    payloadType: (packet[1] as number) & 0x7f,
    sequence: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    aadLength,
    extensionWords,
  };
}

/** Numbers one sender's frames: sequence +1 and timestamp +960 per frame, both wrapping. */
export class RtpPacketizer {
  #sequence: number;
  #timestamp: number;

  constructor(
    readonly ssrc: number,
    start: { sequence: number; timestamp: number } = { sequence: 0, timestamp: 0 },
  ) {
    this.#sequence = start.sequence & 0xffff;
    this.#timestamp = start.timestamp >>> 0;
  }

  /** The 12-byte header of the next frame; each call advances the sequence and the timestamp. */
  next(): Uint8Array {
    const header = new Uint8Array(RTP_HEADER_SIZE);
    const view = new DataView(header.buffer);
    header[0] = 0x80;
    header[1] = Rtp.OpusPayloadType;
    view.setUint16(2, this.#sequence);
    view.setUint32(4, this.#timestamp);
    view.setUint32(8, this.ssrc >>> 0);
    this.#sequence = (this.#sequence + 1) & 0xffff;
    this.#timestamp = (this.#timestamp + FRAME_SAMPLES) >>> 0;
    return header;
  }
}
