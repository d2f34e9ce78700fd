import {
  CHANNEL_INFO_FIELDS,
  type ChannelInfoChannel,
  type ChannelInfoField,
  type GatewayChannelInfoData,
  GatewayCloseCodes,
  isSnowflake,
} from '@hearth/protocol';
import type { Connection } from './connection.js';
import { record } from './sessions.js';

/** What op 43 asks of the gateway that routes to it (GatewayServer, through the voice-status domain). */
export interface ChannelInfoPort {
  /** The guild's voice channels the user can see with the fields asked; undefined when it cannot answer. */
  channelInfo(
    userId: string,
    guildId: string,
    fields: ReadonlySet<ChannelInfoField>,
  ): Promise<ChannelInfoChannel[] | undefined>;
}

const KNOWN_FIELDS: ReadonlySet<string> = new Set(CHANNEL_INFO_FIELDS);

/**
 * Op 43 Request Channel Info `{guild_id, fields}` (PROTOCOL.md §D.7), answered by CHANNEL_INFO with only
 * the fields asked. A malformed payload closes with 4002, as Request Guild Members does; a guild the session
 * is not in is ignored, and a field name this server does not know is skipped rather than refused.
 */
export async function requestChannelInfo(
  gateway: ChannelInfoPort,
  connection: Connection,
  d: unknown,
): Promise<void> {
  const session = connection.session!;
  const request = d as { guild_id?: unknown; fields?: unknown } | null;
  const fields = request?.fields;
  if (
    typeof request !== 'object' ||
    request === null ||
    typeof request.guild_id !== 'string' ||
    !isSnowflake(request.guild_id) ||
    !Array.isArray(fields) ||
    !fields.every((field) => typeof field === 'string')
  ) {
    connection.close(GatewayCloseCodes.DecodeError, 'Invalid Request Channel Info payload');
    return;
  }
  const guildId = request.guild_id;
  if (!session.guildIds.has(guildId)) return;
  const asked = new Set(fields.filter((field): field is ChannelInfoField => KNOWN_FIELDS.has(field)));
  const channels = await gateway.channelInfo(session.identity.userId, guildId, asked);
  if (channels === undefined) return;
  record(session, 'CHANNEL_INFO', { guild_id: guildId, channels } satisfies GatewayChannelInfoData);
}
