import { MessageDispatches, MessageLimits, PermissionFlags, ReactionTypes } from '@hearth/protocol';
import type { Bus } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import type { GuildAccess } from '../guilds/access.js';
import { has } from '../guilds/permissions.js';
import { memberObjectOf } from './message-events.js';
import { type Actor, type Place, placeOf, requirePermissions, requireThreadWrite } from './places.js';
import { parseReactionEmoji, type ReactionEmoji, toEmojiObject } from './reaction-emoji.js';
import { ListReactionsQuery } from './reactions-schemas.js';
import * as reactions from './reactions-store.js';
import { audienceOf } from './service.js';
import * as store from './store.js';

export interface ReactionsDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  access: GuildAccess;
  users: {
    getUserIn(db: Executor, id: string): Promise<User | undefined>;
    getUsers(ids: readonly string[]): Promise<Map<string, User>>;
  };
}

type Json = Record<string, unknown>;

const { AddReactions, ReadMessageHistory, ManageMessages } = PermissionFlags;

/** A reacted message as one actor stands before it. */
interface Target {
  place: Place;
  message: store.MessageRow;
}

/**
 * Reactions (GUILDS.md §4.10): add and remove one's own, remove another's, one emoji's or all of them
 * (MANAGE_MESSAGES), list who reacted. Each change sends its MESSAGE_REACTION_* event once committed, to
 * the members who can view the channel (DM: both participants); intents pick who wants them.
 *
 * Reactions added here are normal ones: super (burst) reactions are a client feature with no public
 * route, so `burst` is false in what Hearth sends and `type=1` lists nobody.
 */
export class ReactionsService {
  readonly #deps: ReactionsDeps;

  constructor(deps: ReactionsDeps) {
    this.#deps = deps;
  }

