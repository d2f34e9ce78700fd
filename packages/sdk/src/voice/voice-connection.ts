/**
 * One call's link to its voice server (VOICE-RPC.md §1): the voice gateway v8 (identify, heartbeats with
 * `seq_ack`, buffered resume), UDP (or a browser's data channel) with IP discovery, the mode the server
 * lists first, the session key, and RTP in both directions through transport encryption and DAVE.
 */
import {
  IpDiscovery,
  Rtp,
  SpeakingFlags,
  VOICE_GATEWAY_BUFFERED_RESUME_VERSION,
  VOICE_HEARTBEAT_INTERVAL_MS,
  VOICE_SECRET_KEY_BYTES,
  VoiceCloseCodes,
  VoiceOpcodes,
  VoiceProtocols,
} from '@hearth/protocol';
import { DaveMember } from './dave.js';
import type { UdpSocketLike, VoiceNetwork, VoiceSocketLike } from './network.js';
import { parseRtpHeader, RtpPacketizer } from './rtp.js';
import { chooseMode, TransportCipher } from './transport-crypto.js';

/** The voice gateway version this client speaks: 8, buffered resume. */
const VOICE_GATEWAY_VERSION = VOICE_GATEWAY_BUFFERED_RESUME_VERSION;
/** Heartbeats unanswered before the connection is considered lost (as the platform's clients do). */
const MISSED_HEARTBEATS = 3;
/** The UDP keepalive the platform's clients send (ignored by servers that need none). */
const KEEPALIVE_MS = 5_000;
/** IP discovery is repeated until answered: its datagrams, like any, may be lost. */
const DISCOVERY_RETRY_MS = 1_000;

export interface VoiceConnectionParams {
  endpoint: string;
  token: string;
  sessionId: string;
  userId: string;
  /** `server_id` of Identify: the guild, or for a call outside a guild (a lobby) its channel. */
  serverId: string;
  channelId: string;
  network: VoiceNetwork;
}

/** What the connection reports to its call. */
export interface VoiceConnectionEvents {
  /** Identified (Ready): the signalling link is up. */
  signalingConnected(): void;
  /** Session description received: media can flow. */
  connected(): void;
  /** A 4015 close: resuming. */
  reconnecting(): void;
  /** Resumed after a 4015. */
  resumed(): void;
  /** The link is gone for good; `code` is the close code (1006 for a lost network). */
  closed(code: number, reason: string): void;
  speaking(userId: string, speaking: boolean): void;
  clientsConnected(userIds: string[]): void;
  clientDisconnected(userId: string): void;
  /** One Opus frame of a participant, decrypted. */
  audio(userId: string, opus: Uint8Array): void;
  log(message: string): void;
}

function textOf(data: unknown): string | undefined {
  return typeof data === 'string' ? data : undefined;
}

function bytesOf(data: unknown): Uint8Array | undefined {
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return undefined;
}

export class VoiceConnection {
  #socket: VoiceSocketLike | undefined;
  #udp: UdpSocketLike | undefined;
  /** Settles with IP discovery's answer (sent by `#discover`, or after op 4 on a signalled transport). */
  #discovered: Promise<{ address: string; port: number }> | undefined;
  #heartbeat: ReturnType<typeof setInterval> | undefined;
  #keepalive: ReturnType<typeof setInterval> | undefined;
  #unanswered = 0;
  #seqAck = -1;
  #ssrc = 0;
  #cipher: TransportCipher | undefined;
  #packetizer: RtpPacketizer | undefined;
  #dave: DaveMember | undefined;
  #speaking = false;
  #resuming = false;
  #closed = false;
  readonly #ssrcUsers = new Map<number, string>();
  readonly #connectedUsers = new Set<string>();

  constructor(
    private readonly params: VoiceConnectionParams,
    private readonly events: VoiceConnectionEvents,
  ) {}

  /** The SSRC of this member's audio (from Ready). */
  get ssrc(): number {
    return this.#ssrc;
  }

  get ready(): boolean {
    return this.#cipher !== undefined && this.#udp !== undefined;
  }

  get e2ee(): boolean {
    return this.#dave?.active ?? false;
  }

