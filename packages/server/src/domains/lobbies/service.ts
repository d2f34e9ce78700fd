import {
  ApplicationFlags,
  Limits,
  type LobbyDeleteReason,
  LobbyDeleteReasons,
  LobbyEvents,
  LobbyLimits,
  PRE_APPROVAL_LIMIT,
  SocialMessageFlags,
} from '@hearth/protocol';
import type { Transaction } from 'kysely';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Quotas } from '../../ratelimit/quota.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { GroupCommit } from '../../storage/group-commit.js';
import { recordWebhookEvent } from '../../storage/outbox.js';
import type { Schema } from '../../storage/schema.js';
import type { AccountsService, User } from '../accounts/service.js';
import type { ApplicationsService } from '../applications/service.js';
import { type MemberList, MemberLists } from './member-lists.js';
import {
  type StringMap,
  toGatewayLobby,
  toLobbyObject,
  toMemberObject,
  toMessageObject,
  writeMap,
} from './objects.js';
import type {
  AddLobbyMember,
  BulkLobbyMembers,
  CreateLobby,
  CreateOrJoinLobby,
  ModerationMetadata,
  ModifyLobby,
  SendLobbyMessage,
} from './schemas.js';
import type { LobbyRow, MemberRow, MessageRow } from './store.js';
import * as store from './store.js';

export interface LobbiesDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  logger: Logger;
  accounts: AccountsService;
  applications: ApplicationsService;
  quotas: Quotas;
  /** The players with a live gateway session on this node, per application: they keep their lobbies alive. */
  connectedPlayers: () => ReadonlyMap<string, readonly string[]>;
  /** Which of these users play the application: authorized it, or are its provisional accounts. */
  playersOf: (db: Executor, userIds: readonly string[], applicationId: string) => Promise<Set<string>>;
  /** Refuses (50035 on `field`) a webhook URL the outbound policy forbids or that fails the signed PING. */
  verifyWebhookUrl: (applicationId: string, field: string, url: string) => Promise<void>;
  /** Linked channels (linking.ts); without them no lobby is ever linked. */
  links?: LobbyLinks;
  /** Lobby calls: inside a member's removal, its place in the call goes; answers the events to publish. */
  calls?: { memberRemoved(tx: Executor, lobbyId: string, userId: string): Promise<BusEvent[]> };
}

/** What the lobbies need of their linked channels (PROTOCOL.md §A.5; linking.ts). */
export interface LobbyLinks {
  /** `{ linked_channel }` when the lobby is linked, `{}` otherwise. */
  linkedChannelField(db: Executor, lobbyId: string): Promise<Record<string, unknown>>;
  /** The channel the lobby is linked to, read through `db`, or undefined. */
  linkedChannelOf(db: Executor, lobbyId: string): Promise<string | undefined>;
  /** Copies a stored lobby message to the linked channel `channelId`; answers that channel, or undefined. */
  forward(lobby: LobbyRow, message: MessageRow, channelId: string): Promise<string | undefined>;
  /** Inside the lobby's deletion: removes its link and answers the events to publish after commit. */
  lobbyDestroyed(tx: Executor, lobby: LobbyRow): Promise<BusEvent[]>;
}

const OVERRIDE_URL_FIELD = 'override_event_webhooks_url';

/** Who calls: a game's backend (its bot) or one of its players (an OAuth2 token of that game). */
export interface Caller {
  applicationId: string;
  userId: string;
  /** The application's flags as its credential read them in this request; absent: read when needed. */
  applicationFlags?: bigint | undefined;
}

/** Route families of the pre-approval limits (PROTOCOL.md §A.3), each with its own budget per application. */
export type QuotaFamily = 'create' | 'join' | 'modify' | 'member' | 'bulk' | 'message';

type Tx = Transaction<Schema>;

/** What a request may set on a member; `undefined` keeps the stored value. */
interface MemberFields {
  metadata?: StringMap | null | undefined;
  flags?: number | null | undefined;
  additional_name?: string | null | undefined;
}
type Json = Record<string, unknown>;

/** A change and the events it causes, published once it has committed. */
class Changes {
  readonly events: BusEvent[] = [];

  constructor(readonly lobby: LobbyRow) {}

  to(users: readonly string[], type: string, data: Json): void {
    if (users.length === 0) return;
    this.events.push({
      type,
      data,
      audience: { users: [...users], applicationId: this.lobby.application_id },
    });
  }
}

