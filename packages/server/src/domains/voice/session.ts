import { VOICE_RESUME_BUFFER_SIZE, type VoiceEncryptionMode } from '@hearth/protocol';
import type { WebSocket } from 'ws';
import type { MediaRights } from './media.js';

/** What the member may do in its call, from its permissions and voice state (PROTOCOL.md §G, GUILDS.md §3.5). */
export interface VoiceRights extends MediaRights {
  /** PRIORITY_SPEAKER: op 5's priority bit is relayed only with it. */
  priority: boolean;
}

interface Buffered {
  /** Every message numbered from 1; the wire carries it modulo 2^16 (PROTOCOL.md §G.3). */
  n: number;
  frame: string | Buffer;
}

/**
 * One member's voice session: it outlives its WebSocket for a v8 Resume. Server messages other than
 * Hello, Heartbeat ACK and Resumed are numbered (`seq`, or the binary frame's first two bytes) and kept
 * until a heartbeat's `seq_ack` covers them, so a Resume replays what the member missed.
 */
export class VoiceSession {
  readonly userId: string;
  readonly serverId: string;
  readonly sessionId: string;
  readonly version: number;
  readonly ssrc: number;
  readonly maxDaveProtocolVersion: number;
  channelId: string;
  rights: VoiceRights;
  socket: WebSocket | undefined;
  mode: VoiceEncryptionMode | undefined;
  daveProtocolVersion = 0;
  /** The last op 5 flags relayed for it: joiners learn its SSRC from them. */
  speaking: number | undefined;
  flags: number | undefined;
  platform: number | undefined;
  /** The WebRTC peer of a member whose media goes over a data channel (op 1 `webrtc_datachannel`). */
  peer: { close(): void } | undefined;
  /** Set while the socket is gone and a Resume may still take the session back. */
  resumeTimer: NodeJS.Timeout | undefined;
  #sent = 0;
  #buffer: Buffered[] = [];

  constructor(init: {
    userId: string;
    serverId: string;
    sessionId: string;
    channelId: string;
    version: number;
    ssrc: number;
    maxDaveProtocolVersion: number;
    rights: VoiceRights;
    socket: WebSocket;
  }) {
    this.userId = init.userId;
    this.serverId = init.serverId;
    this.sessionId = init.sessionId;
    this.channelId = init.channelId;
    this.version = init.version;
    this.ssrc = init.ssrc;
    this.maxDaveProtocolVersion = init.maxDaveProtocolVersion;
    this.rights = init.rights;
    this.socket = init.socket;
  }

  get buffered(): boolean {
    return this.version >= 8;
  }

  /** A numbered JSON message (v8), or a bare one below v8; kept for resume, sent if the socket is open. */
  send(op: number, d: unknown): void {
    if (!this.buffered) {
      this.#write(JSON.stringify({ op, d }));
      return;
    }
    const n = this.#next();
    const frame = JSON.stringify({ op, d, seq: n & 0xffff });
    this.#keep(n, frame);
    this.#write(frame);
  }

  /** A binary message: `u16 seq ‖ u8 op ‖ payload` (PROTOCOL.md §G.6); binary frames exist from v8 only. */
  sendBinary(op: number, payload: Uint8Array): void {
    const n = this.#next();
    const frame = Buffer.allocUnsafe(3 + payload.length);
    frame.writeUInt16BE(n & 0xffff, 0);
    frame[2] = op;
    frame.set(payload, 3);
    this.#keep(n, frame);
    this.#write(frame);
  }

  /** Hello, Heartbeat ACK and Resumed: never numbered, never replayed. */
  sendUnnumbered(op: number, d: unknown): void {
    this.#write(JSON.stringify({ op, d }));
  }

  /** The member saw everything up to `seqAck`: those messages are not kept any longer. */
  acknowledge(seqAck: number): void {
    const upTo = this.#resolve(seqAck);
    if (upTo === undefined) return;
    const keep = this.#buffer.findIndex((entry) => entry.n > upTo);
    this.#buffer = keep === -1 ? [] : this.#buffer.slice(keep);
  }

  /**
   * The messages after `seqAck` (-1 or none: from the first), or undefined when some of them are no longer
   * kept, in which case the session cannot resume.
   */
  missedSince(seqAck: number | undefined): Array<string | Buffer> | undefined {
    const upTo = seqAck === undefined || seqAck < 0 ? 0 : this.#resolve(seqAck);
    if (upTo === undefined) return undefined;
    const first = this.#buffer[0];
    if (first && first.n > upTo + 1) return undefined;
    if (!first && upTo < this.#sent) return undefined;
    return this.#buffer.filter((entry) => entry.n > upTo).map((entry) => entry.frame);
  }

  /** Writes a frame on the current socket, if it is open. */
  write(frame: string | Buffer): void {
    this.#write(frame);
  }

  #next(): number {
    this.#sent += 1;
    return this.#sent;
  }

  #keep(n: number, frame: string | Buffer): void {
    this.#buffer.push({ n, frame });
    if (this.#buffer.length > VOICE_RESUME_BUFFER_SIZE) this.#buffer.shift();
  }

  /** The message number a wire `seq` acknowledges: the latest sent whose low 16 bits are it. */
  #resolve(seq: number): number | undefined {
    if (!Number.isInteger(seq) || seq < 0 || seq > 0xffff) return undefined;
    const n = this.#sent - ((this.#sent - seq) & 0xffff);
    return n < 0 ? undefined : n;
  }

  #write(frame: string | Buffer): void {
    const socket = this.socket;
    if (socket && socket.readyState === socket.OPEN) socket.send(frame);
  }
}
