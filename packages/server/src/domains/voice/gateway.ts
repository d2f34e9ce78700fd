import { randomBytes, randomInt } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  SpeakingFlags,
  VOICE_CLIENT_FRAMES_LIMIT,
  VOICE_ENCRYPTION_MODES,
  VOICE_GATEWAY_MAX_VERSION,
  VOICE_GATEWAY_MIN_VERSION,
  VOICE_RESUME_WINDOW_MS,
  VOICE_SDP_MAX_LENGTH,
  VOICE_SECRET_KEY_BYTES,
  VOICE_VERSION_REFUSED_CLOSE_CODE,
  VoiceCloseCodes,
  type VoiceEncryptionMode,
  VoiceOpcodes,
  VoiceProtocols,
} from '@hearth/protocol';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import type { Clock } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/logger.js';
import { VoiceCall } from './call.js';
import type { E2eeCalls, E2eeMember } from './e2ee.js';
import type { MediaStats, VoiceMedia } from './media.js';
import { type VoiceGrant, VoiceRefusal, type VoiceService } from './service.js';
import { type VoiceRights, VoiceSession } from './session.js';
import { answerDataChannelOffer, type DataChannelPeer, SdpRefused, type WebRtcConfig } from './webrtc.js';

/** A voice gateway frame is small; anything larger is refused before it is buffered (closes 1009). */
const MAX_FRAME_BYTES = 64 * 1024;
/** The media counters of a node whose forwarder is not bound yet. */
const NO_MEDIA_YET: Readonly<MediaStats> = {
  received: 0,
  forwarded: 0,
  dropped: 0,
  decryptFailures: 0,
  rtcp: 0,
  daveFrames: 0,
  plainFrames: 0,
};
/** How often this node tells the others it still hosts its calls. */
const CALL_REFRESH_MS = 30_000;

export interface VoiceGatewayDeps {
  service: VoiceService;
  e2ee: E2eeCalls;
  logger: Logger;
  /** Counts the frame budget's windows (VOICE_CLIENT_FRAMES_LIMIT). */
  clock: Clock;
  /** The address Ready tells clients to send UDP to. */
  publicHost: string;
  heartbeatIntervalMs: number;
  /** Ready's `modes`, in the order offered: clients take the first they support. */
  modes: readonly VoiceEncryptionMode[];
  /** Where browsers' data channels reach this node (op 1 `webrtc_datachannel`). */
  webrtc: WebRtcConfig;
}

/** The fields of VOICE_STATE_UPDATE / LOBBY_VOICE_STATE_UPDATE the voice gateway reads. */
interface VoiceStateChange {
  guild_id?: unknown;
  lobby_id?: unknown;
  user_id?: unknown;
}

/** One client connection and the session it opened, if any. */
interface Link {
  socket: WebSocket;
  version: number;
  session: VoiceSession | undefined;
  /** Identify or Resume is being checked: a second one closes 4005. */
  authenticating: boolean;
  heartbeatTimer: NodeJS.Timeout | undefined;
  /** Frames are handled one after another, Identify's storage reads included. */
  queue: Promise<void>;
  /** The client's frames in the current window (VOICE_CLIENT_FRAMES_LIMIT). */
  window: { start: number; count: number };
}

type Handler = (link: Link, d: unknown) => Promise<void> | void;

/**
 * The voice gateway of one node (PROTOCOL.md §G): its own WebSocket endpoint (`wss://` with a certificate),
 * sessions with v8 buffered resume, and the calls this node hosts; media goes through `VoiceMedia`.
 */
