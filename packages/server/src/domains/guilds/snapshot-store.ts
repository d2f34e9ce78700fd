import type { Executor } from '../../storage/database.js';

/** The reads behind GUILD_CREATE and Request Guild Members: whole guilds, in few queries. */

export { findGuild as guildRow, guildRoles } from './store.js';

export function guildChannels(db: Executor, guildId: string) {
  return db
    .selectFrom('channels')
    .selectAll()
    .where('guild_id', '=', guildId)
    .orderBy('position')
    .orderBy('id')
    .execute();
}

export function guildOverwrites(db: Executor, guildId: string) {
  return db
    .selectFrom('channel_overwrites')
    .innerJoin('channels', 'channels.id', 'channel_overwrites.channel_id')
    .selectAll('channel_overwrites')
    .where('channels.guild_id', '=', guildId)
    .execute();
}

export function voiceStates(db: Executor, guildId: string) {
  return db.selectFrom('voice_states').selectAll().where('guild_id', '=', guildId).execute();
}

export async function memberCount(db: Executor, guildId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Member rows of these users, or of everyone (at most `limit`) when `userIds` is undefined. */
export function members(
  db: Executor,
  guildId: string,
  filter: { userIds?: readonly string[]; query?: string; limit: number },
) {
  let query = db
    .selectFrom('guild_members')
    .innerJoin('users', 'users.id', 'guild_members.user_id')
    .selectAll('guild_members')
    .where('guild_members.guild_id', '=', guildId);
  if (filter.userIds) query = query.where('guild_members.user_id', 'in', [...filter.userIds, '']);
  if (filter.query) {
    const prefix = `${filter.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('lower', ['users.username']), 'like', prefix),
        eb(eb.fn('lower', ['guild_members.nick']), 'like', prefix),
      ]),
    );
  }
  return query.orderBy('guild_members.user_id').limit(filter.limit).execute();
}

/** The role ids of these members (every member of the guild when `userIds` is undefined). */
export function memberRoleIds(db: Executor, guildId: string, userIds: readonly string[] | undefined) {
  let query = db
    .selectFrom('guild_member_roles')
    .select(['user_id', 'role_id'])
    .where('guild_id', '=', guildId);
  if (userIds) query = query.where('user_id', 'in', [...userIds, '']);
  return query.execute();
}

/** Every guild with its member count, by id (operators' list). */
export function allGuilds(db: Executor) {
  return db
    .selectFrom('guilds')
    .select(['guilds.id', 'guilds.name', 'guilds.owner_id'])
    .select((eb) =>
      eb
        .selectFrom('guild_members as m')
        .select((inner) => inner.fn.countAll<number | string>().as('n'))
        .whereRef('m.guild_id', '=', 'guilds.id')
        .as('member_count'),
    )
    .orderBy((eb) => eb.fn('length', ['guilds.id']))
    .orderBy('guilds.id')
    .execute();
}
