import {
  ApplicationFlags,
  DirectMessageLimits,
  FormErrors,
  GameDirectMessageEvents,
  MessageActivityTypes,
  MessageFlags,
  MessageTypes,
  ModerationMetadataLimits,
  PRE_APPROVAL_LIMIT,
  type Scope,
  Scopes,
  SocialDispatches,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { formErrorTree, HearthError, invalidForm } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Quotas } from '../../ratelimit/quota.js';
import { type Executor, isUniqueViolation, type Storage } from '../../storage/database.js';
import { recordWebhookEvent } from '../../storage/outbox.js';
import { type AccountsService, toUserObject, type User } from '../accounts/service.js';
import { type ApplicationsService, hasFlag } from '../applications/service.js';
import type { PresenceService } from '../presence/service.js';
import type { RelationshipsService } from '../relationships/service.js';
import { EditDirectMessage, HistoryQuery, NewDirectMessage } from './schemas.js';
import * as store from './store.js';

/**
 * Whether an account is provisional (PROTOCOL.md §B.1): the accounts domain knows
 * (`AccountsService.isProvisional`); this domain takes the question through its deps.
 */
export interface ProvisionalAccounts {
  isProvisional(userId: string): Promise<boolean>;
}

/** A player calling with a bearer token of a game. */
export interface Player {
  userId: string;
  applicationId: string;
  scopes: ReadonlySet<Scope>;
}

export interface MessagesDeps {
  storage: Storage;
  clock: Clock;
  snowflakes: SnowflakeGenerator;
  bus: Bus;
  quotas: Quotas;
  accounts: Pick<AccountsService, 'getUser'>;
  applications: Pick<ApplicationsService, 'getApplication'>;
  relationships: Pick<RelationshipsService, 'standing'>;
  presence: Pick<PresenceService, 'isPlaying' | 'activityOf'>;
  provisional: ProvisionalAccounts;
}

type WireMessage = Record<string, unknown>;

/**
 * Direct messages for games (PROTOCOL.md §B.5) and the activity invites that travel as messages (§B.9):
 * between full and provisional accounts, ephemeral when both are provisional, at most 200 messages and
 * 72 hours of history, moderation metadata per application (§B.4), GAME_DIRECT_MESSAGE_* for webhooks.
 */
export class MessagesService {
  readonly #deps: MessagesDeps;

  constructor(deps: MessagesDeps) {
    this.#deps = deps;
  }

