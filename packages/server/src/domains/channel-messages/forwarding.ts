import {
  FORWARDABLE_MESSAGE_TYPES,
  FormErrors,
  ForwardLimits,
  MessageFlags,
  MessageReferenceTypes,
  PermissionFlags,
} from '@hearth/protocol';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { Quotas } from '../../ratelimit/quota.js';
import type { Executor } from '../../storage/database.js';
import type { GuildAccess } from '../guilds/access.js';
import { type ContentReader, readsContent } from './content-access.js';
import type { MessageObject } from './objects.js';
import { type Actor, placeOf, requirePermissions } from './places.js';
import type { MessageReference } from './schemas.js';
import * as store from './store.js';

type Json = Record<string, unknown>;

export interface ForwardingDeps {
  access: GuildAccess;
  quotas: Quotas;
}

/** What the message service knows of a forward's source: who reads it, and its message object. */
export interface ForwardSource {
  /** The forwarder as the message-content rule sees them (content-access.ts). */
  reader: ContentReader;
  /** The source's message object as everyone reads it. */
  objectOf(db: Executor, row: store.MessageRow): Promise<MessageObject>;
}

/** What a forward adds to the message being created. */
export interface Forward {
  /** `message_reference` as stored: type FORWARD and the source's ids. */
  reference: Json;
  /** The one snapshot (`message_snapshots[0]`). */
  snapshot: { message: Json };
  /** HAS_SNAPSHOT. */
  flags: number;
}

/** The keys of a snapshot (GUILDS.md §4.4, OAS `MinimalContentMessageResponse`): no author, no ids. */
const SNAPSHOT_KEYS = [
  'type',
  'content',
  'embeds',
  'attachments',
  'timestamp',
  'edited_timestamp',
  'flags',
  'mentions',
  'mention_roles',
  'components',
] as const;

/**
 * Forwards (`message_reference.type` FORWARD, GUILDS.md §4.4): the new message carries a snapshot of the
 * source, which the forwarder must be able to see and read the history of; an app may forward only what
 * it can read (160014). Forwards spend their own limits, by count and by attachment bytes (ForwardLimits).
 */
export class Forwarding {
  readonly #deps: ForwardingDeps;

  constructor(deps: ForwardingDeps) {
    this.#deps = deps;
  }

  /** Whether a create's reference is a forward (then only the reference is needed in the body). */
  static isForward(reference: MessageReference | null | undefined): boolean {
    return reference?.type === MessageReferenceTypes.Forward;
  }

  /**
   * The forward of `requested`; undefined when the source is missing and `fail_if_not_exists` is false
   * (the message is then sent as a plain one).
   */
  async forward(
    tx: Executor,
    actor: Actor,
    requested: MessageReference,
    source: ForwardSource,
  ): Promise<Forward | undefined> {
    const { channelId, messageId } = requireIds(requested);
    const place = await placeOf(tx, this.#deps.access, actor, channelId);
    requirePermissions(place, PermissionFlags.ReadMessageHistory);
    const row = await store.findMessage(tx, channelId, messageId);
    const sameGuild =
      requested.guild_id === undefined || requested.guild_id === null || requested.guild_id === place.guildId;
    if (!row || !sameGuild) {
      if (requested.fail_if_not_exists === false) return undefined;
      throw invalidForm('message_reference', FormErrors.messageReferenceUnknownMessage());
    }
    if (!FORWARDABLE_MESSAGE_TYPES.includes(Number(row.type)))
      throw new HearthError('CannotExecuteOnSystemMessage');
    const object = await source.objectOf(tx, row);
    // 160014: an app reads (so forwards) only what the message-content rule lets it read (seed).
    if (!readsContent(source.reader, object, place.guildId !== null))
      throw new HearthError('CannotForwardUnreadableMessage');
    const snapshot = snapshotOf(row, object);
    await this.#spend(actor, snapshot);
    return {
      reference: {
        type: MessageReferenceTypes.Forward,
        channel_id: channelId,
        message_id: messageId,
        ...(place.guildId === null ? {} : { guild_id: place.guildId }),
      },
      snapshot,
      flags: MessageFlags.HasSnapshot,
    };
  }

  // ---- Steps ----

  /** One forward, and the bytes of the files it carries, from the forwarder's budgets (429 past them). */
  async #spend(actor: Actor, snapshot: { message: Json }): Promise<void> {
    await this.#deps.quotas.spend(`forwards:${actor.userId}`, ForwardLimits.forwards);
    const attachments = (snapshot.message['attachments'] ?? []) as Array<{ size?: unknown }>;
    const bytes = attachments.reduce((sum, file) => sum + (Number(file.size) || 0), 0);
    if (bytes > 0)
      await this.#deps.quotas.spend(`forward-bytes:${actor.userId}`, ForwardLimits.attachmentBytes, bytes);
  }
}

/** `channel_id` and `message_id` are required of a forward (GUILDS.md §4.4). */
function requireIds(requested: MessageReference): { channelId: string; messageId: string } {
  if (!requested.message_id) throw invalidForm('message_reference.message_id', FormErrors.required());
  if (!requested.channel_id) throw invalidForm('message_reference.channel_id', FormErrors.required());
  return { channelId: requested.channel_id, messageId: requested.message_id };
}

/**
 * The snapshot of a source message: its content fields as they are now, never updated. A forward of a
 * forward carries the original's snapshot, so snapshots nest one deep (GUILDS.md §4.4).
 */
function snapshotOf(row: store.MessageRow, object: MessageObject): { message: Json } {
  if (row.message_snapshots !== null) {
    const [inner] = JSON.parse(row.message_snapshots) as Array<{ message: Json }>;
    if (inner) return inner;
  }
  const source = object as unknown as Json;
  const message: Json = {};
  for (const key of SNAPSHOT_KEYS) message[key] = source[key];
  message['stickers'] = [];
  message['sticker_items'] = [];
  return { message };
}
