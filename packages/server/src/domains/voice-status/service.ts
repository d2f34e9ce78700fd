import {
  AuditLogEvents,
  type ChannelInfoChannel,
  type ChannelInfoField,
  type GatewayVoiceChannelStartTimeUpdateData,
  type GatewayVoiceChannelStatusUpdateData,
  PermissionFlags,
  VOICE_STATUS_CHANNEL_TYPES,
} from '@hearth/protocol';
import type { Bus, BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildAccess, MemberAccess } from '../guilds/access.js';
import type { AuditLog } from '../guilds/audit-log.js';
import { has } from '../guilds/permissions.js';
import type { VoiceChannelOccupancy } from '../guilds/voice-occupancy.js';
import { SetVoiceChannelStatus } from './schemas.js';
import * as store from './store.js';

const P = PermissionFlags;

export interface VoiceStatusDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  access: GuildAccess;
  auditLog: AuditLog;
  /** The voice channel a member is connected to in a guild (the guild domain's voice states). */
  connectedChannel(db: Executor, guildId: string, userId: string): Promise<string | undefined>;
}

/**
 * Voice channel status and voice start time (PROTOCOL.md §D.7): ephemeral data of a voice channel, never
 * part of the channel object. The status is set over REST; the start time follows who is connected, and a
 * channel that empties loses both (the platform calls them ephemeral). Both are read with gateway op 43.
 */
export class VoiceStatusService implements VoiceChannelOccupancy {
  readonly #deps: VoiceStatusDeps;

  constructor(deps: VoiceStatusDeps) {
    this.#deps = deps;
  }

