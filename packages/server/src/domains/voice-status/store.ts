import { VOICE_STATUS_CHANNEL_TYPES } from '@hearth/protocol';
import type { Selectable } from 'kysely';
import type { Engine, Executor } from '../../storage/database.js';
import type { VoiceChannelStatusesTable } from '../../storage/schema.js';

export type VoiceChannelStatusRow = Selectable<VoiceChannelStatusesTable>;

/** The fields of a channel the voice status needs: its guild and its type. */
export function findChannel(db: Executor, channelId: string) {
  return db
    .selectFrom('channels')
    .select(['id', 'guild_id', 'type'])
    .where('id', '=', channelId)
    .executeTakeFirst();
}

export function findStatus(db: Executor, channelId: string): Promise<VoiceChannelStatusRow | undefined> {
  return db
    .selectFrom('voice_channel_statuses')
    .selectAll()
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
}

/** The guild's channels that carry a voice status, with their status and start time (null when unset). */
export function voiceChannelsOf(db: Executor, guildId: string) {
  return db
    .selectFrom('channels')
    .leftJoin('voice_channel_statuses', 'voice_channel_statuses.channel_id', 'channels.id')
    .select(['channels.id', 'voice_channel_statuses.status', 'voice_channel_statuses.voice_start_time'])
    .where('channels.guild_id', '=', guildId)
    .where('channels.type', 'in', [...VOICE_STATUS_CHANNEL_TYPES])
    .orderBy('channels.position')
    .orderBy('channels.id')
    .execute();
}

/** Writes a channel's row; one with neither a status nor a start time is removed. */
export async function saveStatus(db: Executor, row: VoiceChannelStatusRow): Promise<void> {
  if (row.status === null && row.voice_start_time === null) {
    await db.deleteFrom('voice_channel_statuses').where('channel_id', '=', row.channel_id).execute();
    return;
  }
  const { channel_id: _channel, ...changes } = row;
  await db
    .insertInto('voice_channel_statuses')
    .values(row)
    .onConflict((oc) => oc.column('channel_id').doUpdateSet(changes))
    .execute();
}

/**
 * Locks a channel's row for the rest of the transaction on PostgreSQL, so that concurrent joins and leaves
 * count a channel's occupants one after another (SQLite's single writer already does).
 */
export async function lockChannel(db: Executor, channelId: string, engine: Engine): Promise<void> {
  if (engine !== 'postgres') return;
  await db.selectFrom('channels').select('id').where('id', '=', channelId).forUpdate().execute();
}
