import { IpDiscovery, RTCP_PACKET_TYPES, Rtp } from '@hearth/protocol';

/** What kind of datagram arrived on the media socket (PROTOCOL.md §G.4). */
export type DatagramKind = 'discovery' | 'keepalive' | 'rtcp' | 'rtp' | 'invalid';

const KEEPALIVE_BYTES = 8;

export function classify(packet: Buffer): DatagramKind {
  if (packet.length === IpDiscovery.PacketBytes && packet.readUInt16BE(0) === IpDiscovery.Request) {
    return packet.readUInt16BE(2) === IpDiscovery.Length ? 'discovery' : 'invalid';
  }
  if (packet.length === KEEPALIVE_BYTES) return 'keepalive';
  if (packet.length < Rtp.HeaderBytes || packet[0]! >> 6 !== Rtp.Version) return 'invalid';
  const type = packet[1]!;
  if (type >= RTCP_PACKET_TYPES.min && type <= RTCP_PACKET_TYPES.max) return 'rtcp';
  return 'rtp';
}

/**
 * The unencrypted header of an rtpsize packet: 12 bytes, 4 per CSRC, and the 4-byte extension preamble
 * when the X bit is set (its body is encrypted). Undefined when the packet is too short to hold it.
 */
export function rtpsizeHeaderBytes(packet: Buffer): number | undefined {
  const first = packet[0]!;
  const bytes = Rtp.HeaderBytes + 4 * (first & 0x0f) + (first & Rtp.ExtensionBit ? 4 : 0);
  return packet.length >= bytes + Rtp.TagBytes + Rtp.NonceBytes ? bytes : undefined;
}

/**
 * The header a packet is forwarded with: the sender's when it carries an extension preamble, else the same
 * header with the X bit set and an empty one (`0xBEDE`, length 0; RFC 3550 §5.3.1 allows zero). The
 * platform's forwarded packets always carry a preamble (first byte 0x90), and @discordjs/voice 0.19.2 reads
 * bytes 12–13 as one whether or not X is set: a packet without one, whose ciphertext began 0xBEDE (1 in
 * 65,536), lost its frame to that reader. The extension body is empty, so the plaintext is unchanged.
 */
export function forwardedHeader(header: Buffer): Buffer {
  if (header[0]! & Rtp.ExtensionBit) return header;
  const extended = Buffer.allocUnsafe(header.length + 4);
  header.copy(extended, 0);
  extended[0] = header[0]! | Rtp.ExtensionBit;
  extended.writeUInt16BE(Rtp.ExtensionProfile, header.length);
  extended.writeUInt16BE(0, header.length + 2);
  return extended;
}

export function ssrcOf(packet: Buffer): number {
  return packet.readUInt32BE(8);
}

/** The SSRC an IP discovery request names. */
export function discoverySsrc(packet: Buffer): number {
  return packet.readUInt32BE(4);
}

/** The discovery response: type 2, length 70, the SSRC, the NUL-terminated address seen, the port seen. */
export function discoveryResponse(ssrc: number, address: string, port: number): Buffer {
  const packet = Buffer.alloc(IpDiscovery.PacketBytes);
  packet.writeUInt16BE(IpDiscovery.Response, 0);
  packet.writeUInt16BE(IpDiscovery.Length, 2);
  packet.writeUInt32BE(ssrc, 4);
  packet.write(address.slice(0, IpDiscovery.AddressBytes - 1), IpDiscovery.AddressOffset, 'utf8');
  packet.writeUInt16BE(port, IpDiscovery.PacketBytes - 2);
  return packet;
}
