/**
 * The Voice feature behind the Client's call methods: starts a lobby call with op 4 on the main gateway
 * (the lobby as the call's channel), waits for VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE, then opens the
 * voice connection; ends calls with op 4 and a null channel.
 */
import { GatewayOpcodes, VoiceCloseCodes } from '@hearth/protocol';
import type { FeatureContext } from '../feature.js';
import { LoggingSeverity } from '../logging.js';
import type { UserAudioCapturedCallback, UserAudioReceivedCallback } from './audio.js';
import { Call } from './call.js';
import { CallError, CallStatus } from './call-status.js';
import type { VoiceNetwork } from './network.js';
import { VoiceConnection, type VoiceConnectionParams } from './voice-connection.js';

/** How long a call waits for the gateway to answer op 4 before giving up (Call::Error JoinTimeout). */
export const JOIN_TIMEOUT_MS = 15_000;

/** Why a call cannot start where the client was given no voice network. */
export const NO_VOICE_NETWORK = 'voice calls need a voice network, and this client has none';

interface Pending {
  call: Call;
  sessionId?: string;
  server?: { token: string; endpoint: string };
  timer: ReturnType<typeof setTimeout>;
}

export class Voice {
  readonly #calls = new Map<string, Call>();
  readonly #pending = new Map<string, Pending>();

  constructor(
    private readonly feature: FeatureContext,
    private readonly network: VoiceNetwork | undefined,
  ) {
    // Lobby calls answer op 4 with the lobby events (the voice domain's lobby calls).
    feature.on('LOBBY_VOICE_STATE_UPDATE', (data) => this.#onVoiceState(data as Record<string, unknown>));
    feature.on('LOBBY_VOICE_SERVER_UPDATE', (data) => this.#onVoiceServer(data as Record<string, unknown>));
  }

  #log(severity: LoggingSeverity, message: string): void {
    this.feature.logger.log(severity, message);
  }

  start(
    lobbyId: string,
    received: UserAudioReceivedCallback | undefined,
    captured: UserAudioCapturedCallback | undefined,
  ): Call | undefined {
    if (!this.network) {
      this.#log(LoggingSeverity.Error, NO_VOICE_NETWORK);
      return undefined;
    }
    if (!/^\d{1,20}$/.test(lobbyId) || BigInt(lobbyId) === 0n) {
      this.#log(LoggingSeverity.Error, 'StartCall needs a lobby id');
      return undefined;
    }
    const existing = this.#calls.get(lobbyId);
    if (existing) return existing;
    const network = this.network;
    const call = new Call({
      channelId: lobbyId,
      network,
      received,
      captured,
      owner: {
        updateVoiceState: (target) => this.#sendVoiceState(target),
        log: (message) => this.#log(LoggingSeverity.Error, message),
        currentUserId: () => this.feature.currentUserId(),
      },
    });
    if (!this.#sendVoiceState(call)) {
      this.#log(LoggingSeverity.Error, 'StartCall needs a Ready client');
      return undefined;
    }
    this.#calls.set(lobbyId, call);
    const timer = setTimeout(() => this.#fail(lobbyId, CallError.JoinTimeout, 0), JOIN_TIMEOUT_MS);
    this.#pending.set(lobbyId, { call, timer });
    return call;
  }

  /** op 4 for this call: its channel, or null once it is ending. */
  #sendVoiceState(call: Call): boolean {
    const ending = call.GetStatus() === CallStatus.Disconnecting;
    return this.feature.send(GatewayOpcodes.VoiceStateUpdate, {
      guild_id: null,
      channel_id: ending ? null : call.GetChannelId().toString(),
      self_mute: call.GetSelfMute(),
      self_deaf: call.GetSelfDeaf(),
    });
  }

  get(channelId: string): Call | undefined {
    return this.#calls.get(channelId);
  }

  all(): Call[] {
    return [...this.#calls.values()];
  }

  /** Ends one call: Disconnecting, op 4 with no channel, the connection closed, then Disconnected. */
  end(channelId: string): boolean {
    const call = this.#calls.get(channelId);
    if (!call) return false;
    this.#clearPending(channelId);
    call.setStatus(CallStatus.Disconnecting);
    this.#sendVoiceState(call);
    this.#teardown(channelId, call);
    call.setStatus(CallStatus.Disconnected);
    return true;
  }

  #teardown(channelId: string, call: Call): void {
    call.connection?.close();
    call.connection = undefined;
    call.dispose();
    if (this.#calls.get(channelId) === call) this.#calls.delete(channelId);
  }

  #clearPending(channelId: string): void {
    const pending = this.#pending.get(channelId);
    if (pending) clearTimeout(pending.timer);
    this.#pending.delete(channelId);
  }

  /** The call is over without the game asking: it stays Disconnected until ended and started again. */
  #fail(channelId: string, error: CallError, detail: number): void {
    const call = this.#calls.get(channelId);
    if (!call) return;
    this.#clearPending(channelId);
    call.connection?.close();
    call.connection = undefined;
    call.setStatus(CallStatus.Disconnected, error, detail);
  }

