import {
  ApplicationFlags,
  CHANNEL_LINKING_LIMIT,
  ChannelTypes,
  LobbyChannelInvites,
  LobbyEvents,
  LobbyFlags,
  LobbyMemberFlags,
  PermissionFlags,
  PRE_APPROVAL_LIMIT,
  SocialMessageFlags,
} from '@hearth/protocol';
import type { Transaction } from 'kysely';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type { Quotas } from '../../ratelimit/quota.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import type { Schema } from '../../storage/schema.js';
import type { AccountsService } from '../accounts/service.js';
import { type ApplicationsService, hasFlag } from '../applications/service.js';
import * as channelStore from '../channels/store.js';
import type { GuildAccess } from '../guilds/access.js';
import { type ChannelObject, toChannelObject } from '../guilds/objects.js';
import { channelPermissions, has } from '../guilds/permissions.js';
import type { LinkRow } from './linking-store.js';
import * as linkStore from './linking-store.js';
import { toGatewayLobby, toLobbyObject, toMessageObject } from './objects.js';
import type { Caller } from './service.js';
import type { LobbyRow, MemberRow, MessageRow } from './store.js';
import * as store from './store.js';

type Json = Record<string, unknown>;

/** A lobby message as the linked channel stores it: same id, author and content, no metadata (§A.3 row 11). */
export interface LobbyMessageCopy {
  id: string;
  channelId: string;
  authorId: string;
  applicationId: string;
  content: string;
  flags: number;
}

/** A channel message as the lobby side needs it to mirror it. */
export interface ChannelMessage {
  id: string;
  channel_id: string;
  guild_id: string | null;
  author_id: string;
  content: string;
  flags: number | string;
  created_at: number | string;
  edited_at?: number | string | null;
}

export interface LinkingDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  logger: Logger;
  access: GuildAccess;
  accounts: AccountsService;
  applications: ApplicationsService;
  quotas: Quotas;
  /** Stores the lobby message's copy in the channel (guards such as AutoMod apply) and sends MESSAGE_CREATE. */
  postToChannel: (copy: LobbyMessageCopy) => Promise<void>;
  /** Guild invites (the invites domain): creates one inside `db`, answering the events to publish after. */
  invites: LobbyInviteMaker;
}

/** What the lobby channel invites need of guild invites. */
export interface LobbyInviteMaker {
  create(
    db: Executor,
    request: {
      channelId: string;
      inviterId: string | null;
      maxAge: number;
      maxUses: number;
      unique: boolean;
      targetUserIds: readonly string[];
    },
  ): Promise<{ invite: { code: string }; events: BusEvent[] }>;
}

/** Which of the two invite routes spends: each has its own pre-approval budget (§A.3). */
export type InviteRoute = 'self' | 'user';

/** One entry of GetGuildChannels (seed; Social SDK `GuildChannel`), on Hearth's wire. */
export interface GuildChannelEntry {
  id: string;
  name: string;
  type: number;
  position: number;
  parent_id: string | null;
  is_linkable: boolean;
  is_viewable_and_writeable_by_all_members: boolean;
  linked_lobby: { application_id: string; lobby_id: string } | null;
}

const { ManageChannels, ViewChannel, SendMessages } = PermissionFlags;
/** What the linking user needs in the channel (PROTOCOL.md §A.5). */
const LINKING_PERMISSIONS = ManageChannels | ViewChannel | SendMessages;
/** What every member must hold for a channel to count as public (docs: isViewableAndWriteableByAllMembers). */
const READ_WRITE = ViewChannel | SendMessages;

/**
 * Linked channels (PROTOCOL.md §A.3 row 10, §A.5): the link between a server-created lobby and a guild text
 * channel, and the messages that cross it both ways. A lobby has at most one channel, a channel one lobby.
 */
export class LobbyLinking {
  readonly #deps: LinkingDeps;

  constructor(deps: LinkingDeps) {
    this.#deps = deps;
  }