  /**
   * PUT /channels/{id}/voice-status: SET_VOICE_CHANNEL_STATUS, plus MANAGE_CHANNELS unless the caller is
   * connected to the channel (seed, Endpoints). A change is audited (192 with the status, 193 when cleared)
   * and dispatched as VOICE_CHANNEL_STATUS_UPDATE; setting the status it already has changes nothing.
   */
  async setVoiceChannelStatus(
    userId: string,
    channelId: string,
    input: unknown,
    reason: string | null,
  ): Promise<void> {
    const body = parse(SetVoiceChannelStatus, input ?? {});
    const status = body.status ? body.status : null;
    const events = await this.#deps.storage.transaction(async (tx) => {
      const channel = await this.#channel(tx, channelId);
      const access = await this.#deps.access.member(tx, channel.guild_id, userId);
      await this.#requireSetter(tx, access, channel, userId);
      const row = (await store.findStatus(tx, channelId)) ?? emptyRow(channel);
      if (row.status === status) return [];
      await store.saveStatus(tx, { ...row, status });
      const audit = await this.#deps.auditLog.recordEvent(tx, {
        guildId: channel.guild_id,
        userId,
        targetId: channelId,
        actionType:
          status === null ? AuditLogEvents.VoiceChannelStatusDelete : AuditLogEvents.VoiceChannelStatusUpdate,
        ...(status === null ? {} : { options: { status } }),
        reason,
      });
      return [audit, statusUpdate(channel.guild_id, channelId, status)];
    });
    await this.#publish(events);
  }

  /**
   * The guild domain's voice states changed in these channels (inside its transaction): the first to
   * connect starts the voice session (`voice_start_time`, unix seconds); the last to leave ends it and
   * clears the status. Answers VOICE_CHANNEL_START_TIME_UPDATE / VOICE_CHANNEL_STATUS_UPDATE to publish.
   */
  async occupancyChanged(
    tx: Executor,
    guildId: string,
    channelIds: readonly string[],
    occupants: (channelId: string) => Promise<number>,
  ): Promise<BusEvent[]> {
    const events: BusEvent[] = [];
    // In id order, so that two moves between the same channels lock them in the same order.
    for (const channelId of [...channelIds].sort()) {
      const channel = await store.findChannel(tx, channelId);
      if (!channel || !VOICE_STATUS_CHANNEL_TYPES.includes(Number(channel.type))) continue;
      await store.lockChannel(tx, channelId, this.#deps.storage.engine);
      const occupied = (await occupants(channelId)) > 0;
      const row = (await store.findStatus(tx, channelId)) ?? emptyRow(channel);
      const started = row.voice_start_time !== null;
      if (occupied && !started) {
        const now = this.#deps.clock.now();
        await store.saveStatus(tx, { ...row, voice_start_time: now });
        events.push(startTimeUpdate(guildId, channelId, unixSeconds(now)));
      } else if (!occupied && (started || row.status !== null)) {
        await store.saveStatus(tx, { ...row, status: null, voice_start_time: null });
        if (started) events.push(startTimeUpdate(guildId, channelId, null));
        if (row.status !== null) events.push(statusUpdate(guildId, channelId, null));
      }
    }
    return events;
  }

  /**
   * Op 43 (Request Channel Info): the requested fields of the guild's voice channels the member can see,
   * unset ones null. 10004 / 50001 when the guild is unknown or the user not a member.
   */
  async channelInfo(
    userId: string,
    guildId: string,
    fields: ReadonlySet<ChannelInfoField>,
  ): Promise<ChannelInfoChannel[]> {
    const { db } = this.#deps.storage;
    const access = await this.#deps.access.member(db, guildId, userId);
    const channels: ChannelInfoChannel[] = [];
    for (const row of await store.voiceChannelsOf(db, guildId)) {
      if (!has(await this.#deps.access.permissionsIn(db, access, row.id), P.ViewChannel)) continue;
      const startedAt = row.voice_start_time === null ? null : unixSeconds(Number(row.voice_start_time));
      channels.push({
        id: row.id,
        ...(fields.has('status') ? { status: row.status ?? null } : {}),
        ...(fields.has('voice_start_time') ? { voice_start_time: startedAt } : {}),
      });
    }
    return channels;
  }

  // ---- Steps ----

  /** The channel; 10003 when there is none. */
  async #channel(db: Executor, channelId: string) {
    const channel = await store.findChannel(db, channelId);
    if (!channel) throw new HearthError('UnknownChannel');
    return channel;
  }

  /**
   * Who may set the status: one who sees the channel (50001), of a type that has one (50024), holding
   * SET_VOICE_CHANNEL_STATUS there, and MANAGE_CHANNELS too unless connected to it (50013).
   */
  async #requireSetter(
    tx: Executor,
    access: MemberAccess,
    channel: { id: string; guild_id: string; type: number },
    userId: string,
  ): Promise<void> {
    const permissions = await this.#deps.access.permissionsIn(tx, access, channel.id);
    if (!has(permissions, P.ViewChannel)) throw new HearthError('MissingAccess');
    if (!VOICE_STATUS_CHANNEL_TYPES.includes(Number(channel.type)))
      throw new HearthError('CannotExecuteOnChannelType');
    if (!has(permissions, P.SetVoiceChannelStatus)) throw new HearthError('MissingPermissions');
    const connected = (await this.#deps.connectedChannel(tx, channel.guild_id, userId)) === channel.id;
    if (!connected && !has(permissions, P.ManageChannels)) throw new HearthError('MissingPermissions');
  }

  async #publish(events: readonly BusEvent[]): Promise<void> {
    for (const event of events) await this.#deps.bus.publish(event);
  }
}

function emptyRow(channel: { id: string; guild_id: string }): store.VoiceChannelStatusRow {
  return { channel_id: channel.id, guild_id: channel.guild_id, status: null, voice_start_time: null };
}

function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** Members who cannot see the channel do not learn of it (the gateway filters by VIEW_CHANNEL there). */
function channelAudience(guildId: string, channelId: string) {
  return { guildId, channelId, permission: P.ViewChannel.toString() };
}

function statusUpdate(guildId: string, channelId: string, status: string | null): BusEvent {
  return {
    type: 'VOICE_CHANNEL_STATUS_UPDATE',
    data: { id: channelId, guild_id: guildId, status } satisfies GatewayVoiceChannelStatusUpdateData,
    audience: channelAudience(guildId, channelId),
  };
}

function startTimeUpdate(guildId: string, channelId: string, voiceStartTime: number | null): BusEvent {
  return {
    type: 'VOICE_CHANNEL_START_TIME_UPDATE',
    data: {
      id: channelId,
      guild_id: guildId,
      voice_start_time: voiceStartTime,
    } satisfies GatewayVoiceChannelStartTimeUpdateData,
    audience: channelAudience(guildId, channelId),
  };
}