  /** A member's lobby voice state: `channel_id` is the lobby while in its call, null once they left it. */
  #onVoiceState(data: Record<string, unknown>): void {
    const userId = String(data.user_id ?? '');
    const lobbyId = typeof data.lobby_id === 'string' ? data.lobby_id : undefined;
    const call = lobbyId ? this.#calls.get(lobbyId) : undefined;
    if (!lobbyId || !call) return;
    if (data.channel_id !== lobbyId) {
      call.setParticipant(userId, undefined);
      return;
    }
    call.setParticipant(userId, { selfMute: data.self_mute === true, selfDeaf: data.self_deaf === true });
    if (userId !== this.feature.currentUserId()) return;
    const pending = this.#pending.get(lobbyId);
    if (pending && typeof data.session_id === 'string') {
      pending.sessionId = data.session_id;
      this.#connect(lobbyId, pending);
    }
  }

  #onVoiceServer(data: Record<string, unknown>): void {
    // LOBBY_VOICE_SERVER_UPDATE {token, lobby_id, endpoint}; a null endpoint: the voice server went away.
    const channelId = typeof data.lobby_id === 'string' ? data.lobby_id : undefined;
    const pending = channelId ? this.#pending.get(channelId) : undefined;
    if (!pending || !channelId) return;
    if (typeof data.endpoint !== 'string' || typeof data.token !== 'string') {
      // A null endpoint: the voice server went away; the call cannot continue.
      this.#fail(channelId, CallError.VoiceConnectionFailed, 0);
      return;
    }
    pending.server = { token: data.token, endpoint: data.endpoint };
    this.#connect(channelId, pending);
  }

  #connect(channelId: string, pending: Pending): void {
    const userId = this.feature.currentUserId();
    const network = this.network;
    if (!pending.sessionId || !pending.server || !userId || !network) return;
    this.#clearPending(channelId);
    connectCall(
      pending.call,
      {
        endpoint: pending.server.endpoint,
        token: pending.server.token,
        sessionId: pending.sessionId,
        userId,
        serverId: channelId,
        channelId,
        network,
      },
      {
        log: (message) => this.#log(LoggingSeverity.Verbose, message),
        closed: (code, reason) => {
          this.#log(
            LoggingSeverity.Warning,
            `the call in ${channelId} lost its voice server: ${code} ${reason}`,
          );
          const error =
            code === VoiceCloseCodes.AuthenticationFailed || code === VoiceCloseCodes.E2EERequired
              ? CallError.Forbidden
              : CallError.SignalingUnexpectedClose;
          this.#fail(channelId, error, code);
        },
      },
    );
  }
}

/**
 * Opens the call's voice connection once signalling answered (session id, token, endpoint) and routes its
 * events into the call: Connecting, SignalingConnected, Connected, Reconnecting; audio and speaking.
 */
export function connectCall(
  call: Call,
  params: VoiceConnectionParams,
  report: { log(message: string): void; closed(code: number, reason: string): void },
): VoiceConnection {
  call.setStatus(CallStatus.Connecting);
  const connection = new VoiceConnection(params, {
    signalingConnected: () => call.setStatus(CallStatus.SignalingConnected),
    connected: () => call.setStatus(CallStatus.Connected),
    reconnecting: () => call.setStatus(CallStatus.Reconnecting),
    resumed: () => call.setStatus(CallStatus.Connected),
    closed: (code, reason) => report.closed(code, reason),
    speaking: (user, speaking) => call.speaking(user, speaking),
    clientsConnected: (userIds) => call.rosterJoined(userIds),
    clientDisconnected: (userId) => call.rosterLeft(userId),
    audio: (user, opus) => call.receive(user, opus),
    log: (message) => report.log(message),
  });
  call.connection = connection;
  connection.open();
  return connection;
}
