import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { VoiceEncryptionMode } from '@hearth/protocol';
import type { PortRange } from '../../config.js';
import { mediaPayloadKind } from './dave/frames.js';
import {
  classify,
  discoveryResponse,
  discoverySsrc,
  forwardedHeader,
  rtpsizeHeaderBytes,
  ssrcOf,
} from './rtp.js';
import { type TransportCipher, transportCipher } from './transport-crypto.js';

/** What the media path may do for a member: send (SPEAK, not muted or suppressed) and receive (not deafened). */
export interface MediaRights {
  send: boolean;
  receive: boolean;
}

/**
 * A datagram path to one member other than the UDP socket: a WebRTC data channel (webrtc.ts). The forwarder
 * treats it as it treats a UDP address: the same packets, in and out.
 */
export interface PacketChannel {
  /** What IP discovery answers: the peer's address as this node sees it. */
  readonly address: string;
  readonly port: number;
  send(packet: Uint8Array): void;
  onMessage(listener: (packet: Buffer) => void): void;
}

/**
 * The selective forwarding unit as the voice gateway drives it. Every call but `connect` is plain data, so
 * the same interface can be served from a worker thread by message passing (DESIGN.md: forwarding in
 * workers); a data channel's datagrams would be posted to it the same way.
 */
export interface VoiceMedia {
  /** The UDP port Ready announces. */
  readonly port: number;
  /** A member got its SSRC (op 2 Ready): IP discovery for it is answered from now on. */
  add(member: { ssrc: number; callId: string; userId: string; rights: MediaRights }): void;
  /** Op 4 Session Description: its packets are opened, and others' sealed for it, under this key. */
  describe(ssrc: number, mode: VoiceEncryptionMode, key: Uint8Array): void;
  /** Rights changed (mute, deafen, suppress, permissions) or a moderator moved the member to another call. */
  update(ssrc: number, change: { rights?: MediaRights; callId?: string }): void;
  remove(ssrc: number): void;
  /** This member's packets come and go over `channel` (op 1 `webrtc_datachannel`), only for its own SSRC. */
  connect(ssrc: number, channel: PacketChannel): void;
  readonly stats: MediaStats;
  close(): Promise<void>;
}

export interface MediaStats {
  received: number;
  forwarded: number;
  /** Unknown SSRC, not yet described, failed authentication, malformed, or the sender may not send. */
  dropped: number;
  /** Among `dropped`: RTP from a described member whose transport encryption did not authenticate. */
  decryptFailures: number;
  rtcp: number;
  /** Authenticated packets whose payload ends with DAVE's 0xFAFA marker (end-to-end encrypted, opaque here). */
  daveFrames: number;
  /** Authenticated packets whose payload is neither a DAVE frame nor the Opus silence frame. */
  plainFrames: number;
}

/** Where a datagram came from: a UDP address, or a data channel's peer. */
type Source = Pick<RemoteInfo, 'address' | 'port'>;

interface Entry {
  ssrc: number;
  callId: string;
  userId: string;
  rights: MediaRights;
  cipher: TransportCipher | undefined;
  address: string | undefined;
  port: number;
  /** Set when the member's endpoint is a data channel rather than `address:port` on the UDP socket. */
  channel: PacketChannel | undefined;
  /** The nonce counter of packets sealed for this member. */
  counter: number;
}

/** One UDP socket forwarding every call of this node (PROTOCOL.md §G.4, §G.5). */
export class UdpForwarder implements VoiceMedia {
  readonly stats: MediaStats = {
    received: 0,
    forwarded: 0,
    dropped: 0,
    decryptFailures: 0,
    rtcp: 0,
    daveFrames: 0,
    plainFrames: 0,
  };
  readonly #socket: Socket;
  readonly #members = new Map<number, Entry>();
  readonly #calls = new Map<string, Set<Entry>>();

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('message', (packet, from) => this.#receive(packet, from, undefined));
    // A send to a vanished address errors asynchronously; the media path only drops it.
    socket.on('error', () => {});
  }