  /** POST /users/{user.id}/messages. */
  async send(player: Player, recipientId: string, input: unknown): Promise<WireMessage> {
    const body = parse(NewDirectMessage, input ?? {});
    const invite = this.#checkScopes(player, body);
    const recipient = await this.#recipient(player, recipientId);
    if (invite) this.#checkInvite(player, body.activity!);
    else if ((body.content ?? '').trim() === '') throw new HearthError('CannotSendEmptyMessage');
    await this.#spendPreApproval(player.applicationId);

    const { storage, clock, snowflakes } = this.#deps;
    const ephemeral =
      (await this.#deps.provisional.isProvisional(player.userId)) &&
      (await this.#deps.provisional.isProvisional(recipientId));
    const author = await this.#user(player.userId);
    const now = clock.now();
    const row: store.MessageRow = {
      id: snowflakes.next(),
      channel_id: '',
      application_id: player.applicationId,
      author_id: player.userId,
      recipient_id: recipientId,
      content: body.content ?? '',
      metadata: body.metadata ? JSON.stringify(body.metadata) : null,
      moderation_metadata: null,
      activity: body.activity ? JSON.stringify(body.activity) : null,
      nonce: body.nonce === undefined ? null : String(body.nonce),
      flags: MessageFlags.SentBySocialLayerIntegration,
      ephemeral: ephemeral ? 1 : 0,
      created_at: now,
      edited_at: null,
    };
    let message: WireMessage = {};
    await storage.transaction(async (tx) => {
      row.channel_id = await this.#channel(tx, player.userId, recipientId);
      await store.insertMessage(tx, row);
      await store.trimChannel(tx, row.channel_id, DirectMessageLimits.historyMaxMessages);
      message = messageObject(row, author, player.applicationId);
      await this.#recordWebhook(tx, GameDirectMessageEvents.Create, row, message, [author, recipient]);
    });
    await this.#deps.bus.publish(this.#dispatch(SocialDispatches.MessageCreate, row, message));
    return message;
  }

  /** GET /users/{user.id}/messages: the newest first, at most 200 and 72 hours back (PROTOCOL.md §B.5). */
  async history(player: Player, otherId: string, query: unknown): Promise<WireMessage[]> {
    const { limit = DirectMessageLimits.getDefault } = parse(HistoryQuery, query ?? {});
    if (!(await this.#deps.accounts.getUser(otherId))) throw new HearthError('UnknownUser');
    const [low, high] = pair(player.userId, otherId);
    const channelId = await store.findChannel(this.#deps.storage.db, low, high);
    if (!channelId) return [];
    const since = this.#deps.clock.now() - DirectMessageLimits.historyMaxAgeMs;
    const rows = await store.history(this.#deps.storage.db, channelId, since, limit);
    const authors = new Map<string, User>();
    const out: WireMessage[] = [];
    for (const row of rows) {
      const author = authors.get(row.author_id) ?? (await this.#user(row.author_id));
      authors.set(author.id, author);
      out.push(messageObject(row, author, player.applicationId));
    }
    return out;
  }

  /** GET /users/@me/message-summaries (Hearth's, for GetUserMessageSummaries): each conversation's newest message. */
  async summaries(player: Player): Promise<Array<{ user_id: string; last_message_id: string }>> {
    const since = this.#deps.clock.now() - DirectMessageLimits.historyMaxAgeMs;
    const rows = await store.summaries(this.#deps.storage.db, player.userId, since);
    return rows.map((row) => ({ user_id: row.other_id, last_message_id: row.last_message_id }));
  }

  /** PATCH /users/{user.id}/messages/{message.id}: the author edits; moderation metadata is cleared (§B.4). */
  async edit(player: Player, otherId: string, messageId: string, input: unknown): Promise<WireMessage> {
    const changes = parse(EditDirectMessage, input ?? {});
    const { row, author } = await this.#own(player, otherId, messageId);
    const recipient = await this.#user(row.recipient_id);
    let message: WireMessage = {};
    await this.#deps.storage.transaction(async (tx) => {
      if (changes.content !== undefined) row.content = changes.content;
      if (changes.metadata !== undefined)
        row.metadata = changes.metadata ? JSON.stringify(changes.metadata) : null;
      row.moderation_metadata = null;
      row.edited_at = this.#deps.clock.now();
      await store.updateMessage(tx, row.id, {
        content: row.content,
        metadata: row.metadata,
        moderation_metadata: null,
        edited_at: row.edited_at,
      });
      message = messageObject(row, author, player.applicationId);
      await this.#recordWebhook(tx, GameDirectMessageEvents.Update, row, message, [author, recipient]);
    });
    await this.#deps.bus.publish(this.#dispatch(SocialDispatches.MessageUpdate, row, message));
    return message;
  }

  /** DELETE /users/{user.id}/messages/{message.id}: the author deletes. */
  async remove(player: Player, otherId: string, messageId: string): Promise<void> {
    const { row, author } = await this.#own(player, otherId, messageId);
    const recipient = await this.#user(row.recipient_id);
    const data = { id: row.id, channel_id: wireChannelId(row) };
    await this.#deps.storage.transaction(async (tx) => {
      await store.deleteMessage(tx, row.id);
      await this.#recordWebhook(tx, GameDirectMessageEvents.Delete, row, data, [author, recipient]);
    });
    await this.#deps.bus.publish(this.#dispatch(SocialDispatches.MessageDelete, row, data));
  }

  /**
   * PUT /partner-sdk/dms/{user_id_1}/{user_id_2}/messages/{message_id}/moderation-metadata (§B.4): the
   * game's backend marks a message; the participants' sessions of that game see it, no webhook fires.
   */
  async setModerationMetadata(
    applicationId: string,
    userA: string,
    userB: string,
    messageId: string,
    input: unknown,
  ): Promise<void> {
    const metadata = parseModerationMetadata(input);
    const [low, high] = pair(userA, userB);
    const channelId = await store.findChannel(this.#deps.storage.db, low, high);
    const row = channelId ? await store.findMessage(this.#deps.storage.db, channelId, messageId) : undefined;
    // Metadata is app-scoped: another game's message is unknown to this one.
    if (!row || row.application_id !== applicationId) throw new HearthError('UnknownMessage');
    row.moderation_metadata = JSON.stringify(metadata);
    await store.updateMessage(this.#deps.storage.db, row.id, {
      moderation_metadata: row.moderation_metadata,
    });
    const author = await this.#user(row.author_id);
    await this.#deps.bus.publish({
      type: SocialDispatches.MessageUpdate,
      data: messageObject(row, author, applicationId),
      audience: { users: [row.author_id, row.recipient_id], applicationId },
    });
  }

  /**
   * Accepting an activity invite (§B.9): the join secret of the inviter's current party reaches the
   * accepter, and the accepter's other devices learn of it.
   */
  async acceptInvite(
    player: { userId: string; applicationId: string | undefined },
    inviterId: string,
    messageId: string,
  ): Promise<Record<string, unknown>> {
    const [low, high] = pair(player.userId, inviterId);
    const channelId = await store.findChannel(this.#deps.storage.db, low, high);
    const row = channelId ? await store.findMessage(this.#deps.storage.db, channelId, messageId) : undefined;
    // A user never receives (so never accepts) their own invite.
    if (!row || row.author_id !== inviterId || row.recipient_id !== player.userId || !row.activity)
      throw new HearthError('UnknownMessage');
    const activity = JSON.parse(row.activity) as { type: number; party_id?: string };
    if (activity.type !== MessageActivityTypes.Join) throw new HearthError('UnknownMessage');
    // A game accepts its own (or a sibling's) invites; the platform client (no application) any game's.
    if (
      player.applicationId !== undefined &&
      !(await this.#siblings(player.applicationId, row.application_id))
    )
      throw new HearthError('UnknownMessage');
    const current = this.#deps.presence.activityOf(inviterId, row.application_id);
    const secret = current?.secrets?.join;
    if (!current || !secret || current.party?.id !== activity.party_id) {
      throw new HearthError('InvalidFormBody', {
        errors: formErrorTree([
          [[], { code: 'ACTIVITY_INVITE_EXPIRED', message: 'The invite no longer matches an open party.' }],
        ]),
      });
    }
    const author = await this.#user(row.author_id);
    const accepted = {
      ...messageObject(row, author, player.applicationId),
      secret,
    };
    await this.#deps.bus.publish({
      type: SocialDispatches.ActivityInviteAccepted,
      data: messageObject(row, author, player.applicationId),
      audience: { users: [player.userId] },
    });
    return accepted;
  }

  // ---- Account links (PROTOCOL.md §B.3) ----

  /**
   * A merge, inside its transaction: the provisional account's DM history becomes the full account's. DM
   * channels belong to no application, and a provisional account exists for one game only: all its
   * channels move. Where the full account already has a channel with the same user, the reference creates
   * a group DM; Hearth has no group DMs, so the messages join that existing channel (newest 200 kept).
   * The conversation between the two accounts themselves is dropped: it would be a channel with oneself.
   * No events: the seam has no after-commit hook, and the SDK reads history again after
   * USER_MERGE_OPERATION_COMPLETED. An unmerge moves no DM history, so there is no `unmergeInto`.
   */
  async mergeInto(tx: Executor, provisionalUserId: string, fullUserId: string): Promise<void> {
    for (const channel of await store.channelsOf(tx, provisionalUserId)) {
      const other = channel.user_low === provisionalUserId ? channel.user_high : channel.user_low;
      if (other === fullUserId) {
        await store.deleteChannel(tx, channel.id);
        continue;
      }
      const [low, high] = pair(fullUserId, other);
      const existing = await store.findChannel(tx, low, high);
      if (existing) {
        await store.moveMessages(tx, channel.id, existing);
        await store.deleteChannel(tx, channel.id);
        await store.trimChannel(tx, existing, DirectMessageLimits.historyMaxMessages);
      } else {
        await store.reassignChannel(tx, channel.id, low, high);
      }
    }
    await store.reassignParticipant(tx, provisionalUserId, fullUserId);
  }

  // ---- Steps ----

  /** `dm_channels.messages.write` sends anything; `activities.invites.write` only invites, with their text (UDOC). */
  #checkScopes(
    player: Player,
    body: { content?: string; activity?: unknown; application_id?: string },
  ): boolean {
    const invite = body.activity !== undefined;
    if (player.scopes.has(Scopes.DmChannelsMessagesWrite)) return invite;
    if (!player.scopes.has(Scopes.ActivitiesInvitesWrite)) throw new HearthError('MissingOAuth2Scope');
    if (!invite) throw invalidForm('content', FormErrors.unknownField());
    return true;
  }

  async #recipient(player: Player, recipientId: string): Promise<User> {
    const recipient = await this.#deps.accounts.getUser(recipientId);
    if (!recipient) throw new HearthError('UnknownUser');
    if (recipientId === player.userId || recipient.bot) throw new HearthError('CannotSendMessagesToThisUser');
    const standing = await this.#deps.relationships.standing(
      player.userId,
      recipientId,
      player.applicationId,
    );
    if (standing.blocked) throw new HearthError('CannotSendMessagesToThisUser');
    // Friends may always write; others only while both are in the game (PROTOCOL.md §B.5).
    const inGame = this.#deps.presence.isPlaying(recipientId, player.applicationId);
    if (!standing.friends && !standing.gameFriends && !inGame)
      throw new HearthError('CannotSendMessagesToThisUser');
    return recipient;
  }

  /** An invite needs the sender's joinable party in this game: party id and size, a join secret (§B.9). */
  #checkInvite(player: Player, activity: { type: number; party_id?: string }): void {
    if (activity.type === MessageActivityTypes.JoinRequest) return;
    const current = this.#deps.presence.activityOf(player.userId, player.applicationId);
    const joinable =
      current?.party?.id !== undefined &&
      current.party.size !== undefined &&
      current.secrets?.join !== undefined;
    if (!joinable) {
      throw invalidForm('activity', {
        code: 'ACTIVITY_NOT_JOINABLE',
        message: 'Set a rich presence with a party (id and size) and a join secret before inviting.',
      });
    }
    activity.party_id = current.party!.id!;
  }

