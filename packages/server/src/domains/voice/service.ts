import { isInEffect, VOICE_TOKEN_LIFETIME_MS, VoiceCloseCodes } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { generateSecret, hashToken } from '../../kernel/secrets.js';
import type { Storage } from '../../storage/database.js';
import type { VoiceRights } from './session.js';
import * as store from './store.js';

/** A node that has not refreshed its calls for this long is gone: another node may take them over. */
export const CALL_STALE_MS = 90_000;

/** Why a voice session is refused: a voice close code (PROTOCOL.md §G.2). */
export class VoiceRefusal extends Error {
  readonly code: number;
  constructor(code: number, reason: string) {
    super(reason);
    this.code = code;
  }
}

/** A member's place in a call as its voice state and permissions give it, or undefined when it has none. */
export interface VoiceMembership {
  channelId: string;
  sessionId: string;
  rights: VoiceRights;
  /** CONNECT in the call's channel (always, in a lobby): losing it while in the call disconnects the member. */
  connect: boolean;
  /** From 1 March 2026 the call may not be transport-encrypted only (stages are not end-to-end encrypted). */
  endToEndCall: boolean;
}

/** Where voice states and permissions come from: guild voice channels, and lobbies for lobby calls. */
export interface VoiceMembershipSource {
  membership(serverId: string, userId: string): Promise<VoiceMembership | undefined>;
  /** Takes the member out of voice (its voice state goes, as with op 4 to no channel) if `sessionId` still holds it. */
  disconnect(serverId: string, userId: string, sessionId: string): Promise<void>;
}

/** What VOICE_SERVER_UPDATE (guilds) and LOBBY_VOICE_SERVER_UPDATE (lobbies) carry besides their id. */
export interface VoiceServer {
  token: string;
  endpoint: string;
}

/** A session the voice gateway may open, from Identify's or Resume's token. */
export interface VoiceGrant {
  userId: string;
  serverId: string;
  channelId: string;
  sessionId: string;
  rights: VoiceRights;
  endToEndCall: boolean;
}

export interface VoiceServiceDeps {
  storage: Storage;
  clock: Clock;
  /** This node's name; calls it hosts carry it. */
  nodeId: string;
  /** `host:port` of this node's voice gateway, known once it listens. */
  endpoint: () => string;
  memberships: VoiceMembershipSource;
}

/**
 * Voice signalling (PROTOCOL.md §G.1): the token and endpoint of VOICE_SERVER_UPDATE, which node hosts each
 * call (one node per call, agreed through the database), and the checks a voice session starts with.
 */
export class VoiceService {
  readonly #deps: VoiceServiceDeps;

  constructor(deps: VoiceServiceDeps) {
    this.#deps = deps;
  }

  /**
   * After op 4 put the user in `channelId` (or took them out: null): a fresh token bound to user, server,
   * channel and gateway session, and the endpoint of the node hosting the call (claimed by this node when
   * no live node hosts it). Leaving revokes the user's token for that server.
   */
  async serverUpdate(
    userId: string,
    sessionId: string,
    serverId: string,
    channelId: string | null,
  ): Promise<VoiceServer | undefined> {
    const { storage, clock } = this.#deps;
    if (channelId === null) {
      await store.deleteTokens(storage.db, userId, serverId);
      return undefined;
    }
    const call = await this.hostOf(channelId);
    const token = generateSecret(16);
    const now = clock.now();
    await store.replaceToken(
      storage.db,
      {
        token_hash: hashToken(token),
        user_id: userId,
        server_id: serverId,
        channel_id: channelId,
        session_id: sessionId,
        expires_at: now + VOICE_TOKEN_LIFETIME_MS,
      },
      now,
    );
    return { token, endpoint: call.endpoint };
  }

  /** The node hosting the call: the one recorded, unless it went quiet; else this node. */
  async hostOf(channelId: string): Promise<store.VoiceCallRow> {
    const { storage, clock, nodeId, endpoint } = this.#deps;
    const now = clock.now();
    const mine = { channel_id: channelId, node_id: nodeId, endpoint: endpoint(), alive_at: now };
    const call = await store.claimCall(storage.db, mine);
    if (call.node_id === nodeId || call.alive_at >= now - CALL_STALE_MS) return call;
    await store.takeOverCall(storage.db, mine, now - CALL_STALE_MS);
    return (await store.findCall(storage.db, channelId)) ?? mine;
  }

  /**
   * Identify and Resume: the token must be live and name this user (when given), server and gateway
   * session (4004); the call must be hosted here (4011); the member must still be in that call (4006).
   */
  async authorize(input: {
    serverId: string;
    userId: string | undefined;
    sessionId: string;
    token: string;
  }): Promise<VoiceGrant> {
    const { storage, clock, nodeId } = this.#deps;
    const row = await store.findToken(storage.db, hashToken(input.token));
    if (
      !row ||
      row.expires_at <= clock.now() ||
      row.session_id !== input.sessionId ||
      (input.userId !== undefined && row.user_id !== input.userId)
    ) {
      throw new VoiceRefusal(VoiceCloseCodes.AuthenticationFailed, 'voice token refused');
    }
    if (row.server_id !== input.serverId)
      throw new VoiceRefusal(VoiceCloseCodes.ServerNotFound, 'other server');
    const call = await this.hostOf(row.channel_id);
    if (call.node_id !== nodeId)
      throw new VoiceRefusal(VoiceCloseCodes.ServerNotFound, 'call on another node');
    const membership = await this.#deps.memberships.membership(row.server_id, row.user_id);
    if (!membership || membership.channelId !== row.channel_id || membership.sessionId !== row.session_id) {
      throw new VoiceRefusal(VoiceCloseCodes.SessionNoLongerValid, 'no longer in that call');
    }
    return {
      userId: row.user_id,
      serverId: row.server_id,
      channelId: row.channel_id,
      sessionId: row.session_id,
      rights: membership.rights,
      endToEndCall: membership.endToEndCall,
    };
  }

  /** The member's rights now (after a voice state or permission change); undefined when it left voice. */
  membership(serverId: string, userId: string): Promise<VoiceMembership | undefined> {
    return this.#deps.memberships.membership(serverId, userId);
  }

  /** The member lost CONNECT while in the call: it leaves voice. */
  disconnect(serverId: string, userId: string, sessionId: string): Promise<void> {
    return this.#deps.memberships.disconnect(serverId, userId, sessionId);
  }

  /** From 1 March 2026 a call in a voice channel, DM or lobby is end-to-end encrypted only (seed). */
  endToEndRequired(): boolean {
    return isInEffect('endToEndEncryptedCallsOnly', this.#deps.clock.now());
  }

  /** A moderator moved the member: its call is now `channelId`, which this node hosts if it can. */
  async moved(userId: string, serverId: string, channelId: string): Promise<boolean> {
    await store.moveToken(this.#deps.storage.db, userId, serverId, channelId);
    return (await this.hostOf(channelId)).node_id === this.#deps.nodeId;
  }

  /** The node still runs these calls. */
  async refresh(channelIds: string[]): Promise<void> {
    await store.refreshCalls(this.#deps.storage.db, this.#deps.nodeId, channelIds, this.#deps.clock.now());
  }

  /** The call's last member left this node: another node may host it next time. */
  async released(channelId: string): Promise<void> {
    await store.releaseCall(this.#deps.storage.db, channelId, this.#deps.nodeId);
  }
}