  /** Binds the first free port of `ports` on `host`. */
  static async bind(host: string, ports: PortRange): Promise<UdpForwarder> {
    for (let port = ports.first; port <= ports.last; port += 1) {
      const socket = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
      try {
        await new Promise<void>((resolve, reject) => {
          socket.once('error', reject);
          socket.bind(port, host, () => {
            socket.off('error', reject);
            resolve();
          });
        });
        return new UdpForwarder(socket);
      } catch (error) {
        socket.close();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === ports.last) throw error;
      }
    }
    throw new Error('no voice UDP port');
  }

  get port(): number {
    return this.#socket.address().port;
  }

  add(member: { ssrc: number; callId: string; userId: string; rights: MediaRights }): void {
    const entry: Entry = {
      ...member,
      cipher: undefined,
      address: undefined,
      port: 0,
      channel: undefined,
      counter: 0,
    };
    this.#members.set(member.ssrc, entry);
    this.#join(entry);
  }

  describe(ssrc: number, mode: VoiceEncryptionMode, key: Uint8Array): void {
    const entry = this.#members.get(ssrc);
    if (entry) entry.cipher = transportCipher(mode, key);
  }

  update(ssrc: number, change: { rights?: MediaRights; callId?: string }): void {
    const entry = this.#members.get(ssrc);
    if (!entry) return;
    if (change.rights) entry.rights = change.rights;
    if (change.callId !== undefined && change.callId !== entry.callId) {
      this.#leave(entry);
      entry.callId = change.callId;
      this.#join(entry);
    }
  }

  remove(ssrc: number): void {
    const entry = this.#members.get(ssrc);
    if (!entry) return;
    this.#members.delete(ssrc);
    this.#leave(entry);
  }

  connect(ssrc: number, channel: PacketChannel): void {
    channel.onMessage((packet) => {
      // A channel belongs to one session: a datagram naming another SSRC is not this member's to send.
      const kind = classify(packet);
      const named = kind === 'discovery' ? discoverySsrc(packet) : kind === 'rtp' ? ssrcOf(packet) : ssrc;
      if (named !== ssrc) {
        this.stats.received += 1;
        this.stats.dropped += 1;
        return;
      }
      this.#receive(packet, channel, channel);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#socket.close(() => resolve()));
  }

  #join(entry: Entry): void {
    let call = this.#calls.get(entry.callId);
    if (!call) {
      call = new Set();
      this.#calls.set(entry.callId, call);
    }
    call.add(entry);
  }

  #leave(entry: Entry): void {
    const call = this.#calls.get(entry.callId);
    call?.delete(entry);
    if (call?.size === 0) this.#calls.delete(entry.callId);
  }

  /** One path for both transports: `channel` is set for a data channel's datagrams, else they came over UDP. */
  #receive(packet: Buffer, from: Source, channel: PacketChannel | undefined): void {
    this.stats.received += 1;
    switch (classify(packet)) {
      case 'discovery': {
        this.#discover(packet, from, channel);
        return;
      }
      case 'rtp': {
        this.#forward(packet, from, channel);
        return;
      }
      case 'rtcp':
        // The voice clients send no RTCP and wait for none: counted, not forwarded.
        this.stats.rtcp += 1;
        return;
      case 'keepalive':
        return;
      default:
        this.stats.dropped += 1;
    }
  }

  /** IP discovery (PROTOCOL.md §G.4): answered only for an SSRC a Ready gave out; learns its address. */
  #discover(packet: Buffer, from: Source, channel: PacketChannel | undefined): void {
    const ssrc = discoverySsrc(packet);
    const entry = this.#members.get(ssrc);
    if (!entry) {
      this.stats.dropped += 1;
      return;
    }
    entry.address = from.address;
    entry.port = from.port;
    entry.channel = channel;
    this.#send(entry, discoveryResponse(ssrc, from.address, from.port));
  }

  /** Opens with the sender's key, then seals the same header and payload for each receiver of the call. */
  #forward(packet: Buffer, from: Source, channel: PacketChannel | undefined): void {
    const sender = this.#members.get(ssrcOf(packet));
    const headerBytes = rtpsizeHeaderBytes(packet);
    const plaintext = headerBytes === undefined ? undefined : sender?.cipher?.open(packet, headerBytes);
    if (!sender || plaintext === undefined || !sender.rights.send) {
      this.stats.dropped += 1;
      if (sender?.cipher && headerBytes !== undefined && plaintext === undefined)
        this.stats.decryptFailures += 1;
      return;
    }
    // Only an authenticated packet may move the sender's address (NAT rebinding).
    if (sender.address !== from.address || sender.port !== from.port || sender.channel !== channel) {
      sender.address = from.address;
      sender.port = from.port;
      sender.channel = channel;
    }
    const kind = mediaPayloadKind(plaintext);
    if (kind === 'dave') this.stats.daveFrames += 1;
    else if (kind === 'plain') this.stats.plainFrames += 1;
    const header = forwardedHeader(packet.subarray(0, headerBytes));
    for (const receiver of this.#calls.get(sender.callId) ?? []) {
      if (receiver === sender || !receiver.cipher || !receiver.address || !receiver.rights.receive) continue;
      receiver.counter = (receiver.counter + 1) >>> 0;
      this.#send(receiver, receiver.cipher.seal(header, plaintext, receiver.counter));
      this.stats.forwarded += 1;
    }
  }

  #send(entry: Entry, packet: Uint8Array): void {
    if (entry.channel) entry.channel.send(packet);
    else if (entry.address) this.#socket.send(packet, entry.port, entry.address);
  }
}
