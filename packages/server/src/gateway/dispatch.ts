import {
  GatewayCloseCodes,
  GatewayIntents,
  GatewayOpcodes,
  type GatewaySoundboardSoundsData,
  GUILD_MEMBERS_NONCE_MAX_BYTES,
  isInEffect,
  isSnowflake,
} from '@hearth/protocol';
import type { Clock } from '../kernel/clock.js';
import { type ChannelInfoPort, requestChannelInfo } from './channel-info.js';
import type { ClientPayload, Connection } from './connection.js';
import { record, type Session } from './sessions.js';

/**
 * What the opcode handlers ask of the gateway that routes to them; GatewayServer implements it. Declared
 * here so that handlers depend on this seam, not on the server that mounts them (STYLE.md rule 16).
 */
export interface GatewayPort extends ChannelInfoPort {
  readonly clock: Clock;
  identify(connection: Connection, d: unknown): Promise<void>;
  resume(connection: Connection, d: unknown): Promise<void>;
  /** Whether the social layer's presence rules are wired (else only the bare shape is checked). */
  readonly presenceWired: boolean;
  parsePresence(input: unknown): { status: string; activities: unknown[] } | undefined;
  /** Spends one of the session's presence updates (5 per 20 s); false when they are spent. */
  allowPresenceUpdate(sessionId: string): boolean;
  updatePresence(session: Session, presence: { status: string; activities: unknown[] }): Promise<void>;
  /** Seconds to wait when a bot's all-members budget in a guild is spent; undefined when served. */
  spendAllMembersRequest(userId: string, guildId: string): Promise<number | undefined>;
  findMembers(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<Array<Record<string, unknown> & { user: { id: string } }>>;
  updateVoiceState(session: Session, d: { guild_id: string }): Promise<void>;
  /** Op 4 with `guild_id: null`: joins or leaves a lobby's call (the lobby is `channel_id`). */
  updatePrivateVoiceState(session: Session, d: unknown): Promise<void>;
}

type Handler = (gateway: GatewayPort, connection: Connection, d: unknown) => Promise<void> | void;

/** Opcodes a client may send before it has a session. */
const BEFORE_SESSION = new Set<number>([
  GatewayOpcodes.Heartbeat,
  GatewayOpcodes.Identify,
  GatewayOpcodes.Resume,
]);

/**
 * Every opcode of the gateway, in one table (STYLE.md rule 8). Opcodes the server sends (0, 7, 9, 10, 11)
 * are not valid from a client and close with 4001, as unknown ones do; every opcode a client may send has
 * an entry, so none of them closes with 4001.
 */
export const OPCODE_HANDLERS: Readonly<Record<number, Handler>> = {
  [GatewayOpcodes.Heartbeat]: (_gateway, connection) => connection.heartbeatReceived(),
  [GatewayOpcodes.Identify]: (gateway, connection, d) => gateway.identify(connection, d),
  [GatewayOpcodes.Resume]: (gateway, connection, d) => gateway.resume(connection, d),
  [GatewayOpcodes.PresenceUpdate]: presenceUpdate,
  [GatewayOpcodes.RequestGuildMembers]: requestGuildMembers,
  [GatewayOpcodes.VoiceStateUpdate]: voiceStateUpdate,
  [GatewayOpcodes.LobbyVoiceStates]: notServedYet,
  [GatewayOpcodes.RequestSoundboardSounds]: requestSoundboardSounds,
  [GatewayOpcodes.LobbyVoiceServerPing]: notServedYet,
  [GatewayOpcodes.RequestChannelInfo]: requestChannelInfo,
};

/** Routes one decoded frame: the single point where opcodes, session state and order are checked. */
export async function route(
  gateway: GatewayPort,
  connection: Connection,
  payload: ClientPayload,
): Promise<void> {
  const handler = OPCODE_HANDLERS[payload.op];
  if (!handler) {
    connection.close(GatewayCloseCodes.UnknownOpcode, 'Unknown opcode');
    return;
  }
  if (!connection.session && !BEFORE_SESSION.has(payload.op)) {
    connection.close(GatewayCloseCodes.NotAuthenticated, 'Not authenticated');
    return;
  }
  await handler(gateway, connection, payload.d);
}

/**
 * The lobby voice opcodes get real handlers with lobby calls. Until then they are ignored, as the platform
 * ignores a request it has nothing to answer with: closing would drop clients that send them as a matter of course.
 */
function notServedYet(): void {}

/**
 * Op 31 `{guild_ids}` (DOCS gateway events, Request Soundboard Sounds): one SOUNDBOARD_SOUNDS per guild of
 * the session asked for, once each. Hearth has no soundboard, so each lists none; guilds the session is not
 * in are passed over. A payload of another shape is 4002, as op 8's.
 */
function requestSoundboardSounds(_gateway: GatewayPort, connection: Connection, d: unknown): void {
  const guildIds = (d as { guild_ids?: unknown } | null)?.guild_ids;
  if (typeof d !== 'object' || d === null || !Array.isArray(guildIds) || !guildIds.every(isSnowflake)) {
    connection.close(GatewayCloseCodes.DecodeError, 'Invalid Request Soundboard Sounds payload');
    return;
  }
  const session = connection.session!;
  for (const guildId of new Set(guildIds as string[])) {
    if (!session.guildIds.has(guildId)) continue;
    const sounds: GatewaySoundboardSoundsData = { guild_id: guildId, soundboard_sounds: [] };
    record(session, 'SOUNDBOARD_SOUNDS', sounds);
  }
}

/**
 * Op 4 (GUILDS.md §7.4): `{guild_id, channel_id, self_mute, self_deaf}` joins, moves or leaves (null) a
 * voice channel; VOICE_STATE_UPDATE reaches the guild. A malformed or refused one is ignored: op 4 never
 * closes a session (voice clients resend on failure). `guild_id: null` is a call outside guilds: a DM the
 * user is a recipient of as `channel_id` is a DM call, a lobby a lobby call (the SDK's).
 */
async function voiceStateUpdate(gateway: GatewayPort, connection: Connection, d: unknown): Promise<void> {
  const update = d as { guild_id?: unknown; channel_id?: unknown } | null;
  if (typeof update === 'object' && update !== null && update.guild_id === null) {
    await gateway.updatePrivateVoiceState(connection.session!, update);
    return;
  }
  if (
    typeof update !== 'object' ||
    update === null ||
    typeof update.guild_id !== 'string' ||
    !isSnowflake(update.guild_id) ||
    !(update.channel_id === null || (typeof update.channel_id === 'string' && isSnowflake(update.channel_id)))
  ) {
    return;
  }
  await gateway.updateVoiceState(connection.session!, update as { guild_id: string });
}

const STATUSES = new Set(['online', 'dnd', 'idle', 'invisible', 'offline']);

/** Op 3: the session's status and activities, 5 updates per 20 s (PROTOCOL.md §D.6); excess is dropped. */
async function presenceUpdate(gateway: GatewayPort, connection: Connection, d: unknown): Promise<void> {
  const session = connection.session!;
  const presence = d as { status?: unknown; activities?: unknown; since?: unknown; afk?: unknown } | null;
  if (
    typeof presence !== 'object' ||
    presence === null ||
    typeof presence.status !== 'string' ||
    !STATUSES.has(presence.status) ||
    !Array.isArray(presence.activities)
  ) {
    connection.close(GatewayCloseCodes.DecodeError, 'Invalid presence update');
    return;
  }
  // With the social layer wired, every activity field is checked too (PROTOCOL.md §B.8 field limits).
  const parsed = gateway.presenceWired ? gateway.parsePresence(presence) : presence;
  if (!parsed) {
    connection.close(GatewayCloseCodes.DecodeError, 'Invalid presence update');
    return;
  }
  if (!gateway.allowPresenceUpdate(session.id)) return;
  await gateway.updatePresence(session, parsed as { status: string; activities: unknown[] });
}

/**
 * Op 8. A request for all members (empty query, limit 0) is limited to 1 per guild per bot per 30 s from
 * 1 October 2025, counting the request and not its chunks; an excess one answers RATE_LIMITED (PROTOCOL.md §D.6).
 */
async function requestGuildMembers(gateway: GatewayPort, connection: Connection, d: unknown): Promise<void> {
  const session = connection.session!;
  const request = d as {
    guild_id?: unknown;
    query?: unknown;
    limit?: unknown;
    user_ids?: unknown;
    nonce?: unknown;
    presences?: unknown;
  } | null;
  const guildId = request?.guild_id;
  const nonce = request?.nonce;
  const userIds = request?.user_ids;
  if (
    typeof request !== 'object' ||
    request === null ||
    typeof guildId !== 'string' ||
    !isSnowflake(guildId) ||
    (request.query !== undefined && typeof request.query !== 'string') ||
    (request.limit !== undefined && !Number.isInteger(request.limit)) ||
    (userIds !== undefined &&
      !(Array.isArray(userIds) && userIds.length <= 100 && userIds.every(isSnowflake))) ||
    (nonce !== undefined &&
      (typeof nonce !== 'string' || Buffer.byteLength(nonce) > GUILD_MEMBERS_NONCE_MAX_BYTES))
  ) {
    connection.close(GatewayCloseCodes.DecodeError, 'Invalid Request Guild Members payload');
    return;
  }
  const query = (request.query as string | undefined) ?? '';
  const limit = (request.limit as number | undefined) ?? 0;
  const wantsAll = userIds === undefined && query === '' && limit === 0;
  if (wantsAll && (session.intents & GatewayIntents.GuildMembers) === 0) {
    connection.close(GatewayCloseCodes.DisallowedIntents, 'GUILD_MEMBERS is required to request all members');
    return;
  }
  if (!session.guildIds.has(guildId)) return;
  const now = gateway.clock.now();
  if (wantsAll && isInEffect('requestAllGuildMembersLimitAllServers', now)) {
    const retryAfter = await gateway.spendAllMembersRequest(session.identity.userId, guildId);
    if (retryAfter !== undefined) {
      record(session, 'RATE_LIMITED', {
        opcode: GatewayOpcodes.RequestGuildMembers,
        retry_after: retryAfter,
        meta: { guild_id: guildId, ...(nonce !== undefined ? { nonce } : {}) },
      });
      return;
    }
  }
  const members = await gateway.findMembers(guildId, {
    ...(query ? { query } : {}),
    ...(userIds ? { userIds: userIds as string[] } : {}),
    limit: userIds ? 100 : Math.min(limit, query ? 100 : limit),
  });
  const notFound = userIds
    ? (userIds as string[]).filter((id) => !members.some((m) => m.user.id === id))
    : [];
  const chunkSize = 1000;
  const chunkCount = Math.max(1, Math.ceil(members.length / chunkSize));
  for (let index = 0; index < chunkCount; index++) {
    record(session, 'GUILD_MEMBERS_CHUNK', {
      guild_id: guildId,
      members: members.slice(index * chunkSize, (index + 1) * chunkSize),
      chunk_index: index,
      chunk_count: chunkCount,
      ...(index === 0 && notFound.length > 0 ? { not_found: notFound } : {}),
      ...(nonce !== undefined ? { nonce } : {}),
    });
  }
}
