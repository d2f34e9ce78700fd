import { Limits, LobbyEvents } from '@hearth/protocol';
import { ClientResult, ErrorType } from '../client-result.js';
import type { FeatureContext } from '../feature.js';
import { snowflakeOf } from '../ids.js';
import type { MessageHandle, WireMessage } from '../messages/message-handle.js';
import type { Messages } from '../messages/messages.js';
import { RestFailure } from '../rest/rest-client.js';
import { LobbyHandle, type WireLobby, type WireLobbyMember } from './lobby-handle.js';

export type LobbyCallback = (lobbyId: bigint) => void;
export type LobbyMemberCallback = (lobbyId: bigint, memberId: bigint) => void;
export type CreateOrJoinLobbyCallback = (result: ClientResult, lobbyId: bigint) => void;
export type SendLobbyMessageCallback = (result: ClientResult, messageId: bigint) => void;
export type GetLobbyMessagesCallback = (result: ClientResult, messages: MessageHandle[]) => void;

export interface CreateOrJoinLobbyOutcome {
  result: ClientResult;
  lobbyId: bigint;
}

export interface SendLobbyMessageOutcome {
  result: ClientResult;
  messageId: bigint;
}

export interface GetLobbyMessagesOutcome {
  result: ClientResult;
  messages: MessageHandle[];
}

interface MemberEvent {
  lobby_id: string;
  member: WireLobbyMember;
}

/**
 * The player's lobbies (PROTOCOL.md §A): what the gateway says of them kept in memory (READY's list, then
 * every LOBBY_* dispatch), the calls that change them, and the game's callbacks.
 */
export class Lobbies {
  readonly #feature: FeatureContext;
  readonly #messages: Messages;
  readonly #lobbies = new Map<string, WireLobby>();
  created: LobbyCallback | undefined;
  updated: LobbyCallback | undefined;
  deleted: LobbyCallback | undefined;
  memberAdded: LobbyMemberCallback | undefined;
  memberUpdated: LobbyMemberCallback | undefined;
  memberRemoved: LobbyMemberCallback | undefined;

