import { DirectMessageLimits, SocialDispatches } from '@hearth/protocol';
import { ClientResult } from '../client-result.js';
import { attempt, type FeatureContext, invalid, safely } from '../feature.js';
import { snowflakeOf } from '../ids.js';
import { MessageHandle, type WireMessage } from './message-handle.js';

export type MessageCreatedCallback = (messageId: bigint) => void;
export type MessageUpdatedCallback = (messageId: bigint) => void;
export type MessageDeletedCallback = (messageId: bigint, channelId: bigint) => void;

/** UserMessageSummary: one conversation and its newest message. */
export class UserMessageSummary {
  readonly #userId: bigint;
  readonly #lastMessageId: bigint;
  constructor(userId: bigint, lastMessageId: bigint) {
    this.#userId = userId;
    this.#lastMessageId = lastMessageId;
  }
  UserId(): bigint {
    return this.#userId;
  }
  LastMessageId(): bigint {
    return this.#lastMessageId;
  }
}

/** One conversation in the cache: its messages by id, and how far back the server was read. */
interface Conversation {
  ids: Set<string>;
  /** The largest `limit` served by the server, or Infinity once the whole history is here. */
  fetched: number;
}

/**
 * Direct messages of the player (PROTOCOL.md §B.5). History read with GetUserMessagesWithLimit is cached
 * (seed) and kept current by MESSAGE_CREATE/UPDATE/DELETE; a later call the cache covers asks nobody.
 */
export class Messages {
  readonly #feature: FeatureContext;
  readonly #messages = new Map<string, MessageHandle>();
  readonly #conversations = new Map<string, Conversation>();
  #created: MessageCreatedCallback | undefined;
  #updated: MessageUpdatedCallback | undefined;
  #deleted: MessageDeletedCallback | undefined;

  constructor(feature: FeatureContext) {
    this.#feature = feature;
    feature.on(SocialDispatches.MessageCreate, (d) => this.#store(d as WireMessage, 'created'));
    feature.on(SocialDispatches.MessageUpdate, (d) => this.#store(d as WireMessage, 'updated'));
    feature.on(SocialDispatches.MessageDelete, (d) =>
      this.#delete(d as { id?: string; channel_id?: string }),
    );
  }

  async sendUserMessage(
    recipientId: bigint | string,
    content: string,
    metadata?: Record<string, string>,
  ): Promise<{ result: ClientResult; messageId: bigint }> {
    const id = snowflakeOf(recipientId, 'recipientId');
    if (id instanceof ClientResult) return { result: id, messageId: 0n };
    if (content.trim() === '') return { result: invalid('content is empty'), messageId: 0n };
    if (content.length > DirectMessageLimits.contentMax)
      return { result: invalid(`content is longer than ${DirectMessageLimits.contentMax}`), messageId: 0n };
    const { result, body } = await attempt(this.#feature, {
      method: 'POST',
      path: `/users/${id}/messages`,
      route: 'POST /users/:id/messages',
      json: { content, ...(metadata ? { metadata } : {}) },
    });
    if (!result.Successful()) return { result, messageId: 0n };
    const message = body as WireMessage;
    this.#put(message);
    return { result, messageId: BigInt(message.id) };
  }

  async getUserMessagesWithLimit(
    recipientId: bigint | string,
    limit: number,
  ): Promise<{ result: ClientResult; messages: MessageHandle[] }> {
    const id = snowflakeOf(recipientId, 'recipientId');
    if (id instanceof ClientResult) return { result: id, messages: [] };
    if (!Number.isInteger(limit) || limit < DirectMessageLimits.getMin || limit > DirectMessageLimits.getMax)
      return {
        result: invalid(`limit must be ${DirectMessageLimits.getMin} to ${DirectMessageLimits.getMax}`),
        messages: [],
      };
    const cached = this.#conversations.get(id);
    if (cached && cached.fetched >= limit)
      return { result: ClientResult.success(), messages: this.#newest(cached, limit) };
    const { result, body } = await attempt(this.#feature, {
      method: 'GET',
      path: `/users/${id}/messages?limit=${limit}`,
      route: 'GET /users/:id/messages',
    });
    if (!result.Successful()) return { result, messages: [] };
    const rows = body as WireMessage[];
    for (const row of rows) this.#put(row);
    const conversation = this.#conversation(id);
    // Fewer than asked: the server has nothing older, so every later limit is served from here.
    conversation.fetched =
      rows.length < limit ? Number.POSITIVE_INFINITY : Math.max(conversation.fetched, limit);
    return { result, messages: this.#newest(conversation, limit) };
  }

  async getUserMessageSummaries(): Promise<{ result: ClientResult; summaries: UserMessageSummary[] }> {
    const { result, body } = await attempt(this.#feature, {
      method: 'GET',
      path: '/users/@me/message-summaries',
    });
    const rows = (body as Array<{ user_id: string; last_message_id: string }> | undefined) ?? [];
    return {
      result,
      summaries: rows.map((row) => new UserMessageSummary(BigInt(row.user_id), BigInt(row.last_message_id))),
    };
  }

  getMessageHandle(messageId: bigint | string): MessageHandle | undefined {
    return this.#messages.get(String(messageId));
  }

  setMessageCreatedCallback(callback: MessageCreatedCallback): void {
    this.#created = callback;
  }
  setMessageUpdatedCallback(callback: MessageUpdatedCallback): void {
    this.#updated = callback;
  }
  setMessageDeletedCallback(callback: MessageDeletedCallback): void {
    this.#deleted = callback;
  }

  // ---- Cache ----

  /** The other participant of a DM, from the player's side. */
  #other(message: WireMessage): string | undefined {
    if (message.lobby_id !== undefined) return undefined;
    return message.author.id === this.#feature.currentUserId() ? message.recipient_id : message.author.id;
  }