  /**
   * PUT …/reactions/{emoji}/@me: READ_MESSAGE_HISTORY, and ADD_REACTIONS unless someone already reacted
   * with this emoji; at most 20 different emoji per message (30010). Reacting again changes nothing.
   */
  async add(actor: Actor, channelId: string, messageId: string, emojiSegment: string): Promise<void> {
    const emoji = parseReactionEmoji(emojiSegment);
    const added = await this.#deps.storage.transaction(async (tx) => {
      const target = await this.#target(tx, actor, channelId, messageId);
      requirePermissions(target.place, ReadMessageHistory);
      requireThreadWrite(target.place, 'react');
      if (!(await reactions.hasEmoji(tx, messageId, emoji.key))) {
        requirePermissions(target.place, AddReactions);
        if ((await reactions.countEmoji(tx, messageId)) >= MessageLimits.reactionsPerMessage)
          throw new HearthError('MaximumReactions');
      }
      const inserted = await reactions.insertReaction(tx, {
        messageId,
        emoji,
        userId: actor.userId,
        burst: false,
        createdAt: this.#deps.clock.now(),
      });
      return inserted ? target : undefined;
    });
    if (!added) return;
    const db = this.#deps.storage.db;
    const { place, message } = added;
    const member = place.guildId === null ? undefined : await this.#member(db, place.guildId, actor.userId);
    await this.#publish(MessageDispatches.MessageReactionAdd, place, {
      ...this.#userReaction(place, messageId, actor.userId, emoji),
      ...(member === undefined ? {} : { member }),
      message_author_id: message.author_id,
    });
  }

  /**
   * DELETE …/reactions/{emoji}/{user_id} (and /@me, the caller's own id): MANAGE_MESSAGES for another
   * user's reaction; a reaction that is not there is no error.
   */
  async removeUser(
    actor: Actor,
    channelId: string,
    messageId: string,
    emojiSegment: string,
    userId: string,
  ): Promise<void> {
    const emoji = parseReactionEmoji(emojiSegment);
    const removed = await this.#deps.storage.transaction(async (tx) => {
      const target = await this.#target(tx, actor, channelId, messageId);
      if (userId !== actor.userId) this.#requireModeration(target.place);
      requireThreadWrite(target.place, 'react');
      const gone = await reactions.deleteUserReaction(tx, messageId, emoji.key, userId);
      return gone ? target.place : undefined;
    });
    if (!removed) return;
    await this.#publish(
      MessageDispatches.MessageReactionRemove,
      removed,
      this.#userReaction(removed, messageId, userId, emoji),
    );
  }

  /** GET …/reactions/{emoji}: the users who reacted so, by id; READ_MESSAGE_HISTORY. */
  async users(
    actor: Actor,
    channelId: string,
    messageId: string,
    emojiSegment: string,
    query: unknown,
  ): Promise<Json[]> {
    const emoji = parseReactionEmoji(emojiSegment);
    const {
      type = ReactionTypes.Normal,
      after,
      limit = MessageLimits.reactionUsersDefault,
    } = parse(ListReactionsQuery, query ?? {});
    const db = this.#deps.storage.db;
    const target = await this.#target(db, actor, channelId, messageId);
    requirePermissions(target.place, ReadMessageHistory);
    const ids = await reactions.reactionUserIds(db, {
      messageId,
      emojiKey: emoji.key,
      burst: type === ReactionTypes.Burst,
      after,
      limit,
    });
    const users = await this.#deps.users.getUsers(ids);
    return ids.flatMap((id) => {
      const user = users.get(id);
      return user ? [toUserObject(user) as Json] : [];
    });
  }

  /** DELETE …/reactions: every reaction of the message (MANAGE_MESSAGES); MESSAGE_REACTION_REMOVE_ALL. */
  async removeAll(actor: Actor, channelId: string, messageId: string): Promise<void> {
    const place = await this.#deps.storage.transaction(async (tx) => {
      const target = await this.#target(tx, actor, channelId, messageId);
      this.#requireModeration(target.place);
      requireThreadWrite(target.place, 'react');
      await reactions.deleteAllReactions(tx, messageId);
      return target.place;
    });
    await this.#publish(
      MessageDispatches.MessageReactionRemoveAll,
      place,
      this.#messageIds(place, messageId),
    );
  }

  /** DELETE …/reactions/{emoji}: every reaction with one emoji (MANAGE_MESSAGES); _REMOVE_EMOJI. */
  async removeEmoji(actor: Actor, channelId: string, messageId: string, emojiSegment: string): Promise<void> {
    const emoji = parseReactionEmoji(emojiSegment);
    const removed = await this.#deps.storage.transaction(async (tx) => {
      const target = await this.#target(tx, actor, channelId, messageId);
      this.#requireModeration(target.place);
      requireThreadWrite(target.place, 'react');
      const count = await reactions.deleteEmojiReactions(tx, messageId, emoji.key);
      return count > 0 ? target.place : undefined;
    });
    if (!removed) return;
    await this.#publish(MessageDispatches.MessageReactionRemoveEmoji, removed, {
      ...this.#messageIds(removed, messageId),
      emoji: toEmojiObject(emoji),
    });
  }

  // ---- Steps ----

  /** The channel as the actor stands in it (10003, 50001) and the message in it (10008). */
  async #target(db: Executor, actor: Actor, channelId: string, messageId: string): Promise<Target> {
    const place = await placeOf(db, this.#deps.access, actor, channelId);
    const message = await store.findMessage(db, channelId, messageId);
    if (!message) throw new HearthError('UnknownMessage');
    return { place, message };
  }

  /** Removing others' reactions is moderation: MANAGE_MESSAGES, which no one holds in a DM (50003). */
  #requireModeration(place: Place): void {
    if (place.guildId === null) throw new HearthError('CannotExecuteOnDMChannel');
    if (!has(place.permissions, ManageMessages)) throw new HearthError('MissingPermissions');
  }

  #messageIds(place: Place, messageId: string): Json {
    return {
      channel_id: place.channelId,
      message_id: messageId,
      ...(place.guildId === null ? {} : { guild_id: place.guildId }),
    };
  }

  /** The fields MESSAGE_REACTION_ADD and _REMOVE share (gateway events, Message Reaction Add). */
  #userReaction(place: Place, messageId: string, userId: string, emoji: ReactionEmoji): Json {
    return {
      user_id: userId,
      ...this.#messageIds(place, messageId),
      emoji: toEmojiObject(emoji),
      burst: false,
      type: ReactionTypes.Normal,
    };
  }

  async #member(db: Executor, guildId: string, userId: string): Promise<Json | undefined> {
    return memberObjectOf(db, this.#deps.users, guildId, userId);
  }

  async #publish(type: string, place: Place, data: Json): Promise<void> {
    await this.#deps.bus.publish({ type, data, audience: audienceOf(place) });
  }
}
