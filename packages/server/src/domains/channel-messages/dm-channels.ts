import { FormErrors, GROUP_DM_MAX_USERS } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import { toDmChannelObject, toGroupDmChannelObject, type UserObject } from './objects.js';
import type { Actor } from './places.js';
import { CreateDM } from './schemas.js';
import * as store from './store.js';

export interface DmChannelsDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  users: { getUserIn(db: Executor, id: string): Promise<User | undefined> };
  /** Whether the two are platform friends (a group DM takes a person's friends only). */
  friends: (db: Executor, userId: string, otherId: string) => Promise<boolean>;
  /** The RECIPIENT_ADD / RECIPIENT_REMOVE system messages of a group DM (the channel messages'). */
  messages?: {
    postRecipientMessage(
      tx: Executor,
      change: {
        channelId: string;
        recipients: readonly string[];
        authorId: string;
        userId: string;
        added: boolean;
      },
    ): Promise<BusEvent>;
  };
  /** A recipient left or was removed from a group DM: it leaves the channel's call if it was in it. */
  recipientRemoved?: (channelId: string, userId: string) => Promise<void>;
}

export type DmChannelObject = ReturnType<typeof toDmChannelObject>;
export type GroupDmChannelObject = ReturnType<typeof toGroupDmChannelObject>;

type GroupDmRow = NonNullable<Awaited<ReturnType<typeof store.findGroupDm>>>;

/**
 * DM channels of bots and users (POST /users/@me/channels, GET /channels/{id}): one channel per pair of
 * users, the same row the game DMs of the social layer use, so a pair has one conversation id. And group
 * DMs (type 3): a person opens one with friends (`recipients`), adds friends to it (PUT on a DM makes a new
 * group DM of the three), and its owner removes recipients; each recipient may leave, each change with its
 * RECIPIENT_ADD / RECIPIENT_REMOVE message. At most
 * GROUP_DM_MAX_USERS users, the owner included.
 */
export class DmChannels {
  readonly #deps: DmChannelsDeps;

  constructor(deps: DmChannelsDeps) {
    this.#deps = deps;
  }

  /**
   * Opens (or finds) the DM with `recipient_id`: 10013 for an unknown user, 50007 for oneself or bot to
   * bot; or, with `recipients`, a new group DM (one recipient: their DM).
   */
  async open(actor: Actor, input: unknown): Promise<DmChannelObject | GroupDmChannelObject> {
    const body = parse(CreateDM, input ?? {});
    if (body.recipient_id === undefined && body.recipients !== undefined) {
      const others = [...new Set(body.recipients)].filter((id) => id !== actor.userId);
      if (others.length !== 1) return this.#openGroup(actor, others);
      return this.#openDm(actor, others[0]!);
    }
    if (body.recipient_id === undefined) throw invalidForm('recipient_id', FormErrors.required());
    return this.#openDm(actor, body.recipient_id);
  }

  /** A DM channel as one of its participants sees it (recipients: the others); undefined when none. */
  async find(userId: string, channelId: string): Promise<DmChannelObject | GroupDmChannelObject | undefined> {
    const db = this.#deps.storage.db;
    const group = await store.findGroupDm(db, channelId);
    if (group) {
      const recipients = await store.groupDmRecipients(db, channelId);
      if (!recipients.includes(userId)) throw new HearthError('MissingAccess');
      return this.#groupObject(db, group, recipients, userId);
    }
    const row = await store.findDmChannel(db, channelId);
    if (!row) return undefined;
    if (row.user_low !== userId && row.user_high !== userId) throw new HearthError('MissingAccess');
    const otherId = row.user_low === userId ? row.user_high : row.user_low;
    const other = await this.#deps.users.getUserIn(db, otherId);
    const recipients = other ? [toUserObject(other) as UserObject] : [];
    return toDmChannelObject(row.id, recipients, await store.lastMessageId(db, row.id));
  }

