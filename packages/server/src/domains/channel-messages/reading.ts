import { GatewayIntents, MessageTypes, PRIVILEGED_INTENT_FLAGS } from '@hearth/protocol';
import type { Executor, Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import type { Attachments } from './attachments.js';
import { asReadBy, type ContentReader, readsContent } from './content-access.js';
import { type MessageObject, toMessageObject, type UserObject } from './objects.js';
import type { Actor, MessageThreads } from './places.js';
import * as store from './store.js';

type Json = Record<string, unknown>;

/**
 * The files of messages (attachments.ts): planned before a create or edit is stored, saved in its
 * transaction, moved into place after the commit. Without them, messages carry none and a request naming
 * `attachments` is refused as naming unknown uploads.
 */
export type MessageAttachments = Pick<
  Attachments,
  | 'uploads'
  | 'objectsOf'
  | 'plan'
  | 'plannedObjects'
  | 'rows'
  | 'save'
  | 'settle'
  | 'deleteForMessages'
  | 'removeFiles'
  | 'channelDeleted'
>;

export interface MessageReadingDeps {
  storage: Storage;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  applicationFlags: (db: Executor, applicationId: string) => Promise<bigint | undefined>;
  attachments?: MessageAttachments;
  /** The `thread` a message started (threads domain). */
  threads?: Pick<MessageThreads, 'threadsOf'>;
}

/**
 * Message objects as someone reads them (GUILDS.md §4.1): rows joined with their users, files, reactions
 * and replied-to messages, then narrowed by the message-content rule for bots.
 */
export class MessageReading {
  readonly #deps: MessageReadingDeps;

  constructor(deps: MessageReadingDeps) {
    this.#deps = deps;
  }

  /**
   * Whether an actor reads a message's content (GUILDS.md §4.1): people always; a bot when its app has
   * message-content access, in DMs, in its own messages and in messages that mention it (160014 for forwards).
   */
  async readsContent(actor: Actor, message: MessageObject, inGuild: boolean): Promise<boolean> {
    return readsContent(await this.reader(actor), message, inGuild);
  }

  /** Message objects as the actor reads them over REST (`me` of reactions, the content rule). */
  async readable(
    actor: Actor,
    inGuild: boolean,
    rows: readonly store.MessageRow[],
  ): Promise<MessageObject[]> {
    const objects = await this.objects(this.#deps.storage.db, rows, actor.userId);
    const reader = await this.reader(actor);
    return objects.map((object) => {
      const read = asReadBy(reader, object, inGuild);
      const referenced = read.referenced_message;
      return referenced ? { ...read, referenced_message: asReadBy(reader, referenced, inGuild) } : read;
    });
  }

  /** How an actor reads content; `db`: the caller's transaction when there is one (SQLite has one connection). */
  async reader(actor: Actor, db: Executor = this.#deps.storage.db): Promise<ContentReader> {
    if (!actor.bot || actor.applicationId === undefined)
      return { userId: actor.userId, bot: actor.bot, contentAccess: true };
    const flags = (await this.#deps.applicationFlags(db, actor.applicationId)) ?? 0n;
    const approval = PRIVILEGED_INTENT_FLAGS.find((entry) => entry.intent === GatewayIntents.MessageContent);
    const contentAccess = approval?.flags.some((flag) => (flags & flag) === flag) ?? false;
    return { userId: actor.userId, bot: true, contentAccess };
  }

  /** Message objects of rows as `viewerId` reads them: users, files, reactions, and replied-to messages. */
  async objects(
    db: Executor,
    rows: readonly store.MessageRow[],
    viewerId: string | undefined,
    withReferences = true,
  ): Promise<MessageObject[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const users = new Map<string, UserObject>();
    const userObject = async (id: string): Promise<UserObject | undefined> => {
      if (!users.has(id)) {
        const user = await this.#deps.users.getUserIn(db, id);
        if (user) users.set(id, toUserObject(user) as UserObject);
      }
      return users.get(id);
    };
    const [attachments, reactions, threads] = await Promise.all([
      this.#deps.attachments?.objectsOf(db, ids) ?? Promise.resolve(new Map<string, Json[]>()),
      store.reactionsOf(db, ids),
      this.#deps.threads?.threadsOf(db, ids) ?? Promise.resolve(new Map<string, Json>()),
    ]);
    const referenced = withReferences ? await this.#referencedMessages(db, rows, viewerId) : new Map();
    const out: MessageObject[] = [];
    for (const row of rows) {
      const author = (await userObject(row.author_id)) ?? deletedUser(row.author_id);
      const mentions: UserObject[] = [];
      for (const id of JSON.parse(row.mentions) as string[]) {
        const user = await userObject(id);
        if (user) mentions.push(user);
      }
      const reference = replyTarget(row);
      // The thread a message started, shown on that message in the parent (not on a post's first message).
      const started = threads.get(row.id);
      const thread = started?.['parent_id'] === row.channel_id ? started : undefined;
      const object = toMessageObject(row, {
        author,
        mentions,
        attachments: attachments.get(row.id) ?? [],
        reactions: reactions.filter((reaction) => reaction.message_id === row.id),
        viewerId,
        ...(reference === undefined ? {} : { referenced: referenced.get(reference) ?? null }),
      });
      out.push(thread === undefined ? object : { ...object, thread });
    }
    return out;
  }

  /** The replied-to messages of replies among `rows`, each without its own `referenced_message`. */
  async #referencedMessages(
    db: Executor,
    rows: readonly store.MessageRow[],
    viewerId: string | undefined,
  ): Promise<Map<string, MessageObject>> {
    const wanted = rows.flatMap((row) => replyTarget(row) ?? []);
    const found = await store.findMessages(db, wanted);
    const objects = await this.objects(db, found, viewerId, false);
    return new Map(objects.map((object) => [object.id, object]));
  }
}

/** The replied-to message id of a reply. */
export function replyTarget(row: store.MessageRow): string | undefined {
  if (Number(row.type) !== MessageTypes.Reply || row.message_reference === null) return undefined;
  const reference = JSON.parse(row.message_reference) as { message_id?: string };
  return reference.message_id;
}

/** What stands for an author whose account no longer exists. */
function deletedUser(id: string): UserObject {
  return {
    id,
    username: 'Deleted User',
    discriminator: '0000',
    global_name: null,
    avatar: null,
    public_flags: 0,
    flags: 0,
    primary_guild: null,
  };
}