export class VoiceGateway {
  readonly #deps: VoiceGatewayDeps;
  readonly #wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
  });
  readonly #calls = new Map<string, VoiceCall>();
  /** Sessions by `serverId:userId`: one voice session per user and server. */
  readonly #sessions = new Map<string, VoiceSession>();
  readonly #links = new Set<Link>();
  readonly #ssrcs = new Set<number>();
  readonly #refresh: NodeJS.Timeout;
  #server: Server | undefined;
  /** Given by `listen`: nothing reaches a handler before. */
  #media!: VoiceMedia;
  #port = 0;
  #stateChanges: Promise<void> = Promise.resolve();

  /** Every opcode a client may send, in one table (STYLE.md rule 8); any other closes 4001. */
  readonly #handlers: Readonly<Record<number, Handler>> = {
    [VoiceOpcodes.Identify]: (link, d) => this.#identify(link, d),
    [VoiceOpcodes.SelectProtocol]: (link, d) => this.#selectProtocol(link, d),
    [VoiceOpcodes.Heartbeat]: (link, d) => this.#heartbeat(link, d),
    [VoiceOpcodes.Speaking]: (link, d) => this.#speaking(link, d),
    [VoiceOpcodes.Resume]: (link, d) => this.#resume(link, d),
    [VoiceOpcodes.ClientFlags]: (link, d) => this.#clientFlags(link, d),
    [VoiceOpcodes.ClientPlatform]: (link, d) => this.#clientPlatform(link, d),
    [VoiceOpcodes.DaveTransitionReady]: (link, d) =>
      this.#daveJson(link, VoiceOpcodes.DaveTransitionReady, d),
    [VoiceOpcodes.DaveMlsInvalidCommitWelcome]: (link, d) =>
      this.#daveJson(link, VoiceOpcodes.DaveMlsInvalidCommitWelcome, d),
  };

  constructor(deps: VoiceGatewayDeps) {
    this.#deps = deps;
    this.#refresh = setInterval(() => {
      this.#deps.service
        .refresh([...this.#calls.keys()])
        .catch((error) => this.#deps.logger.error({ err: error }, 'voice call refresh failed'));
    }, CALL_REFRESH_MS);
    this.#refresh.unref();
  }

  /**
   * Listens on `host:port` (TLS when a certificate is given: clients hard-code `wss://`), its media going
   * through `media`; answers the port.
   */
  async listen(
    media: VoiceMedia,
    host: string,
    port: number,
    tls?: { cert: string; key: string },
  ): Promise<number> {
    this.#media = media;
    const server = tls ? createHttpsServer(tls) : createHttpServer();
    server.on('request', (_request, response) => {
      response.writeHead(426, { 'content-type': 'text/plain' }).end('voice gateway: WebSocket only\n');
    });
    server.on('upgrade', (request, socket, head) => {
      socket.on('error', () => socket.destroy());
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#open(ws, request));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.#server = server;
    const address = server.address();
    this.#port = typeof address === 'object' && address ? address.port : port;
    return this.#port;
  }

  /** `host:port` clients reach this voice gateway at (VOICE_SERVER_UPDATE `endpoint`); known after `listen`. */
  get endpoint(): string {
    const host = this.#deps.publicHost;
    return `${host.includes(':') ? `[${host}]` : host}:${this.#port}`;
  }

  /** Live sessions and calls on this node (tests and metrics). */
  get counts(): { sessions: number; calls: number } {
    return { sessions: this.#sessions.size, calls: this.#calls.size };
  }

  /** The media path's counters (metrics, benchmarks). */
  get mediaStats(): MediaStats {
    // Before `listen` (a one-shot command, or a scrape racing startup) nothing has been forwarded.
    return (this.#media as VoiceMedia | undefined)?.stats ?? NO_MEDIA_YET;
  }

  /** What the user's voice session on this node may do now, if it has one. */
  rightsOf(serverId: string, userId: string): VoiceRights | undefined {
    return this.#sessions.get(`${serverId}:${userId}`)?.rights;
  }

  async close(): Promise<void> {
    clearInterval(this.#refresh);
    for (const link of this.#links) link.socket.terminate();
    for (const session of [...this.#sessions.values()]) this.#end(session, undefined, false);
    this.#wss.close();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /**
   * A VOICE_STATE_UPDATE or LOBBY_VOICE_STATE_UPDATE was published (any node): the member's session here follows it. Leaving voice or a
   * new gateway session ends it (4014); a move by a moderator takes it to the new call; mute, deafen,
   * suppress and permissions set what the media path forwards.
   */
  voiceStateChanged(state: VoiceStateChange): Promise<void> {
    // One after another, in publish order: a later change must not be overtaken by an earlier one's reads.
    const next = this.#stateChanges.then(() => this.#applyVoiceState(state));
    this.#stateChanges = next.catch(() => {});
    return next;
  }

  /**
   * Roles, overwrites, a member's roles or the guild's owner changed (any node): every session of that
   * server here (or only `userId`'s) takes its rights now, not at its next voice state. A member that lost
   * CONNECT is disconnected from voice (VOICE_STATE_UPDATE with no channel, 4014), as a moderator would.
   */
  permissionsChanged(serverId: string, userId?: string): Promise<void> {
    const sessions = [...this.#sessions.values()].filter(
      (session) => session.serverId === serverId && (userId === undefined || session.userId === userId),
    );
    const next = this.#stateChanges.then(async () => {
      for (const session of sessions) await this.#reevaluate(session, true);
    });
    this.#stateChanges = next.catch(() => {});
    return next;
  }

  /**
   * The call's channel (or lobby) is gone: every session in it closes 4022, "call terminated", which the
   * documents give for a deleted channel; a member removed alone gets 4014 through its voice state.
   */
  callTerminated(channelId: string): void {
    for (const session of [...this.#sessions.values()]) {
      if (session.channelId === channelId) this.#end(session, VoiceCloseCodes.CallTerminated);
    }
  }

  /** The guild is gone, and with it every call of its channels: 4022 for each session of that server. */
  serverTerminated(serverId: string): void {
    for (const session of [...this.#sessions.values()]) {
      if (session.serverId === serverId) this.#end(session, VoiceCloseCodes.CallTerminated);
    }
  }

  async #applyVoiceState(state: VoiceStateChange): Promise<void> {
    const server = state.guild_id ?? state.lobby_id;
    const serverId = typeof server === 'string' ? server : undefined;
    const userId = typeof state.user_id === 'string' ? state.user_id : undefined;
    if (userId === undefined) return;
    if (serverId === undefined) {
      // A DM call's voice state names no server, and once left no channel either: the user's sessions
      // whose server is their call's own channel (DM and lobby calls) follow it.
      const sessions = [...this.#sessions.values()].filter(
        (session) => session.userId === userId && session.serverId === session.channelId,
      );
      for (const session of sessions) await this.#reevaluate(session, false);
      return;
    }
    const session = this.#sessions.get(`${serverId}:${userId}`);
    if (session) await this.#reevaluate(session, false);
  }

  /**
   * The session follows its member's voice state and permissions. `checkConnect`: a permission change
   * (not a move, where a moderator may place a member where it could not connect itself) also needs CONNECT.
   */
  async #reevaluate(session: VoiceSession, checkConnect: boolean): Promise<void> {
    const { serverId, userId } = session;
    const membership = await this.#deps.service.membership(serverId, userId);
    if (this.#sessions.get(`${serverId}:${userId}`) !== session) return;
    if (!membership || membership.sessionId !== session.sessionId) {
      this.#end(session, VoiceCloseCodes.Disconnected);
      return;
    }
    if (checkConnect && !membership.connect) {
      this.#end(session, VoiceCloseCodes.Disconnected);
      await this.#deps.service.disconnect(serverId, userId, session.sessionId);
      return;
    }
    if (membership.channelId !== session.channelId) {
      if (!(await this.#deps.service.moved(userId, serverId, membership.channelId))) {
        this.#end(session, VoiceCloseCodes.Disconnected);
        return;
      }
      this.#move(session, membership.channelId);
    }
    this.#setRights(session, membership.rights);
  }

  // ---- Connections ----

  #open(socket: WebSocket, request: IncomingMessage): void {
    const version = requestedVersion(request.url);
    if (version === undefined) {
      socket.close(VOICE_VERSION_REFUSED_CLOSE_CODE, 'voice gateway version required (v=4 or above)');
      return;
    }
    const link: Link = {
      socket,
      version,
      session: undefined,
      authenticating: false,
      heartbeatTimer: undefined,
      queue: Promise.resolve(),
      window: { start: this.#deps.clock.now(), count: 0 },
    };
    this.#links.add(link);
    socket.on('error', () => {});
    socket.on('message', (data, isBinary) => {
      // Counted on arrival: frames over the budget are never queued, and the close follows the ones within.
      if (!this.#withinBudget(link)) {
        if (link.window.count === VOICE_CLIENT_FRAMES_LIMIT.limit + 1) {
          link.queue = link.queue.then(() => this.#close(link, VoiceCloseCodes.RateLimited));
        }
        return;
      }
      link.queue = link.queue
        .then(() => this.#frame(link, data, isBinary))
        .catch((error) => {
          this.#deps.logger.error({ err: error }, 'voice gateway frame failed');
          this.#close(link, VoiceCloseCodes.VoiceServerCrashed);
        });
    });
    socket.on('close', () => this.#closed(link));
    socket.send(
      JSON.stringify({
        op: VoiceOpcodes.Hello,
        d: { heartbeat_interval: this.#deps.heartbeatIntervalMs, v: version },
      }),
    );
    this.#armHeartbeat(link);
  }

  #withinBudget(link: Link): boolean {
    const now = this.#deps.clock.now();
    if (now - link.window.start >= VOICE_CLIENT_FRAMES_LIMIT.windowMs) link.window = { start: now, count: 0 };
    link.window.count += 1;
    return link.window.count <= VOICE_CLIENT_FRAMES_LIMIT.limit;
  }

  /** The client did not heartbeat in time: 4009 (its session may still resume). */
  #armHeartbeat(link: Link): void {
    clearTimeout(link.heartbeatTimer);
    link.heartbeatTimer = setTimeout(
      () => this.#close(link, VoiceCloseCodes.SessionTimeout),
      this.#deps.heartbeatIntervalMs * 2,
    );
    link.heartbeatTimer.unref();
  }

  async #frame(link: Link, data: RawData, isBinary: boolean): Promise<void> {
    if (link.socket.readyState !== link.socket.OPEN) return;
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    if (isBinary) {
      this.#binary(link, bytes);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(bytes.toString('utf8'));
    } catch {
      this.#close(link, VoiceCloseCodes.FailedToDecodePayload);
      return;
    }
    const op = (message as { op?: unknown } | null)?.op;
    if (typeof message !== 'object' || message === null || !Number.isInteger(op)) {
      this.#close(link, VoiceCloseCodes.FailedToDecodePayload);
      return;
    }
    const handler = this.#handlers[op as number];
    if (!handler) {
      this.#close(link, VoiceCloseCodes.UnknownOpcode);
      return;
    }
    const isOpening = op === VoiceOpcodes.Identify || op === VoiceOpcodes.Resume;
    if (!link.session && !isOpening && op !== VoiceOpcodes.Heartbeat) {
      this.#close(link, VoiceCloseCodes.NotAuthenticated);
      return;
    }
    await handler(link, (message as { d?: unknown }).d);
  }

  /** Binary frames are DAVE's (`u8 op ‖ payload`, PROTOCOL.md §G.6): only 26 and 28 come from clients. */
  #binary(link: Link, bytes: Buffer): void {
    const session = link.session;
    if (!session) {
      this.#close(link, VoiceCloseCodes.NotAuthenticated);
      return;
    }
    if (bytes.length < 1) {
      this.#close(link, VoiceCloseCodes.FailedToDecodePayload);
      return;
    }
    const op = bytes[0]!;
    if (op !== VoiceOpcodes.DaveMlsKeyPackage && op !== VoiceOpcodes.DaveMlsCommitWelcome) {
      this.#close(link, VoiceCloseCodes.UnknownOpcode);
      return;
    }
    const call = this.#calls.get(session.channelId);
    const member = call?.memberOf(session);
    // A client that offered DAVE may use it after its op 4: a mixed call upgrades when the last client without leaves.
    if (!call || !member || session.maxDaveProtocolVersion === 0) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    call.e2ee.binary(member, op, bytes.subarray(1));
  }

  #close(link: Link, code: number): void {
    const socket = link.socket;
    if (socket.readyState === socket.OPEN || socket.readyState === socket.CONNECTING) socket.close(code);
    // Codes the client may not resume after end the session at once (PROTOCOL.md §G.2).
    if (
      link.session &&
      code !== VoiceCloseCodes.VoiceServerCrashed &&
      code !== VoiceCloseCodes.SessionTimeout
    ) {
      this.#end(link.session, undefined);
    }
  }

  /** The socket closed: its session waits for a Resume, then leaves the call. */
  #closed(link: Link): void {
    clearTimeout(link.heartbeatTimer);
    this.#links.delete(link);
    const session = link.session;
    if (!session || session.socket !== link.socket) return;
    session.socket = undefined;
    clearTimeout(session.resumeTimer);
    session.resumeTimer = setTimeout(() => this.#end(session, undefined), VOICE_RESUME_WINDOW_MS);
    session.resumeTimer.unref();
  }

  // ---- Opcodes ----

  /** Op 0 (PROTOCOL.md §G.2): token, then the E2EE rule, then Ready and the call's members (op 11). */
  async #identify(link: Link, d: unknown): Promise<void> {
    if (link.session || link.authenticating) {
      this.#close(link, VoiceCloseCodes.AlreadyAuthenticated);
      return;
    }
    const input = parseIdentify(d);
    if (!input) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    link.authenticating = true;
    const grant = await this.#authorize(link, input);
    link.authenticating = false;
    if (!grant) return;
    const { e2ee, service } = this.#deps;
    const maxDave = Math.min(input.maxDaveProtocolVersion, e2ee.maxProtocolVersion);
    if (grant.endToEndCall && maxDave === 0 && service.endToEndRequired()) {
      this.#close(link, VoiceCloseCodes.E2EERequired);
      return;
    }
    const previous = this.#sessions.get(`${grant.serverId}:${grant.userId}`);
    if (previous) this.#end(previous, VoiceCloseCodes.Disconnected);
    const session = new VoiceSession({
      ...grant,
      version: link.version,
      ssrc: this.#allocateSsrc(),
      maxDaveProtocolVersion: maxDave,
      socket: link.socket,
    });
    link.session = session;
    this.#sessions.set(`${grant.serverId}:${grant.userId}`, session);
    const call = this.#callOf(grant.channelId, grant.serverId);
    this.#media.add({
      ssrc: session.ssrc,
      callId: call.channelId,
      userId: session.userId,
      rights: session.rights,
    });
    session.send(VoiceOpcodes.Ready, {
      ssrc: session.ssrc,
      ip: this.#deps.publicHost,
      port: this.#media.port,
      modes: this.#deps.modes,
      experiments: [],
    });
    call.add(session, this.#member(session));
  }

  /**
   * Op 1: UDP, or a browser's WebRTC data channel (its SDP offer in `data.sdp`, answered in op 4's `sdp`),
   * with one of the two rtpsize modes (4016 otherwise); answers op 4 with a fresh key.
   */
  async #selectProtocol(link: Link, d: unknown): Promise<void> {
    const session = link.session!;
    const input = d as {
      protocol?: unknown;
      data?: { address?: unknown; port?: unknown; mode?: unknown; sdp?: unknown };
    } | null;
    if (typeof input !== 'object' || input === null) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    if (input.protocol !== VoiceProtocols.Udp && input.protocol !== VoiceProtocols.WebRtcDataChannel) {
      this.#close(link, VoiceCloseCodes.UnknownProtocol);
      return;
    }
    const data = input.data;
    if (typeof data !== 'object' || data === null || typeof data.mode !== 'string') {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    const mode = VOICE_ENCRYPTION_MODES.find((known) => known === data.mode);
    if (!mode) {
      this.#close(link, VoiceCloseCodes.UnknownEncryptionMode);
      return;
    }
    let peer: DataChannelPeer | undefined;
    if (input.protocol === VoiceProtocols.WebRtcDataChannel) {
      peer = await this.#answerOffer(link, session, data.sdp);
      if (!peer) return;
    }
    const call = this.#calls.get(session.channelId)!;
    const member = call.memberOf(session)!;
    const firstTime = session.mode === undefined;
    const key = randomBytes(VOICE_SECRET_KEY_BYTES);
    session.mode = mode as VoiceEncryptionMode;
    session.daveProtocolVersion = call.e2ee.protocolVersion(member);
    this.#media.describe(session.ssrc, session.mode, key);
    session.send(VoiceOpcodes.SessionDescription, {
      mode,
      secret_key: [...key],
      dave_protocol_version: session.daveProtocolVersion,
      audio_codec: 'opus',
      video_codec: null,
      ...(peer ? { sdp: peer.sdp } : {}),
    });
    call.speakingOf(session);
    if (firstTime) call.e2ee.joined(member);
  }

  /** The data channel's peer for this session (a previous one is closed); a bad offer closes 4020. */
  async #answerOffer(link: Link, session: VoiceSession, sdp: unknown): Promise<DataChannelPeer | undefined> {
    if (typeof sdp !== 'string' || sdp.length > VOICE_SDP_MAX_LENGTH) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return undefined;
    }
    let peer: DataChannelPeer;
    try {
      peer = await answerDataChannelOffer(sdp, this.#deps.webrtc);
    } catch (error) {
      if (!(error instanceof SdpRefused)) throw error;
      this.#deps.logger.info({ sessionId: session.sessionId, reason: error.message }, 'voice sdp refused');
      this.#close(link, VoiceCloseCodes.BadRequest);
      return undefined;
    }
    // The session may have ended while the answer was made.
    if (this.#sessions.get(`${session.serverId}:${session.userId}`) !== session) {
      peer.close();
      return undefined;
    }
    session.peer?.close();
    session.peer = peer;
    this.#media.connect(session.ssrc, peer.channel);
    return peer;
  }

  /** Op 3: op 6 echoes `t` (v8) or the nonce; v8's `seq_ack` releases what the client has seen. */
  #heartbeat(link: Link, d: unknown): void {
    this.#armHeartbeat(link);
    const beat = typeof d === 'object' && d !== null ? (d as { t?: unknown; seq_ack?: unknown }) : undefined;
    const session = link.session;
    if (session && typeof beat?.seq_ack === 'number') session.acknowledge(beat.seq_ack);
    const ack = link.version >= 8 && beat ? { t: beat.t } : d;
    link.socket.send(JSON.stringify({ op: VoiceOpcodes.HeartbeatAck, d: ack }));
  }

  /**
   * Op 5: relayed to the others as `{user_id, ssrc, speaking}`. Without SPEAK (or while muted or
   * suppressed) the member is relayed as silent; the priority bit needs PRIORITY_SPEAKER.
   */
  #speaking(link: Link, d: unknown): void {
    const session = link.session!;
    const speaking = (d as { speaking?: unknown } | null)?.speaking;
    if (typeof speaking !== 'number' || !Number.isInteger(speaking) || speaking < 0 || speaking > 0xff) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    const allowed = session.rights.send
      ? speaking & ~(session.rights.priority ? 0 : SpeakingFlags.Priority)
      : 0;
    if (allowed === session.speaking) return;
    session.speaking = allowed;
    this.#calls.get(session.channelId)?.broadcast(session, VoiceOpcodes.Speaking, {
      user_id: session.userId,
      ssrc: session.ssrc,
      speaking: allowed,
    });
  }

  /** Op 7 (PROTOCOL.md §G.3): op 9, then every message after `seq_ack`; 4006 when it cannot. */
  async #resume(link: Link, d: unknown): Promise<void> {
    if (link.session || link.authenticating) {
      this.#close(link, VoiceCloseCodes.AlreadyAuthenticated);
      return;
    }
    const input = parseResume(d);
    if (!input) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    link.authenticating = true;
    const grant = await this.#authorize(link, { ...input, userId: undefined });
    link.authenticating = false;
    if (!grant) return;
    const session = this.#sessions.get(`${grant.serverId}:${grant.userId}`);
    const missed = session?.sessionId === input.sessionId ? session.missedSince(input.seqAck) : undefined;
    if (!session || !missed || session.version !== link.version) {
      if (session) this.#end(session, undefined);
      this.#close(link, VoiceCloseCodes.SessionNoLongerValid);
      return;
    }
    const previous = session.socket;
    clearTimeout(session.resumeTimer);
    session.resumeTimer = undefined;
    session.socket = link.socket;
    link.session = session;
    previous?.close(VoiceCloseCodes.SessionNoLongerValid);
    session.sendUnnumbered(VoiceOpcodes.Resumed, null);
    for (const frame of missed) session.write(frame);
  }

  /** Op 18: the client's flags, relayed to the others and to later joiners. */
  #clientFlags(link: Link, d: unknown): void {
    const session = link.session!;
    const flags = (d as { flags?: unknown } | null)?.flags;
    if (typeof flags !== 'number' || !Number.isInteger(flags) || flags < 0) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    session.flags = flags;
    this.#calls
      .get(session.channelId)
      ?.broadcast(session, VoiceOpcodes.ClientFlags, { user_id: session.userId, flags });
  }

  /** Op 20: the client's platform, relayed like op 18. */
  #clientPlatform(link: Link, d: unknown): void {
    const session = link.session!;
    const platform = (d as { platform?: unknown } | null)?.platform;
    if (typeof platform !== 'number' || !Number.isInteger(platform) || platform < 0) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    session.platform = platform;
    this.#calls
      .get(session.channelId)
      ?.broadcast(session, VoiceOpcodes.ClientPlatform, { user_id: session.userId, platform });
  }

  /** Ops 23 and 31 go to the call's end-to-end state; a session without DAVE may not send them. */
  #daveJson(link: Link, op: number, d: unknown): void {
    const session = link.session!;
    const call = this.#calls.get(session.channelId);
    const member = call?.memberOf(session);
    if (!call || !member || session.maxDaveProtocolVersion === 0) {
      this.#close(link, VoiceCloseCodes.BadRequest);
      return;
    }
    call.e2ee.json(member, op, d);
  }

  // ---- Steps ----

  async #authorize(
    link: Link,
    input: { serverId: string; userId: string | undefined; sessionId: string; token: string },
  ): Promise<VoiceGrant | undefined> {
    try {
      return await this.#deps.service.authorize(input);
    } catch (error) {
      if (!(error instanceof VoiceRefusal)) throw error;
      this.#close(link, error.code);
      return undefined;
    }
  }

  #member(session: VoiceSession): E2eeMember {
    return {
      userId: session.userId,
      maxProtocolVersion: session.maxDaveProtocolVersion,
      send: (op, d) => session.send(op, d),
      sendBinary: (op, payload) => session.sendBinary(op, payload),
      close: (code) => this.#end(session, code),
    };
  }

  #callOf(channelId: string, serverId: string): VoiceCall {
    let call = this.#calls.get(channelId);
    if (!call) {
      call = new VoiceCall(channelId, serverId, this.#deps.e2ee);
      this.#calls.set(channelId, call);
    }
    return call;
  }

  /** A moderator moved the member: it leaves one call and joins the other without reconnecting. */
  #move(session: VoiceSession, channelId: string): void {
    this.#leaveCall(session);
    session.channelId = channelId;
    const call = this.#callOf(channelId, session.serverId);
    this.#media.update(session.ssrc, { callId: channelId });
    const member = this.#member(session);
    call.add(session, member);
    if (session.mode !== undefined) {
      session.daveProtocolVersion = call.e2ee.protocolVersion(member);
      call.speakingOf(session);
      call.e2ee.joined(member);
    }
  }

  #setRights(session: VoiceSession, rights: VoiceRights): void {
    session.rights = rights;
    this.#media.update(session.ssrc, { rights });
    // Losing the right to speak silences the member for the others at once.
    if (!rights.send && session.speaking) {
      session.speaking = 0;
      this.#calls.get(session.channelId)?.broadcast(session, VoiceOpcodes.Speaking, {
        user_id: session.userId,
        ssrc: session.ssrc,
        speaking: 0,
      });
    }
  }

  /** The session ends: it leaves its call (op 13 to the others) and its socket closes with `code`. */
  #end(session: VoiceSession, code: number | undefined, release = true): void {
    const key = `${session.serverId}:${session.userId}`;
    if (this.#sessions.get(key) !== session) return;
    this.#sessions.delete(key);
    clearTimeout(session.resumeTimer);
    this.#leaveCall(session, release);
    this.#media.remove(session.ssrc);
    this.#ssrcs.delete(session.ssrc);
    session.peer?.close();
    session.peer = undefined;
    const socket = session.socket;
    session.socket = undefined;
    if (code !== undefined && socket && socket.readyState === socket.OPEN) socket.close(code);
  }

  #leaveCall(session: VoiceSession, release = true): void {
    const call = this.#calls.get(session.channelId);
    if (!call) return;
    call.remove(session);
    if (call.size > 0) return;
    call.e2ee.close();
    this.#calls.delete(call.channelId);
    if (!release) return;
    this.#deps.service
      .released(call.channelId)
      .catch((error) => this.#deps.logger.error({ err: error }, 'voice call release failed'));
  }

  #allocateSsrc(): number {
    let ssrc: number;
    do ssrc = randomInt(1, 2 ** 32 - 1);
    while (this.#ssrcs.has(ssrc));
    this.#ssrcs.add(ssrc);
    return ssrc;
  }
}