  #conversation(otherId: string): Conversation {
    let conversation = this.#conversations.get(otherId);
    if (!conversation) {
      conversation = { ids: new Set(), fetched: 0 };
      this.#conversations.set(otherId, conversation);
    }
    return conversation;
  }

  #put(message: WireMessage): void {
    this.#messages.set(message.id, new MessageHandle(message));
    const other = this.#other(message);
    if (other) this.#conversation(other).ids.add(message.id);
  }

  #newest(conversation: Conversation, limit: number): MessageHandle[] {
    return [...conversation.ids]
      .map((id) => this.#messages.get(id))
      .filter((handle): handle is MessageHandle => handle !== undefined)
      .sort((a, b) => (a.Id() < b.Id() ? 1 : a.Id() > b.Id() ? -1 : 0))
      .slice(0, limit);
  }

  // ---- Messages of other channels (lobbies) ----

  /** Keeps a message read or sent elsewhere (a lobby's) for GetMessageHandle. */
  keep(message: WireMessage): MessageHandle {
    this.#put(message);
    return new MessageHandle(message);
  }

  /** A message of another channel arrived or changed: kept, and reported to the same callbacks. */
  received(message: WireMessage, kind: 'created' | 'updated'): void {
    if (typeof message?.id !== 'string' || typeof message.author?.id !== 'string') return;
    const previous = this.#messages.get(message.id)?.wire();
    this.#put(previous && kind === 'updated' ? { ...previous, ...message } : message);
    const callback = kind === 'created' ? this.#created : this.#updated;
    if (callback) safely(this.#feature, `message ${kind}`, () => callback(BigInt(message.id)));
  }

  /** A message of another channel was deleted. */
  removed(id: string, channelId: string): void {
    this.#delete({ id, channel_id: channelId });
  }

  #store(message: WireMessage, kind: 'created' | 'updated'): void {
    if (
      typeof message?.id !== 'string' ||
      typeof message.author?.id !== 'string' ||
      message.lobby_id !== undefined
    )
      return;
    const previous = this.#messages.get(message.id)?.wire();
    // A moderation update is partial to this game's view: keep what the cache knew that it lacks.
    this.#put(previous && kind === 'updated' ? { ...previous, ...message } : message);
    const callback = kind === 'created' ? this.#created : this.#updated;
    if (callback) safely(this.#feature, `message ${kind}`, () => callback(BigInt(message.id)));
  }

  #delete(d: { id?: string; channel_id?: string }): void {
    if (typeof d?.id !== 'string') return;
    const message = this.#messages.get(d.id)?.wire();
    this.#messages.delete(d.id);
    if (message) {
      const other = this.#other(message);
      if (other) this.#conversations.get(other)?.ids.delete(d.id);
    }
    const callback = this.#deleted;
    if (callback)
      safely(this.#feature, 'message deleted', () => callback(BigInt(d.id!), BigInt(d.channel_id ?? 0)));
  }
}