const SWEEP_BATCH = 100;
const ACTIVITY_RESOLUTION_MS = 1000;
const TOUCH_CHUNK = 500;

/** Lobbies (PROTOCOL.md §A): membership, metadata, chat, and the events each change sends to members. */
export class LobbiesService {
  readonly #deps: LobbiesDeps;
  /** Member lists by lobby, each valid only at the `members_version` it was read under. */
  readonly #memberLists = new MemberLists();
  readonly #messages: GroupCommit;

  constructor(deps: LobbiesDeps) {
    this.#deps = deps;
    this.#messages = new GroupCommit(deps.storage, (error) => error instanceof HearthError);
  }

  // ---- Lobbies (the game's backend) ----

  async createLobby(applicationId: string, input: CreateLobby): Promise<Json> {
    await this.#spend(applicationId, 'create');
    const requested = input.members ?? [];
    await this.#requirePlayers(
      applicationId,
      requested.map((m) => m.id),
    );
    if (input.override_event_webhooks_url) {
      await this.#deps.verifyWebhookUrl(applicationId, OVERRIDE_URL_FIELD, input.override_event_webhooks_url);
    }
    const now = this.#deps.clock.now();
    const lobby: LobbyRow = {
      id: this.#deps.snowflakes.next(),
      application_id: applicationId,
      metadata: writeMap(input.metadata),
      flags: input.flags ?? 0,
      idle_timeout_seconds: input.idle_timeout_seconds ?? LobbyLimits.idleTimeoutDefaultSeconds,
      secret: null,
      secret_expires_at: null,
      sdk_created: 0,
      override_event_webhooks_url: input.override_event_webhooks_url ?? null,
      created_at: now,
      active_at: now,
      members_version: 0,
    };
    const changes = new Changes(lobby);
    const members = await this.#transaction(async (tx) => {
      await store.insertLobby(tx, lobby);
      for (const member of uniqueById(requested)) {
        await this.#admit(tx, lobby, member.id, { metadata: member.metadata, flags: member.flags }, now);
      }
      return store.listMembers(tx, lobby.id);
    });
    changes.to(ids(members), LobbyEvents.Create, toGatewayLobby(lobby, members));
    await this.#publish(changes);
    return toLobbyObject(lobby, members);
  }

  async getLobby(applicationId: string, lobbyId: string): Promise<Json> {
    const { db } = this.#deps.storage;
    const lobby = await this.#lobbyOf(db, applicationId, lobbyId);
    return {
      ...toLobbyObject(lobby, await store.listMembers(db, lobby.id)),
      ...(await this.#linked(db, lobby.id)),
    };
  }

  /** The lobbies of an application a player is in, as the gateway shows them (READY `lobbies`). */
  async lobbiesOf(userId: string, applicationId: string): Promise<Json[]> {
    const { db } = this.#deps.storage;
    const lobbies = await store.lobbiesOf(db, userId, applicationId);
    return Promise.all(
      lobbies.map(async (lobby) => ({
        ...toGatewayLobby(lobby, await store.listMembers(db, lobby.id)),
        ...(await this.#linked(db, lobby.id)),
      })),
    );
  }

  /** PATCH: fields given replace the stored ones; `members` replaces the member list. */
  async modifyLobby(applicationId: string, lobbyId: string, input: ModifyLobby): Promise<Json> {
    await this.#spend(applicationId, 'modify');
    const requested = input.members ? uniqueById(input.members) : undefined;
    if (requested)
      await this.#requirePlayers(
        applicationId,
        requested.map((m) => m.id),
      );
    const overrideUrl = input.override_event_webhooks_url;
    if (overrideUrl) {
      const current = await this.#lobbyOf(this.#deps.storage.db, applicationId, lobbyId);
      // The PING runs outside the transaction: no lock is held while a receiver answers.
      if (current.override_event_webhooks_url !== overrideUrl) {
        await this.#deps.verifyWebhookUrl(applicationId, OVERRIDE_URL_FIELD, overrideUrl);
      }
    }
    const now = this.#deps.clock.now();
    const { lobby, members, changes, linked } = await this.#transaction(async (tx) => {
      const before = await this.#lobbyOf(tx, applicationId, lobbyId, true);
      const lobby: LobbyRow = {
        ...before,
        ...(input.metadata !== undefined ? { metadata: writeMap(input.metadata) } : {}),
        ...(input.flags !== undefined ? { flags: input.flags ?? 0 } : {}),
        ...(input.idle_timeout_seconds !== undefined
          ? { idle_timeout_seconds: input.idle_timeout_seconds ?? LobbyLimits.idleTimeoutDefaultSeconds }
          : {}),
        ...(input.override_event_webhooks_url !== undefined
          ? { override_event_webhooks_url: input.override_event_webhooks_url }
          : {}),
      };
      const changes = new Changes(lobby);
      // members_version belongs to the database's triggers (0038): never written back from a read.
      const { id: _id, members_version: _version, ...fields } = lobby;
      await store.updateLobby(tx, lobby.id, fields);
      if (requested) {
        const keep = new Set(requested.map((m) => m.id));
        for (const member of await store.listMembers(tx, lobby.id)) {
          if (!keep.has(member.user_id)) await this.#remove(tx, changes, member, LobbyDeleteReasons.Removed);
        }
        for (const member of requested) {
          await this.#upsert(tx, changes, member.id, { metadata: member.metadata, flags: member.flags }, now);
        }
      }
      const members = await store.listMembers(tx, lobby.id);
      const linked = await this.#linked(tx, lobby.id);
      changes.to(ids(members), LobbyEvents.Update, { ...toGatewayLobby(lobby, members), ...linked });
      return { lobby, members, changes, linked };
    });
    await this.#publish(changes);
    return { ...toLobbyObject(lobby, members), ...linked };
  }

  /** Idempotent: deleting a lobby that is gone (or another application's) changes nothing. */
  async deleteLobby(applicationId: string, lobbyId: string): Promise<void> {
    const changes = await this.#transaction(async (tx) => {
      const lobby = await store.findLobby(tx, lobbyId, this.#deps.storage.engine);
      if (!lobby || lobby.application_id !== applicationId) return undefined;
      return this.#destroy(tx, lobby);
    });
    if (changes) await this.#publish(changes);
  }

  // ---- Members (the game's backend) ----

  /** Add Member: an upsert. `additional_name` omitted keeps the stored one; `null` clears it. */
  async putMember(
    applicationId: string,
    lobbyId: string,
    userId: string,
    input: AddLobbyMember,
  ): Promise<Json> {
    await this.#spend(applicationId, 'member');
    await this.#requirePlayers(applicationId, [userId]);
    const now = this.#deps.clock.now();
    const { member, changes } = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, applicationId, lobbyId, true);
      const changes = new Changes(lobby);
      const member = await this.#upsert(tx, changes, userId, input, now);
      return { member, changes };
    });
    await this.#publish(changes);
    return toMemberObject(member);
  }

  /**
   * 1–25 upserts or removals in one transaction. An unknown user fails the whole request; a user already
   * at the per-application lobby cap (or a full lobby) is left out of the answer, as the platform does.
   */
  async bulkMembers(applicationId: string, lobbyId: string, input: BulkLobbyMembers): Promise<Json[]> {
    await this.#spend(applicationId, 'bulk');
    const added = input.filter((m) => m.remove_member !== true).map((m) => m.id);
    await this.#requireUsers(added);
    const players = await this.#deps.playersOf(this.#deps.storage.db, added, applicationId);
    const now = this.#deps.clock.now();
    const { upserted, changes } = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, applicationId, lobbyId, true);
      const changes = new Changes(lobby);
      const upserted = new Map<string, MemberRow>();
      for (const entry of input) {
        // Users failing the checks are left out silently, as the platform does (PROTOCOL.md §A.3 row 7).
        if (entry.remove_member !== true && !players.has(entry.id)) continue;
        if (entry.remove_member === true) {
          upserted.delete(entry.id);
          const member = await store.findMember(tx, lobby.id, entry.id);
          if (member) await this.#remove(tx, changes, member, LobbyDeleteReasons.Removed);
          continue;
        }
        try {
          upserted.set(entry.id, await this.#upsert(tx, changes, entry.id, entry, now));
        } catch (error) {
          if (!(error instanceof HearthError) || !isCapError(error)) throw error;
        }
      }
      return { upserted, changes };
    });
    await this.#publish(changes);
    return [...upserted.values()].map(toMemberObject);
  }

  /** Idempotent for a user who is not a member; the lobby itself must exist. */
  async removeMember(applicationId: string, lobbyId: string, userId: string): Promise<void> {
    await this.#spend(applicationId, 'member');
    const changes = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, applicationId, lobbyId, true);
      const changes = new Changes(lobby);
      const member = await store.findMember(tx, lobby.id, userId);
      if (member) await this.#remove(tx, changes, member, LobbyDeleteReasons.Removed);
      return changes;
    });
    await this.#publish(changes);
  }

  // ---- Players ----

  /**
   * PUT /lobbies: joins the lobby of this secret, or creates it. A member calling again updates the
   * metadata it passes. A secret older than 30 days admits nobody: a new lobby takes the secret over.
   */
  async createOrJoin(caller: Caller, input: CreateOrJoinLobby): Promise<Json> {
    await this.#spend(caller.applicationId, 'join');
    try {
      return await this.#createOrJoin(caller, input);
    } catch (error) {
      // Two players creating the same new lobby at once: the loser joins the winner's.
      if (!isUniqueViolation(error)) throw error;
      return this.#createOrJoin(caller, input);
    }
  }

  async #createOrJoin(caller: Caller, input: CreateOrJoinLobby): Promise<Json> {
    const now = this.#deps.clock.now();
    const { lobby, members, changes } = await this.#transaction(async (tx) => {
      const engine = this.#deps.storage.engine;
      let lobby = await store.findLobbyBySecret(tx, caller.applicationId, input.secret, engine);
      if (lobby && lobby.secret_expires_at !== null && lobby.secret_expires_at <= now) {
        await store.updateLobby(tx, lobby.id, { secret: null, secret_expires_at: null });
        lobby = undefined;
      }
      if (!lobby) return this.#createBySecret(tx, caller, input, now);

      const changes = new Changes(lobby);
      if (input.lobby_metadata !== undefined) {
        const metadata = writeMap(input.lobby_metadata);
        if (metadata !== lobby.metadata) {
          lobby = { ...lobby, metadata };
          await store.updateLobby(tx, lobby.id, { metadata });
          const members = await store.listMembers(tx, lobby.id);
          changes.to(ids(members), LobbyEvents.Update, toGatewayLobby(lobby, members));
        }
      }
      const fields = input.member_metadata !== undefined ? { metadata: input.member_metadata } : {};
      await this.#upsert(tx, changes, caller.userId, fields, now);
      await store.updateLobby(tx, lobby.id, { active_at: now });
      return { lobby, members: await store.listMembers(tx, lobby.id), changes };
    });
    await this.#publish(changes);
    return toLobbyObject(lobby, members);
  }

  async #createBySecret(tx: Tx, caller: Caller, input: CreateOrJoinLobby, now: number) {
    const lobby: LobbyRow = {
      id: this.#deps.snowflakes.next(),
      application_id: caller.applicationId,
      metadata: writeMap(input.lobby_metadata),
      flags: input.flags ?? 0,
      idle_timeout_seconds: input.idle_timeout_seconds ?? LobbyLimits.idleTimeoutDefaultSeconds,
      secret: input.secret,
      secret_expires_at: now + LobbyLimits.secretLifetimeMs,
      sdk_created: 1,
      override_event_webhooks_url: null,
      created_at: now,
      active_at: now,
      members_version: 0,
    };
    const changes = new Changes(lobby);
    await store.insertLobby(tx, lobby);
    await this.#admit(tx, lobby, caller.userId, { metadata: input.member_metadata }, now);
    const members = await store.listMembers(tx, lobby.id);
    changes.to(ids(members), LobbyEvents.Create, toGatewayLobby(lobby, members));
    return { lobby, members, changes };
  }

  /** DELETE /lobbies/{id}/members/@me: only SDK-created lobbies may be left this way. */
  async leave(caller: Caller, lobbyId: string): Promise<void> {
    const changes = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, caller.applicationId, lobbyId, true);
      const member = await store.findMember(tx, lobby.id, caller.userId);
      if (!member) return undefined;
      if (lobby.sdk_created !== 1) throw new HearthError('MissingAccess');
      const changes = new Changes(lobby);
      await this.#remove(tx, changes, member, LobbyDeleteReasons.Removed);
      return changes;
    });
    if (changes) await this.#publish(changes);
  }

  // ---- Messages ----

  async sendMessage(caller: Caller, lobbyId: string, input: SendLobbyMessage): Promise<Json> {
    if (input.content.trim() === '') throw new HearthError('CannotSendEmptyMessage');
    await this.#spend(caller.applicationId, 'message', caller.applicationFlags);
    // Before the transaction: a user deleted since leaves no membership behind, which the transaction reads.
    const author = await this.#author(caller.userId);
    const now = this.#deps.clock.now();
    // Messages of requests read in the same turn commit together (group commit); refusals come before writes.
    const { message, changes, members, linkedTo } = await this.#messages.run(async (tx) => {
      // Read in the transaction: a statement alone would open a read transaction of its own, which on a busy
      // database costs more than the read (SQLite, one per message).
      const lobby = await this.#lobbyOf(tx, caller.applicationId, lobbyId);
      const members = await this.#membersAt(tx, lobby);
      const member = members.byUser.get(caller.userId);
      if (!member) throw new HearthError('MissingAccess');
      const message: MessageRow = {
        id: this.#deps.snowflakes.next(),
        lobby_id: lobby.id,
        author_id: author.id,
        application_id: caller.applicationId,
        content: input.content,
        metadata: writeMap(input.metadata),
        moderation_metadata: null,
        author_additional_name: member.additional_name,
        flags: SocialMessageFlags.SentBySocialLayerIntegration,
        created_at: now,
        edited_at: null,
        channel_id: null,
      };
      await store.insertMessage(tx, message);
      // Activity only matters against timeouts of 5 s or more: a busy chat need not write it every time.
      if (now - lobby.active_at >= ACTIVITY_RESOLUTION_MS)
        await store.updateLobby(tx, lobby.id, { active_at: now });
      await this.#recordWebhook(tx, lobby, LobbyEvents.MessageCreate, toMessageObject(message, author), now);
      // The link is read here, not after commit: the messages of one group then publish without another
      // wait between them, and their events reach each member's socket in one write.
      const linkedTo = await this.#deps.links?.linkedChannelOf(tx, lobby.id);
      return { message, changes: new Changes(lobby), members, linkedTo };
    });
    // A linked lobby's message lives in the channel too; a refusal there leaves it the lobby's (§A.3 row 11).
    const channelId =
      linkedTo === undefined ? undefined : await this.#deps.links?.forward(changes.lobby, message, linkedTo);
    const object = toMessageObject(channelId ? { ...message, channel_id: channelId } : message, author);
    changes.to(members.userIds, LobbyEvents.MessageCreate, object);
    await this.#publish(changes);
    return object;
  }

  /** The most recent messages, newest first: at most `limit` (≤ 200) and none older than 72 hours. */
  async listMessages(
    caller: Caller,
    lobbyId: string,
    limit: number = LobbyLimits.messagesDefaultLimit,
  ): Promise<Json[]> {
    const { db } = this.#deps.storage;
    const lobby = await this.#lobbyOf(db, caller.applicationId, lobbyId);
    await this.#memberOf(db, lobby, caller.userId);
    const since = this.#deps.clock.now() - Limits.lobbyHistoryMaxAgeMs;
    const rows = await store.recentMessages(db, lobby.id, since, limit);
    const authors = await this.#deps.accounts.getUsers(rows.map((r) => r.author_id));
    return rows.flatMap((row) => {
      const author = authors.get(row.author_id);
      return author ? [toMessageObject(row, author)] : [];
    });
  }

  /** The author edits the content; an edit clears the moderation metadata (§B.4) and re-fires the webhook. */
  async editMessage(caller: Caller, lobbyId: string, messageId: string, content: string): Promise<Json> {
    if (content.trim() === '') throw new HearthError('CannotSendEmptyMessage');
    const author = await this.#author(caller.userId);
    const now = this.#deps.clock.now();
    const { message, changes, members } = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, caller.applicationId, lobbyId);
      await this.#memberOf(tx, lobby, caller.userId);
      const before = await this.#messageOf(tx, lobby, messageId);
      if (before.author_id !== caller.userId) throw new HearthError('CannotEditOtherUsersMessage');
      const message: MessageRow = { ...before, content, moderation_metadata: null, edited_at: now };
      await store.updateMessage(tx, message.id, { content, moderation_metadata: null, edited_at: now });
      await this.#recordWebhook(tx, lobby, LobbyEvents.MessageUpdate, toMessageObject(message, author), now);
      return { message, changes: new Changes(lobby), members: await this.#membersAt(tx, lobby) };
    });
    const object = toMessageObject(message, author);
    changes.to(members.userIds, LobbyEvents.MessageUpdate, object);
    await this.#publish(changes);
    return object;
  }

  async deleteMessage(caller: Caller, lobbyId: string, messageId: string): Promise<void> {
    const now = this.#deps.clock.now();
    const { changes, members } = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, caller.applicationId, lobbyId);
      await this.#memberOf(tx, lobby, caller.userId);
      const message = await this.#messageOf(tx, lobby, messageId);
      if (message.author_id !== caller.userId) throw new HearthError('MissingPermissions');
      await store.deleteMessage(tx, message.id);
      await this.#recordWebhook(
        tx,
        lobby,
        LobbyEvents.MessageDelete,
        { id: message.id, lobby_id: lobby.id },
        now,
      );
      return { changes: new Changes(lobby), members: await this.#membersAt(tx, lobby) };
    });
    changes.to(members.userIds, LobbyEvents.MessageDelete, { id: messageId, lobby_id: lobbyId });
    await this.#publish(changes);
  }

  /**
   * The game's moderation verdict on a message (§B.4): members see it as a message update; no webhook
   * fires for a metadata-only change. An empty object clears it.
   */
  async setModerationMetadata(
    applicationId: string,
    lobbyId: string,
    messageId: string,
    metadata: ModerationMetadata,
  ): Promise<void> {
    const { message, changes, members } = await this.#transaction(async (tx) => {
      const lobby = await this.#lobbyOf(tx, applicationId, lobbyId);
      const before = await this.#messageOf(tx, lobby, messageId);
      const message: MessageRow = { ...before, moderation_metadata: writeMap(metadata) };
      await store.updateMessage(tx, message.id, { moderation_metadata: message.moderation_metadata });
      return { message, changes: new Changes(lobby), members: await store.listMembers(tx, lobby.id) };
    });
    const author = (await this.#deps.accounts.getUsers([message.author_id])).get(message.author_id);
    if (author) changes.to(ids(members), LobbyEvents.MessageUpdate, toMessageObject(message, author));
    await this.#publish(changes);
  }

  // ---- Account links (PROTOCOL.md §B.3) ----

  /** A merge: the provisional account's lobby memberships and lobby messages become the full account's. */
  async mergeInto(
    tx: Executor,
    provisionalUserId: string,
    fullUserId: string,
    applicationId: string,
  ): Promise<void> {
    await store.transferMemberships(tx, provisionalUserId, fullUserId, applicationId, true);
  }

  /** An unmerge: the new provisional account keeps the active lobby memberships; messages stay. */
  async unmergeInto(
    tx: Executor,
    fullUserId: string,
    newProvisionalUserId: string,
    applicationId: string,
  ): Promise<void> {
    await store.transferMemberships(tx, fullUserId, newProvisionalUserId, applicationId, false);
  }

  // ---- Idle lobbies ----

  /**
   * One pass of the idle sweeper: lobbies with a member connected on this node are marked active, then
   * lobbies idle past their `idle_timeout_seconds` are deleted (LOBBY_DELETE, reason `deleted`), and
   * messages older than the 72-hour history window are dropped. Every node runs it; each marks its own
   * players' lobbies, far more often than the shortest timeout (5 s), so no node deletes a lobby that
   * another node's player is connected to.
   */
  async sweep(): Promise<number> {
    const { storage, clock } = this.#deps;
    const now = clock.now();
    for (const [applicationId, users] of this.#deps.connectedPlayers()) {
      for (let i = 0; i < users.length; i += TOUCH_CHUNK) {
        await store.touchLobbiesOf(storage.db, applicationId, users.slice(i, i + TOUCH_CHUNK), now);
      }
    }
    let deleted = 0;
    for (;;) {
      const idle = await store.idleLobbies(storage.db, now, SWEEP_BATCH);
      for (const candidate of idle) {
        const changes = await this.#transaction(async (tx) => {
          const lobby = await store.findLobby(tx, candidate.id, storage.engine);
          // Re-read under the lock: a message or a join may have made it active since the scan.
          if (!lobby || lobby.active_at + lobby.idle_timeout_seconds * 1000 >= now) return undefined;
          return this.#destroy(tx, lobby);
        });
        if (changes) {
          deleted += 1;
          await this.#publish(changes);
        }
      }
      if (idle.length < SWEEP_BATCH) break;
    }
    await store.pruneMessages(storage.db, now - Limits.lobbyHistoryMaxAgeMs);
    return deleted;
  }

  // ---- Rules shared by the operations ----

  /** The application's lobby, or Unknown Lobby: another game's lobby does not exist for this caller. */
  async #lobbyOf(db: Executor, applicationId: string, lobbyId: string, lock = false): Promise<LobbyRow> {
    const lobby = await store.findLobby(db, lobbyId, lock ? this.#deps.storage.engine : undefined);
    if (!lobby || lobby.application_id !== applicationId) throw new HearthError('UnknownLobby');
    return lobby;
  }

  async #memberOf(db: Executor, lobby: LobbyRow, userId: string): Promise<MemberRow> {
    const member = await store.findMember(db, lobby.id, userId);
    if (!member) throw new HearthError('MissingAccess');
    return member;
  }

  /**
   * The lobby's members as of `lobby` (read in the same transaction): the list this node holds under the
   * lobby's `members_version`, or read and kept. Never changed by the caller: it is shared.
   */
  async #membersAt(db: Executor, lobby: LobbyRow): Promise<MemberList> {
    const held = this.#memberLists.get(lobby.id, lobby.members_version);
    if (held) return held;
    return this.#memberLists.set(lobby.id, lobby.members_version, await store.listMembers(db, lobby.id));
  }

  async #messageOf(db: Executor, lobby: LobbyRow, messageId: string): Promise<MessageRow> {
    const message = await store.findMessage(db, lobby.id, messageId);
    if (!message) throw new HearthError('UnknownMessage');
    return message;
  }

  /** The author of a message, kept between the commits that may change users (a chat's commits do not). */
  async #author(userId: string): Promise<User> {
    const author = await this.#deps.accounts.keptUser(userId);
    if (!author) throw new HearthError('UnknownUser');
    return author;
  }

  /**
   * A lobby member is a player of the lobby's application (authorized it, or a provisional account of it):
   * strangers and other applications' bot users are refused (404 for unknown ids, 50001 for the others).
   */
  async #requirePlayers(applicationId: string, userIds: readonly string[]): Promise<void> {
    await this.#requireUsers(userIds);
    if (userIds.length === 0) return;
    const players = await this.#deps.playersOf(this.#deps.storage.db, userIds, applicationId);
    if (userIds.some((id) => !players.has(id))) throw new HearthError('MissingAccess');
  }

  async #requireUsers(userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    const found = await this.#deps.accounts.getUsers(userIds);
    if (userIds.some((id) => !found.has(id))) throw new HearthError('UnknownUser');
  }

  /** A new member, within both caps: 1,000 members per lobby, 100 lobbies per user per application. */
  async #admit(
    tx: Tx,
    lobby: LobbyRow,
    userId: string,
    fields: MemberFields,
    now: number,
  ): Promise<MemberRow> {
    if ((await store.countMembers(tx, lobby.id)) >= LobbyLimits.membersMax) {
      throw new HearthError('MaximumLobbyMembers');
    }
    if (
      (await store.countLobbiesOf(tx, userId, lobby.application_id)) >=
      LobbyLimits.lobbiesPerUserPerApplication
    ) {
      throw new HearthError('MaximumLobbies');
    }
    const member: MemberRow = {
      lobby_id: lobby.id,
      user_id: userId,
      application_id: lobby.application_id,
      metadata: writeMap(fields.metadata),
      flags: fields.flags ?? 0,
      additional_name: fields.additional_name ?? null,
      joined_at: now,
    };
    await store.insertMember(tx, member);
    return member;
  }

  /** Adds or updates one member and notes the events: the newcomer learns the lobby, members the change. */
  async #upsert(
    tx: Tx,
    changes: Changes,
    userId: string,
    fields: MemberFields,
    now: number,
  ): Promise<MemberRow> {
    const { lobby } = changes;
    const current = await store.findMember(tx, lobby.id, userId);
    if (!current) {
      const member = await this.#admit(tx, lobby, userId, fields, now);
      const members = await store.listMembers(tx, lobby.id);
      const linked = await this.#linked(tx, lobby.id);
      changes.to([userId], LobbyEvents.Create, { ...toGatewayLobby(lobby, members), ...linked });
      changes.to(ids(members), LobbyEvents.MemberAdd, memberEvent(lobby, member));
      return member;
    }
    const member: MemberRow = {
      ...current,
      ...(fields.metadata !== undefined ? { metadata: writeMap(fields.metadata) } : {}),
      ...(fields.flags !== undefined ? { flags: fields.flags ?? 0 } : {}),
      ...(fields.additional_name !== undefined ? { additional_name: fields.additional_name } : {}),
    };
    if (
      member.metadata === current.metadata &&
      member.flags === current.flags &&
      member.additional_name === current.additional_name
    ) {
      return current;
    }
    await store.updateMember(tx, lobby.id, userId, {
      metadata: member.metadata,
      flags: member.flags,
      additional_name: member.additional_name,
    });
    changes.to(
      ids(await store.listMembers(tx, lobby.id)),
      LobbyEvents.MemberUpdate,
      memberEvent(lobby, member),
    );
    return member;
  }

  /** Removes one member: every member (the leaver too) sees the removal; the leaver loses the lobby. */
  async #remove(tx: Tx, changes: Changes, member: MemberRow, reason: LobbyDeleteReason): Promise<void> {
    const { lobby } = changes;
    const before = await store.listMembers(tx, lobby.id);
    await store.deleteMember(tx, lobby.id, member.user_id);
    if (this.#deps.calls)
      changes.events.push(...(await this.#deps.calls.memberRemoved(tx, lobby.id, member.user_id)));
    changes.to(ids(before), LobbyEvents.MemberRemove, memberEvent(lobby, member));
    changes.to([member.user_id], LobbyEvents.Delete, { id: lobby.id, reason });
  }

  async #destroy(tx: Tx, lobby: LobbyRow): Promise<Changes> {
    const changes = new Changes(lobby);
    const members = await store.listMembers(tx, lobby.id);
    if (this.#deps.links) changes.events.push(...(await this.#deps.links.lobbyDestroyed(tx, lobby)));
    await store.deleteLobby(tx, lobby.id);
    this.#memberLists.forget(lobby.id);
    changes.to(ids(members), LobbyEvents.Delete, { id: lobby.id, reason: LobbyDeleteReasons.Deleted });
    return changes;
  }

  /** LOBBY_MESSAGE_* for the game's webhook (or the lobby's own URL), in the transaction of the change (§F.4). */
  async #recordWebhook(tx: Tx, lobby: LobbyRow, type: string, data: Json, now: number): Promise<void> {
    await recordWebhookEvent(tx, {
      id: this.#deps.snowflakes.next(),
      type,
      applicationId: lobby.application_id,
      data,
      createdAt: now,
      ...(lobby.override_event_webhooks_url ? { overrideUrl: lobby.override_event_webhooks_url } : {}),
    });
  }

  /** The pre-approval limit of a route family, unless the application is approved (§A.3). */
  async #spend(applicationId: string, family: QuotaFamily, known?: bigint): Promise<void> {
    // Read on every message, so a revoked approval applies at once: by the request's credential, with its
    // token (kept only until the next commit), or else alone (one column, prepared).
    const flags = known ?? (await this.#deps.applications.flagsIn(this.#deps.storage.db, applicationId));
    const approved = ApplicationFlags.CommunicationFeaturesApproved;
    if (flags !== undefined && (flags & approved) === approved) return;
    await this.#deps.quotas.spend(`lobbies:${family}:${applicationId}`, PRE_APPROVAL_LIMIT);
  }

  /** `{ linked_channel }` of a linked lobby (§A.1), `{}` otherwise. */
  async #linked(db: Executor, lobbyId: string): Promise<Json> {
    return this.#deps.links ? this.#deps.links.linkedChannelField(db, lobbyId) : {};
  }

  #transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#deps.storage.transaction(work);
  }

  /** After commit: a failed publish is logged, never turned into a failed request (the write stands). */
  async #publish(changes: Changes): Promise<void> {
    for (const event of changes.events) {
      try {
        await this.#deps.bus.publish(event);
      } catch (error) {
        this.#deps.logger.error({ err: error, eventType: event.type }, 'lobby event publish failed');
      }
    }
  }
}

function memberEvent(lobby: LobbyRow, member: MemberRow): Json {
  return { member: toMemberObject(member), lobby_id: lobby.id, application_id: lobby.application_id };
}

function ids(members: readonly MemberRow[]): string[] {
  return members.map((m) => m.user_id);
}

/** The last entry for a user wins, as a later upsert would. */
function uniqueById<T extends { id: string }>(entries: readonly T[]): T[] {
  return [...new Map(entries.map((e) => [e.id, e])).values()];
}

function isCapError(error: HearthError): boolean {
  return error.error === 'MaximumLobbies' || error.error === 'MaximumLobbyMembers';
}