  /**
   * A private channel's participants (a call's recipients) and whether one is a bot, or undefined when no
   * DM or group DM has this id.
   */
  async recipientsOf(
    db: Executor,
    channelId: string,
  ): Promise<{ recipients: readonly string[]; withBot: boolean } | undefined> {
    if (await store.findGroupDm(db, channelId)) {
      // Bots never join a group DM of people (no `gdm.join` path yet).
      return { recipients: await store.groupDmRecipients(db, channelId), withBot: false };
    }
    const row = await store.findDmChannel(db, channelId);
    if (!row) return undefined;
    const users = await Promise.all(
      [row.user_low, row.user_high].map((id) => this.#deps.users.getUserIn(db, id)),
    );
    return { recipients: [row.user_low, row.user_high], withBot: users.some((user) => user?.bot === true) };
  }

  /** The DM channels and group DMs the user is in (those whose ongoing calls a new session learns of). */
  async channelIdsOf(db: Executor, userId: string): Promise<string[]> {
    return [...(await store.dmChannelIdsOf(db, userId)), ...(await store.groupDmIdsOf(db, userId))];
  }

  /**
   * PUT /channels/{id}/recipients/{user_id}: a recipient adds a friend. To a group DM (204; CHANNEL_CREATE
   * to the newcomer, CHANNEL_RECIPIENT_ADD to the others; already in: nothing); to a DM, a new group DM of
   * the three (201 with it). 400 when the group DM is full.
   */
  async addRecipient(
    actor: Actor,
    channelId: string,
    userId: string,
  ): Promise<GroupDmChannelObject | undefined> {
    const { storage, clock } = this.#deps;
    const events: BusEvent[] = [];
    const created = await storage.transaction(async (tx) => {
      const group = await store.findGroupDm(tx, channelId);
      if (!group) {
        const dm = await store.findDmChannel(tx, channelId);
        if (!dm) throw new HearthError('UnknownChannel');
        if (dm.user_low !== actor.userId && dm.user_high !== actor.userId)
          throw new HearthError('MissingAccess');
        const others = [dm.user_low, dm.user_high, userId].filter((id) => id !== actor.userId);
        await this.#invitable(tx, actor.userId, [...new Set(others)]);
        return this.#createGroup(tx, actor.userId, [...new Set(others)], events);
      }
      const recipients = await store.groupDmRecipients(tx, channelId);
      if (!recipients.includes(actor.userId)) throw new HearthError('MissingAccess');
      if (recipients.includes(userId)) return undefined;
      await this.#invitable(tx, actor.userId, [userId]);
      if (recipients.length >= GROUP_DM_MAX_USERS) throw new HearthError('GeneralBadRequest');
      await store.addGroupDmRecipients(tx, channelId, [userId], clock.now());
      const all = [...recipients, userId];
      const user = toUserObject((await this.#deps.users.getUserIn(tx, userId))!);
      events.push(await this.#channelEvent(tx, 'CHANNEL_CREATE', group, all, userId));
      events.push({
        type: 'CHANNEL_RECIPIENT_ADD',
        data: { channel_id: channelId, user },
        audience: { users: recipients },
      });
      const message = await this.#deps.messages?.postRecipientMessage(tx, {
        channelId,
        recipients: all,
        authorId: actor.userId,
        userId,
        added: true,
      });
      if (message) events.push(message);
      return undefined;
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return created;
  }

  /**
   * DELETE /channels/{id}/recipients/{user_id}: a recipient leaves, or the owner removes one (50013 for
   * anyone else). The removed user gets CHANNEL_DELETE, the others CHANNEL_RECIPIENT_REMOVE; an owner who
   * leaves hands the group to the longest-standing recipient (CHANNEL_UPDATE); the last one out ends it.
   */
  async removeRecipient(actor: Actor, channelId: string, userId: string): Promise<void> {
    const { storage } = this.#deps;
    const events: BusEvent[] = [];
    await storage.transaction(async (tx) => {
      const group = await store.findGroupDm(tx, channelId);
      if (!group) {
        if (await store.findDmChannel(tx, channelId)) throw new HearthError('CannotExecuteOnChannelType');
        throw new HearthError('UnknownChannel');
      }
      const recipients = await store.groupDmRecipients(tx, channelId);
      if (!recipients.includes(actor.userId)) throw new HearthError('MissingAccess');
      if (userId !== actor.userId && group.owner_id !== actor.userId)
        throw new HearthError('MissingPermissions');
      if (!recipients.includes(userId)) throw new HearthError('UnknownUser');
      await store.removeGroupDmRecipient(tx, channelId, userId);
      const remaining = recipients.filter((id) => id !== userId);
      events.push(await this.#channelEvent(tx, 'CHANNEL_DELETE', group, recipients, userId));
      if (remaining.length === 0) {
        await store.deleteGroupDm(tx, channelId);
        return;
      }
      const removed = await this.#deps.users.getUserIn(tx, userId);
      events.push({
        type: 'CHANNEL_RECIPIENT_REMOVE',
        data: { channel_id: channelId, user: removed ? toUserObject(removed) : { id: userId } },
        audience: { users: remaining },
      });
      const message = await this.#deps.messages?.postRecipientMessage(tx, {
        channelId,
        recipients: remaining,
        authorId: actor.userId,
        userId,
        added: false,
      });
      if (message) events.push(message);
      if (group.owner_id === userId) {
        const owner = remaining[0]!;
        await store.updateGroupDm(tx, channelId, { owner_id: owner });
        const updated = { ...group, owner_id: owner };
        for (const id of remaining)
          events.push(await this.#channelEvent(tx, 'CHANNEL_UPDATE', updated, remaining, id));
      }
    });
    for (const event of events) await this.#deps.bus.publish(event);
    await this.#deps.recipientRemoved?.(channelId, userId);
  }

  async #openDm(actor: Actor, recipientId: string): Promise<DmChannelObject> {
    const db = this.#deps.storage.db;
    const recipient = await this.#deps.users.getUserIn(db, recipientId);
    if (!recipient) throw new HearthError('UnknownUser');
    if (recipientId === actor.userId || (actor.bot && recipient.bot))
      throw new HearthError('CannotSendMessagesToThisUser');
    const [low, high] = pair(actor.userId, recipientId);
    const id = await this.#channel(low, high);
    return toDmChannelObject(id, [toUserObject(recipient) as UserObject], await store.lastMessageId(db, id));
  }

  /** A group DM of a person and their friends (bots open group DMs through `gdm.join`, not here). */
  async #openGroup(actor: Actor, others: readonly string[]): Promise<GroupDmChannelObject> {
    if (actor.bot) throw new HearthError('BotsCannotUseEndpoint');
    const events: BusEvent[] = [];
    const created = await this.#deps.storage.transaction(async (tx) => {
      await this.#invitable(tx, actor.userId, others);
      return this.#createGroup(tx, actor.userId, others, events);
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return created;
  }

  /** Each user exists (10013), is a person (50007) and the actor's friend (50007). */
  async #invitable(tx: Executor, actorId: string, userIds: readonly string[]): Promise<void> {
    for (const id of userIds) {
      const user = await this.#deps.users.getUserIn(tx, id);
      if (!user) throw new HearthError('UnknownUser');
      if (user.bot || id === actorId || !(await this.#deps.friends(tx, actorId, id)))
        throw new HearthError('CannotSendMessagesToThisUser');
    }
  }

  /** A new group DM owned by `ownerId`: CHANNEL_CREATE to each recipient; answers the owner's view. */
  async #createGroup(
    tx: Executor,
    ownerId: string,
    others: readonly string[],
    events: BusEvent[],
  ): Promise<GroupDmChannelObject> {
    const { snowflakes, clock } = this.#deps;
    const row = { id: snowflakes.next(), owner_id: ownerId, name: null, icon: null, created_at: clock.now() };
    const recipients = [ownerId, ...others];
    await store.insertGroupDm(tx, row, recipients);
    for (const id of recipients)
      events.push(await this.#channelEvent(tx, 'CHANNEL_CREATE', row, recipients, id));
    return this.#groupObject(tx, row, recipients, ownerId);
  }

  async #channelEvent(
    db: Executor,
    type: string,
    row: GroupDmRow,
    recipients: readonly string[],
    viewerId: string,
  ): Promise<BusEvent> {
    const data = await this.#groupObject(db, row, recipients, viewerId);
    return { type, data: { ...data }, audience: { users: [viewerId] } };
  }

  async #groupObject(
    db: Executor,
    row: GroupDmRow,
    recipients: readonly string[],
    viewerId: string,
  ): Promise<GroupDmChannelObject> {
    const users = await Promise.all(
      recipients.filter((id) => id !== viewerId).map((id) => this.#deps.users.getUserIn(db, id)),
    );
    const objects = users
      .filter((user) => user !== undefined)
      .map((user) => toUserObject(user) as UserObject);
    return toGroupDmChannelObject(row, objects, await store.lastMessageId(db, row.id));
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
