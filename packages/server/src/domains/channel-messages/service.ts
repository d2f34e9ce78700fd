import {
  ChannelTypes,
  DELETABLE_MESSAGE_TYPES,
  EDITABLE_MESSAGE_FLAGS,
  FormErrors,
  MessageDispatches,
  MessageFlags,
  MessageLimits,
  MessageReferenceTypes,
  MessageTypes,
  PermissionFlags,
  RateLimitHeaders,
  RateLimitScopes,
  SENDABLE_MESSAGE_FLAGS,
  snowflakeTimestamp,
} from '@hearth/protocol';
import type { Insertable, Transaction } from 'kysely';
import type { Audience, Bus, BusEvent } from '../../bus/bus.js';
import type { FileUploads, UploadedFile } from '../../http/multipart.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { MessagesTable, Schema } from '../../storage/schema.js';
import type { User } from '../accounts/service.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import * as memberStore from '../guilds/members-store.js';
import { toMemberObject } from '../guilds/objects.js';
import { DatedRules, has } from '../guilds/permissions.js';
import type { AttachmentPlan } from './attachments.js';
import {
  checkComponentsV2Message,
  componentAttachmentsOf,
  isComponentsV2,
  parseComponents,
} from './components.js';
import { parseEmbeds } from './embeds.js';
import { type Forward, Forwarding } from './forwarding.js';
import { exclusiveConflict, type Mentions, resolveMentions, written } from './mentions.js';
import { encodeNonce, type MessageCall, type MessageObject } from './objects.js';
import {
  type Actor,
  type MessageThreads,
  type Place,
  placeOf,
  requireMessageChannel,
  requirePermissions,
  requireThreadWrite,
} from './places.js';
import { type MessageAttachments, MessageReading, replyTarget } from './reading.js';
import {
  type AllowedMentions,
  CreateMessage,
  EditMessage,
  ListMessagesQuery,
  type MessageReference,
} from './schemas.js';
import * as store from './store.js';

export type { Actor, MessageThreads } from './places.js';
export type { MessageAttachments } from './reading.js';

type Tx = Transaction<Schema>;
type Json = Record<string, unknown>;

/** A message about to be stored (create or edit): what a content guard such as AutoMod inspects. */
export interface MessageDraft {
  channelId: string;
  guildId: string | null;
  authorId: string;
  content: string;
  embeds: readonly Json[];
  components: readonly Json[];
  /** Whether this is an edit of an existing message (the seed's AutoMod rule names that case). */
  edit: boolean;
}

/**
 * A check of every create and edit before it is stored (AutoMod), inside the message's transaction. Its
 * outcome may refuse the message, and may ask to be told how the create or edit settled (`settle`: the
 * stored message's id, or null when refused by any step) once its transaction is over, for work of its
 * own that must outlive a refusal (AutoMod's alerts, timeouts and audit entries).
 */
export interface MessageGuard {
  check(db: Executor, draft: MessageDraft, actor: Actor): Promise<GuardOutcome | undefined>;
}

export interface GuardOutcome {
  refusal?: HearthError;
  settle?: (messageId: string | null) => Promise<void>;
}

type Settle = NonNullable<GuardOutcome['settle']>;

/** The alert of a SEND_ALERT_MESSAGE AutoMod action: a system message (type 24) shown as the member's. */
export interface SystemAlert {
  guildId: string;
  channelId: string;
  authorId: string;
  content: string;
  embeds: Json[];
}

export interface ChannelMessagesDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  access: GuildAccess;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  /** An application's flags: its message-content approval decides what its bot reads over REST. */
  applicationFlags: (db: Executor, applicationId: string) => Promise<bigint | undefined>;
  attachments?: MessageAttachments;
  guards?: readonly MessageGuard[];
  /** Forwards (`message_reference.type` FORWARD); without it only replies are referenced. */
  forwarding?: Forwarding;
  /** Told of each message `create` stored, once published (a linked lobby mirrors it; PROTOCOL.md §A.5). */
  observers?: readonly MessageObserver[];
  /** The guild message search index (domains/search), written in each create's and edit's transaction. */
  searchIndex?: MessageSearchIndex;
  /** Threads: counts and unarchiving kept per message, and the `thread` of starter messages. */
  threads?: MessageThreads;
}

/** Something that follows new channel messages; it handles its own failures (the create has succeeded). */
export interface MessageObserver {
  messageCreated(row: store.MessageRow): Promise<void>;
  /** A message whose content `edit` changed, once published. */
  messageUpdated?(row: store.MessageRow): Promise<void>;
  /** A message deleted through `delete` (a moderator's or its author's), once published. */
  messageDeleted?(channelId: string, messageId: string): Promise<void>;
}

/** A lobby message's copy in its linked channel (PROTOCOL.md §A.3 row 11): same id, no metadata. */
export interface LobbyMessageCopy {
  id: string;
  channelId: string;
  authorId: string;
  applicationId: string;
  content: string;
  flags: number;
}

/**
 * What the message core tells the search index, inside the writing transaction. Deletions need no call:
 * a message's document goes with it by cascade (0025_search).
 */
export interface MessageSearchIndex {
  index(tx: Executor, messageId: string): Promise<void>;
}

const {
  SendMessages,
  SendTTSMessages,
  EmbedLinks,
  AttachFiles,
  ReadMessageHistory,
  ManageMessages,
  MentionEveryone,
} = PermissionFlags;

/** Message types a user or bot writes (and so may edit); the others are system messages (50021). */
const EDITABLE_TYPES: readonly number[] = [
  MessageTypes.Default,
  MessageTypes.Reply,
  MessageTypes.ChatInputCommand,
  MessageTypes.ContextMenuCommand,
];

/** A new message before it is stored: the guard's draft and what only storing needs. */
interface CreateDraft extends MessageDraft {
  flags: number;
  reference: { wire: Json; authorId: string } | undefined;
  mentions: Mentions;
  /** The files the message gets (attachments.ts); none without an attachment store. */
  attachments: AttachmentPlan | undefined;
  /** The snapshot a forward carries (forwarding.ts). */
  forward: Forward | undefined;
}

/** Result of the create transaction: the row, and whether it was new (`enforce_nonce` may answer an old one). */
interface Created {
  row: store.MessageRow;
  place: Place;
  isNew: boolean;
  attachments?: AttachmentPlan | undefined;
  /** What the thread it was sent in publishes (THREAD_UPDATE when the message unarchived it). */
  events: BusEvent[];
}