  constructor(feature: FeatureContext, messages: Messages) {
    this.#feature = feature;
    this.#messages = messages;
    feature.on('READY', (data) => this.#ready(data as { lobbies?: WireLobby[] }));
    feature.on(LobbyEvents.Create, (data) => this.#set(data as WireLobby, this.created));
    feature.on(LobbyEvents.Update, (data) => this.#set(data as WireLobby, this.updated));
    feature.on(LobbyEvents.Delete, (data) => this.#delete((data as { id: string }).id));
    feature.on(LobbyEvents.MemberAdd, (data) => this.#member(data as MemberEvent, this.memberAdded));
    feature.on(LobbyEvents.MemberUpdate, (data) => this.#member(data as MemberEvent, this.memberUpdated));
    feature.on(LobbyEvents.MemberRemove, (data) => this.#memberGone(data as MemberEvent));
    feature.on(LobbyEvents.MessageCreate, (data) => messages.received(data as WireMessage, 'created'));
    feature.on(LobbyEvents.MessageUpdate, (data) => messages.received(data as WireMessage, 'updated'));
    feature.on(LobbyEvents.MessageDelete, (data) => {
      const { id, lobby_id } = data as { id: string; lobby_id: string };
      messages.removed(id, lobby_id);
    });
  }

  /** Joins the lobby of this secret, creating it if there is none (PUT /lobbies). */
  async createOrJoin(
    secret: string,
    lobbyMetadata: Record<string, string> | undefined,
    memberMetadata: Record<string, string> | undefined,
  ): Promise<CreateOrJoinLobbyOutcome> {
    const answer = await this.#feature
      .call({
        method: 'PUT',
        path: '/lobbies',
        json: {
          secret,
          ...(lobbyMetadata ? { lobby_metadata: lobbyMetadata } : {}),
          ...(memberMetadata ? { member_metadata: memberMetadata } : {}),
        },
      })
      .catch((failure: RestFailure) => failure);
    if (answer instanceof RestFailure) return { result: answer.result, lobbyId: 0n };
    const lobby = answer.body as WireLobby;
    this.#lobbies.set(lobby.id, lobby);
    return { result: ClientResult.success(answer.status), lobbyId: BigInt(lobby.id) };
  }

  async leave(lobbyId: bigint | string): Promise<ClientResult> {
    const id = snowflakeOf(lobbyId, 'lobbyId');
    if (id instanceof ClientResult) return id;
    return this.#feature
      .call({
        method: 'DELETE',
        path: `/lobbies/${id}/members/@me`,
        route: 'DELETE /lobbies/:id/members/@me',
      })
      .then(
        (answer) => {
          this.#lobbies.delete(id);
          return ClientResult.success(answer.status);
        },
        (failure: RestFailure) => failure.result,
      );
  }

  /**
   * Links a guild text channel to the lobby, or unlinks it (`channelId` null): PATCH channel-linking
   * (PROTOCOL.md §A.3 row 10). The lobby as answered replaces the one in memory.
   */
  async setLinkedChannel(lobbyId: bigint | string, channelId: bigint | string | null): Promise<ClientResult> {
    const id = snowflakeOf(lobbyId, 'lobbyId');
    if (id instanceof ClientResult) return id;
    const channel = channelId === null ? null : snowflakeOf(channelId, 'channelId');
    if (channel instanceof ClientResult) return channel;
    const answer = await this.#feature
      .call({
        method: 'PATCH',
        path: `/lobbies/${id}/channel-linking`,
        route: 'PATCH /lobbies/:id/channel-linking',
        json: channel === null ? {} : { channel_id: channel },
      })
      .catch((failure: RestFailure) => failure);
    if (answer instanceof RestFailure) return answer.result;
    const lobby = answer.body as WireLobby;
    this.#lobbies.set(lobby.id, lobby);
    return ClientResult.success(answer.status);
  }

  /** A single-use, one-hour invite to the guild of the lobby's linked channel, for this player (§A.3 row 14). */
  async channelInvite(lobbyId: bigint | string): Promise<{ result: ClientResult; code: string }> {
    const id = snowflakeOf(lobbyId, 'lobbyId');
    if (id instanceof ClientResult) return { result: id, code: '' };
    const answer = await this.#feature
      .call({
        method: 'POST',
        path: `/lobbies/${id}/members/@me/invites`,
        route: 'POST /lobbies/:id/members/@me/invites',
      })
      .catch((failure: RestFailure) => failure);
    if (answer instanceof RestFailure) return { result: answer.result, code: '' };
    return { result: ClientResult.success(answer.status), code: (answer.body as { code: string }).code };
  }

  handle(lobbyId: bigint | string): LobbyHandle | undefined {
    const lobby = this.#lobbies.get(String(lobbyId));
    return lobby && new LobbyHandle(lobby);
  }

  ids(): bigint[] {
    return [...this.#lobbies.keys()].map((id) => BigInt(id));
  }

  async send(
    lobbyId: bigint | string,
    content: string,
    metadata: Record<string, string> | undefined,
  ): Promise<SendLobbyMessageOutcome> {
    const id = snowflakeOf(lobbyId, 'lobbyId');
    if (id instanceof ClientResult) return { result: id, messageId: 0n };
    const answer = await this.#feature
      .call({
        method: 'POST',
        path: `/lobbies/${id}/messages`,
        route: 'POST /lobbies/:id/messages',
        json: { content, ...(metadata ? { metadata } : {}) },
      })
      .catch((failure: RestFailure) => failure);
    if (answer instanceof RestFailure) return { result: answer.result, messageId: 0n };
    const message = answer.body as WireMessage;
    this.#messages.keep(message);
    return { result: ClientResult.success(answer.status), messageId: BigInt(message.id) };
  }

  /** The most recent messages first: at most 200 (a larger limit reads 200) and none older than 72 hours. */
  async history(lobbyId: bigint | string, limit: number): Promise<GetLobbyMessagesOutcome> {
    const id = snowflakeOf(lobbyId, 'lobbyId');
    if (id instanceof ClientResult) return { result: id, messages: [] };
    if (!Number.isInteger(limit) || limit < 1) {
      const error = 'limit must be a whole number of messages, at least 1';
      return { result: new ClientResult({ type: ErrorType.ValidationError, error }), messages: [] };
    }
    const wanted = Math.min(limit, Limits.lobbyHistoryMaxMessages);
    const answer = await this.#feature
      .call({
        method: 'GET',
        path: `/lobbies/${id}/messages?limit=${wanted}`,
        route: 'GET /lobbies/:id/messages',
      })
      .catch((failure: RestFailure) => failure);
    if (answer instanceof RestFailure) return { result: answer.result, messages: [] };
    const messages = (answer.body as WireMessage[]).map((message) => this.#messages.keep(message));
    return { result: ClientResult.success(answer.status), messages };
  }

  #ready(ready: { lobbies?: WireLobby[] }): void {
    this.#lobbies.clear();
    for (const lobby of ready.lobbies ?? []) this.#lobbies.set(lobby.id, lobby);
  }

  #set(lobby: WireLobby, callback: LobbyCallback | undefined): void {
    this.#lobbies.set(lobby.id, lobby);
    callback?.(BigInt(lobby.id));
  }

  #delete(lobbyId: string): void {
    this.#lobbies.delete(lobbyId);
    this.deleted?.(BigInt(lobbyId));
  }

  #member(event: MemberEvent, callback: LobbyMemberCallback | undefined): void {
    const lobby = this.#lobbies.get(event.lobby_id);
    if (lobby) {
      const known = lobby.members.some((m) => m.id === event.member.id);
      const members = known
        ? lobby.members.map((m) => (m.id === event.member.id ? event.member : m))
        : [...lobby.members, event.member];
      this.#lobbies.set(lobby.id, { ...lobby, members });
    }
    callback?.(BigInt(event.lobby_id), BigInt(event.member.id));
  }

  #memberGone(event: MemberEvent): void {
    const lobby = this.#lobbies.get(event.lobby_id);
    if (lobby) {
      const members = lobby.members.filter((m) => m.id !== event.member.id);
      this.#lobbies.set(lobby.id, { ...lobby, members });
    }
    this.memberRemoved?.(BigInt(event.lobby_id), BigInt(event.member.id));
  }
}
