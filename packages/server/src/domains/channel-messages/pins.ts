import {
  AuditLogEvents,
  FormErrors,
  type GatewayChannelPinsUpdateData,
  isInEffect,
  MessageDispatches,
  MessageReferenceTypes,
  MessageTypes,
  PermissionFlags,
  PINNABLE_MESSAGE_TYPES,
  PinDispatches,
  PinLimits,
  snowflakeTimestamp,
  Timeline,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import type { AuditLog } from '../guilds/audit-log.js';
import { DatedRules, has } from '../guilds/permissions.js';
import type { MessageObject } from './objects.js';
import { ListPinsQuery } from './pins-schemas.js';
import * as pinsStore from './pins-store.js';
import { type Actor, type Place, placeOf, requireThreadWrite } from './places.js';
import { audienceOf, type ChannelMessagesService } from './service.js';
import * as store from './store.js';

export interface PinsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  /** Objects as a reader sees them, and MESSAGE_CREATE / MESSAGE_UPDATE as every reader gets them. */
  messages: Pick<ChannelMessagesService, 'readableBy' | 'publishMessage'>;
}

/** One entry of Get Channel Pins (DOCS: Message Pin Object). */
export interface MessagePinObject {
  pinned_at: string;
  message: MessageObject;
}

/** What a pin or an unpin changed, published once its transaction has committed. */
interface PinChange {
  place: Place;
  /** The message with its new `pinned` (MESSAGE_UPDATE). */
  message: store.MessageRow;
  /** The CHANNEL_PINNED_MESSAGE notice of a pin (MESSAGE_CREATE). */
  notice?: store.MessageRow;
  lastPinAt: number | null;
  audit?: BusEvent;
}

const { ReadMessageHistory } = PermissionFlags;

const iso = (ms: number | string): string => new Date(Number(ms)).toISOString();

/**
 * Pins of guild and DM channels (GUILDS.md §3.7; DOCS message resource): list them newest pin first, pin
 * and unpin. Pinning needs PIN_MESSAGES (before 23 February 2026 MANAGE_MESSAGES also did, seed:
 * Versioning); in a DM both participants may. Events go out after commit (STYLE rule 3).
 */
export class PinsService {
  readonly #deps: PinsDeps;

  constructor(deps: PinsDeps) {
    this.#deps = deps;
  }

