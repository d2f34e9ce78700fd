import { FormErrors, GROUP_DM_MAX_USERS, Scopes } from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { type Image, parseImageData } from '../accounts/images.js';
import { type StoredImage, toUserObject, type User } from '../accounts/service.js';
import { toDmChannelObject, toGroupDmChannelObject, type UserObject } from './objects.js';
import type { Actor } from './places.js';
import { type AddRecipient, CreateDM, ModifyGroupDm } from './schemas.js';
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
    /** The CHANNEL_NAME_CHANGE (with `name`) or CHANNEL_ICON_CHANGE system message of a group DM. */
    postChannelChangeMessage(
      tx: Executor,
      change: { channelId: string; recipients: readonly string[]; authorId: string; name?: string | null },
    ): Promise<BusEvent>;
  };
  /** The users' OAuth2 access tokens a bot presents to open or join a group DM for them (`gdm.join`). */
  tokens?: {
    authenticateAccessToken(
      token: string,
    ): Promise<{ applicationId: string; userId: string; scopes: readonly string[] } | undefined>;
  };
  /** A recipient left or was removed from a group DM: it leaves the channel's call if it was in it. */
  recipientRemoved?: (channelId: string, userId: string) => Promise<void>;
}

export type DmChannelObject = ReturnType<typeof toDmChannelObject>;
export type GroupDmChannelObject = ReturnType<typeof toGroupDmChannelObject>;

type GroupDmRow = Pick<
  NonNullable<Awaited<ReturnType<typeof store.findGroupDm>>>,
  'id' | 'owner_id' | 'name' | 'icon' | 'application_id'
>;

