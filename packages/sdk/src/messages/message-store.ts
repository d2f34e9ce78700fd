import type { Logger } from '../logging.js';
import { LoggingSeverity } from '../logging.js';
import { MessageHandle, type WireMessage } from './message-handle.js';

export type MessageCallback = (messageId: bigint) => void;
export type MessageDeletedCallback = (messageId: bigint, channelId: bigint) => void;

/** Messages kept in memory for GetMessageHandle; the oldest go first past this many. */
const KEPT_MESSAGES = 5000;

/**
 * The messages the library has seen (sent, received, read from history), and the three message
 * callbacks, shared by every kind of channel: a game registers SetMessageCreatedCallback once.
 */
export class MessageStore {
  readonly #messages = new Map<string, WireMessage>();
  readonly #logger: Logger;
  created: MessageCallback | undefined;
  updated: MessageCallback | undefined;
  deleted: MessageDeletedCallback | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  keep(message: WireMessage): MessageHandle {
    this.#messages.delete(message.id);
    this.#messages.set(message.id, message);
    if (this.#messages.size > KEPT_MESSAGES) {
      const oldest = this.#messages.keys().next().value;
      if (oldest !== undefined) this.#messages.delete(oldest);
    }
    return new MessageHandle(message);
  }

  get(messageId: string): MessageHandle | undefined {
    const message = this.#messages.get(messageId);
    return message && new MessageHandle(message);
  }

  /** A message arrived (or changed) on the gateway: keep it, then tell the game. */
  arrived(message: WireMessage, isNew: boolean): void {
    this.keep(message);
    this.#call(isNew ? this.created : this.updated, BigInt(message.id));
  }

  removed(messageId: string, channelId: string): void {
    this.#messages.delete(messageId);
    const callback = this.deleted;
    if (callback) this.#guard(() => callback(BigInt(messageId), BigInt(channelId)));
  }

  #call(callback: MessageCallback | undefined, id: bigint): void {
    if (callback) this.#guard(() => callback(id));
  }

  #guard(run: () => void): void {
    try {
      run();
    } catch (thrown) {
      this.#logger.log(LoggingSeverity.Error, `a message callback threw: ${String(thrown)}`);
    }
  }
}
