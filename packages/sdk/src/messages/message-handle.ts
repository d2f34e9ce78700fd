import { type GatewayUser, UserHandle } from '../user-handle.js';

/** A message as the platform sends it: lobby messages (PROTOCOL.md §A.4) and direct messages (§B.5). */
export interface WireMessage {
  id: string;
  content: string;
  channel_id: string;
  lobby_id?: string;
  author: GatewayUser;
  application_id?: string;
  metadata?: Record<string, string>;
  moderation_metadata?: Record<string, string>;
  timestamp?: string;
  edited_timestamp?: string | null;
  recipient_id?: string;
}

/** MessageHandle: a snapshot of one message. Ids are uint64_t, so bigint; timestamps are ms since the epoch. */
export class MessageHandle {
  readonly #message: WireMessage;

  /** Made by the library from what the platform sent. */
  constructor(message: WireMessage) {
    this.#message = structuredClone(message);
  }

  Id(): bigint {
    return BigInt(this.#message.id);
  }

  AuthorId(): bigint {
    return BigInt(this.#message.author.id);
  }

  Author(): UserHandle {
    return new UserHandle(this.#message.author);
  }

  /** The lobby's id for a lobby message; the other user's id for a direct message. */
  ChannelId(): bigint {
    return BigInt(this.#message.channel_id);
  }

  /** The lobby a lobby message belongs to; undefined for a direct message. */
  LobbyId(): bigint | undefined {
    return this.#message.lobby_id === undefined ? undefined : BigInt(this.#message.lobby_id);
  }

  Content(): string {
    return this.#message.content;
  }

  /** The application the message was sent from: a sibling game's messages carry their own (seed). */
  ApplicationId(): bigint | undefined {
    return this.#message.application_id === undefined ? undefined : BigInt(this.#message.application_id);
  }

  /** The game's moderation verdict (§B.4): visible to this application only; empty when there is none. */
  ModerationMetadata(): Record<string, string> {
    return { ...(this.#message.moderation_metadata ?? {}) };
  }

  /** Key-value pairs the sender attached. */
  Metadata(): Record<string, string> {
    return { ...(this.#message.metadata ?? {}) };
  }

  SentTimestamp(): number {
    return this.#message.timestamp === undefined ? 0 : Date.parse(this.#message.timestamp);
  }

  /** 0 when never edited. */
  EditedTimestamp(): number {
    const edited = this.#message.edited_timestamp;
    return edited ? Date.parse(edited) : 0;
  }
}