  /** 100 DMs per 2 h per application until it is approved for the communication features (§A.3). */
  async #spendPreApproval(applicationId: string): Promise<void> {
    const application = await this.#deps.applications.getApplication(applicationId);
    if (!application || hasFlag(application, ApplicationFlags.CommunicationFeaturesApproved)) return;
    await this.#deps.quotas.spend(`dm:${applicationId}`, PRE_APPROVAL_LIMIT);
  }

  async #channel(tx: Executor, a: string, b: string): Promise<string> {
    const [low, high] = pair(a, b);
    const existing = await store.findChannel(tx, low, high);
    if (existing) return existing;
    const id = this.#deps.snowflakes.next();
    try {
      await store.insertChannel(tx, {
        id,
        user_low: low,
        user_high: high,
        created_at: this.#deps.clock.now(),
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return (await store.findChannel(tx, low, high))!;
    }
    return id;
  }

  async #own(
    player: Player,
    otherId: string,
    messageId: string,
  ): Promise<{ row: store.MessageRow; author: User }> {
    const [low, high] = pair(player.userId, otherId);
    const channelId = await store.findChannel(this.#deps.storage.db, low, high);
    const row = channelId ? await store.findMessage(this.#deps.storage.db, channelId, messageId) : undefined;
    if (!row) throw new HearthError('UnknownMessage');
    if (row.author_id !== player.userId) throw new HearthError('CannotEditOtherUsersMessage');
    return { row, author: await this.#user(row.author_id) };
  }

  /** The same application, or two children of one parent (publisher-level linking). */
  async #siblings(a: string, b: string): Promise<boolean> {
    if (a === b) return true;
    const [first, second] = await Promise.all([
      this.#deps.applications.getApplication(a),
      this.#deps.applications.getApplication(b),
    ]);
    const parentOf = (app: typeof first) => app?.parentApplicationId ?? app?.id;
    return first !== undefined && second !== undefined && parentOf(first) === parentOf(second);
  }

  async #user(id: string): Promise<User> {
    const user = await this.#deps.accounts.getUser(id);
    if (!user) throw new HearthError('UnknownUser');
    return user;
  }

  async #recordWebhook(
    tx: Executor,
    type: string,
    row: store.MessageRow,
    data: WireMessage,
    participants: User[],
  ): Promise<void> {
    // Game DM events are sent only while a participant has an SDK session of the game (PROTOCOL.md §F.4).
    const inGame = participants.some((user) => this.#deps.presence.isPlaying(user.id, row.application_id));
    if (!inGame) return;
    await recordWebhookEvent(tx, {
      id: this.#deps.snowflakes.next(),
      type,
      applicationId: row.application_id,
      data: {
        ...data,
        channel: {
          id: wireChannelId(row),
          type: DM_CHANNEL,
          recipients: participants.map((user) => toUserObject(user)),
        },
      },
      createdAt: this.#deps.clock.now(),
    });
  }

  /** Both participants' sessions; an ephemeral message exists only in the game it was sent from. */
  #dispatch(type: string, row: store.MessageRow, data: WireMessage): BusEvent {
    const users = [row.author_id, row.recipient_id];
    return {
      type,
      data,
      audience: row.ephemeral ? { users, applicationId: row.application_id } : { users },
    };
  }
}

