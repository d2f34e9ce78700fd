import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ChannelOverwritesTable, ChannelsTable } from '../../storage/schema.js';

export type ChannelRow = Selectable<ChannelsTable>;
export type OverwriteRow = Selectable<ChannelOverwritesTable>;

/** A guild channel by id (DM channels live in their own table, so they are never found here). */
export function findChannel(db: Executor, channelId: string): Promise<ChannelRow | undefined> {
  return db.selectFrom('channels').selectAll().where('id', '=', channelId).executeTakeFirst();
}

export function guildChannels(db: Executor, guildId: string): Promise<ChannelRow[]> {
  return db.selectFrom('channels').selectAll().where('guild_id', '=', guildId).execute();
}

/** Every overwrite of every channel of a guild, in one query. */
export function guildOverwrites(db: Executor, guildId: string): Promise<OverwriteRow[]> {
  return db
    .selectFrom('channel_overwrites')
    .innerJoin('channels', 'channels.id', 'channel_overwrites.channel_id')
    .selectAll('channel_overwrites')
    .where('channels.guild_id', '=', guildId)
    .execute();
}

export function channelOverwrites(db: Executor, channelId: string): Promise<OverwriteRow[]> {
  return db.selectFrom('channel_overwrites').selectAll().where('channel_id', '=', channelId).execute();
}

export async function countGuildChannels(db: Executor, guildId: string): Promise<number> {
  const row = await db
    .selectFrom('channels')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The children of a category, leaving one channel out (the one being moved into it). */
export async function countChildren(db: Executor, parentId: string, except?: string): Promise<number> {
  let query = db
    .selectFrom('channels')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('parent_id', '=', parentId);
  if (except !== undefined) query = query.where('id', '!=', except);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

export async function maxPosition(db: Executor, guildId: string): Promise<number | null> {
  const row = await db
    .selectFrom('channels')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('guild_id', '=', guildId)
    .executeTakeFirst();
  return row?.max === null || row?.max === undefined ? null : Number(row.max);
}

export async function insertChannel(db: Executor, row: Insertable<ChannelsTable>): Promise<void> {
  await db.insertInto('channels').values(row).execute();
}

export async function updateChannel(
  db: Executor,
  channelId: string,
  changes: Updateable<ChannelsTable>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('channels').set(changes).where('id', '=', channelId).execute();
}

export async function deleteChannel(db: Executor, channelId: string): Promise<void> {
  await db.deleteFrom('channel_overwrites').where('channel_id', '=', channelId).execute();
  await db.deleteFrom('channels').where('id', '=', channelId).execute();
}

/** Moves a category's children out of it; answers their ids. */
export async function orphanChildren(db: Executor, parentId: string): Promise<string[]> {
  const rows = await db.selectFrom('channels').select('id').where('parent_id', '=', parentId).execute();
  await db.updateTable('channels').set({ parent_id: null }).where('parent_id', '=', parentId).execute();
  return rows.map((row) => row.id);
}

export async function replaceOverwrites(
  db: Executor,
  channelId: string,
  rows: ReadonlyArray<Insertable<ChannelOverwritesTable>>,
): Promise<void> {
  await db.deleteFrom('channel_overwrites').where('channel_id', '=', channelId).execute();
  if (rows.length > 0)
    await db
      .insertInto('channel_overwrites')
      .values([...rows])
      .execute();
}

export async function upsertOverwrite(db: Executor, row: Insertable<ChannelOverwritesTable>): Promise<void> {
  await db
    .insertInto('channel_overwrites')
    .values(row)
    .onConflict((oc) =>
      oc
        .columns(['channel_id', 'target_id'])
        .doUpdateSet({ type: row.type, allow: row.allow, deny: row.deny }),
    )
    .execute();
}

export async function deleteOverwrite(db: Executor, channelId: string, targetId: string): Promise<void> {
  await db
    .deleteFrom('channel_overwrites')
    .where('channel_id', '=', channelId)
    .where('target_id', '=', targetId)
    .execute();
}

/** The guild's roles among `ids`, with the names audit entries of role overwrites carry. */
export function guildRolesAmong(db: Executor, guildId: string, ids: readonly string[]) {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('guild_roles')
    .select(['id', 'name'])
    .where('guild_id', '=', guildId)
    .where('id', 'in', [...ids])
    .execute();
}

/** The guild's members among `ids`. */
export async function guildMembersAmong(db: Executor, guildId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('guild_members')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .where('user_id', 'in', [...ids])
    .execute();
  return rows.map((row) => row.user_id);
}

/** The guild settings that may name a channel, cleared when it is deleted (GUILDS.md §3.1). */
export const GUILD_CHANNEL_SETTINGS = [
  'afk_channel_id',
  'system_channel_id',
  'rules_channel_id',
  'public_updates_channel_id',
  'safety_alerts_channel_id',
] as const;

/** Clears every guild setting that names the channel; answers whether one did. */
export async function clearGuildChannelSettings(
  db: Executor,
  guildId: string,
  channelId: string,
): Promise<boolean> {
  let cleared = false;
  for (const column of GUILD_CHANNEL_SETTINGS) {
    const result = await db
      .updateTable('guilds')
      .set({ [column]: null })
      .where('id', '=', guildId)
      .where(column, '=', channelId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) cleared = true;
  }
  return cleared;
}

export function guildRoles(db: Executor, guildId: string) {
  return db.selectFrom('guild_roles').selectAll().where('guild_id', '=', guildId).execute();
}