  // ---- PATCH /lobbies/{id}/channel-linking ----

  /**
   * Links `channelId` to the lobby (replacing a former link), or unlinks it when null. Answers the lobby;
   * members get LOBBY_UPDATE, the guilds of the channels involved CHANNEL_UPDATE.
   */
  async setLink(caller: Caller, lobbyId: string, channelId: string | null): Promise<Json> {
    await this.#spend(caller.applicationId);
    const now = this.#deps.clock.now();
    const changed = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, caller.applicationId, lobbyId);
      await this.#requireCanLink(tx, lobby, caller.userId);
      const before = await linkStore.findLinkOfLobby(tx, lobby.id);
      if (channelId === null) {
        if (!before) return { lobby, before, after: undefined };
        await linkStore.deleteLinkOfLobby(tx, lobby.id);
        return { lobby, before, after: undefined };
      }
      if (lobby.sdk_created === 1) throw new HearthError('LobbyCannotBeLinked');
      const channel = await this.#linkableChannel(tx, channelId, lobby.id);
      await this.#requireLinkingPermissions(tx, channelId, caller.userId);
      if (before?.channel_id === channelId) return { lobby, before, after: before };
      const after: LinkRow = {
        lobby_id: lobby.id,
        channel_id: channelId,
        guild_id: channel.guild_id,
        application_id: lobby.application_id,
        linked_by: caller.userId,
        linked_at: now,
      };
      await linkStore.putLink(tx, after);
      return { lobby, before, after };
    }).catch((error: unknown) => {
      // Two lobbies linking one channel at once: the loser sees the winner's link.
      if (isUniqueViolation(error)) throw new HearthError('ChannelAlreadyLinked');
      throw error;
    });
    const { lobby, before, after } = changed;
    const { db } = this.#deps.storage;
    const members = await store.listMembers(db, lobby.id);
    const object = await this.lobbyObject(db, lobby, members);
    if (before !== after) {
      const events: BusEvent[] = [
        {
          type: LobbyEvents.Update,
          data: { ...toGatewayLobby(lobby, members), ...linkedChannelField(object) },
          audience: { users: members.map((m) => m.user_id), applicationId: lobby.application_id },
        },
      ];
      if (before && before.channel_id !== after?.channel_id) {
        const event = await this.#channelUpdate(db, before.channel_id, undefined);
        if (event) events.push(event);
      }
      if (after) {
        const event = await this.#channelUpdate(db, after.channel_id, after);
        if (event) events.push(event);
      }
      await this.#publish(events);
    }
    return object;
  }

  // ---- Create Lobby Channel Invite (§A.3 rows 14, 15) ----

  /**
   * A single-use guild invite to the lobby's linked channel that only `userId`, a member of the lobby, may
   * accept, valid one hour. 50001 for a non-member, 30105 for a lobby without a linked channel.
   */
  async channelInvite(
    applicationId: string,
    lobbyId: string,
    userId: string,
    route: InviteRoute,
  ): Promise<{ code: string }> {
    await this.#spendOn(applicationId, `invites-${route}`, PRE_APPROVAL_LIMIT);
    const created = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, applicationId, lobbyId);
      if (!(await store.findMember(tx, lobby.id, userId))) throw new HearthError('MissingAccess');
      const link = await linkStore.findLinkOfLobby(tx, lobby.id);
      if (!link) throw new HearthError('LobbyNotLinked');
      return this.#deps.invites.create(tx, {
        channelId: link.channel_id,
        inviterId: null,
        maxAge: LobbyChannelInvites.maxAgeSeconds,
        maxUses: LobbyChannelInvites.maxUses,
        unique: true,
        targetUserIds: [userId],
      });
    });
    await this.#publish(created.events);
    return { code: created.invite.code };
  }

  // ---- The lobby side ----

  /** The lobby object with its `linked_channel` (a guild channel object) when it has one (§A.1). */
  async lobbyObject(db: Executor, lobby: LobbyRow, members: readonly MemberRow[]): Promise<Json> {
    return { ...toLobbyObject(lobby, members), ...(await this.linkedChannelField(db, lobby.id)) };
  }

  /** `{ linked_channel }` for a linked lobby, `{}` otherwise: spread into lobby objects and events. */
  async linkedChannelField(db: Executor, lobbyId: string): Promise<Json> {
    const link = await linkStore.findLinkOfLobby(db, lobbyId);
    if (!link) return {};
    const channel = await this.#channelObject(db, link.channel_id);
    return channel ? { linked_channel: channel } : {};
  }

  /** The channel a lobby is linked to, read through `db` (the lobby message's own transaction), if any. */
  async linkedChannelOf(db: Executor, lobbyId: string): Promise<string | undefined> {
    return (await linkStore.findLinkOfLobby(db, lobbyId))?.channel_id;
  }

  /**
   * A lobby message, once stored, goes to the lobby's linked channel `channelId` too. A refusal there
   * (AutoMod, a channel gone) does not undo the lobby message (§A.3 row 11): it is logged and the message
   * stays the lobby's alone. Answers the channel the message now also lives in.
   */
  async forward(lobby: LobbyRow, message: MessageRow, channelId: string): Promise<string | undefined> {
    const { db } = this.#deps.storage;
    try {
      await this.#deps.postToChannel({
        id: message.id,
        channelId: channelId,
        authorId: message.author_id,
        applicationId: lobby.application_id,
        content: message.content,
        flags: SocialMessageFlags.SentBySocialLayerIntegration,
      });
    } catch (error) {
      if (error instanceof HearthError)
        this.#deps.logger.info(
          { lobbyId: lobby.id, channelId: channelId, code: error.code },
          'linked channel refused a lobby message',
        );
      else this.#deps.logger.error({ err: error, lobbyId: lobby.id }, 'lobby message forwarding failed');
      return undefined;
    }
    await linkStore.setMessageChannel(db, message.id, channelId);
    return channelId;
  }

  /**
   * A message created in a linked channel reaches the lobby's members (LOBBY_MESSAGE_CREATE) and its
   * history, whether or not they can see the channel on the guild's side (§A.5). Never fails the create.
   */
  async channelMessageCreated(row: ChannelMessage): Promise<void> {
    if (row.guild_id === null) return;
    try {
      await this.#mirror(row);
    } catch (error) {
      this.#deps.logger.error(
        { err: error, channelId: row.channel_id, messageId: row.id },
        'linked lobby did not receive a channel message',
      );
    }
  }

  /**
   * A message edited in the linked channel is edited in the lobby's history too; members get
   * LOBBY_MESSAGE_UPDATE (`tts` false, as on the platform). Never fails the edit.
   */
  async channelMessageUpdated(row: ChannelMessage): Promise<void> {
    try {
      const { db } = this.#deps.storage;
      const link = await linkStore.findLinkOfChannel(db, row.channel_id);
      if (!link) return;
      const copy = await store.findMessage(db, link.lobby_id, row.id);
      const author = await this.#deps.accounts.getUser(row.author_id);
      if (!copy || !author) return;
      const edited = {
        ...copy,
        content: row.content,
        edited_at: row.edited_at == null ? null : Number(row.edited_at),
      };
      await store.updateMessage(db, row.id, { content: edited.content, edited_at: edited.edited_at });
      const members = await store.listMembers(db, link.lobby_id);
      await this.#publish([
        {
          type: LobbyEvents.MessageUpdate,
          data: { ...toMessageObject(edited, author), tts: false },
          audience: { users: members.map((m) => m.user_id), applicationId: link.application_id },
        },
      ]);
    } catch (error) {
      this.#deps.logger.error(
        { err: error, channelId: row.channel_id, messageId: row.id },
        'linked lobby kept an edited channel message unedited',
      );
    }
  }

  /**
   * A message deleted in the linked channel (by its author or a moderator) leaves the lobby's history too;
   * members get LOBBY_MESSAGE_DELETE. Never fails the deletion.
   */
  async channelMessageDeleted(channelId: string, messageId: string): Promise<void> {
    try {
      const { db } = this.#deps.storage;
      const link = await linkStore.findLinkOfChannel(db, channelId);
      if (!link || !(await linkStore.deleteLobbyCopy(db, link.lobby_id, messageId))) return;
      const members = await store.listMembers(db, link.lobby_id);
      await this.#publish([
        {
          type: LobbyEvents.MessageDelete,
          data: { id: messageId, lobby_id: link.lobby_id },
          audience: { users: members.map((m) => m.user_id), applicationId: link.application_id },
        },
      ]);
    } catch (error) {
      this.#deps.logger.error(
        { err: error, channelId, messageId },
        'linked lobby kept a deleted channel message',
      );
    }
  }

  async #mirror(row: ChannelMessage): Promise<void> {
    const { db } = this.#deps.storage;
    const link = await linkStore.findLinkOfChannel(db, row.channel_id);
    if (!link || (await linkStore.lobbyMessageExists(db, row.id))) return;
    const author = await this.#deps.accounts.getUser(row.author_id);
    if (!author) return;
    const authorMember = await store.findMember(db, link.lobby_id, row.author_id);
    const message: MessageRow = {
      id: row.id,
      lobby_id: link.lobby_id,
      author_id: row.author_id,
      application_id: link.application_id,
      content: row.content,
      metadata: null,
      moderation_metadata: null,
      author_additional_name: authorMember?.additional_name ?? null,
      flags: Number(row.flags),
      created_at: Number(row.created_at),
      edited_at: null,
      channel_id: row.channel_id,
    };
    await store.insertMessage(db, message);
    const members = await store.listMembers(db, link.lobby_id);
    await this.#publish([
      {
        type: LobbyEvents.MessageCreate,
        data: toMessageObject(message, author),
        audience: { users: members.map((m) => m.user_id), applicationId: link.application_id },
      },
    ]);
  }

  /**
   * Inside a lobby's deletion: its link goes with it (the rows cascade); the channel's guild is told by
   * CHANNEL_UPDATE, published with the lobby's own events after commit.
   */
  async lobbyDestroyed(tx: Executor, lobby: LobbyRow): Promise<BusEvent[]> {
    const link = await linkStore.findLinkOfLobby(tx, lobby.id);
    if (!link) return [];
    await linkStore.deleteLinkOfLobby(tx, lobby.id);
    const event = await this.#channelUpdate(tx, link.channel_id, undefined);
    return event ? [event] : [];
  }

  /** Inside a channel's deletion: the lobby loses its link; its members learn it once that has committed. */
  async channelDeleted(tx: Executor, channelId: string): Promise<(() => Promise<void>) | undefined> {
    const link = await linkStore.deleteLinkOfChannel(tx, channelId);
    if (!link) return undefined;
    return async () => {
      const { db } = this.#deps.storage;
      const lobby = await store.findLobby(db, link.lobby_id);
      if (!lobby) return;
      const members = await store.listMembers(db, lobby.id);
      await this.#publish([
        {
          type: LobbyEvents.Update,
          data: { ...toGatewayLobby(lobby, members), ...(await this.linkedChannelField(db, lobby.id)) },
          audience: { users: members.map((m) => m.user_id), applicationId: lobby.application_id },
        },
      ]);
    };
  }

  // ---- GetGuildChannels ----

  /**
   * The guild's channels the user can see, in the order the platform's client shows them, each with
   * whether the user may link it, whether every member may read and write it, and its linked lobby.
   */
  async guildChannels(userId: string, guildId: string): Promise<GuildChannelEntry[]> {
    const { db } = this.#deps.storage;
    const access = await this.#deps.access.member(db, guildId, userId);
    const now = this.#deps.clock.now();
    const [rows, overwriteRows, links] = await Promise.all([
      channelStore.guildChannels(db, guildId),
      channelStore.guildOverwrites(db, guildId),
      linkStore.linksOfGuild(db, guildId),
    ]);
    const linked = new Map(links.map((link) => [link.channel_id, link]));
    // Everyone's standing: @everyone alone, as a member holding no role (never the owner).
    const everyone = { ...access.input, userId: '0', roles: [], communicationDisabledUntil: null };
    const entries: Array<GuildChannelEntry & { sortKey: ChannelRowKey }> = [];
    for (const row of rows) {
      const overwrites = overwriteRows
        .filter((o) => o.channel_id === row.id)
        .map((o) => ({
          id: o.target_id,
          type: Number(o.type),
          allow: BigInt(o.allow),
          deny: BigInt(o.deny),
        }));
      const mine = channelPermissions(access.input, overwrites, now);
      if (!has(mine, ViewChannel)) continue;
      const type = Number(row.type);
      const link = linked.get(row.id);
      const public_ =
        has(channelPermissions(everyone, overwrites, now), READ_WRITE) &&
        overwrites.every((o) => (o.deny & READ_WRITE) === 0n);
      entries.push({
        id: row.id,
        name: row.name,
        type,
        position: Number(row.position),
        parent_id: row.parent_id,
        is_linkable:
          type === ChannelTypes.GuildText &&
          Number(row.nsfw) === 0 &&
          !link &&
          has(mine, LINKING_PERMISSIONS),
        is_viewable_and_writeable_by_all_members: public_,
        linked_lobby: link ? { application_id: link.application_id, lobby_id: link.lobby_id } : null,
        sortKey: { id: row.id, type, position: Number(row.position) },
      });
    }
    return clientOrder(entries).map(({ sortKey: _key, ...entry }) => entry);
  }

  // ---- Steps ----

  /** The application's lobby, or Unknown Lobby (another game's lobby does not exist for this caller). */
  async #lobbyOf(db: Executor, applicationId: string, lobbyId: string): Promise<LobbyRow> {
    const lobby = await store.findLobby(db, lobbyId, this.#deps.storage.engine);
    if (!lobby || lobby.application_id !== applicationId) throw new HearthError('UnknownLobby');
    return lobby;
  }

  /** A member (50001 otherwise) holding CanLinkLobby (50013 otherwise): linking and unlinking both need it. */
  async #requireCanLink(db: Executor, lobby: LobbyRow, userId: string): Promise<void> {
    const member = await store.findMember(db, lobby.id, userId);
    if (!member) throw new HearthError('MissingAccess');
    if ((member.flags & LobbyMemberFlags.CanLinkLobby) === 0) throw new HearthError('MissingPermissions');
  }

  /** A guild text channel, not age-restricted, not another lobby's (§A.5). */
  async #linkableChannel(db: Executor, channelId: string, lobbyId: string) {
    const channel = await channelStore.findChannel(db, channelId);
    if (!channel) throw new HearthError('UnknownChannel');
    if (Number(channel.type) !== ChannelTypes.GuildText) throw new HearthError('CannotExecuteOnChannelType');
    if (Number(channel.nsfw) !== 0) throw new HearthError('ChannelAgeRestricted');
    const link = await linkStore.findLinkOfChannel(db, channelId);
    if (link && link.lobby_id !== lobbyId) throw new HearthError('ChannelAlreadyLinked');
    return channel;
  }

  /** MANAGE_CHANNELS, VIEW_CHANNEL and SEND_MESSAGES there; 50001 for a user outside the channel's guild. */
  async #requireLinkingPermissions(db: Executor, channelId: string, userId: string): Promise<void> {
    const permissions = await this.#deps.access.channelPermissions(db, channelId, userId);
    if (!has(permissions, ViewChannel)) throw new HearthError('MissingAccess');
    if (!has(permissions, LINKING_PERMISSIONS)) throw new HearthError('MissingPermissions');
  }

  async #channelObject(db: Executor, channelId: string): Promise<ChannelObject | undefined> {
    const row = await channelStore.findChannel(db, channelId);
    return row && toChannelObject(row, await channelStore.channelOverwrites(db, channelId));
  }

  /** CHANNEL_UPDATE with the channel's `linked_lobby` (UDOC, unofficial: channel object, Linked Lobby). */
  async #channelUpdate(
    db: Executor,
    channelId: string,
    link: LinkRow | undefined,
  ): Promise<BusEvent | undefined> {
    const channel = await this.#channelObject(db, channelId);
    if (!channel) return undefined;
    const lobby = link ? await store.findLobby(db, link.lobby_id) : undefined;
    return {
      type: 'CHANNEL_UPDATE',
      data: {
        ...channel,
        ...(link
          ? {
              linked_lobby: {
                application_id: link.application_id,
                lobby_id: link.lobby_id,
                linked_by: link.linked_by,
                linked_at: new Date(Number(link.linked_at)).toISOString(),
                require_application_authorization:
                  ((lobby?.flags ?? 0) & LobbyFlags.RequireApplicationAuthorization) !== 0,
              },
            }
          : {}),
      },
      audience: { guildId: channel.guild_id },
    };
  }

  /** The linking limit of §A.3 (20 per 2 h per application), unless the application is approved. */
  #spend(applicationId: string): Promise<void> {
    return this.#spendOn(applicationId, 'channel-linking', CHANNEL_LINKING_LIMIT);
  }

  async #spendOn(applicationId: string, family: string, quota: { limit: number; windowMs: number }) {
    const application = await this.#deps.applications.getApplication(applicationId);
    if (application && hasFlag(application, ApplicationFlags.CommunicationFeaturesApproved)) return;
    await this.#deps.quotas.spend(`lobbies:${family}:${applicationId}`, quota);
  }

  #transaction<T>(work: (tx: Transaction<Schema>) => Promise<T>): Promise<T> {
    return this.#deps.storage.transaction(work);
  }

  /** After commit: a failed publish is logged, never turned into a failed request (the write stands). */
  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) {
      try {
        await this.#deps.bus.publish(event);
      } catch (error) {
        this.#deps.logger.error({ err: error, eventType: event.type }, 'linked channel event publish failed');
      }
    }
  }
}