/** Channel type DM; an ephemeral SDK DM is told apart by its channel id, the recipient's (§B.5). */
const DM_CHANNEL = 1;

function pair(a: string, b: string): [string, string] {
  const ai = BigInt(a);
  const bi = BigInt(b);
  return ai < bi ? [a, b] : [b, a];
}

/** An ephemeral SDK DM message carries the recipient's id as its channel id (PROTOCOL.md §B.5). */
function wireChannelId(row: store.MessageRow): string {
  return row.ephemeral ? row.recipient_id : row.channel_id;
}

/** The message object; `moderation_metadata` only for the application that set it (§B.4). */
export function messageObject(
  row: store.MessageRow,
  author: User,
  viewerApplicationId: string | undefined,
): WireMessage {
  const moderation =
    row.moderation_metadata && row.application_id === viewerApplicationId
      ? { moderation_metadata: JSON.parse(row.moderation_metadata) as Record<string, string> }
      : {};
  return {
    id: row.id,
    type: MessageTypes.Default,
    content: row.content,
    channel_id: wireChannelId(row),
    author: toUserObject(author),
    recipient_id: row.recipient_id,
    timestamp: new Date(Number(row.created_at)).toISOString(),
    edited_timestamp: row.edited_at === null ? null : new Date(Number(row.edited_at)).toISOString(),
    flags: Number(row.flags),
    application_id: row.application_id,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    components: [],
    pinned: false,
    ...(row.nonce !== null ? { nonce: row.nonce } : {}),
    ...(row.metadata ? { metadata: JSON.parse(row.metadata) as Record<string, string> } : {}),
    ...(row.activity ? { activity: JSON.parse(row.activity) as Record<string, unknown> } : {}),
    ...moderation,
  };
}

/** A flat object of strings: ≤5 keys, key ≤1024, value ≤2000 characters (§B.4). */
function parseModerationMetadata(input: unknown): Record<string, string> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalidForm('', FormErrors.object());
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > ModerationMetadataLimits.maxKeys)
    throw invalidForm('', FormErrors.maxItems(ModerationMetadataLimits.maxKeys));
  const errors: Array<[string[], ReturnType<typeof FormErrors.string>]> = [];
  for (const [key, value] of entries) {
    if (key.length > ModerationMetadataLimits.keyMax)
      errors.push([[key], FormErrors.maxLength(ModerationMetadataLimits.keyMax)]);
    else if (typeof value !== 'string') errors.push([[key], FormErrors.string(value)]);
    else if (value.length > ModerationMetadataLimits.valueMax)
      errors.push([[key], FormErrors.maxLength(ModerationMetadataLimits.valueMax)]);
  }
  if (errors.length > 0) throw new HearthError('InvalidFormBody', { errors: formErrorTree(errors) });
  return Object.fromEntries(entries) as Record<string, string>;
}
