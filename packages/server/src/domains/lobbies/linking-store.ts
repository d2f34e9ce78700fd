import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { LobbyChannelLinksTable } from '../../storage/schema.js';

export type LinkRow = Selectable<LobbyChannelLinksTable>;

/** Asked for every lobby message (is it forwarded?): prepared. */
export const findLinkOfLobby: (db: Executor, lobbyId: string) => Promise<LinkRow | undefined> = prepared(
  1,
  (db, lobbyId: string) => db.selectFrom('lobby_channel_links').selectAll().where('lobby_id', '=', lobbyId),
);

export function findLinkOfChannel(db: Executor, channelId: string): Promise<LinkRow | undefined> {
  return db
    .selectFrom('lobby_channel_links')
    .selectAll()
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
}

/** The links of a guild's channels (GetGuildChannels shows each channel's linked lobby). */
export function linksOfGuild(db: Executor, guildId: string): Promise<LinkRow[]> {
  return db.selectFrom('lobby_channel_links').selectAll().where('guild_id', '=', guildId).execute();
}

/** One link per lobby: a new channel replaces the lobby's former link. */
export async function putLink(db: Executor, row: Insertable<LobbyChannelLinksTable>): Promise<void> {
  await db.deleteFrom('lobby_channel_links').where('lobby_id', '=', row.lobby_id).execute();
  await db.insertInto('lobby_channel_links').values(row).execute();
}

export async function deleteLinkOfLobby(db: Executor, lobbyId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('lobby_channel_links')
    .where('lobby_id', '=', lobbyId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteLinkOfChannel(db: Executor, channelId: string): Promise<LinkRow | undefined> {
  const link = await findLinkOfChannel(db, channelId);
  if (link) await db.deleteFrom('lobby_channel_links').where('channel_id', '=', channelId).execute();
  return link;
}

/** A lobby message that also lives in the linked channel (same id on both sides). */
export async function setMessageChannel(db: Executor, messageId: string, channelId: string): Promise<void> {
  await db.updateTable('lobby_messages').set({ channel_id: channelId }).where('id', '=', messageId).execute();
}

export async function lobbyMessageExists(db: Executor, messageId: string): Promise<boolean> {
  const row = await db
    .selectFrom('lobby_messages')
    .select('id')
    .where('id', '=', messageId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes a channel message's copy from the lobby; answers whether there was one. */
export async function deleteLobbyCopy(db: Executor, lobbyId: string, messageId: string): Promise<boolean> {
  const result = await db
    .deleteFrom('lobby_messages')
    .where('lobby_id', '=', lobbyId)
    .where('id', '=', messageId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