/** `?v=` as an integer from 4 to 8; undefined (refused) when missing, malformed or out of range. */
function requestedVersion(url: string | undefined): number | undefined {
  const raw = new URL(url ?? '/', 'wss://voice.invalid').searchParams.get('v');
  if (raw === null || !/^\d{1,3}$/.test(raw)) return undefined;
  const version = Number(raw);
  return version >= VOICE_GATEWAY_MIN_VERSION && version <= VOICE_GATEWAY_MAX_VERSION ? version : undefined;
}

const SNOWFLAKE = /^\d{1,20}$/;

function parseIdentify(d: unknown) {
  const input = d as Record<string, unknown> | null;
  if (typeof input !== 'object' || input === null) return undefined;
  const { server_id, user_id, session_id, token, max_dave_protocol_version } = input;
  if (typeof server_id !== 'string' || !SNOWFLAKE.test(server_id)) return undefined;
  if (typeof user_id !== 'string' || !SNOWFLAKE.test(user_id)) return undefined;
  if (typeof session_id !== 'string' || typeof token !== 'string') return undefined;
  const dave = max_dave_protocol_version ?? 0;
  if (typeof dave !== 'number' || !Number.isInteger(dave) || dave < 0) return undefined;
  return { serverId: server_id, userId: user_id, sessionId: session_id, token, maxDaveProtocolVersion: dave };
}

function parseResume(d: unknown) {
  const input = d as Record<string, unknown> | null;
  if (typeof input !== 'object' || input === null) return undefined;
  const { server_id, session_id, token, seq_ack } = input;
  if (typeof server_id !== 'string' || !SNOWFLAKE.test(server_id)) return undefined;
  if (typeof session_id !== 'string' || typeof token !== 'string') return undefined;
  if (
    seq_ack !== undefined &&
    seq_ack !== null &&
    (typeof seq_ack !== 'number' || !Number.isInteger(seq_ack))
  ) {
    return undefined;
  }
  return {
    serverId: server_id,
    sessionId: session_id,
    token,
    seqAck: typeof seq_ack === 'number' ? seq_ack : undefined,
  };
}
