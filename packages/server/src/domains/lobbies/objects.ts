import { MessageTypes, SocialMessageFlags } from '@hearth/protocol';
import type { User } from '../accounts/service.js';
import { toUserObject } from '../accounts/service.js';
import type { LobbyRow, MemberRow, MessageRow } from './store.js';

/** The wire shapes of PROTOCOL.md §A.1, §A.2, §A.4, built from rows. */

export type StringMap = Record<string, string>;

export function readMap(text: string | null): StringMap | null {
  return text === null ? null : (JSON.parse(text) as StringMap);
}

/** Stored as JSON text; an empty object is stored as null, as the platform answers `metadata: null`. */
export function writeMap(map: StringMap | null | undefined): string | null {
  return map && Object.keys(map).length > 0 ? JSON.stringify(map) : null;
}

/** SPEC LobbyMemberResponse requires `id, metadata, flags`: null and 0 are serialized, not omitted. */
export function toMemberObject(row: MemberRow): Record<string, unknown> {
  return {
    id: row.user_id,
    metadata: readMap(row.metadata),
    flags: row.flags,
    ...(row.additional_name !== null ? { additional_name: row.additional_name } : {}),
  };
}

export function toLobbyObject(lobby: LobbyRow, members: readonly MemberRow[]): Record<string, unknown> {
  return {
    id: lobby.id,
    application_id: lobby.application_id,
    metadata: readMap(lobby.metadata),
    members: members.map(toMemberObject),
    flags: lobby.flags,
    override_event_webhooks_url: lobby.override_event_webhooks_url,
  };
}

/** The gateway's lobby (§A.6): members carry `connected` (in the lobby's call), plus the call's voice states. */
export function toGatewayLobby(lobby: LobbyRow, members: readonly MemberRow[]): Record<string, unknown> {
  return {
    ...toLobbyObject(lobby, members),
    members: members.map((member) => ({ ...toMemberObject(member), connected: false })),
    voice_states: [],
  };
}

export function toMessageObject(message: MessageRow, author: User): Record<string, unknown> {
  return {
    id: message.id,
    type: MessageTypes.Default,
    content: message.content,
    lobby_id: message.lobby_id,
    // The linked channel for a message that lives there too (§A.4), else the lobby (compat).
    channel_id: message.channel_id ?? message.lobby_id,
    author: toUserObject(author),
    ...(message.author_additional_name !== null
      ? { lobby_member: { additional_name: message.author_additional_name } }
      : {}),
    ...(message.metadata !== null ? { metadata: readMap(message.metadata) } : {}),
    ...(message.moderation_metadata !== null
      ? { moderation_metadata: readMap(message.moderation_metadata) }
      : {}),
    flags: message.flags,
    // The sending application; a message written in the linked channel was sent by none.
    ...((message.flags & SocialMessageFlags.SentBySocialLayerIntegration) !== 0
      ? { application_id: message.application_id }
      : {}),
    timestamp: new Date(message.created_at).toISOString(),
    edited_timestamp: message.edited_at === null ? null : new Date(message.edited_at).toISOString(),
  };
}