function linkedChannelField(object: Json): Json {
  return object['linked_channel'] === undefined ? {} : { linked_channel: object['linked_channel'] };
}

interface ChannelRowKey {
  id: string;
  type: number;
  position: number;
}

/**
 * The platform client's order: channels outside any category first, then each category followed by its
 * channels; within a group text-like channels before voice ones, each by position, then id.
 */
function clientOrder<T extends { parent_id: string | null; sortKey: ChannelRowKey }>(entries: T[]): T[] {
  const isCategory = (e: T) => e.sortKey.type === ChannelTypes.GuildCategory;
  const isVoice = (e: T) =>
    e.sortKey.type === ChannelTypes.GuildVoice || e.sortKey.type === ChannelTypes.GuildStageVoice;
  const compare = (a: T, b: T) => {
    const voice = Number(isVoice(a)) - Number(isVoice(b));
    if (voice !== 0) return voice;
    const position = a.sortKey.position - b.sortKey.position;
    if (position !== 0) return position;
    const [x, y] = [BigInt(a.sortKey.id), BigInt(b.sortKey.id)];
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const categories = entries.filter(isCategory).sort(compare);
  const categoryIds = new Set(categories.map((c) => c.sortKey.id));
  const loose = entries.filter(
    (e) => !isCategory(e) && (e.parent_id === null || !categoryIds.has(e.parent_id)),
  );
  const ordered = loose.sort(compare);
  for (const category of categories) {
    ordered.push(category, ...entries.filter((e) => e.parent_id === category.sortKey.id).sort(compare));
  }
  return ordered;
}
