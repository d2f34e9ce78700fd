import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { VoiceStatesTable } from '../../storage/schema.js';

export type VoiceStateRow = Selectable<VoiceStatesTable>;

export function findVoiceState(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('voice_states')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function voiceStatesOf(db: Executor, guildId: string) {
  return db
    .selectFrom('voice_states')
    .selectAll()
    .where('guild_id', '=', guildId)
    .orderBy('user_id')
    .execute();
}

/** Who is in one voice channel. */
export function voiceStatesInChannel(db: Executor, channelId: string) {
  return db.selectFrom('voice_states').selectAll().where('channel_id', '=', channelId).execute();
}

export async function countInChannel(db: Executor, channelId: string): Promise<number> {
  const row = await db
    .selectFrom('voice_states')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The channel fields a voice state needs: its guild, its type and its user limit. */
export function findChannel(db: Executor, channelId: string) {
  return db
    .selectFrom('channels')
    .select(['id', 'guild_id', 'type', 'user_limit'])
    .where('id', '=', channelId)
    .executeTakeFirst();
}

export async function upsertVoiceState(db: Executor, row: Insertable<VoiceStatesTable>): Promise<void> {
  const { guild_id: _guild, user_id: _user, ...changes } = row;
  await db
    .insertInto('voice_states')
    .values(row)
    .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doUpdateSet(changes))
    .execute();
}

export async function updateVoiceState(
  db: Executor,
  guildId: string,
  userId: string,
  patch: Updateable<VoiceStatesTable>,
): Promise<void> {
  if (Object.keys(patch).length === 0) return;
  await db
    .updateTable('voice_states')
    .set(patch)
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteVoiceState(db: Executor, guildId: string, userId: string): Promise<void> {
  await db.deleteFrom('voice_states').where('guild_id', '=', guildId).where('user_id', '=', userId).execute();
}

/** The voice states a gateway session holds, across guilds. */
export function voiceStatesOfSession(db: Executor, userId: string, sessionId: string) {
  return db
    .selectFrom('voice_states')
    .selectAll()
    .where('user_id', '=', userId)
    .where('session_id', '=', sessionId)
    .execute();
}

/** Every guild voice state of the user (one per guild at most). */
export function voiceStatesOfUser(db: Executor, userId: string) {
  return db.selectFrom('voice_states').selectAll().where('user_id', '=', userId).execute();
}
