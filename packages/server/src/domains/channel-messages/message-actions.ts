import {
  AuditLogEvents,
  ChannelTypes,
  FormErrors,
  MessageDispatches,
  MessageFlags,
  MessageLimits,
  PermissionFlags,
  snowflakeTimestamp,
} from '@hearth/protocol';
import type { BusEvent } from '../../bus/bus.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor } from '../../storage/database.js';
import type { AuditLog } from '../guilds/audit-log.js';
import { BulkDeleteMessages } from './message-actions-schemas.js';
import { memberObjectOf } from './message-events.js';
import type { MessageObject } from './objects.js';
import {
  type Actor,
  placeOf,
  requireMessageChannel,
  requirePermissions,
  requireThreadWrite,
} from './places.js';
import type { ReactionsDeps } from './reactions.js';
import { audienceOf, type ChannelMessagesService } from './service.js';
import * as store from './store.js';

export interface MessageActionsDeps extends ReactionsDeps {
  auditLog: AuditLog;
  /** The message service: objects as a reader sees them, and MESSAGE_UPDATE as every reader gets it. */
  messages: Pick<ChannelMessagesService, 'objectsOf' | 'publishMessage' | 'messagesDeletedIn'>;
  /** The files of messages (attachments.ts): dropped with the messages, removed from disk after commit. */
  attachments?: {
    deleteForMessages(db: Executor, messageIds: readonly string[]): Promise<string[]>;
    removeFiles(keys: readonly string[]): Promise<void>;
  };
}

const { SendMessages, ManageMessages } = PermissionFlags;

/**
 * What is done to messages beside writing them (GUILDS.md §4): crossposting an announcement, deleting
 * many at once, and saying one is typing. Each is a short list of steps; events go out after commit.
 */
export class MessageActionsService {
  readonly #deps: MessageActionsDeps;

  constructor(deps: MessageActionsDeps) {
    this.#deps = deps;
  }

  /**
   * POST /channels/{id}/messages/{mid}/crosspost: publishes a message of an announcement channel to its
   * followers and marks it CROSSPOSTED; SEND_MESSAGES for one's own message, MANAGE_MESSAGES for others'.
   * A second time is 40033; other channel types are 50024 (50008 for those without messages).
   */
  async crosspost(actor: Actor, channelId: string, messageId: string): Promise<MessageObject> {
    const { place, row } = await this.#deps.storage.transaction(async (tx) => {
      const place = await placeOf(tx, this.#deps.access, actor, channelId);
      requireMessageChannel(place);
      if (place.type !== ChannelTypes.GuildAnnouncement) throw new HearthError('CannotExecuteOnChannelType');
      const message = await this.#message(tx, channelId, messageId);
      requirePermissions(place, message.author_id === actor.userId ? SendMessages : ManageMessages);
      const flags = Number(message.flags);
      if ((flags & MessageFlags.Crossposted) !== 0) throw new HearthError('MessageAlreadyCrossposted');
      await store.updateMessage(tx, messageId, { flags: flags | MessageFlags.Crossposted });
      return { place, row: await this.#message(tx, channelId, messageId) };
    });
    const [message] = await this.#deps.messages.objectsOf(this.#deps.storage.db, [row], actor.userId);
    await this.#deps.messages.publishMessage(MessageDispatches.MessageUpdate, place, row);
    return message!;
  }

  /**
   * POST /channels/{id}/messages/bulk-delete (GUILDS.md §4.9): 2–100 different ids, none older than two
   * weeks (50034), MANAGE_MESSAGES, guild channels only. Ids of no message here count but delete nothing.
   * One MESSAGE_DELETE_BULK and one MESSAGE_BULK_DELETE audit entry for what was deleted.
   */
  async bulkDelete(actor: Actor, channelId: string, input: unknown, reason: string | null): Promise<void> {
    const { messages: ids } = parse(BulkDeleteMessages, input ?? {});
    checkDistinct(ids);
    const { events, files } = await this.#deps.storage.transaction(async (tx) => {
      const place = await placeOf(tx, this.#deps.access, actor, channelId);
      if (place.guildId === null) throw new HearthError('CannotExecuteOnDMChannel');
      requirePermissions(place, ManageMessages);
      requireThreadWrite(place, 'delete');
      this.#checkAge(ids);
      const found = await store.findMessages(tx, ids);
      const deleted = found.filter((row) => row.channel_id === channelId).map((row) => row.id);
      if (deleted.length === 0) return { events: [], files: [] };
      const files = (await this.#deps.attachments?.deleteForMessages(tx, deleted)) ?? [];
      for (const id of deleted) await store.deleteMessage(tx, id);
      await this.#deps.messages.messagesDeletedIn(tx, place, deleted);
      const audit = await this.#deps.auditLog.recordEvent(tx, {
        guildId: place.guildId,
        userId: actor.userId,
        targetId: channelId,
        actionType: AuditLogEvents.MessageBulkDelete,
        options: { count: String(deleted.length) },
        reason,
      });
      const bulk: BusEvent = {
        type: MessageDispatches.MessageDeleteBulk,
        data: { ids: deleted, channel_id: channelId, guild_id: place.guildId },
        audience: audienceOf(place),
      };
      return { events: [bulk, audit], files };
    });
    await this.#deps.attachments?.removeFiles(files);
    for (const event of events) await this.#deps.bus.publish(event);
  }

  /**
   * POST /channels/{id}/typing: TYPING_START to those who can view the channel, with the time in seconds
   * and, in a guild, the typing member; needs SEND_MESSAGES.
   */
  async triggerTyping(actor: Actor, channelId: string): Promise<void> {
    const db = this.#deps.storage.db;
    const place = await placeOf(db, this.#deps.access, actor, channelId);
    requireMessageChannel(place);
    requirePermissions(place, SendMessages);
    const member =
      place.guildId === null
        ? undefined
        : await memberObjectOf(db, this.#deps.users, place.guildId, actor.userId);
    await this.#deps.bus.publish({
      type: MessageDispatches.TypingStart,
      data: {
        channel_id: channelId,
        ...(place.guildId === null ? {} : { guild_id: place.guildId }),
        user_id: actor.userId,
        timestamp: Math.floor(this.#deps.clock.now() / 1000),
        ...(member === undefined ? {} : { member }),
      },
      audience: audienceOf(place),
    });
  }

  // ---- Steps ----

  /** 50034 when any id was made more than two weeks ago (the id's own time; unknown ids too). */
  #checkAge(ids: readonly string[]): void {
    const oldest = this.#deps.clock.now() - MessageLimits.bulkDeleteMaxAgeMs;
    if (ids.some((id) => snowflakeTimestamp(id) < oldest)) throw new HearthError('BulkDeleteTooOld');
  }

  async #message(db: Executor, channelId: string, messageId: string): Promise<store.MessageRow> {
    const row = await store.findMessage(db, channelId, messageId);
    if (!row) throw new HearthError('UnknownMessage');
    return row;
  }
}

/** A repeated id is 50035 at the repeat's index, as the platform reports it (`messages.1`). */
function checkDistinct(ids: readonly string[]): void {
  const seen = new Set<string>();
  for (const [index, id] of ids.entries()) {
    if (seen.has(id)) throw invalidForm(`messages.${index}`, FormErrors.setDuplicate());
    seen.add(id);
  }
}
