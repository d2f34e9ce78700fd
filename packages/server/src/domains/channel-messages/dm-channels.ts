import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import { toDmChannelObject, type UserObject } from './objects.js';
import type { Actor } from './places.js';
import { CreateDM } from './schemas.js';
import * as store from './store.js';

export interface DmChannelsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
}

export type DmChannelObject = ReturnType<typeof toDmChannelObject>;

/**
 * DM channels of bots and users (POST /users/@me/channels, GET /channels/{id}): one channel per pair of
 * users, the same row the game DMs of the social layer use, so a pair has one conversation id.
 */
export class DmChannels {
  readonly #deps: DmChannelsDeps;

  constructor(deps: DmChannelsDeps) {
    this.#deps = deps;
  }

  /** Opens (or finds) the DM with `recipient_id`: 10013 for an unknown user, 50007 for oneself or bot to bot. */
  async open(actor: Actor, input: unknown): Promise<DmChannelObject> {
    const { recipient_id: recipientId } = parse(CreateDM, input ?? {});
    const db = this.#deps.storage.db;
    const recipient = await this.#deps.users.getUserIn(db, recipientId);
    if (!recipient) throw new HearthError('UnknownUser');
    if (recipientId === actor.userId || (actor.bot && recipient.bot))
      throw new HearthError('CannotSendMessagesToThisUser');
    const [low, high] = pair(actor.userId, recipientId);
    const id = await this.#channel(low, high);
    return toDmChannelObject(id, [toUserObject(recipient) as UserObject], await store.lastMessageId(db, id));
  }

  /** A DM channel as one of its participants sees it (recipients: the other one); undefined when none. */
  async find(userId: string, channelId: string): Promise<DmChannelObject | undefined> {
    const db = this.#deps.storage.db;
    const row = await store.findDmChannel(db, channelId);
    if (!row) return undefined;
    if (row.user_low !== userId && row.user_high !== userId) throw new HearthError('MissingAccess');
    const otherId = row.user_low === userId ? row.user_high : row.user_low;
    const other = await this.#deps.users.getUserIn(db, otherId);
    const recipients = other ? [toUserObject(other) as UserObject] : [];
    return toDmChannelObject(row.id, recipients, await store.lastMessageId(db, row.id));
  }

  /**
   * A DM channel's two participants (a call's recipients) and whether one is a bot, or undefined when no
   * DM has this id.
   */
  async recipientsOf(
    db: Executor,
    channelId: string,
  ): Promise<{ recipients: [string, string]; withBot: boolean } | undefined> {
    const row = await store.findDmChannel(db, channelId);
    if (!row) return undefined;
    const users = await Promise.all(
      [row.user_low, row.user_high].map((id) => this.#deps.users.getUserIn(db, id)),
    );
    return { recipients: [row.user_low, row.user_high], withBot: users.some((user) => user?.bot === true) };
  }

  /** The DM channels the user is in (those whose ongoing calls a new session learns of). */
  channelIdsOf(db: Executor, userId: string): Promise<string[]> {
    return store.dmChannelIdsOf(db, userId);
  }

  async #channel(low: string, high: string): Promise<string> {
    const db = this.#deps.storage.db;
    const existing = await store.findDmChannelOf(db, low, high);
    if (existing) return existing.id;
    const id = this.#deps.snowflakes.next();
    try {
      await store.insertDmChannel(db, {
        id,
        user_low: low,
        user_high: high,
        created_at: this.#deps.clock.now(),
      });
    } catch (error) {
      // Both opened it at once: the other insert won, and its channel is the pair's.
      if (!isUniqueViolation(error)) throw error;
      return (await store.findDmChannelOf(db, low, high))!.id;
    }
    return id;
  }
}

/** The pair in snowflake order (`user_low` < `user_high`), as the game DMs store it. */
function pair(a: string, b: string): [string, string] {
  return BigInt(a) < BigInt(b) ? [a, b] : [b, a];
}