  open(): void {
    const endpoint = this.params.endpoint;
    const base = /^wss?:\/\//.test(endpoint) ? endpoint : `wss://${endpoint}`;
    const url = `${base.replace(/\/+$/, '')}/?v=${VOICE_GATEWAY_VERSION}`;
    let socket: VoiceSocketLike;
    try {
      socket = this.params.network.openSocket(url);
    } catch (error) {
      this.#finish(1006, `the voice gateway could not be opened: ${String(error)}`);
      return;
    }
    this.#socket = socket;
    socket.addEventListener('message', (event) => this.#onMessage(socket, event.data));
    socket.addEventListener('close', (event) => this.#onClose(socket, event.code, event.reason));
    socket.addEventListener('error', () => this.events.log('voice gateway socket error'));
  }

  #send(op: number, d: unknown): void {
    if (this.#socket?.readyState === 1) this.#socket.send(JSON.stringify({ op, d }));
  }

  #sendBinary(op: number, payload: Uint8Array): void {
    const frame = new Uint8Array(payload.length + 1);
    frame[0] = op;
    frame.set(payload, 1);
    if (this.#socket?.readyState === 1) this.#socket.send(frame);
  }

  #onMessage(socket: VoiceSocketLike, data: unknown): void {
    if (socket !== this.#socket) return;
    try {
      const text = textOf(data);
      if (text !== undefined) {
        const message = JSON.parse(text) as { op: number; d: Record<string, unknown>; seq?: number };
        if (typeof message.seq === 'number') this.#seqAck = message.seq;
        this.#onJson(message.op, message.d ?? {});
        return;
      }
      const bytes = bytesOf(data);
      if (!bytes || bytes.length < 3) return;
      this.#seqAck = ((bytes[0] as number) << 8) | (bytes[1] as number);
      this.#dave?.onBinary(bytes[2] as number, bytes.subarray(3));
    } catch (error) {
      this.events.log(`a voice gateway message could not be handled: ${String(error)}`);
    }
  }

  #onJson(op: number, d: Record<string, unknown>): void {
    switch (op) {
      case VoiceOpcodes.Hello:
        this.#startHeartbeat(Number(d.heartbeat_interval));
        if (this.#resuming) {
          this.#send(VoiceOpcodes.Resume, {
            server_id: this.params.serverId,
            session_id: this.params.sessionId,
            token: this.params.token,
            seq_ack: this.#seqAck,
          });
        } else {
          this.#send(VoiceOpcodes.Identify, {
            server_id: this.params.serverId,
            user_id: this.params.userId,
            session_id: this.params.sessionId,
            token: this.params.token,
            max_dave_protocol_version: this.params.network.dave?.maxProtocolVersion ?? 0,
          });
        }
        return;
      case VoiceOpcodes.HeartbeatAck:
        this.#unanswered = 0;
        return;
      case VoiceOpcodes.Ready:
        this.events.signalingConnected();
        void this.#discover(d);
        return;
      case VoiceOpcodes.SessionDescription:
        void this.#describe(d);
        return;
      case VoiceOpcodes.Resumed:
        this.#resuming = false;
        this.events.resumed();
        return;
      case VoiceOpcodes.Speaking: {
        const userId = String(d.user_id ?? '');
        if (!userId) return;
        if (typeof d.ssrc === 'number') this.#ssrcUsers.set(d.ssrc >>> 0, userId);
        this.#connectedUsers.add(userId);
        this.events.speaking(userId, (Number(d.speaking) & SpeakingFlags.Microphone) !== 0);
        return;
      }
      case VoiceOpcodes.ClientsConnect: {
        const ids = Array.isArray(d.user_ids) ? d.user_ids.map(String) : [];
        for (const id of ids) this.#connectedUsers.add(id);
        this.events.clientsConnected(ids);
        return;
      }
      case VoiceOpcodes.ClientDisconnect: {
        const userId = String(d.user_id ?? '');
        this.#connectedUsers.delete(userId);
        for (const [ssrc, user] of this.#ssrcUsers) if (user === userId) this.#ssrcUsers.delete(ssrc);
        this.events.clientDisconnected(userId);
        return;
      }
      default:
        if (op >= VoiceOpcodes.DavePrepareTransition && op <= VoiceOpcodes.DaveMlsInvalidCommitWelcome) {
          this.#dave?.onJson(op, d);
        }
    }
  }

  #startHeartbeat(intervalMs: number): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#unanswered = 0;
    const beat = () => {
      if (this.#unanswered >= MISSED_HEARTBEATS) {
        // A silent network: the connection is lost, as when the socket drops.
        this.#socket?.close(4000, 'heartbeats unanswered');
        this.#finish(1006, 'voice gateway heartbeats unanswered');
        return;
      }
      this.#unanswered += 1;
      this.#send(VoiceOpcodes.Heartbeat, { t: Date.now(), seq_ack: this.#seqAck });
    };
    this.#heartbeat = setInterval(
      beat,
      Number.isFinite(intervalMs) && intervalMs > 0 ? intervalMs : VOICE_HEARTBEAT_INTERVAL_MS,
    );
  }

  /**
   * UDP IP discovery, then Select Protocol with the first mode of the server's list this client has. A
   * signalled transport (a browser's data channel) sends its offer instead; discovery follows op 4.
   */
  async #discover(d: Record<string, unknown>): Promise<void> {
    this.#ssrc = Number(d.ssrc) >>> 0;
    const modes = Array.isArray(d.modes) ? d.modes.map(String) : [];
    const mode = chooseMode(modes, this.params.network.ciphers);
    if (!mode) {
      this.#fail(`the voice server offers no mode this client has: ${modes.join(', ')}`);
      return;
    }
    let udp: UdpSocketLike;
    try {
      udp = await this.params.network.openUdp(String(d.ip), Number(d.port));
    } catch (error) {
      this.#fail(`the voice server's UDP address could not be used: ${String(error)}`);
      return;
    }
    if (this.#closed) {
      udp.close();
      return;
    }
    this.#udp = udp;
    this.#discovered = new Promise<{ address: string; port: number }>((resolve) => {
      udp.onMessage((packet) => {
        if (!this.#cipher) {
          const answer = parseDiscovery(packet);
          if (answer) resolve(answer);
          return;
        }
        this.#receive(packet);
      });
    });
    if (udp.signalling) {
      let sdp: string;
      try {
        sdp = await udp.signalling.offer();
      } catch (error) {
        this.#fail(`the WebRTC offer could not be made: ${String(error)}`);
        return;
      }
      this.#send(VoiceOpcodes.SelectProtocol, { protocol: udp.signalling.protocol, data: { mode, sdp } });
      return;
    }
    const { address, port } = await this.#ipDiscovery(udp);
    this.#send(VoiceOpcodes.SelectProtocol, { protocol: VoiceProtocols.Udp, data: { address, port, mode } });
  }

  /** Sends IP discovery until answered. */
  async #ipDiscovery(udp: UdpSocketLike): Promise<{ address: string; port: number }> {
    const request = discoveryRequest(this.#ssrc);
    udp.send(request);
    const retry = setInterval(() => udp.send(request), DISCOVERY_RETRY_MS);
    try {
      return await (this.#discovered as Promise<{ address: string; port: number }>);
    } finally {
      clearInterval(retry);
    }
  }

  async #describe(d: Record<string, unknown>): Promise<void> {
    const mode = chooseMode([String(d.mode)], this.params.network.ciphers);
    const key = Array.isArray(d.secret_key) ? Uint8Array.from(d.secret_key as number[]) : undefined;
    if (!mode || !key || key.length !== VOICE_SECRET_KEY_BYTES) {
      this.#fail('the session description carries no usable mode or key');
      return;
    }
    // DAVE first: the server's MLS ops may arrive while a data channel is still opening.
    const version = Number(d.dave_protocol_version ?? 0);
    const provider = this.params.network.dave;
    if (provider && version > 0 && !this.#dave) {
      this.#dave = new DaveMember(provider, this.params.userId, this.params.channelId, version, {
        sendJson: (op, payload) => this.#send(op, payload),
        sendBinary: (op, payload) => this.#sendBinary(op, payload),
        connectedUserIds: () => [...this.#connectedUsers],
        log: (message) => this.events.log(message),
      });
    }
    const udp = this.#udp;
    if (udp?.signalling && !this.#cipher) {
      // The data channel opens with the answer; discovery over it proves datagrams reach the server.
      try {
        if (typeof d.sdp !== 'string') throw new Error('op 4 carries no SDP answer');
        await udp.signalling.answer(d.sdp);
        if (this.#closed) return;
        await this.#ipDiscovery(udp);
      } catch (error) {
        this.#fail(`the WebRTC data channel could not be opened: ${String(error)}`);
        return;
      }
      if (this.#closed) return;
    }
    this.#cipher = new TransportCipher(mode, key, this.params.network.ciphers[mode] as never);
    this.#packetizer ??= new RtpPacketizer(this.#ssrc, {
      sequence: Math.floor(Math.random() * 0x10000),
      timestamp: Math.floor(Math.random() * 0x1_0000_0000),
    });
    if (!this.#keepalive) {
      let counter = 0;
      this.#keepalive = setInterval(() => {
        const packet = new Uint8Array(8);
        new DataView(packet.buffer).setUint32(0, counter, true);
        counter = (counter + 1) >>> 0;
        this.#udp?.send(packet);
      }, KEEPALIVE_MS);
    }
    // Receivers map SSRC to user only from relayed op 5: announce ours before any audio (speaking 0).
    this.#send(VoiceOpcodes.Speaking, { speaking: 0, delay: 0, ssrc: this.#ssrc });
    this.events.connected();
  }

  #receive(packet: Uint8Array): void {
    const header = parseRtpHeader(packet);
    // RTCP (payload types 72–76 once the marker bit is masked) and anything not Opus is not audio.
    if (header?.payloadType !== Rtp.OpusPayloadType) return;
    const opened = this.#cipher?.open(packet);
    if (!opened) return;
    const userId = this.#ssrcUsers.get(opened.ssrc);
    if (!userId) return;
    const opus = this.#dave ? this.#dave.decrypt(userId, opened.payload) : opened.payload;
    if (opus) this.events.audio(userId, opus);
  }

  /** op 5: must precede the first audio frame and follow the last silence frame. */
  setSpeaking(speaking: boolean): void {
    if (speaking === this.#speaking) return;
    this.#speaking = speaking;
    this.#send(VoiceOpcodes.Speaking, {
      speaking: speaking ? SpeakingFlags.Microphone : 0,
      delay: 0,
      ssrc: this.#ssrc,
    });
  }

  /** Sends one Opus frame (E2EE when the group is ready, then transport encryption). */
  sendOpus(opus: Uint8Array): boolean {
    const cipher = this.#cipher;
    const udp = this.#udp;
    const packetizer = this.#packetizer;
    if (!cipher || !udp || !packetizer) return false;
    const payload = this.#dave ? this.#dave.encrypt(opus) : opus;
    udp.send(cipher.seal(packetizer.next(), payload));
    return true;
  }

  #onClose(socket: VoiceSocketLike, code: number, reason: string): void {
    if (socket !== this.#socket || this.#closed) return;
    if (code === VoiceCloseCodes.VoiceServerCrashed) {
      // The server asks for a resume (4015): same session, same UDP, missed messages replayed.
      this.#resuming = true;
      this.events.reconnecting();
      this.open();
      return;
    }
    this.#finish(code, reason);
  }

  #fail(reason: string): void {
    this.events.log(reason);
    this.#socket?.close(1000, 'client failure');
    this.#finish(4000, reason);
  }

  #finish(code: number, reason: string): void {
    if (this.#closed) return;
    this.close();
    this.events.closed(code, reason);
  }

  /** Ends everything without reporting (EndCall). */
  close(): void {
    this.#closed = true;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    if (this.#keepalive) clearInterval(this.#keepalive);
    this.#heartbeat = undefined;
    this.#keepalive = undefined;
    const socket = this.#socket;
    this.#socket = undefined;
    if (socket && socket.readyState <= 1) socket.close(1000, 'call ended');
    this.#udp?.close();
    this.#udp = undefined;
    this.#dave?.close();
  }
}

function discoveryRequest(ssrc: number): Uint8Array {
  const packet = new Uint8Array(IpDiscovery.PacketBytes);
  const view = new DataView(packet.buffer);
  view.setUint16(0, IpDiscovery.Request);
  view.setUint16(2, IpDiscovery.Length);
  view.setUint32(4, ssrc);
  return packet;
}

function parseDiscovery(packet: Uint8Array): { address: string; port: number } | undefined {
  if (packet.length !== IpDiscovery.PacketBytes) return undefined;
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  if (view.getUint16(0) !== IpDiscovery.Response) return undefined;
  const start = IpDiscovery.AddressOffset;
  let end = start;
  while (end < start + IpDiscovery.AddressBytes && packet[end] !== 0) end++;
  const address = new TextDecoder().decode(packet.subarray(start, end));
  return { address, port: view.getUint16(packet.length - 2) };
}
