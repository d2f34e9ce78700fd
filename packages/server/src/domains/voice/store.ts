import type { Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type {
  DmCallsTable,
  DmVoiceStatesTable,
  LobbyVoiceStatesTable,
  VoiceCallsTable,
  VoiceTokensTable,
} from '../../storage/schema.js';

export type VoiceCallRow = Selectable<VoiceCallsTable>;
export type VoiceTokenRow = Selectable<VoiceTokensTable>;

export function findCall(db: Executor, channelId: string): Promise<VoiceCallRow | undefined> {
  return db.selectFrom('voice_calls').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
}

/** Claims a call for a node unless another holds it; answers the row as it stands after. */
export async function claimCall(db: Executor, row: VoiceCallRow): Promise<VoiceCallRow> {
  await db
    .insertInto('voice_calls')
    .values(row)
    .onConflict((oc) => oc.column('channel_id').doNothing())
    .execute();
  return (await findCall(db, row.channel_id)) ?? row;
}

/** Takes a call over from a node that stopped refreshing it (`alive_at` before `staleBefore`). */
export async function takeOverCall(db: Executor, row: VoiceCallRow, staleBefore: number): Promise<void> {
  await db
    .updateTable('voice_calls')
    .set({ node_id: row.node_id, endpoint: row.endpoint, alive_at: row.alive_at })
    .where('channel_id', '=', row.channel_id)
    .where('alive_at', '<', staleBefore)
    .execute();
}

export async function refreshCalls(db: Executor, nodeId: string, channelIds: string[], now: number) {
  if (channelIds.length === 0) return;
  await db
    .updateTable('voice_calls')
    .set({ alive_at: now })
    .where('node_id', '=', nodeId)
    .where('channel_id', 'in', channelIds)
    .execute();
}

export async function releaseCall(db: Executor, channelId: string, nodeId: string): Promise<void> {
  await db
    .deleteFrom('voice_calls')
    .where('channel_id', '=', channelId)
    .where('node_id', '=', nodeId)
    .execute();
}

/** Issues a token; the user's earlier tokens for the same server go (one live token per user and server). */
export async function replaceToken(db: Executor, row: VoiceTokenRow, now: number): Promise<void> {
  await db
    .deleteFrom('voice_tokens')
    .where((eb) =>
      eb.or([
        eb.and([eb('user_id', '=', row.user_id), eb('server_id', '=', row.server_id)]),
        eb('expires_at', '<', now),
      ]),
    )
    .execute();
  await db.insertInto('voice_tokens').values(row).execute();
}

export function findToken(db: Executor, tokenHash: string): Promise<VoiceTokenRow | undefined> {
  return db.selectFrom('voice_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** The user's live token for the server, if any: a change of channel needs a new one. */
export function tokenOf(db: Executor, userId: string, serverId: string): Promise<VoiceTokenRow | undefined> {
  return db
    .selectFrom('voice_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .where('server_id', '=', serverId)
    .executeTakeFirst();
}

/** A moderator moved the member: its token now names the channel it is in (for Resume). */
export async function moveToken(db: Executor, userId: string, serverId: string, channelId: string) {
  await db
    .updateTable('voice_tokens')
    .set({ channel_id: channelId })
    .where('user_id', '=', userId)
    .where('server_id', '=', serverId)
    .execute();
}

export async function deleteTokens(db: Executor, userId: string, serverId: string): Promise<void> {
  await db
    .deleteFrom('voice_tokens')
    .where('user_id', '=', userId)
    .where('server_id', '=', serverId)
    .execute();
}

export type LobbyVoiceStateRow = Selectable<LobbyVoiceStatesTable>;

export function lobbyCallsOfSession(db: Executor, userId: string, sessionId: string) {
  return db
    .selectFrom('lobby_voice_states')
    .selectAll()
    .where('user_id', '=', userId)
    .where('session_id', '=', sessionId)
    .execute();
}

/** Every lobby call the user is in, whichever session joined it. */
export function lobbyCallsOfUser(db: Executor, userId: string) {
  return db.selectFrom('lobby_voice_states').selectAll().where('user_id', '=', userId).execute();
}

export function findLobbyVoiceState(db: Executor, lobbyId: string, userId: string) {
  return db
    .selectFrom('lobby_voice_states')
    .selectAll()
    .where('lobby_id', '=', lobbyId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export async function deleteLobbyVoiceState(db: Executor, lobbyId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('lobby_voice_states')
    .where('lobby_id', '=', lobbyId)
    .where('user_id', '=', userId)
    .execute();
}

export async function upsertLobbyVoiceState(db: Executor, row: LobbyVoiceStateRow): Promise<void> {
  await db
    .insertInto('lobby_voice_states')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['lobby_id', 'user_id']).doUpdateSet({
        session_id: row.session_id,
        self_mute: row.self_mute,
        self_deaf: row.self_deaf,
      }),
    )
    .execute();
}

export type DmCallRow = Selectable<DmCallsTable>;
export type DmVoiceStateRow = Selectable<DmVoiceStatesTable>;

export function findDmCall(db: Executor, channelId: string): Promise<DmCallRow | undefined> {
  return db.selectFrom('dm_calls').selectAll().where('channel_id', '=', channelId).executeTakeFirst();
}

/** Starts the DM's call unless one already is (two first joiners at once): answers whether this one did. */
export async function claimDmCall(db: Executor, row: DmCallRow): Promise<boolean> {
  const result = await db
    .insertInto('dm_calls')
    .values(row)
    .onConflict((oc) => oc.column('channel_id').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function updateDmCall(
  db: Executor,
  channelId: string,
  changes: Partial<Pick<DmCallRow, 'message_id'>>,
): Promise<void> {
  await db.updateTable('dm_calls').set(changes).where('channel_id', '=', channelId).execute();
}

/** The call ends: it and whom it still rang go. */
export async function deleteDmCall(db: Executor, channelId: string): Promise<void> {
  await db.deleteFrom('dm_call_rings').where('channel_id', '=', channelId).execute();
  await db.deleteFrom('dm_calls').where('channel_id', '=', channelId).execute();
}

/** Whom the DM's call rings, in id order (CALL_CREATE / CALL_UPDATE `ringing`). */
export async function ringingIn(db: Executor, channelId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('dm_call_rings')
    .select('user_id')
    .where('channel_id', '=', channelId)
    .orderBy('user_id')
    .execute();
  return rows.map((row) => row.user_id);
}

/** Rings these users (again: a ring going on starts over) until `expiresAt`. */
export async function ring(
  db: Executor,
  channelId: string,
  userIds: readonly string[],
  expiresAt: number,
): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insertInto('dm_call_rings')
    .values(userIds.map((user_id) => ({ channel_id: channelId, user_id, expires_at: expiresAt })))
    .onConflict((oc) => oc.columns(['channel_id', 'user_id']).doUpdateSet({ expires_at: expiresAt }))
    .execute();
}

/** Stops ringing these users; answers how many were being rung. */
export async function stopRinging(
  db: Executor,
  channelId: string,
  userIds: readonly string[],
): Promise<number> {
  if (userIds.length === 0) return 0;
  const result = await db
    .deleteFrom('dm_call_rings')
    .where('channel_id', '=', channelId)
    .where('user_id', 'in', userIds)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The calls with a ring that has run out by `now`. */
export async function callsWithExpiredRings(db: Executor, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('dm_call_rings')
    .select('channel_id')
    .distinct()
    .where('expires_at', '<=', now)
    .execute();
  return rows.map((row) => row.channel_id);
}

/** Removes the call's rings that have run out by `now`; answers how many. */
export async function expireRings(db: Executor, channelId: string, now: number): Promise<number> {
  const result = await db
    .deleteFrom('dm_call_rings')
    .where('channel_id', '=', channelId)
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The calls going on in these DM channels. */
export async function dmCallsIn(db: Executor, channelIds: readonly string[]): Promise<DmCallRow[]> {
  if (channelIds.length === 0) return [];
  return db.selectFrom('dm_calls').selectAll().where('channel_id', 'in', channelIds).execute();
}

export function findDmVoiceState(db: Executor, userId: string): Promise<DmVoiceStateRow | undefined> {
  return db.selectFrom('dm_voice_states').selectAll().where('user_id', '=', userId).executeTakeFirst();
}

/** Who is in the DM's call, in a stable order (for CALL_CREATE / CALL_UPDATE `voice_states`). */
export function dmVoiceStatesOf(db: Executor, channelId: string): Promise<DmVoiceStateRow[]> {
  return db
    .selectFrom('dm_voice_states')
    .selectAll()
    .where('channel_id', '=', channelId)
    .orderBy('user_id')
    .execute();
}

export async function upsertDmVoiceState(db: Executor, row: DmVoiceStateRow): Promise<void> {
  await db
    .insertInto('dm_voice_states')
    .values(row)
    .onConflict((oc) =>
      oc.column('user_id').doUpdateSet({
        channel_id: row.channel_id,
        session_id: row.session_id,
        self_mute: row.self_mute,
        self_deaf: row.self_deaf,
        self_video: row.self_video,
      }),
    )
    .execute();
}

export async function deleteDmVoiceState(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('dm_voice_states').where('user_id', '=', userId).execute();
}