/** How a message created inside another service's transaction is settled once that transaction is over. */
export interface PendingMessage {
  /** After the commit: publishes MESSAGE_CREATE and answers the message as its author reads it. */
  finish(): Promise<MessageObject>;
  /** After a rollback: tells the guards that asked that no message was stored. */
  fail(): Promise<void>;
}

/** What a message of an interaction carries besides its body (DOCS receiving-and-responding). */
export interface InteractionMessageFields {
  /** 20 CHAT_INPUT_COMMAND, 23 CONTEXT_MENU_COMMAND, 19 REPLY, 0 DEFAULT. */
  type: number;
  ephemeral: boolean;
  /** The invoking user: the only one who sees an ephemeral message. */
  userId: string;
  interactionMetadata: Json;
  /** The deprecated `interaction` object. */
  interaction: Json;
  webhookId: string;
  applicationId: string;
  /** A deferred response's placeholder: empty, flagged LOADING until the app's edit replaces it. */
  loading?: boolean;
}

/** Options of a message created inside another service's transaction. */
export interface CreateWithinOptions {
  /** The message's id (a forum post's first message shares its thread's id). */
  id?: string;
  /** A forum or media post's first message: SEND_MESSAGES in the parent suffices, and no slowmode applies. */
  firstPost?: boolean;
}

/**
 * Messages of guild and DM channels (GUILDS.md §4): create, read, list, edit, delete. Each handler is a
 * list of named steps; events go out once the transaction committed (STYLE rule 3).
 */
export class ChannelMessagesService {
  readonly #deps: ChannelMessagesDeps;
  readonly #reading: MessageReading;

  constructor(deps: ChannelMessagesDeps) {
    this.#deps = deps;
    this.#reading = new MessageReading(deps);
  }

  /** The route config of the routes that take `files[n]` (create, edit); none without attachments. */
  get uploads(): FileUploads | undefined {
    return this.#deps.attachments?.uploads;
  }

  // ---- Create (POST /channels/{id}/messages) ----