/**
 * DM channels of bots and users (POST /users/@me/channels, GET /channels/{id}): one channel per pair of
 * users, the same row the game DMs of the social layer use, so a pair has one conversation id. And group
 * DMs (type 3): a person opens one with friends (`recipients`), adds friends to it (PUT on a DM makes a new
 * group DM of the three), and its owner removes recipients; each recipient may leave, each change with its
 * RECIPIENT_ADD / RECIPIENT_REMOVE message. At most GROUP_DM_MAX_USERS users, the owner included. Any
 * recipient renames it or changes its icon (PATCH /channels/{id}). A bot opens a group DM of users who
 * granted its application `gdm.join` (their access tokens) and adds more the same way: it owns that group
 * DM (`managed`, its `application_id`) without being one of its recipients, as bots join no group DM.
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
    if (body.recipient_id === undefined && body.access_tokens !== undefined) {
      if (!actor.bot) throw new HearthError('OnlyBotsCanUseEndpoint');
      return this.#openManaged(actor, body.access_tokens, body.nicks ?? {});
    }
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
      if (!canSee(group, recipients, userId)) throw new HearthError('MissingAccess');
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
      // Bots are never recipients of a group DM (one that manages it owns it from outside).
      return { recipients: await store.groupDmRecipients(db, channelId), withBot: false };
    }
    const row = await store.findDmChannel(db, channelId);
    if (!row) return undefined;
    const users = await Promise.all(
      [row.user_low, row.user_high].map((id) => this.#deps.users.getUserIn(db, id)),
    );
    return { recipients: [row.user_low, row.user_high], withBot: users.some((user) => user?.bot === true) };
  }

  /** The bytes behind `/channel-icons/{channel}/{hash}.…`: the group DM's current icon of that hash. */
  async icon(channelId: string, hash: string): Promise<StoredImage | undefined> {
    const row = await store.findGroupDmIcon(this.#deps.storage.db, channelId, hash);
    return row && { contentType: row.content_type, bytes: Buffer.from(row.bytes) };
  }

  /** READY `private_channels`: the user's DM channels and group DMs, as GET /channels/{id} answers each. */
  async privateChannelsOf(userId: string): Promise<(DmChannelObject | GroupDmChannelObject)[]> {
    const ids = await this.channelIdsOf(this.#deps.storage.db, userId);
    const channels = await Promise.all(ids.map((id) => this.find(userId, id)));
    return channels.filter((channel) => channel !== undefined);
  }

  /** The DM channels and group DMs the user is in (those whose ongoing calls a new session learns of). */
  async channelIdsOf(db: Executor, userId: string): Promise<string[]> {
    return [...(await store.dmChannelIdsOf(db, userId)), ...(await store.groupDmIdsOf(db, userId))];
  }

  /**
   * PUT /channels/{id}/recipients/{user_id}: a recipient adds a friend. To a group DM (204; CHANNEL_CREATE
   * to the newcomer, CHANNEL_RECIPIENT_ADD to the others; already in: nothing); to a DM, a new group DM of
   * the three (201 with it). 400 when the group DM is full. A bot adds a user to the group DM it manages
   * with their `access_token` (`gdm.join`) and an optional `nick`.
   */
  async addRecipient(
    actor: Actor,
    channelId: string,
    userId: string,
    input: AddRecipient = {},
  ): Promise<GroupDmChannelObject | undefined> {
    if (actor.bot) {
      await this.#addManaged(actor, channelId, userId, input);
      return undefined;
    }
    const events: BusEvent[] = [];
    const created = await this.#deps.storage.transaction(async (tx) => {
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
      await this.#add(tx, group, recipients, { userId, nick: null, authorId: actor.userId }, events);
      return undefined;
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return created;
  }

  /**
   * PATCH /channels/{id} of a group DM: any recipient (or its managing bot) renames it or sets its icon;
   * CHANNEL_UPDATE to everyone in it and a CHANNEL_NAME_CHANGE / CHANNEL_ICON_CHANGE message for each
   * change. 50003 for a DM; undefined when no private channel has this id (a guild channel's, then).
   */
  async modify(userId: string, channelId: string, input: unknown): Promise<GroupDmChannelObject | undefined> {
    const { storage } = this.#deps;
    if (!(await store.findGroupDm(storage.db, channelId))) {
      const dm = await store.findDmChannel(storage.db, channelId);
      if (!dm) return undefined;
      if (dm.user_low !== userId && dm.user_high !== userId) throw new HearthError('MissingAccess');
      throw new HearthError('CannotExecuteOnDMChannel');
    }
    const events: BusEvent[] = [];
    const updated = await storage.transaction(async (tx) => {
      const group = await store.findGroupDm(tx, channelId);
      if (!group) throw new HearthError('UnknownChannel');
      const recipients = await store.groupDmRecipients(tx, channelId);
      if (!canSee(group, recipients, userId)) throw new HearthError('MissingAccess');
      const { changes, image } = groupDmChanges(group, parse(ModifyGroupDm, input ?? {}));
      if (Object.keys(changes).length === 0) return this.#groupObject(tx, group, recipients, userId);
      await store.updateGroupDm(tx, channelId, changes);
      if (image !== undefined) {
        const stored = image && { hash: image.hash, content_type: image.type, bytes: image.bytes };
        await store.replaceGroupDmIcon(
          tx,
          channelId,
          stored && { ...stored, created_at: this.#deps.clock.now() },
        );
      }
      const row = { ...group, ...changes };
      for (const id of watchers(row, recipients))
        events.push(await this.#channelEvent(tx, 'CHANNEL_UPDATE', row, recipients, id));
      const messages = this.#deps.messages;
      const change = { channelId, recipients, authorId: userId };
      if (messages && changes.name !== undefined)
        events.push(await messages.postChannelChangeMessage(tx, { ...change, name: changes.name }));
      if (messages && changes.icon !== undefined)
        events.push(await messages.postChannelChangeMessage(tx, change));
      return this.#groupObject(tx, row, recipients, userId);
    });
    for (const event of events) await this.#deps.bus.publish(event);
    return updated;
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
      if (!canSee(group, recipients, actor.userId)) throw new HearthError('MissingAccess');
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
        audience: { users: watchers(group, remaining) },
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

  /**
   * A new group DM owned by `ownerId`: CHANNEL_CREATE to each recipient; answers the owner's view. A bot
   * owner (`managed`) is no recipient of it, and gives recipients their `nicks`.
   */
  async #createGroup(
    tx: Executor,
    ownerId: string,
    others: readonly string[],
    events: BusEvent[],
    managed?: { applicationId: string; nicks: ReadonlyMap<string, string> },
  ): Promise<GroupDmChannelObject> {
    const { snowflakes, clock } = this.#deps;
    const row = {
      id: snowflakes.next(),
      owner_id: ownerId,
      name: null,
      icon: null,
      application_id: managed?.applicationId ?? null,
      created_at: clock.now(),
    };
    const recipients = managed ? [...others] : [ownerId, ...others];
    await store.insertGroupDm(tx, row, recipients, managed?.nicks);
    for (const id of watchers(row, recipients))
      events.push(await this.#channelEvent(tx, 'CHANNEL_CREATE', row, recipients, id));
    return this.#groupObject(tx, row, recipients, ownerId);
  }

  /**
   * POST /users/@me/channels with `access_tokens`: a group DM of the users whose tokens the bot holds,
   * owned and managed by the bot (CHANNEL_CREATE to each and to the bot); `nicks` of others are ignored.
   */
  async #openManaged(
    actor: Actor,
    tokens: readonly string[],
    nicks: Readonly<Record<string, string | null>>,
  ): Promise<GroupDmChannelObject> {
    const users = await this.#gdmJoinUsers(actor, tokens);
    const named = new Map<string, string>();
    for (const id of users) {
      const nick = nicks[id];
      if (typeof nick === 'string') named.set(id, nick);
    }
    const events: BusEvent[] = [];
    const created = await this.#deps.storage.transaction((tx) =>
      this.#createGroup(tx, actor.userId, users, events, {
        applicationId: actor.applicationId!,
        nicks: named,
      }),
    );
    for (const event of events) await this.#deps.bus.publish(event);
    return created;
  }

  /**
   * PUT /channels/{id}/recipients/{user_id} by a bot: the user whose `access_token` it holds joins the group
   * DM it manages (50001 for another's, 50003 for a DM), with `nick`; already in: nothing.
   */
  async #addManaged(actor: Actor, channelId: string, userId: string, input: AddRecipient): Promise<void> {
    if (input.access_token == null) throw invalidForm('access_token', FormErrors.required());
    await this.#gdmJoinUsers(actor, [input.access_token], userId);
    const events: BusEvent[] = [];
    await this.#deps.storage.transaction(async (tx) => {
      const group = await store.findGroupDm(tx, channelId);
      if (!group) {
        if (await store.findDmChannel(tx, channelId)) throw new HearthError('CannotExecuteOnDMChannel');
        throw new HearthError('UnknownChannel');
      }
      if (group.application_id === null || group.owner_id !== actor.userId)
        throw new HearthError('MissingAccess');
      const recipients = await store.groupDmRecipients(tx, channelId);
      if (recipients.includes(userId)) return;
      await this.#add(
        tx,
        group,
        recipients,
        { userId, nick: input.nick ?? null, authorId: actor.userId },
        events,
      );
    });
    for (const event of events) await this.#deps.bus.publish(event);
  }

  /**
   * The users of a bot's `gdm.join` access tokens: each must be live, issued to the bot's application
   * (and to `userId` when given: 50025 otherwise) and hold `gdm.join` (50026).
   */
  async #gdmJoinUsers(actor: Actor, tokens: readonly string[], userId?: string): Promise<string[]> {
    const users: string[] = [];
    for (const token of tokens) {
      const grant = await this.#deps.tokens?.authenticateAccessToken(token);
      if (
        !grant ||
        grant.applicationId !== actor.applicationId ||
        (userId !== undefined && grant.userId !== userId)
      )
        throw new HearthError('InvalidOAuth2AccessToken');
      if (!grant.scopes.includes(Scopes.GdmJoin)) throw new HearthError('MissingOAuth2Scope');
      users.push(grant.userId);
    }
    return [...new Set(users)];
  }

  /**
   * `userId` joins the group DM (400 when full): CHANNEL_CREATE to them, CHANNEL_RECIPIENT_ADD to the
   * others, and the RECIPIENT_ADD message by `authorId`.
   */
  async #add(
    tx: Executor,
    group: GroupDmRow,
    recipients: readonly string[],
    added: { userId: string; nick: string | null; authorId: string },
    events: BusEvent[],
  ): Promise<void> {
    const { userId } = added;
    if (recipients.length >= GROUP_DM_MAX_USERS) throw new HearthError('GeneralBadRequest');
    const nicks = new Map(added.nick === null ? [] : [[userId, added.nick]]);
    await store.addGroupDmRecipients(tx, group.id, [userId], this.#deps.clock.now(), nicks);
    const all = [...recipients, userId];
    const user = toUserObject((await this.#deps.users.getUserIn(tx, userId))!);
    events.push(await this.#channelEvent(tx, 'CHANNEL_CREATE', group, all, userId));
    events.push({
      type: 'CHANNEL_RECIPIENT_ADD',
      data: { channel_id: group.id, user, ...(added.nick === null ? {} : { nick: added.nick }) },
      audience: { users: watchers(group, recipients) },
    });
    const message = await this.#deps.messages?.postRecipientMessage(tx, {
      channelId: group.id,
      recipients: all,
      authorId: added.authorId,
      userId,
      added: true,
    });
    if (message) events.push(message);
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
    // Only a managing bot names recipients.
    const nicks = row.application_id === null ? [] : await store.groupDmNicks(db, row.id);
    return toGroupDmChannelObject(row, objects, await store.lastMessageId(db, row.id), nicks);
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

/** Who may see and change a group DM: its recipients, and the bot that manages it. */
function canSee(group: GroupDmRow, recipients: readonly string[], userId: string): boolean {
  return recipients.includes(userId) || (group.application_id !== null && group.owner_id === userId);
}

/** Who hears of a group DM's changes: its recipients, and its managing bot. */
function watchers(group: GroupDmRow, recipients: readonly string[]): string[] {
  return group.application_id === null || recipients.includes(group.owner_id)
    ? [...recipients]
    : [...recipients, group.owner_id];
}

/**
 * What a PATCH changes: the name ("" clears it, as null does) and the icon's hash, with the image checked
 * and kept (null: removed; undefined: the icon stays).
 */
function groupDmChanges(
  group: GroupDmRow,
  body: { name?: string | null; icon?: string | null },
): { changes: { name?: string | null; icon?: string | null }; image?: Image | null } {
  const changes: { name?: string | null; icon?: string | null } = {};
  const name = body.name === '' ? null : body.name;
  if (name !== undefined && name !== group.name) changes.name = name;
  const image = body.icon == null ? body.icon : parseImageData('icon', body.icon);
  if (image === undefined || (image?.hash ?? null) === group.icon) return { changes };
  changes.icon = image?.hash ?? null;
  return { changes, image };
}

/** The pair in snowflake order (`user_low` < `user_high`), as the game DMs store it. */
function pair(a: string, b: string): [string, string] {
  return BigInt(a) < BigInt(b) ? [a, b] : [b, a];
}
