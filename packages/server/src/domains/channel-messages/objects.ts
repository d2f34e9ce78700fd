import type { MessageRow, ReactionRow } from './store.js';

/**
 * The wire shapes of channel messages (GUILDS.md §4.1, OAS `MessageResponse`), built from rows in one
 * place so REST answers and gateway events agree. Optional keys appear only when the message has them,
 * as the platform sends them: `nonce`, `message_reference`, `message_snapshots`, `referenced_message`
 * (replies: null once the replied-to message is gone), `reactions`, `webhook_id`, `application_id`.
 */

/** A user object as `toUserObject` makes it. */
export type UserObject = { id: string } & Record<string, unknown>;

export interface ReactionObject {
  count: number;
  count_details: { burst: number; normal: number };
  me: boolean;
  me_burst: boolean;
  burst_colors: string[];
  emoji: { id: string | null; name: string | null; animated?: boolean };
}

/** The message call object (DOCS message: Message Call Object). */
export interface MessageCall {
  participants: string[];
  ended_timestamp: string | null;
}

export interface MessageObject {
  id: string;
  channel_id: string;
  author: UserObject;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: UserObject[];
  mention_roles: string[];
  attachments: Record<string, unknown>[];
  embeds: Record<string, unknown>[];
  reactions?: ReactionObject[];
  nonce?: string | number;
  pinned: boolean;
  type: number;
  flags: number;
  components: Record<string, unknown>[];
  message_reference?: Record<string, unknown>;
  message_snapshots?: Record<string, unknown>[];
  referenced_message?: MessageObject | null;
  interaction_metadata?: Record<string, unknown>;
  /** Deprecated for `interaction_metadata`, still sent on messages of interactions (seed: Versioning). */
  interaction?: Record<string, unknown>;
  /** On CALL messages (type 3): who took part, and when the call ended (null while it lasts). */
  call?: MessageCall;
  webhook_id?: string;
  application_id?: string;
  /** The thread this message started (its id is the message's). */
  thread?: Record<string, unknown>;
  /** Gateway events of guild channels only. */
  guild_id?: string;
  member?: Record<string, unknown>;
}

/** What a row alone does not hold: the users it names, its files and reactions, the message it answers. */
export interface MessageParts {
  author: UserObject;
  mentions: readonly UserObject[];
  attachments: readonly Record<string, unknown>[];
  reactions: readonly ReactionRow[];
  /** Who reads it (`me` of the reactions); undefined in gateway events, which are the same for all. */
  viewerId: string | undefined;
  /** For a reply: the replied-to message's object, or null once it is deleted. */
  referenced?: MessageObject | null;
}

const iso = (ms: number | string | null): string | null =>
  ms === null ? null : new Date(Number(ms)).toISOString();

/** The nonce as it was sent: stored as JSON so that an integer comes back an integer. */
export function encodeNonce(nonce: string | number): string {
  return JSON.stringify(nonce);
}

function decodeNonce(stored: string): string | number {
  try {
    const value = JSON.parse(stored) as unknown;
    return typeof value === 'number' || typeof value === 'string' ? value : stored;
  } catch {
    return stored;
  }
}

export function toMessageObject(row: MessageRow, parts: MessageParts): MessageObject {
  const reactions = toReactionObjects(parts.reactions, parts.viewerId);
  return {
    id: row.id,
    channel_id: row.channel_id,
    author: parts.author,
    content: row.content,
    timestamp: iso(row.created_at) as string,
    edited_timestamp: iso(row.edited_at),
    tts: Number(row.tts) === 1,
    mention_everyone: Number(row.mention_everyone) === 1,
    mentions: [...parts.mentions],
    mention_roles: JSON.parse(row.mention_roles) as string[],
    attachments: [...parts.attachments],
    embeds: JSON.parse(row.embeds) as Record<string, unknown>[],
    ...(reactions.length > 0 ? { reactions } : {}),
    ...(row.nonce === null ? {} : { nonce: decodeNonce(row.nonce) }),
    pinned: Number(row.pinned) === 1,
    type: Number(row.type),
    flags: Number(row.flags),
    components: JSON.parse(row.components) as Record<string, unknown>[],
    ...(row.message_reference === null
      ? {}
      : { message_reference: JSON.parse(row.message_reference) as Record<string, unknown> }),
    ...(row.message_snapshots === null
      ? {}
      : { message_snapshots: JSON.parse(row.message_snapshots) as Record<string, unknown>[] }),
    ...(parts.referenced === undefined ? {} : { referenced_message: parts.referenced }),
    ...(row.interaction_metadata === null
      ? {}
      : { interaction_metadata: JSON.parse(row.interaction_metadata) as Record<string, unknown> }),
    ...(row.interaction === null || row.interaction === undefined
      ? {}
      : { interaction: JSON.parse(row.interaction) as Record<string, unknown> }),
    ...(row.call === null || row.call === undefined ? {} : { call: JSON.parse(row.call) as MessageCall }),
    ...(row.webhook_id === null ? {} : { webhook_id: row.webhook_id }),
    ...(row.application_id === null ? {} : { application_id: row.application_id }),
  };
}

/** One entry per emoji in the order first used, each counting its normal and burst reactions. */
export function toReactionObjects(
  rows: readonly ReactionRow[],
  viewerId: string | undefined,
): ReactionObject[] {
  const byEmoji = new Map<string, ReactionObject>();
  for (const row of rows) {
    let reaction = byEmoji.get(row.emoji_key);
    if (!reaction) {
      reaction = {
        count: 0,
        count_details: { burst: 0, normal: 0 },
        me: false,
        me_burst: false,
        burst_colors: [],
        emoji: {
          id: row.emoji_id,
          name: row.emoji_name,
          ...(row.emoji_id !== null ? { animated: Number(row.emoji_animated) === 1 } : {}),
        },
      };
      byEmoji.set(row.emoji_key, reaction);
    }
    const burst = Number(row.burst) === 1;
    reaction.count += 1;
    if (burst) reaction.count_details.burst += 1;
    else reaction.count_details.normal += 1;
    if (row.user_id === viewerId) {
      if (burst) reaction.me_burst = true;
      else reaction.me = true;
    }
  }
  return [...byEmoji.values()];
}

/** The DM channel object (OAS `PrivateChannelResponse`). */
export function toDmChannelObject(
  id: string,
  recipients: readonly UserObject[],
  lastMessageId: string | null,
): { id: string; type: 1; last_message_id: string | null; flags: number; recipients: UserObject[] } {
  return { id, type: 1, last_message_id: lastMessageId, flags: 0, recipients: [...recipients] };
}

/** The group DM channel object (OAS `PrivateGroupChannelResponse`): recipients are the viewer's others. */
export function toGroupDmChannelObject(
  row: {
    id: string;
    owner_id: string;
    name: string | null;
    icon: string | null;
    application_id: string | null;
  },
  recipients: readonly UserObject[],
  lastMessageId: string | null,
  nicks: readonly { id: string; nick: string }[] = [],
) {
  return {
    id: row.id,
    type: 3 as const,
    last_message_id: lastMessageId,
    flags: 0,
    recipients: [...recipients],
    name: row.name,
    icon: row.icon,
    owner_id: row.owner_id,
    // Opened by a bot through `gdm.join` (GUILDS.md §2.2): its application manages it.
    ...(row.application_id === null ? {} : { application_id: row.application_id, managed: true }),
    // The nicknames its bot gave recipients, as the platform's clients read them (`{id, nick}` each).
    ...(nicks.length === 0 ? {} : { nicks: nicks.map((entry) => ({ ...entry })) }),
  };
}