  /**
   * Creates a message from a parsed JSON body (or a multipart `payload_json`); answers the message, or
   * under `enforce_nonce` the author's earlier message with the same nonce. `uploads` are the body's
   * `files[n]`: the server removes any this call did not keep.
   */
  async create(
    actor: Actor,
    channelId: string,
    input: unknown,
    uploads: readonly UploadedFile[] = [],
  ): Promise<MessageObject> {
    const body = parse(CreateMessage, input ?? {});
    checkAllowedMentions(body.allowed_mentions);
    const settles: Settle[] = [];
    const creating = this.#deps.storage.transaction((tx) =>
      this.#createIn(tx, actor, channelId, body, uploads, settles, {}),
    );
    const created = await this.#settling(settles, creating);
    return this.#afterCreate(actor, created, settles);
  }

  /**
   * Creates a message inside the caller's transaction `tx` (a forum post's first message, stored with its
   * thread): the caller finishes it once committed, or fails it after a rollback.
   */
  async createWithin(
    tx: Executor,
    actor: Actor,
    channelId: string,
    body: CreateMessage,
    uploads: readonly UploadedFile[],
    options: CreateWithinOptions,
  ): Promise<PendingMessage> {
    checkAllowedMentions(body.allowed_mentions);
    const settles: Settle[] = [];
    const created = await this.#settling(
      settles,
      this.#createIn(tx as Tx, actor, channelId, body, uploads, settles, options),
    );
    return {
      finish: () => this.#afterCreate(actor, created, settles),
      fail: async () => {
        for (const settle of settles) await settle(null);
      },
    };
  }

  /** The create transaction's steps; the guards that want to hear how it settled are in `settles`. */
  async #createIn(
    tx: Tx,
    actor: Actor,
    channelId: string,
    body: CreateMessage,
    uploads: readonly UploadedFile[],
    settles: Settle[],
    options: CreateWithinOptions,
  ): Promise<Created> {
    let place = await placeOf(tx, this.#deps.access, actor, channelId);
    if (options.firstPost && place.thread) place = { ...place, permissions: place.thread.parentPermissions };
    requireMessageChannel(place);
    this.#requireSendPermissions(place, body);
    if (uploads.length > 0) requirePermissions(place, AttachFiles);
    if (!options.firstPost) requireThreadWrite(place, 'send');
    const earlier = await this.#enforceNonce(tx, actor, place, body);
    if (earlier) return { row: earlier, place, isNew: false, events: [] };
    const draft = await this.#draft(tx, actor, place, body, uploads);
    await this.#guard(tx, actor, settles, draft);
    if (!options.firstPost) await this.#slowmode(tx, actor, place);
    const id = await this.#insert(tx, actor, place, body, draft, options.id);
    const events = place.thread ? ((await this.#deps.threads?.messageCreated(tx, place, id)) ?? []) : [];
    const attachments = draft.attachments;
    const row = (await store.findMessage(tx, channelId, id))!;
    return { row, place, isNew: true, attachments, events };
  }

  /** Once the create committed: files into place, the thread's events, MESSAGE_CREATE, then the guards. */
  async #afterCreate(actor: Actor, created: Created, settles: readonly Settle[]): Promise<MessageObject> {
    if (created.attachments) await this.#deps.attachments?.settle(created.attachments);
    const [message] = await this.#readable(actor, created.place, [created.row]);
    for (const event of created.events) await this.#deps.bus.publish(event);
    if (created.isNew) await this.publishMessage(MessageDispatches.MessageCreate, created.place, created.row);
    for (const settle of settles) await settle(created.row.id);
    if (created.isNew)
      for (const observer of this.#deps.observers ?? []) await observer.messageCreated(created.row);
    return message!;
  }

  /**
   * A linked lobby's message stored in its channel (PROTOCOL.md §A.5): lobby members write there whatever
   * their standing in the guild, so no permission applies; the guards (AutoMod) do, and a refusal throws.
   * Mentions are not resolved: a lobby message pings nobody in the guild.
   */
  async postFromLobby(copy: LobbyMessageCopy): Promise<void> {
    const actor: Actor = { userId: copy.authorId, bot: false };
    const settles: Settle[] = [];
    const posting = this.#deps.storage.transaction(async (tx) => {
      const channel = await channelStore.findChannel(tx, copy.channelId);
      if (!channel) throw new HearthError('UnknownChannel');
      const place: Place = {
        channelId: channel.id,
        type: Number(channel.type),
        guildId: channel.guild_id,
        permissions: 0n,
        rateLimitPerUser: 0,
      };
      await this.#guard(tx, actor, settles, {
        channelId: channel.id,
        guildId: channel.guild_id,
        authorId: copy.authorId,
        content: copy.content,
        embeds: [],
        components: [],
        edit: false,
      });
      await store.insertMessage(tx, {
        id: copy.id,
        channel_id: channel.id,
        guild_id: channel.guild_id,
        author_id: copy.authorId,
        type: MessageTypes.Default,
        content: copy.content,
        flags: copy.flags,
        application_id: copy.applicationId,
        created_at: snowflakeTimestamp(copy.id),
      });
      await this.#deps.searchIndex?.index(tx, copy.id);
      await channelStore.updateChannel(tx, channel.id, { last_message_id: copy.id });
      return { row: (await store.findMessage(tx, channel.id, copy.id))!, place };
    });
    const { row, place } = await this.#settling(settles, posting);
    await this.publishMessage(MessageDispatches.MessageCreate, place, row);
    for (const settle of settles) await settle(row.id);
  }

  /**
   * A message an interaction creates (its response or a follow-up; DOCS receiving-and-responding): written
   * by the app's bot through its token, so the bot's own standing in the channel is not asked (a
   * user-installed app is often not there); `place` carries the app's permissions. The guards still apply.
   * An ephemeral one reaches its user's sessions alone and stays out of the channel's history.
   */
  async createForInteraction(
    actor: Actor,
    place: Place,
    input: unknown,
    uploads: readonly UploadedFile[],
    fields: InteractionMessageFields,
  ): Promise<MessageObject> {
    const body = parse(CreateMessage, input ?? {});
    checkAllowedMentions(body.allowed_mentions);
    // EPHEMERAL is the interaction's to set; the message flags rules see the rest.
    const requested = body.flags ?? 0;
    const ephemeral = fields.ephemeral || (requested & MessageFlags.Ephemeral) !== 0;
    const plain: CreateMessage = { ...body, flags: requested & ~MessageFlags.Ephemeral };
    const shown: Place =
      ephemeral && fields.userId ? { ...place, audience: { users: [fields.userId] } } : place;
    const settles: Settle[] = [];
    const creating = this.#deps.storage.transaction(async (tx): Promise<Created> => {
      requireMessageChannel(shown);
      const draft = await this.#draft(tx, actor, shown, plain, uploads, fields.loading === true);
      await this.#guard(tx, actor, settles, draft);
      const id = await this.#insert(tx, actor, shown, plain, draft, undefined, { ...fields, ephemeral });
      const events = shown.thread ? ((await this.#deps.threads?.messageCreated(tx, shown, id)) ?? []) : [];
      const row = (await store.findMessage(tx, shown.channelId, id))!;
      return { row, place: shown, isNew: true, attachments: draft.attachments, events };
    });
    const created = await this.#settling(settles, creating);
    return this.#afterCreate(actor, created, settles);
  }

  // ---- Read ----

  /** GET /channels/{id}/messages/{mid}: READ_MESSAGE_HISTORY (50013), 10008 when it is not there. */
  async get(actor: Actor, channelId: string, messageId: string): Promise<MessageObject> {
    const db = this.#deps.storage.db;
    const place = await placeOf(db, this.#deps.access, actor, channelId);
    requirePermissions(place, ReadMessageHistory);
    const row = await this.#message(db, channelId, messageId);
    if ((Number(row.flags) & MessageFlags.Ephemeral) !== 0) throw new HearthError('UnknownMessage');
    const [message] = await this.#readable(actor, place, [row]);
    return message!;
  }

  /**
   * GET /channels/{id}/messages: newest first, `limit` 1–100 (50); `around`, `before` or `after`. Without
   * READ_MESSAGE_HISTORY the answer is empty (the platform's behaviour), not an error.
   */
  async list(actor: Actor, channelId: string, query: unknown): Promise<MessageObject[]> {
    const {
      around,
      before,
      after,
      limit = MessageLimits.listDefault,
    } = parse(ListMessagesQuery, query ?? {});
    const db = this.#deps.storage.db;
    const place = await placeOf(db, this.#deps.access, actor, channelId);
    if (!has(place.permissions, ReadMessageHistory)) return [];
    let rows: store.MessageRow[];
    if (around !== undefined) {
      const newer = await store.messagesAfter(db, channelId, around, Math.ceil(limit / 2), true);
      const older = await store.messagesBefore(db, channelId, around, limit - newer.length);
      rows = [...newer.reverse(), ...older];
    } else if (before !== undefined) {
      rows = await store.messagesBefore(db, channelId, before, limit);
    } else if (after !== undefined) {
      rows = (await store.messagesAfter(db, channelId, after, limit)).reverse();
    } else {
      rows = await store.messagesBefore(db, channelId, undefined, limit);
    }
    return this.#readable(actor, place, rows);
  }

  // ---- Edit (PATCH /channels/{id}/messages/{mid}) ----

  /**
   * The author edits content, embeds, components, attachments and flags; anyone else may only change
   * SUPPRESS_EMBEDS, with MANAGE_MESSAGES (GUILDS.md §4.5). IS_COMPONENTS_V2 is never cleared.
   */
  async edit(
    actor: Actor,
    channelId: string,
    messageId: string,
    input: unknown,
    uploads: readonly UploadedFile[] = [],
  ): Promise<MessageObject> {
    const body = parse(EditMessage, input ?? {});
    checkAllowedMentions(body.allowed_mentions);
    const settles: Settle[] = [];
    const editing = this.#deps.storage.transaction(async (tx) => {
      const place = await placeOf(tx, this.#deps.access, actor, channelId);
      return this.#editIn(tx, actor, place, messageId, body, uploads, settles);
    });
    return this.#afterEdit(actor, editing, settles);
  }

  /**
   * An edit through an interaction token (the original response, a follow-up, UPDATE_MESSAGE): the app's
   * bot edits its own message in `place` as the interaction found it, whatever the bot's standing there.
   */
  async editForInteraction(
    actor: Actor,
    place: Place,
    messageId: string,
    input: unknown,
    uploads: readonly UploadedFile[] = [],
  ): Promise<MessageObject> {
    const body = parse(EditMessage, input ?? {});
    checkAllowedMentions(body.allowed_mentions);
    const settles: Settle[] = [];
    const editing = this.#deps.storage.transaction((tx) =>
      this.#editIn(tx, actor, place, messageId, body, uploads, settles),
    );
    return this.#afterEdit(actor, editing, settles);
  }

  async #editIn(
    tx: Tx,
    actor: Actor,
    place: Place,
    messageId: string,
    body: EditMessage,
    uploads: readonly UploadedFile[],
    settles: Settle[],
  ) {
    const channelId = place.channelId;
    const current = await this.#message(tx, channelId, messageId);
    requireThreadWrite(place, 'edit');
    if (!EDITABLE_TYPES.includes(Number(current.type))) throw new HearthError('CannotExecuteOnSystemMessage');
    const own = current.author_id === actor.userId;
    const touchesContent =
      body.content !== undefined ||
      body.embeds !== undefined ||
      body.components !== undefined ||
      body.attachments !== undefined ||
      uploads.length > 0;
    if (!own && touchesContent) throw new HearthError('CannotEditOtherUsersMessage');
    if (!own && body.flags !== undefined && body.flags !== null) requirePermissions(place, ManageMessages);
    const changes: Partial<Insertable<MessagesTable>> = {};
    let attachments: AttachmentPlan | undefined;
    // The first edit of a deferred response's placeholder replaces it: LOADING goes, and it is not "edited".
    const loading = (Number(current.flags) & MessageFlags.Loading) !== 0;
    const flags = this.#editFlags(Number(current.flags), body.flags) & ~MessageFlags.Loading;
    if (flags !== Number(current.flags)) changes.flags = flags;
    const content = body.content === undefined ? current.content : (body.content ?? '');
    const storedEmbeds = JSON.parse(current.embeds) as Json[];
    checkComponentsV2Message(flags, {
      content,
      embeds: body.embeds === undefined ? storedEmbeds : body.embeds,
    });
    if (touchesContent) {
      const embeds = body.embeds === undefined ? storedEmbeds : this.#checkEmbeds(body.embeds);
      if (body.embeds !== undefined && embeds.length > 0) requirePermissions(place, EmbedLinks);
      if (uploads.length > 0) requirePermissions(place, AttachFiles);
      const existing = (await this.#deps.attachments?.rows(tx, current.id)) ?? [];
      attachments = this.#attachmentPlan(channelId, uploads, body.attachments, existing);
      const files = attachments ? (this.#deps.attachments?.plannedObjects(attachments) ?? []) : [];
      const components =
        body.components === undefined
          ? (JSON.parse(current.components) as Json[])
          : this.#checkComponents(body.components, flags, files);
      if (content === '' && embeds.length === 0 && components.length === 0 && files.length === 0)
        throw new HearthError('CannotSendEmptyMessage');
      await this.#guard(tx, actor, settles, {
        channelId,
        guildId: place.guildId,
        authorId: actor.userId,
        content,
        embeds,
        components,
        edit: true,
      });
      if (body.content !== undefined) {
        const repliedTo = await this.#repliedAuthor(tx, current);
        const mentions = await this.#mentions(tx, place, content, body.allowed_mentions, repliedTo);
        changes.content = content;
        changes.mentions = JSON.stringify(mentions.users);
        changes.mention_roles = JSON.stringify(mentions.roles);
        changes.mention_everyone = mentions.everyone ? 1 : 0;
      }
      changes.embeds = JSON.stringify(embeds);
      changes.components = JSON.stringify(components);
      if (!loading) changes.edited_at = this.#deps.clock.now();
    }
    const changed = Object.keys(changes).length > 0;
    if (changed) await store.updateMessage(tx, current.id, changes);
    if (attachments) await this.#deps.attachments?.save(tx, current.id, attachments);
    if (changed || attachments) await this.#deps.searchIndex?.index(tx, current.id);
    return { row: (await store.findMessage(tx, channelId, messageId))!, place, changed, attachments };
  }

  async #afterEdit(
    actor: Actor,
    editing: Promise<{
      row: store.MessageRow;
      place: Place;
      changed: boolean;
      attachments: AttachmentPlan | undefined;
    }>,
    settles: readonly Settle[],
  ): Promise<MessageObject> {
    const { row, place, changed, attachments } = await this.#settling(settles, editing);
    if (attachments) await this.#deps.attachments?.settle(attachments);
    const [message] = await this.#readable(actor, place, [row]);
    if (changed) await this.publishMessage(MessageDispatches.MessageUpdate, place, row);
    for (const settle of settles) await settle(row.id);
    if (changed) for (const observer of this.#deps.observers ?? []) await observer.messageUpdated?.(row);
    return message!;
  }

  // ---- Delete (DELETE /channels/{id}/messages/{mid}) ----

  /** The author, or MANAGE_MESSAGES for others' messages; system messages cannot be deleted (50021). */
  async delete(actor: Actor, channelId: string, messageId: string): Promise<void> {
    const { place, files } = await this.#deps.storage.transaction(async (tx) => {
      const place = await placeOf(tx, this.#deps.access, actor, channelId);
      return this.#deleteIn(tx, actor, place, messageId);
    });
    await this.#afterDelete(place, files, messageId);
  }

  /** A delete through an interaction token: the app's bot deletes its own message in `place`. */
  async deleteForInteraction(actor: Actor, place: Place, messageId: string): Promise<void> {
    const { files } = await this.#deps.storage.transaction((tx) =>
      this.#deleteIn(tx, actor, place, messageId),
    );
    await this.#afterDelete(place, files, messageId);
  }

  async #deleteIn(tx: Tx, actor: Actor, place: Place, messageId: string) {
    const row = await this.#message(tx, place.channelId, messageId);
    if (!DELETABLE_MESSAGE_TYPES.includes(Number(row.type)))
      throw new HearthError('CannotExecuteOnSystemMessage');
    if (row.author_id !== actor.userId) requirePermissions(place, ManageMessages);
    requireThreadWrite(place, 'delete');
    const files = (await this.#deps.attachments?.deleteForMessages(tx, [row.id])) ?? [];
    await store.deleteMessage(tx, row.id);
    if (place.thread) await this.#deps.threads?.messagesDeleted(tx, place, [row.id]);
    return { place, files };
  }

  async #afterDelete(place: Place, files: readonly string[], messageId: string): Promise<void> {
    const channelId = place.channelId;
    await this.#deps.attachments?.removeFiles(files);
    await this.#deps.bus.publish({
      type: MessageDispatches.MessageDelete,
      data: {
        id: messageId,
        channel_id: channelId,
        ...(place.guildId === null ? {} : { guild_id: place.guildId }),
      },
      audience: audienceOf(place),
    });
    for (const observer of this.#deps.observers ?? []) await observer.messageDeleted?.(channelId, messageId);
  }

  /**
   * Slowmode spent outside a message (a forum's `rate_limit_per_user` limits how often posts are started,
   * Threads topic): 429 with 20016 while the member's period runs.
   */
  async spendSlowmode(tx: Executor, actor: Actor, place: Place): Promise<void> {
    await this.#slowmode(tx as Tx, actor, place);
  }

  /** Messages of a thread were deleted (bulk delete): the thread's counts follow. */
  async messagesDeletedIn(tx: Executor, place: Place, messageIds: readonly string[]): Promise<void> {
    if (place.thread) await this.#deps.threads?.messagesDeleted(tx, place, messageIds);
  }

  /** Inside the channel's deletion (ChannelsService): its messages and slowmode marks go with it. */
  async channelDeleted(tx: Executor, channelId: string): Promise<void> {
    await this.#deps.attachments?.channelDeleted(tx, channelId);
    await store.deleteChannelMessages(tx, channelId);
  }

  // ---- Objects ----

  /**
   * Whether an actor reads a message's content (GUILDS.md §4.1): people always; a bot when its app has
   * message-content access, in DMs, in its own messages and in messages that mention it (160014 for forwards).
   */
  readsContent(actor: Actor, message: MessageObject, inGuild: boolean): Promise<boolean> {
    return this.#reading.readsContent(actor, message, inGuild);
  }

  /** Message objects of rows as `viewerId` reads them: users, files, reactions, and replied-to messages. */
  objectsOf(
    db: Executor,
    rows: readonly store.MessageRow[],
    viewerId: string | undefined,
  ): Promise<MessageObject[]> {
    return this.#reading.objects(db, rows, viewerId);
  }

  /** Message objects of rows as the actor reads them over REST in `place` (pins list them so). */
  readableBy(actor: Actor, place: Place, rows: readonly store.MessageRow[]): Promise<MessageObject[]> {
    return this.#readable(actor, place, rows);
  }

  #readable(actor: Actor, place: Place, rows: readonly store.MessageRow[]): Promise<MessageObject[]> {
    return this.#reading.readable(actor, place.guildId !== null, rows);
  }

  // ---- Steps ----

  /**
   * The message to store, each part checked in its own step: flags, embeds, components, attachments,
   * that something is sent at all, the replied-to message, and who is mentioned.
   */
  async #draft(
    tx: Tx,
    actor: Actor,
    place: Place,
    body: CreateMessage,
    uploads: readonly UploadedFile[],
    placeholder = false,
  ): Promise<CreateDraft> {
    const flags = this.#createFlags(body.flags);
    checkComponentsV2Message(flags, body);
    const content = body.content ?? '';
    const attachments = this.#attachmentPlan(place.channelId, uploads, body.attachments);
    const forward = await this.#forward(tx, actor, body.message_reference);
    // The new message's own files are what `attachment://` names in its embeds and components.
    const files = attachments ? (this.#deps.attachments?.plannedObjects(attachments) ?? []) : [];
    const embeds = this.#checkEmbeds(body.embeds, files);
    const components = this.#checkComponents(body.components, flags, files);
    if (
      !placeholder &&
      content === '' &&
      embeds.length === 0 &&
      components.length === 0 &&
      (body.sticker_ids ?? []).length === 0 &&
      files.length === 0 &&
      forward === undefined
    )
      throw new HearthError('CannotSendEmptyMessage');
    const reference = forward ? undefined : await this.#reference(tx, place, body.message_reference);
    const mentions = await this.#mentions(tx, place, content, body.allowed_mentions, reference?.authorId);
    return {
      channelId: place.channelId,
      guildId: place.guildId,
      authorId: actor.userId,
      content,
      embeds,
      components,
      edit: false,
      flags,
      reference,
      mentions,
      attachments,
      forward,
    };
  }

  /** Stores the message, its nonce and the channel's `last_message_id`; answers its id. */
  async #insert(
    tx: Tx,
    actor: Actor,
    place: Place,
    body: CreateMessage,
    draft: CreateDraft,
    givenId?: string,
    extra: InteractionMessageFields | undefined = undefined,
  ): Promise<string> {
    const { content, embeds, components, flags, reference, mentions, forward } = draft;
    const channelId = place.channelId;
    const id = givenId ?? this.#deps.snowflakes.next();
    const row: Insertable<MessagesTable> = {
      id,
      channel_id: channelId,
      guild_id: place.guildId,
      author_id: actor.userId,
      type: reference ? MessageTypes.Reply : MessageTypes.Default,
      content,
      flags: flags | (forward?.flags ?? 0),
      tts: body.tts === true ? 1 : 0,
      mention_everyone: mentions.everyone ? 1 : 0,
      mentions: JSON.stringify(mentions.users),
      mention_roles: JSON.stringify(mentions.roles),
      embeds: JSON.stringify(embeds),
      components: JSON.stringify(components),
      message_reference: reference
        ? JSON.stringify(reference.wire)
        : forward
          ? JSON.stringify(forward.reference)
          : null,
      message_snapshots: forward ? JSON.stringify([forward.snapshot]) : null,
      interaction_metadata: null,
      nonce: body.nonce === undefined || body.nonce === null ? null : encodeNonce(body.nonce),
      pinned: 0,
      pinned_at: null,
      webhook_id: null,
      application_id: null,
      // The id's own instant: history pages order by it (0016_messages).
      created_at: snowflakeTimestamp(id),
      edited_at: null,
    };
    if (extra) {
      row.type = extra.type;
      row.flags =
        Number(row.flags) |
        (extra.ephemeral ? MessageFlags.Ephemeral : 0) |
        (extra.loading ? MessageFlags.Loading : 0);
      row.interaction_metadata = JSON.stringify(extra.interactionMetadata);
      row.interaction = JSON.stringify(extra.interaction);
      row.webhook_id = extra.webhookId;
      row.application_id = extra.applicationId;
    }
    await store.insertMessage(tx, row);
    if (draft.attachments) await this.#deps.attachments?.save(tx, id, draft.attachments);
    // An ephemeral message is its user's alone: not searchable, not the channel's last message.
    if (extra?.ephemeral) return id;
    await this.#deps.searchIndex?.index(tx, id);
    await this.#rememberNonce(tx, actor, body.nonce, id);
    if (place.guildId !== null && !place.thread)
      await channelStore.updateChannel(tx, channelId, { last_message_id: id });
    return id;
  }

  /** SEND_MESSAGES; SEND_TTS_MESSAGES for `tts`; EMBED_LINKS for embeds (GUILDS.md §4.5). */
  #requireSendPermissions(place: Place, body: CreateMessage): void {
    requirePermissions(place, SendMessages);
    if (body.tts === true) requirePermissions(place, SendTTSMessages);
    if ((body.embeds ?? []).length > 0) requirePermissions(place, EmbedLinks);
  }

  /**
   * `enforce_nonce`: the same author's message with the same nonce within the window is answered instead
   * of a new one (seed: Message). Without it a nonce is only echoed.
   */
  async #enforceNonce(
    tx: Tx,
    actor: Actor,
    place: Place,
    body: CreateMessage,
  ): Promise<store.MessageRow | undefined> {
    if (body.enforce_nonce !== true || body.nonce === undefined || body.nonce === null) return undefined;
    const since = this.#deps.clock.now() - MessageLimits.enforceNonceWindowMs;
    const seen = await store.findNonce(tx, actor.userId, String(body.nonce));
    if (!seen || Number(seen.created_at) < since) return undefined;
    const earlier = await store.findMessage(tx, place.channelId, seen.message_id);
    return earlier;
  }

  async #rememberNonce(tx: Tx, actor: Actor, nonce: string | number | null | undefined, messageId: string) {
    if (nonce === undefined || nonce === null) return;
    const now = this.#deps.clock.now();
    await store.forgetNoncesBefore(tx, actor.userId, now - MessageLimits.enforceNonceWindowMs);
    await store.rememberNonce(tx, {
      author_id: actor.userId,
      nonce: String(nonce),
      message_id: messageId,
      created_at: now,
    });
  }

  /** Only SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS, IS_VOICE_MESSAGE and IS_COMPONENTS_V2 may be sent. */
  #createFlags(requested: number | null | undefined): number {
    const flags = requested ?? 0;
    if ((flags & ~SENDABLE_MESSAGE_FLAGS) !== 0) throw invalidForm('flags', FormErrors.invalid());
    return flags;
  }

  /** Editable bits change as asked; the others stay; IS_COMPONENTS_V2 once set stays set (GUILDS.md §4.3). */
  #editFlags(current: number, requested: number | null | undefined): number {
    if (requested === undefined || requested === null) return current;
    if ((requested & ~(SENDABLE_MESSAGE_FLAGS | current)) !== 0)
      throw invalidForm('flags', FormErrors.invalid());
    const next = (current & ~EDITABLE_MESSAGE_FLAGS) | (requested & EDITABLE_MESSAGE_FLAGS);
    return next | (current & MessageFlags.IsComponentsV2);
  }

  /** Embeds: the field limits of GUILDS.md §4.6 (embeds.ts). */
  #checkEmbeds(embeds: readonly Json[] | null | undefined, attachments: readonly Json[] = []): Json[] {
    return parseEmbeds(embeds, componentAttachmentsOf(attachments));
  }

  /** Components: the tree rules of GUILDS.md §5 (components.ts); `attachment://` names these attachments. */
  #checkComponents(
    components: readonly Json[] | null | undefined,
    flags: number,
    attachments: readonly Json[],
  ): Json[] {
    return parseComponents(components, {
      componentsV2: isComponentsV2(flags),
      attachments: componentAttachmentsOf(attachments),
      newId: () => this.#deps.snowflakes.next(),
    });
  }

  /** What a create or edit does to the message's files (GUILDS.md §4.8). */
  #attachmentPlan(
    channelId: string,
    uploads: readonly UploadedFile[],
    requested: readonly Json[] | null | undefined,
    existing: Parameters<NonNullable<ChannelMessagesDeps['attachments']>['plan']>[3] = [],
  ): AttachmentPlan | undefined {
    if (!this.#deps.attachments) {
      this.#checkAttachments(requested ?? []);
      return undefined;
    }
    return this.#deps.attachments.plan(channelId, uploads, requested, existing);
  }

  /** `attachments` names uploads; without an attachment store there are none to name. */
  #checkAttachments(attachments: readonly Json[]): void {
    if (attachments.length > 0 && !this.#deps.attachments)
      throw invalidForm('attachments', FormErrors.invalid());
  }

  /**
   * A forward (`message_reference`, type FORWARD): the snapshot of the source it carries (forwarding.ts);
   * undefined for any other message, or when the source is gone and `fail_if_not_exists` is false.
   */
  async #forward(
    tx: Tx,
    actor: Actor,
    requested: MessageReference | null | undefined,
  ): Promise<Forward | undefined> {
    if (!requested || !Forwarding.isForward(requested)) return undefined;
    if (!this.#deps.forwarding)
      throw invalidForm('message_reference.type', FormErrors.choices([MessageReferenceTypes.Default]));
    return this.#deps.forwarding.forward(tx, actor, requested, {
      reader: await this.#reading.reader(actor, tx),
      objectOf: async (db, row) => {
        const [object] = await this.#reading.objects(db, [row], undefined, false);
        return object!;
      },
    });
  }

  /**
   * A reply (`message_reference`, type DEFAULT): READ_MESSAGE_HISTORY (160002), a message of this channel;
   * a missing one is 50035 unless `fail_if_not_exists: false`, which sends a plain message (GUILDS.md §4.4).
   */
  async #reference(
    tx: Tx,
    place: Place,
    requested: MessageReference | null | undefined,
  ): Promise<{ wire: Json; authorId: string } | undefined> {
    if (!requested) return undefined;
    const type = requested.type ?? MessageReferenceTypes.Default;
    if (type !== MessageReferenceTypes.Default)
      throw invalidForm('message_reference.type', FormErrors.choices([MessageReferenceTypes.Default]));
    if (!requested.message_id) throw invalidForm('message_reference.message_id', FormErrors.required());
    if (!has(place.permissions, ReadMessageHistory)) throw new HearthError('CannotReplyWithoutReadHistory');
    const channelId = requested.channel_id ?? place.channelId;
    const target =
      channelId === place.channelId
        ? await store.findMessage(tx, channelId, requested.message_id)
        : undefined;
    const sameGuild =
      requested.guild_id === undefined || requested.guild_id === null || requested.guild_id === place.guildId;
    if (!target || !sameGuild) {
      if (requested.fail_if_not_exists === false) return undefined;
      throw invalidForm('message_reference', FormErrors.messageReferenceUnknownMessage());
    }
    return {
      wire: {
        type,
        channel_id: place.channelId,
        message_id: target.id,
        ...(place.guildId === null ? {} : { guild_id: place.guildId }),
      },
      authorId: target.author_id,
    };
  }

  async #repliedAuthor(db: Executor, row: store.MessageRow): Promise<string | undefined> {
    const target = replyTarget(row);
    if (target === undefined) return undefined;
    return (await store.findMessage(db, row.channel_id, target))?.author_id;
  }

  /** Who the message mentions: the written mentions, narrowed by `allowed_mentions` and by rights. */
  async #mentions(
    tx: Tx,
    place: Place,
    content: string,
    allowed: AllowedMentions | null | undefined,
    repliedAuthorId: string | undefined,
  ): Promise<Mentions> {
    const text = written(content);
    const users = new Set<string>();
    for (const id of text.users) if (await this.#deps.users.getUserIn(tx, id)) users.add(id);
    const roles =
      place.guildId === null
        ? new Map<string, boolean>()
        : await store.rolesAmong(tx, place.guildId, text.roles);
    return resolveMentions(text, allowed, {
      users,
      roles,
      mentionEveryone: place.guildId !== null && has(place.permissions, MentionEveryone),
      ...(repliedAuthorId === undefined ? {} : { repliedAuthorId }),
    });
  }

  async #guard(tx: Tx, actor: Actor, settles: Settle[], draft: MessageDraft): Promise<void> {
    for (const guard of this.#deps.guards ?? []) {
      const outcome = await guard.check(tx, draft, actor);
      if (outcome?.settle) settles.push(outcome.settle);
      if (outcome?.refusal) throw outcome.refusal;
    }
  }

  /** Awaits a create or edit; when it is refused, the guards that asked are told (null) before it throws. */
  async #settling<T>(settles: readonly Settle[], work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      for (const settle of settles) await settle(null);
      throw error;
    }
  }

  /**
   * Slowmode (`rate_limit_per_user`): one message per period per member per channel; 429 with 20016 and
   * `retry_after` until it ends. Exempt: bots, and BYPASS_SLOWMODE (before 23 Feb 2026 also the older
   * MANAGE_MESSAGES / MANAGE_CHANNELS / MANAGE_THREADS; GUILDS.md §1.1).
   */
  async #slowmode(tx: Tx, actor: Actor, place: Place): Promise<void> {
    if (place.rateLimitPerUser <= 0) return;
    const now = this.#deps.clock.now();
    if (DatedRules.bypassesSlowmode(place.permissions, now, actor.bot)) return;
    const mark = await store.slowmodeMark(tx, place.channelId, actor.userId);
    if (mark && Number(mark.until) > now) {
      throw new SlowmodeError((Number(mark.until) - now) / 1000);
    }
    await store.setSlowmodeMark(tx, {
      channel_id: place.channelId,
      user_id: actor.userId,
      until: now + place.rateLimitPerUser * 1000,
    });
  }

  async #message(db: Executor, channelId: string, messageId: string): Promise<store.MessageRow> {
    const row = await store.findMessage(db, channelId, messageId);
    if (!row) throw new HearthError('UnknownMessage');
    return row;
  }

  /**
   * MESSAGE_CREATE / MESSAGE_UPDATE: the full object as every reader sees it (no `me`), with `guild_id`
   * and the author's `member` in guild channels; the gateway empties privileged fields per session.
   */
  async publishMessage(type: string, place: Place, row: store.MessageRow): Promise<void> {
    await this.#deps.bus.publish(await this.#messageEvent(this.#deps.storage.db, type, place, row));
  }

  async #messageEvent(db: Executor, type: string, place: Place, row: store.MessageRow): Promise<BusEvent> {
    const [message] = await this.#reading.objects(db, [row], undefined);
    const data: Json = { ...message! };
    if (place.guildId !== null) {
      const guildId = place.guildId;
      data['guild_id'] = guildId;
      const author = await this.#memberOf(db, guildId, row.author_id);
      if (author) data['member'] = author;
      // In guild events each mentioned user carries their partial member (gateway events, Message Create).
      data['mentions'] = await Promise.all(
        message!.mentions.map(async (user) => {
          const member = await this.#memberOf(db, guildId, user.id);
          return member ? { ...user, member } : user;
        }),
      );
    }
    return { type, data, audience: audienceOf(place) };
  }

  // ---- AutoMod alerts ----

  /**
   * Stores the alert of AutoMod's SEND_ALERT_MESSAGE (GUILDS.md §10: message type 24) in `tx`; answers its
   * id and the MESSAGE_CREATE to publish once that transaction has committed.
   */
  async postAlert(tx: Executor, alert: SystemAlert): Promise<{ id: string; event: BusEvent }> {
    const id = this.#deps.snowflakes.next();
    await store.insertMessage(tx, {
      id,
      channel_id: alert.channelId,
      guild_id: alert.guildId,
      author_id: alert.authorId,
      type: MessageTypes.AutoModerationAction,
      content: alert.content,
      embeds: JSON.stringify(alert.embeds),
      created_at: snowflakeTimestamp(id),
    });
    await this.#deps.searchIndex?.index(tx, id);
    await channelStore.updateChannel(tx, alert.channelId, { last_message_id: id });
    const row = (await store.findMessage(tx, alert.channelId, id))!;
    const place = {
      channelId: alert.channelId,
      type: 0,
      guildId: alert.guildId,
      permissions: 0n,
      rateLimitPerUser: 0,
    };
    return { id, event: await this.#messageEvent(tx, MessageDispatches.MessageCreate, place, row) };
  }

  // ---- Thread system messages ----

  /**
   * Stores a system message of a thread in `tx` (GUILDS.md §4.4: THREAD_CREATED, 18, in the parent;
   * THREAD_STARTER_MESSAGE, 21, first in a thread started from a message); answers the MESSAGE_CREATE to
   * publish once that transaction has committed.
   */
  async postSystemMessage(
    tx: Executor,
    message: {
      place: Place;
      authorId: string;
      type: number;
      content: string;
      reference: Json;
    },
  ): Promise<BusEvent> {
    const { place } = message;
    const id = this.#deps.snowflakes.next();
    await store.insertMessage(tx, {
      id,
      channel_id: place.channelId,
      guild_id: place.guildId,
      author_id: message.authorId,
      type: message.type,
      content: message.content,
      message_reference: JSON.stringify(message.reference),
      created_at: snowflakeTimestamp(id),
    });
    if (!place.thread) await channelStore.updateChannel(tx, place.channelId, { last_message_id: id });
    const row = (await store.findMessage(tx, place.channelId, id))!;
    return this.#messageEvent(tx, MessageDispatches.MessageCreate, place, row);
  }

  // ---- Call messages ----

  /**
   * Stores the CALL message (type 3) of a call starting in a private channel, authored by the one who
   * started it, in `tx`; answers its id and the MESSAGE_CREATE to publish once that transaction has committed.
   */
  async postCallMessage(
    tx: Executor,
    call: { channelId: string; recipients: readonly string[]; authorId: string },
  ): Promise<{ id: string; event: BusEvent }> {
    const id = this.#deps.snowflakes.next();
    const object: MessageCall = { participants: [call.authorId], ended_timestamp: null };
    await store.insertMessage(tx, {
      id,
      channel_id: call.channelId,
      guild_id: null,
      author_id: call.authorId,
      type: MessageTypes.Call,
      content: '',
      call: JSON.stringify(object),
      created_at: snowflakeTimestamp(id),
    });
    const row = (await store.findMessage(tx, call.channelId, id))!;
    const event = await this.#messageEvent(tx, MessageDispatches.MessageCreate, callPlace(call), row);
    return { id, event };
  }

  /**
   * The system message of a group DM's recipient added (RECIPIENT_ADD, type 1) or removed (RECIPIENT_REMOVE,
   * type 2) by `authorId`, mentioning that user, stored in `tx`; answers the MESSAGE_CREATE to publish after.
   */
  async postRecipientMessage(
    tx: Executor,
    change: {
      channelId: string;
      recipients: readonly string[];
      authorId: string;
      userId: string;
      added: boolean;
    },
  ): Promise<BusEvent> {
    const type = change.added ? MessageTypes.RecipientAdd : MessageTypes.RecipientRemove;
    return this.#postSystemMessage(tx, change, type, '', [change.userId]);
  }

  /**
   * The system message of a group DM renamed (CHANNEL_NAME_CHANGE, type 4, the new name as content) or
   * given another icon (CHANNEL_ICON_CHANGE, type 5) by `authorId`, stored in `tx`; answers its MESSAGE_CREATE.
   */
  async postChannelChangeMessage(
    tx: Executor,
    change: { channelId: string; recipients: readonly string[]; authorId: string; name?: string | null },
  ): Promise<BusEvent> {
    const type = change.name === undefined ? MessageTypes.ChannelIconChange : MessageTypes.ChannelNameChange;
    return this.#postSystemMessage(tx, change, type, change.name ?? '');
  }

  async #postSystemMessage(
    tx: Executor,
    place: { channelId: string; recipients: readonly string[]; authorId: string },
    type: number,
    content: string,
    mentions?: readonly string[],
  ): Promise<BusEvent> {
    const id = this.#deps.snowflakes.next();
    await store.insertMessage(tx, {
      id,
      channel_id: place.channelId,
      guild_id: null,
      author_id: place.authorId,
      type,
      content,
      ...(mentions ? { mentions: JSON.stringify(mentions) } : {}),
      created_at: snowflakeTimestamp(id),
    });
    const row = (await store.findMessage(tx, place.channelId, id))!;
    return this.#messageEvent(tx, MessageDispatches.MessageCreate, callPlace(place), row);
  }

  /**
   * A CALL message's `call` changes in `tx`: a participant is added (no event, as the platform keeps it
   * for the end), or the call ended at `endedAt`; then answers the MESSAGE_UPDATE to publish after commit.
   */
  async updateCallMessage(
    tx: Executor,
    call: {
      channelId: string;
      recipients: readonly string[];
      messageId: string;
      participant?: string;
      endedAt?: number;
    },
  ): Promise<BusEvent | undefined> {
    const row = await store.findMessage(tx, call.channelId, call.messageId);
    if (!row?.call) return undefined;
    const object = JSON.parse(row.call) as MessageCall;
    if (call.participant !== undefined && !object.participants.includes(call.participant))
      object.participants.push(call.participant);
    if (call.endedAt !== undefined) object.ended_timestamp = new Date(call.endedAt).toISOString();
    await store.updateMessage(tx, call.messageId, { call: JSON.stringify(object) });
    if (call.endedAt === undefined) return undefined;
    const updated = (await store.findMessage(tx, call.channelId, call.messageId))!;
    return this.#messageEvent(tx, MessageDispatches.MessageUpdate, callPlace(call), updated);
  }

  /** A message of a channel as stored (a thread's starter), or undefined. */
  findMessageIn(db: Executor, channelId: string, messageId: string): Promise<store.MessageRow | undefined> {
    return store.findMessage(db, channelId, messageId);
  }

  /** Sets flags on a message (HAS_THREAD on a thread's starter); answers its MESSAGE_UPDATE. */
  async addFlags(
    tx: Executor,
    place: Place,
    messageId: string,
    flags: number,
  ): Promise<BusEvent | undefined> {
    const row = await store.findMessage(tx, place.channelId, messageId);
    if (!row) return undefined;
    await store.updateMessage(tx, messageId, { flags: Number(row.flags) | flags });
    const updated = (await store.findMessage(tx, place.channelId, messageId))!;
    return this.#messageEvent(tx, MessageDispatches.MessageUpdate, place, updated);
  }

  /** A member object without `user`, as message events carry it; undefined for a non-member. */
  async #memberOf(db: Executor, guildId: string, userId: string): Promise<Json | undefined> {
    const member = await memberStore.findMember(db, guildId, userId);
    if (!member) return undefined;
    const roles = (await memberStore.roleIdsOf(db, guildId, [userId])).get(userId) ?? [];
    return toMemberObject(member, roles, undefined);
  }
}

