/**
 * The browser's way to the voice node (op 1 `webrtc_datachannel`): browsers have no UDP socket, so a
 * member's datagrams travel over one WebRTC data channel, unreliable and unordered like UDP. This node is
 * the answerer (`werift`, WebRTC in TypeScript); the channel then becomes the member's media endpoint.
 */
import { isIP } from 'node:net';
import type { RTCDataChannel, RTCPeerConnection } from 'werift';
import type { PacketChannel } from './media.js';

/** Where this node's ICE host candidates are: the voice bind address, announced as the public host. */
export interface WebRtcConfig {
  /** `--voice-host`: candidates are gathered on it (every interface for a wildcard address). */
  host: string;
  /** `--voice-public-host`: an address different from `host` replaces it in the candidates (1:1 NAT). */
  publicHost: string;
}

/** The SDP offer could not be answered: malformed, or it offers no data channel. */
export class SdpRefused extends Error {}

/** One member's peer connection: the answer for op 4, and the channel once the browser opens it. */
export interface DataChannelPeer {
  readonly sdp: string;
  readonly channel: PacketChannel;
  close(): void;
}

const WILDCARDS = new Set(['0.0.0.0', '::']);
/** Gathering host candidates takes milliseconds; past this the offer is refused. */
const GATHERING_TIMEOUT_MS = 5_000;

/** Answers `offer`; the channel's datagrams reach the listener `channel.onMessage` registers. */
export async function answerDataChannelOffer(offer: string, config: WebRtcConfig): Promise<DataChannelPeer> {
  if (!/^v=0\r?\n/.test(offer) || !/^m=application \d+ [A-Z/]*SCTP/m.test(offer)) {
    throw new SdpRefused('the offer has no data channel section');
  }
  // ICE and DTLS need the offerer's credentials and certificate fingerprint (RFC 8839 §5.4, RFC 8842 §5).
  if (
    !/^a=ice-ufrag:\S+/m.test(offer) ||
    !/^a=ice-pwd:\S+/m.test(offer) ||
    !/^a=fingerprint:\S+ \S+/m.test(offer)
  ) {
    throw new SdpRefused('the offer lacks ICE credentials or a DTLS fingerprint');
  }
  // Loaded on the first offer: WebRTC takes a second to import, and most nodes never see a browser.
  const { RTCPeerConnection, RTCSessionDescription } = await import('werift');
  const ipv6 = isIP(config.host) === 6;
  const specific = isIP(config.host) !== 0 && !WILDCARDS.has(config.host);
  const peer = new RTCPeerConnection({
    iceUseIpv4: !ipv6,
    iceUseIpv6: ipv6,
    iceUseTcp: false,
    // Gathered on the bind address only (loopback included, which werift leaves out by default).
    ...(specific
      ? {
          iceInterfaceAddresses: ipv6 ? { udp6: config.host } : { udp4: config.host },
          iceAdditionalHostAddresses: [config.host],
        }
      : {}),
  });
  const channel = new PeerChannel(peer);
  try {
    await peer.setRemoteDescription(new RTCSessionDescription(offer, 'offer'));
    await peer.setLocalDescription(await peer.createAnswer());
    await gathered(peer);
  } catch (error) {
    await peer.close();
    if (error instanceof SdpRefused) throw error;
    throw new SdpRefused(`the offer could not be answered: ${String(error)}`);
  }
  const answer = peer.localDescription?.sdp;
  if (!answer) {
    await peer.close();
    throw new SdpRefused('no answer');
  }
  return {
    sdp: announced(answer, config, specific),
    channel,
    close: () => void peer.close(),
  };
}

/** Host candidates only (no STUN servers), so gathering ends as soon as the sockets are bound. */
function gathered(peer: RTCPeerConnection): Promise<void> {
  if (peer.iceGatheringState === 'complete') return Promise.resolve();
  return new Promise((resolve, reject) => {
    // The voice gateway answers its frames in order: a gathering that hangs must not hold them.
    const timer = setTimeout(() => {
      unSubscribe();
      reject(new SdpRefused('ICE gathering did not complete'));
    }, GATHERING_TIMEOUT_MS);
    const { unSubscribe } = peer.iceGatheringStateChange.subscribe((state) => {
      if (state !== 'complete') return;
      clearTimeout(timer);
      unSubscribe();
      resolve();
    });
  });
}

/** Keeps the candidates on the bind address, named by the public host when that is another address. */
function announced(sdp: string, config: WebRtcConfig, specific: boolean): string {
  if (!specific) return sdp;
  const publicAddress = isIP(config.publicHost) !== 0 ? config.publicHost : config.host;
  const lines = sdp.split('\r\n').flatMap((line) => {
    const candidate = /^a=candidate:(\S+ \d+ \S+ \d+ )(\S+)( .*)$/.exec(line);
    if (!candidate) return [line];
    if (candidate[2] !== config.host) return [];
    return [`a=candidate:${candidate[1]}${publicAddress}${candidate[3]}`];
  });
  return lines.join('\r\n');
}

/**
 * The member's one data channel as a `PacketChannel`: datagrams before it opens are not sent (as UDP
 * would lose them), and a second channel on the same connection is closed.
 */
class PeerChannel implements PacketChannel {
  #channel: RTCDataChannel | undefined;
  readonly #listeners: ((packet: Buffer) => void)[] = [];
  readonly #peer: RTCPeerConnection;

  constructor(peer: RTCPeerConnection) {
    this.#peer = peer;
    peer.onDataChannel.subscribe((channel) => {
      if (this.#channel) {
        channel.close();
        return;
      }
      this.#channel = channel;
      channel.onMessage.subscribe((message) => {
        if (typeof message === 'string') return;
        for (const listener of this.#listeners) listener(message);
      });
    });
  }

  /** The browser's address as ICE found it (peer-reflexive when it hides behind an mDNS name). */
  get address(): string {
    return this.#remote()?.host ?? '0.0.0.0';
  }

  get port(): number {
    return this.#remote()?.port ?? 0;
  }

  #remote(): { host: string; port: number } | undefined {
    return this.#peer.iceTransports[0]?.connection.nominated?.remoteCandidate;
  }

  send(packet: Uint8Array): void {
    const channel = this.#channel;
    if (channel?.readyState !== 'open') return;
    try {
      channel.send(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
    } catch {
      // A channel closing under the send: the datagram is lost, as on UDP.
    }
  }

  onMessage(listener: (packet: Buffer) => void): void {
    this.#listeners.push(listener);
  }
}
