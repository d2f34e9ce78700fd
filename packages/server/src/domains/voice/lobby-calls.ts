import { isSnowflake } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { VoiceMembership } from './service.js';
import * as store from './store.js';

/** What a lobby call needs of the lobbies domain: the lobby's game and members (undefined: no such lobby). */
export type LobbyLookup = (
  db: Executor,
  lobbyId: string,
) => Promise<{ applicationId: string; members: readonly string[] } | undefined>;

export interface LobbyCallsDeps {
  storage: Storage;
  bus: Bus;
  lobby: LobbyLookup;
}

/** A lobby voice state as LOBBY_VOICE_STATE_UPDATE carries it; `channel_id` is the lobby, null once left. */
export interface LobbyVoiceStateObject {
  lobby_id: string;
  channel_id: string | null;
  user_id: string;
  session_id: string;
  self_mute: boolean;
  self_deaf: boolean;
  mute: false;
  deaf: false;
  suppress: false;
}

/**
 * Lobby calls (the SDK's `Call`): main gateway op 4 with `guild_id: null` and the lobby as `channel_id`
 * joins that lobby's call (`channel_id: null` leaves the session's lobby call). Members of the lobby receive
 * LOBBY_VOICE_STATE_UPDATE; the joining session then gets LOBBY_VOICE_SERVER_UPDATE `{token, lobby_id,
 * endpoint}` and identifies on the voice gateway with `server_id` = the lobby id. A session is in one lobby
 * call at a time; every lobby member may speak and hear (lobbies have no voice permissions). A person has
 * one voice connection: a lobby call excludes a DM call and a guild voice channel (the app wires that rule).
 */
export class LobbyCalls {
  readonly #deps: LobbyCallsDeps;

  constructor(deps: LobbyCallsDeps) {
    this.#deps = deps;
  }

  /** Op 4 without a guild: answers the lobby joined, or the one left (`joined: false`); 10031 for a non-member. */
  async update(
    userId: string,
    sessionId: string,
    payload: unknown,
  ): Promise<{ lobbyId: string; joined: boolean } | undefined> {
    const input = parse(payload);
    const { storage } = this.#deps;
    const events: BusEvent[] = [];
    const result = await storage.transaction(async (tx) => {
      const current = await store.lobbyCallsOfSession(tx, userId, sessionId);
      if (input.channelId !== null) {
        const lobby = await this.#deps.lobby(tx, input.channelId);
        if (!lobby?.members.includes(userId)) throw new HearthError('UnknownLobby');
      }
      let left: string | undefined;
      for (const row of current) {
        if (row.lobby_id === input.channelId) continue;
        await store.deleteLobbyVoiceState(tx, row.lobby_id, userId);
        events.push(...(await this.#event(tx, row, null)));
        left = row.lobby_id;
      }
      if (input.channelId === null) return left === undefined ? undefined : { lobbyId: left, joined: false };
      const row = {
        lobby_id: input.channelId,
        user_id: userId,
        session_id: sessionId,
        self_mute: input.selfMute ? 1 : 0,
        self_deaf: input.selfDeaf ? 1 : 0,
      };
      await store.upsertLobbyVoiceState(tx, row);
      events.push(...(await this.#event(tx, row, row.lobby_id)));
      return { lobbyId: input.channelId, joined: true };
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return result;
  }

  /** Who may do what in a lobby call: every member in it sends and receives. */
  async membership(lobbyId: string, userId: string): Promise<VoiceMembership | undefined> {
    const { db } = this.#deps.storage;
    const row = await store.findLobbyVoiceState(db, lobbyId, userId);
    const lobby = row ? await this.#deps.lobby(db, lobbyId) : undefined;
    if (!row || !lobby?.members.includes(userId)) return undefined;
    return {
      channelId: lobbyId,
      sessionId: row.session_id,
      connect: true,
      rights: { send: true, receive: true, priority: false },
      endToEndCall: true,
    };
  }

  /**
   * Inside the transaction that removes a member from a lobby: its place in the lobby's call goes with its
   * membership, and the LOBBY_VOICE_STATE_UPDATE with no channel to publish after commit ends its voice
   * session (4014) wherever it is hosted.
   */
  async memberRemoved(tx: Executor, lobbyId: string, userId: string): Promise<BusEvent[]> {
    const row = await store.findLobbyVoiceState(tx, lobbyId, userId);
    if (!row) return [];
    await store.deleteLobbyVoiceState(tx, lobbyId, userId);
    return this.#event(tx, row, null);
  }

  /**
   * The user's lobby calls, whichever session is in them, are left for a DM call or a guild's voice (one
   * voice connection per person): answers the lobbies left.
   */
  async leave(userId: string): Promise<string[]> {
    const events: BusEvent[] = [];
    const left = await this.#deps.storage.transaction(async (tx) => {
      const rows = await store.lobbyCallsOfUser(tx, userId);
      for (const row of rows) {
        await store.deleteLobbyVoiceState(tx, row.lobby_id, userId);
        events.push(...(await this.#event(tx, row, null)));
      }
      return rows.map((row) => row.lobby_id);
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return left;
  }

  /** A gateway session ended for good: it leaves its lobby call. */
  async sessionEnded(userId: string, sessionId: string): Promise<void> {
    await this.update(userId, sessionId, { guild_id: null, channel_id: null });
  }

  async #event(
    db: Executor,
    row: { lobby_id: string; user_id: string; session_id: string; self_mute: number; self_deaf: number },
    channelId: string | null,
  ): Promise<BusEvent[]> {
    const lobby = await this.#deps.lobby(db, row.lobby_id);
    if (!lobby) return [];
    const data: LobbyVoiceStateObject = {
      lobby_id: row.lobby_id,
      channel_id: channelId,
      user_id: row.user_id,
      session_id: row.session_id,
      self_mute: row.self_mute === 1,
      self_deaf: row.self_deaf === 1,
      mute: false,
      deaf: false,
      suppress: false,
    };
    const users = [...new Set([...lobby.members, row.user_id])];
    return [
      {
        type: 'LOBBY_VOICE_STATE_UPDATE',
        data: { ...data },
        audience: { users, applicationId: lobby.applicationId },
      },
    ];
  }
}

function parse(payload: unknown): { channelId: string | null; selfMute: boolean; selfDeaf: boolean } {
  const input = payload as { channel_id?: unknown; self_mute?: unknown; self_deaf?: unknown } | null;
  const channelId = input?.channel_id;
  if (!(channelId === null || (typeof channelId === 'string' && isSnowflake(channelId)))) {
    throw new HearthError('UnknownLobby');
  }
  return { channelId, selfMute: input?.self_mute === true, selfDeaf: input?.self_deaf === true };
}
