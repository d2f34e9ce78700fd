/** The wire message the library reads: a game DM (PROTOCOL.md §B.5) or a lobby message (§A.4). */
export interface WireMessage {
  id: string;
  channel_id: string;
  content: string;
  author: { id: string };
  recipient_id?: string;
  lobby_id?: string;
  timestamp?: string;
  edited_timestamp?: string | null;
  application_id?: string;
  metadata?: Record<string, string>;
  moderation_metadata?: Record<string, string>;
  activity?: { type: number; party_id?: string };
}

/** DisclosureType: the platform's notice injected before a first in-game message (PROTOCOL.md §B.5). */
export const DisclosureTypes = { MessageDataVisibleOnDiscord: 3 } as const;
export type DisclosureTypes = (typeof DisclosureTypes)[keyof typeof DisclosureTypes];

/**
 * MessageHandle: one message, built from the wire object, so that it serves game DMs and lobby messages
 * alike (a lobby message carries `lobby_id`). Ids are uint64_t, so bigint.
 */
export class MessageHandle {
  readonly #message: WireMessage;

  /** Made by the library from what the platform sent. @internal */
  constructor(message: WireMessage) {
    this.#message = message;
  }

  Id(): bigint {
    return BigInt(this.#message.id);
  }
  ChannelId(): bigint {
    return BigInt(this.#message.channel_id);
  }
  AuthorId(): bigint {
    return BigInt(this.#message.author.id);
  }
  /** The other participant of a DM; 0 for a lobby message. */
  RecipientId(): bigint {
    return BigInt(this.#message.recipient_id ?? 0);
  }
  /** The lobby of a lobby message. */
  LobbyId(): bigint | undefined {
    return this.#message.lobby_id === undefined ? undefined : BigInt(this.#message.lobby_id);
  }
  Content(): string {
    return this.#message.content;
  }
  /** When it was sent, in ms since the epoch. */
  SentTimestamp(): number {
    return this.#message.timestamp ? Date.parse(this.#message.timestamp) : 0;
  }
  /** When it was last edited, in ms since the epoch; 0 if never. */
  EditedTimestamp(): number {
    return this.#message.edited_timestamp ? Date.parse(this.#message.edited_timestamp) : 0;
  }
  /** The game that sent it (seed: MessageHandle `ApplicationId()`). */
  ApplicationId(): bigint | undefined {
    return this.#message.application_id === undefined ? undefined : BigInt(this.#message.application_id);
  }
  /** String pairs a game backend set to moderate the message; this game's only (seed, PROTOCOL.md §B.4). */
  ModerationMetadata(): Record<string, string> {
    return { ...(this.#message.moderation_metadata ?? {}) };
  }
  /** The sender's dispatch-only key-value pairs. */
  Metadata(): Record<string, string> {
    return { ...(this.#message.metadata ?? {}) };
  }
  /** Set on the platform's disclosure notice; the server sends none yet, so always undefined. */
  DisclosureType(): DisclosureTypes | undefined {
    return undefined;
  }
  /** @internal the wire object, for the library's cache. */
  wire(): WireMessage {
    return this.#message;
  }
}
