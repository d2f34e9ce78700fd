import type { Insertable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type {
  AuditLogEntriesTable,
  GuildMembersTable,
  GuildRolesTable,
  GuildsTable,
} from '../../storage/schema.js';

export async function insertGuild(db: Executor, row: Insertable<GuildsTable>): Promise<void> {
  await db.insertInto('guilds').values(row).execute();
}

export async function userExists(db: Executor, userId: string): Promise<boolean> {
  return (
    (await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined
  );
}

export async function insertMember(db: Executor, row: Insertable<GuildMembersTable>): Promise<void> {
  await db.insertInto('guild_members').values(row).execute();
}

/** The guilds a user is in, by id, one page. */
export function listUserGuilds(
  db: Executor,
  userId: string,
  page: { before?: string | undefined; after?: string | undefined; limit: number },
) {
  let query = db
    .selectFrom('guild_members')
    .innerJoin('guilds', 'guilds.id', 'guild_members.guild_id')
    .select([
      'guilds.id',
      'guilds.name',
      'guilds.icon',
      'guilds.banner',
      'guilds.owner_id',
      'guilds.features',
      'guild_members.permissions',
    ])
    .select((eb) =>
      eb
        .selectFrom('guild_members as m')
        .select((inner) => inner.fn.countAll<number | string>().as('n'))
        .whereRef('m.guild_id', '=', 'guilds.id')
        .as('member_count'),
    )
    .where('guild_members.user_id', '=', userId);
  // Ids are snowflake strings of varying length: compare by length, then text, to order them as numbers.
  if (page.after !== undefined) {
    const after = page.after;
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('length', ['guilds.id']), '>', after.length),
        eb.and([eb(eb.fn('length', ['guilds.id']), '=', after.length), eb('guilds.id', '>', after)]),
      ]),
    );
  }
  if (page.before !== undefined) {
    const before = page.before;
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('length', ['guilds.id']), '<', before.length),
        eb.and([eb(eb.fn('length', ['guilds.id']), '=', before.length), eb('guilds.id', '<', before)]),
      ]),
    );
  }
  return query
    .orderBy((eb) => eb.fn('length', ['guilds.id']))
    .orderBy('guilds.id')
    .limit(page.limit)
    .execute();
}

/** Members of a guild with their users, for Request Guild Members (PROTOCOL.md §D.6). */
export function listMembers(
  db: Executor,
  guildId: string,
  filter: { query?: string; userIds?: readonly string[]; limit: number },
) {
  let query = db
    .selectFrom('guild_members')
    .innerJoin('users', 'users.id', 'guild_members.user_id')
    .select(['guild_members.user_id', 'guild_members.joined_at'])
    .where('guild_members.guild_id', '=', guildId);
  if (filter.userIds)
    query = query.where('guild_members.user_id', 'in', filter.userIds.length ? filter.userIds : ['']);
  if (filter.query) {
    const prefix = `${filter.query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb(eb.fn('lower', ['users.username']), 'like', prefix));
  }
  return query.orderBy('guild_members.user_id').limit(filter.limit).execute();
}

// ---- a test entitlement may be granted to a guild ----
export async function guildExists(db: Executor, guildId: string): Promise<boolean> {
  return (
    (await db.selectFrom('guilds').select('id').where('id', '=', guildId).executeTakeFirst()) !== undefined
  );
}

// ---- What the permission computation needs (permissions.ts) ----

export function findGuild(db: Executor, guildId: string) {
  return db.selectFrom('guilds').selectAll().where('id', '=', guildId).executeTakeFirst();
}

export function findMember(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('guild_members')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** The @everyone role and the member's roles, with the ids and positions hierarchy checks need. */
export function memberRoles(db: Executor, guildId: string, userId: string) {
  return db
    .selectFrom('guild_roles')
    .select(['guild_roles.id', 'guild_roles.permissions', 'guild_roles.position'])
    .where('guild_roles.guild_id', '=', guildId)
    .where((eb) =>
      eb.or([
        eb('guild_roles.id', '=', guildId),
        eb(
          'guild_roles.id',
          'in',
          eb
            .selectFrom('guild_member_roles')
            .select('guild_member_roles.role_id')
            .where('guild_member_roles.guild_id', '=', guildId)
            .where('guild_member_roles.user_id', '=', userId),
        ),
      ]),
    )
    .execute();
}

export function findChannelForAccess(db: Executor, channelId: string) {
  return db
    .selectFrom('channels')
    .select(['id', 'guild_id', 'type', 'parent_id'])
    .where('id', '=', channelId)
    .executeTakeFirst();
}

export function channelOverwrites(db: Executor, channelId: string) {
  return db.selectFrom('channel_overwrites').selectAll().where('channel_id', '=', channelId).execute();
}

export async function insertRole(db: Executor, row: Insertable<GuildRolesTable>): Promise<void> {
  await db.insertInto('guild_roles').values(row).execute();
}

export async function insertAuditLogEntry(
  db: Executor,
  row: Insertable<AuditLogEntriesTable>,
): Promise<void> {
  await db.insertInto('audit_log_entries').values(row).execute();
}