  /**
   * GET /channels/{id}/messages/pins: pages of `{pinned_at, message}` pinned before `before`, `limit`
   * 1–50 (50). VIEW_CHANNEL; without READ_MESSAGE_HISTORY nothing is listed (DOCS, Get Channel Pins).
   */
  async list(
    actor: Actor,
    channelId: string,
    query: unknown,
  ): Promise<{ items: MessagePinObject[]; has_more: boolean }> {
    const { before, limit = PinLimits.listDefault } = parse(ListPinsQuery, query ?? {});
    const beforeMs = before === undefined ? undefined : instantOf(before);
    const db = this.#deps.storage.db;
    const place = await placeOf(db, this.#deps.access, actor, channelId);
    if (!has(place.permissions, ReadMessageHistory)) return { items: [], has_more: false };
    const rows = await pinsStore.pinnedMessages(db, channelId, beforeMs, limit + 1);
    const page = rows.slice(0, limit);
    const messages = await this.#deps.messages.readableBy(actor, place, page);
    return {
      items: page.map((row, index) => ({ pinned_at: iso(row.pinned_at!), message: messages[index]! })),
      has_more: rows.length > limit,
    };
  }

  /** GET /channels/{id}/pins (deprecated): the newest 50 pinned messages, newest pin first. */
  async listLegacy(actor: Actor, channelId: string): Promise<MessageObject[]> {
    const db = this.#deps.storage.db;
    const place = await placeOf(db, this.#deps.access, actor, channelId);
    if (!has(place.permissions, ReadMessageHistory)) return [];
    const rows = await pinsStore.pinnedMessages(db, channelId, undefined, PinLimits.legacyList);
    return this.#deps.messages.readableBy(actor, place, rows);
  }

  /**
   * PUT /channels/{id}/messages/pins/{mid}: pins a message of this channel (10008 otherwise), not a system
   * message (50021), at most 250 per channel (30003). The message's `pinned` becomes true, a
   * CHANNEL_PINNED_MESSAGE notice referencing it is posted, CHANNEL_PINS_UPDATE and MESSAGE_PIN (74) follow.
   * Pinning a pinned message changes nothing.
   */
  async pin(actor: Actor, channelId: string, messageId: string, reason: string | null): Promise<void> {
    const change = await this.#deps.storage.transaction(async (tx): Promise<PinChange | undefined> => {
      const place = await placeOf(tx, this.#deps.access, actor, channelId);
      this.#requirePinPermission(place);
      // A pin changes a message and posts a notice: as an edit, refused in archived and (without
      // MANAGE_THREADS) locked threads.
      requireThreadWrite(place, 'edit');
      await pinsStore.lockChannel(tx, channelId, this.#deps.storage.engine);
      const message = await this.#message(tx, channelId, messageId);
      if (!PINNABLE_MESSAGE_TYPES.includes(Number(message.type)))
        throw new HearthError('CannotExecuteOnSystemMessage');
      if (message.pinned_at !== null) return undefined;
      if ((await pinsStore.countPins(tx, channelId)) >= PinLimits.perChannel)
        throw new HearthError('MaximumPins');
      const now = this.#deps.clock.now();
      await pinsStore.setPinned(tx, messageId, now);
      if (place.guildId !== null)
        await channelStore.updateChannel(tx, channelId, { last_pin_timestamp: now });
      const notice = await this.#postNotice(tx, actor, place, messageId);
      const audit = await this.#audit(tx, actor, place, message, AuditLogEvents.MessagePin, reason);
      return {
        place,
        message: (await store.findMessage(tx, channelId, messageId))!,
        notice,
        lastPinAt: now,
        ...(audit ? { audit } : {}),
      };
    });
    if (change) await this.#publish(change);
  }

  /**
   * DELETE /channels/{id}/messages/pins/{mid}: unpins; the same permission as pinning. MESSAGE_UPDATE,
   * CHANNEL_PINS_UPDATE (the newest remaining pin's time) and MESSAGE_UNPIN (75). A message not pinned
   * changes nothing.
   */
  async unpin(actor: Actor, channelId: string, messageId: string, reason: string | null): Promise<void> {
    const change = await this.#deps.storage.transaction(async (tx): Promise<PinChange | undefined> => {
      const place = await placeOf(tx, this.#deps.access, actor, channelId);
      this.#requirePinPermission(place);
      requireThreadWrite(place, 'edit');
      await pinsStore.lockChannel(tx, channelId, this.#deps.storage.engine);
      const message = await this.#message(tx, channelId, messageId);
      if (message.pinned_at === null) return undefined;
      await pinsStore.setPinned(tx, messageId, null);
      const lastPinAt = await pinsStore.lastPinAt(tx, channelId);
      if (place.guildId !== null)
        await channelStore.updateChannel(tx, channelId, { last_pin_timestamp: lastPinAt });
      const audit = await this.#audit(tx, actor, place, message, AuditLogEvents.MessageUnpin, reason);
      return {
        place,
        message: (await store.findMessage(tx, channelId, messageId))!,
        lastPinAt,
        ...(audit ? { audit } : {}),
      };
    });
    if (change) await this.#publish(change);
  }

  /**
   * Headers of the deprecated pin routes once the paginated ones exist (seed: Versioning, "old pin
   * routes"): RFC 9745 `Deprecation` with the day they were superseded, as the SDK version check sends it.
   */
  legacyRouteHeaders(): Record<string, string> {
    if (!isInEffect('paginatedPinRoutes', this.#deps.clock.now())) return {};
    return { deprecation: `@${Math.floor(Date.parse(Timeline.paginatedPinRoutes) / 1000)}` };
  }

  // ---- Steps ----

  /** PIN_MESSAGES (MANAGE_MESSAGES before the date) in a guild channel; both participants of a DM may pin. */
  #requirePinPermission(place: Place): void {
    if (place.guildId === null) return;
    if (!DatedRules.canPin(place.permissions, this.#deps.clock.now()))
      throw new HearthError('MissingPermissions');
  }

  async #message(db: Executor, channelId: string, messageId: string): Promise<store.MessageRow> {
    const row = await store.findMessage(db, channelId, messageId);
    if (!row) throw new HearthError('UnknownMessage');
    return row;
  }

  /**
   * The CHANNEL_PINNED_MESSAGE notice (type 6) by the one who pinned, its `message_reference` naming the
   * pinned message, channel and guild (DOCS message resource, "Pin messages").
   */
  async #postNotice(tx: Executor, actor: Actor, place: Place, messageId: string): Promise<store.MessageRow> {
    const id = this.#deps.snowflakes.next();
    const reference = {
      type: MessageReferenceTypes.Default,
      channel_id: place.channelId,
      message_id: messageId,
      ...(place.guildId === null ? {} : { guild_id: place.guildId }),
    };
    await store.insertMessage(tx, {
      id,
      channel_id: place.channelId,
      guild_id: place.guildId,
      author_id: actor.userId,
      type: MessageTypes.ChannelPinnedMessage,
      content: '',
      message_reference: JSON.stringify(reference),
      created_at: snowflakeTimestamp(id),
    });
    if (place.guildId !== null)
      await channelStore.updateChannel(tx, place.channelId, { last_message_id: id });
    return (await store.findMessage(tx, place.channelId, id))!;
  }

  /** MESSAGE_PIN / MESSAGE_UNPIN in a guild: the author as target, the channel and message as options. */
  async #audit(
    tx: Executor,
    actor: Actor,
    place: Place,
    message: store.MessageRow,
    actionType: typeof AuditLogEvents.MessagePin | typeof AuditLogEvents.MessageUnpin,
    reason: string | null,
  ): Promise<BusEvent | undefined> {
    if (place.guildId === null) return undefined;
    return this.#deps.auditLog.recordEvent(tx, {
      guildId: place.guildId,
      userId: actor.userId,
      targetId: message.author_id,
      actionType,
      options: { channel_id: place.channelId, message_id: message.id },
      reason,
    });
  }

  /** MESSAGE_UPDATE of the message, CHANNEL_PINS_UPDATE, the notice's MESSAGE_CREATE, the audit entry. */
  async #publish(change: PinChange): Promise<void> {
    const { place } = change;
    await this.#deps.messages.publishMessage(MessageDispatches.MessageUpdate, place, change.message);
    const pinsUpdate: GatewayChannelPinsUpdateData = {
      ...(place.guildId === null ? {} : { guild_id: place.guildId }),
      channel_id: place.channelId,
      last_pin_timestamp: change.lastPinAt === null ? null : iso(change.lastPinAt),
    };
    await this.#deps.bus.publish({
      type: PinDispatches.ChannelPinsUpdate,
      data: { ...pinsUpdate },
      audience: audienceOf(place),
    });
    if (change.notice)
      await this.#deps.messages.publishMessage(MessageDispatches.MessageCreate, place, change.notice);
    if (change.audit) await this.#deps.bus.publish(change.audit);
  }
}

/** `before` as milliseconds; a date-time the format admits but no clock has (`…T23:59:60Z`) is 50035. */
function instantOf(before: string): number {
  const ms = Date.parse(before);
  if (Number.isNaN(ms)) throw invalidForm('before', FormErrors.dateTime(before));
  return ms;
}
