import {
  ApplicationFlags,
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
import type { MessageObject } from './objects.js';
import { type Actor, type Place, placeOf, requirePermissions } from './places.js';
import type { MessageReference } from './schemas.js';
import * as store from './store.js';

type Json = Record<string, unknown>;

export interface ForwardingDeps {
  access: GuildAccess;
  quotas: Quotas;
  /** An application's flags (its approved intents), read through `db`; undefined for an unknown one. */
  applicationFlags(db: Executor, applicationId: string): Promise<bigint | undefined>;
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

const APPROVED_CONTENT =
  ApplicationFlags.GatewayMessageContent | ApplicationFlags.GatewayMessageContentLimited;

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
   * The forward of `requested` into `place`; undefined when the source is missing and
   * `fail_if_not_exists` is false (the message is then sent as a plain one). `objectOf` builds the source's
   * message object as everyone reads it.
   */
  async forward(
    tx: Executor,
    actor: Actor,
    requested: MessageReference,
    objectOf: (db: Executor, row: store.MessageRow) => Promise<MessageObject>,
  ): Promise<Forward | undefined> {
    const { channelId, messageId } = requireIds(requested);
    const source = await placeOf(tx, this.#deps.access, actor, channelId);
    requirePermissions(source, PermissionFlags.ReadMessageHistory);
    const row = await store.findMessage(tx, channelId, messageId);
    const sameGuild =
      requested.guild_id === undefined ||
      requested.guild_id === null ||
      requested.guild_id === source.guildId;
    if (!row || !sameGuild) {
      if (requested.fail_if_not_exists === false) return undefined;
      throw invalidForm('message_reference', FormErrors.messageReferenceUnknownMessage());
    }
    if (!FORWARDABLE_MESSAGE_TYPES.includes(Number(row.type)))
      throw new HearthError('CannotExecuteOnSystemMessage');
    await this.#requireReadable(tx, actor, source, row);
    const snapshot = snapshotOf(row, await objectOf(tx, row));
    await this.#spend(actor, snapshot);
    return {
      reference: {
        type: MessageReferenceTypes.Forward,
        channel_id: channelId,
        message_id: messageId,
        ...(source.guildId === null ? {} : { guild_id: source.guildId }),
      },
      snapshot,
      flags: MessageFlags.HasSnapshot,
    };
  }

  // ---- Steps ----

  /**
   * 160014 for an app that could not read the source's content: a bot without the message-content
   * intent approved, in a guild channel, in a message neither its own nor mentioning it (GUILDS.md §4.1,
   * the rule the gateway applies to MESSAGE_CREATE).
   */
  async #requireReadable(db: Executor, actor: Actor, source: Place, row: store.MessageRow): Promise<void> {
    if (!actor.bot || source.guildId === null || row.author_id === actor.userId) return;
    if ((JSON.parse(row.mentions) as string[]).includes(actor.userId)) return;
    const flags =
      actor.applicationId === undefined
        ? undefined
        : await this.#deps.applicationFlags(db, actor.applicationId);
    if (flags !== undefined && (flags & APPROVED_CONTENT) !== 0n) return;
    throw new HearthError('CannotForwardUnreadableMessage');
  }

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