/**
 * 429 of slowmode (20016) with `retry_after` in the body and `Retry-After` as a header: clients that
 * honour rate limits (discord.js) wait it out instead of retrying at once.
 */
class SlowmodeError extends HearthError {
  readonly headers: Readonly<Record<string, string>>;

  constructor(seconds: number) {
    const retryAfter = Number(seconds.toFixed(3));
    super('SlowmodeRateLimited', { extra: { retry_after: retryAfter, global: false } });
    this.headers = {
      [RateLimitHeaders.RetryAfter]: String(Math.ceil(retryAfter)),
      [RateLimitHeaders.Scope]: RateLimitScopes.User,
    };
  }
}

/** A private channel as its system messages' events see it: no guild, its recipients as the audience. */
function callPlace(call: { channelId: string; recipients: readonly string[] }): Place {
  return {
    channelId: call.channelId,
    type: ChannelTypes.DM,
    guildId: null,
    permissions: 0n,
    rateLimitPerUser: 0,
    audience: { users: [...call.recipients] },
  };
}

/** Guild channels: members who can view the channel; DMs: both participants. */
export function audienceOf(place: Place): Audience {
  if (place.audience) return place.audience;
  if (place.guildId === null) return { users: [...(place.recipients ?? [])] };
  return {
    guildId: place.guildId,
    channelId: place.channelId,
    permission: PermissionFlags.ViewChannel.toString(),
  };
}

function checkAllowedMentions(allowed: AllowedMentions | null | undefined): void {
  const conflict = exclusiveConflict(allowed);
  if (conflict) throw invalidForm('allowed_mentions', FormErrors.allowedMentionsParseExclusive(conflict));
}
