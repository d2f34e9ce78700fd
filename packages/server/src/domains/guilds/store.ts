import type { Insertable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type {
  AuditLogEntriesTable,
  ChannelsTable,
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

// ---- Guilds (GET/PATCH/DELETE /guilds/{id}, preview, leave) ----

export async function updateGuild(db: Executor, guildId: string, changes: Updateable<GuildsTable>) {
  await db.updateTable('guilds').set(changes).where('id', '=', guildId).execute();
}

/** Everything of the guild goes with it (every guild table cascades). */
export async function deleteGuild(db: Executor, guildId: string): Promise<void> {
  await db.deleteFrom('guilds').where('id', '=', guildId).execute();
}

export async function countMembers(db: Executor, guildId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function countUserGuilds(db: Executor, userId: string): Promise<number> {
  const row = await db
    .selectFrom('guild_members')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The member ids of a guild (who a presence count counts). */
export async function memberIds(db: Executor, guildId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('guild_members')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .execute();
  return rows.map((row) => row.user_id);
}

export async function deleteMember(db: Executor, guildId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('guild_member_roles')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
  await db
    .deleteFrom('guild_members')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
}

/** Which of `ids` are channels of the guild (for the settings that name a channel). */
export async function guildChannelIds(db: Executor, guildId: string, ids: readonly string[]) {
  if (ids.length === 0) return new Map<string, number>();
  const rows = await db
    .selectFrom('channels')
    .select(['id', 'type'])
    .where('guild_id', '=', guildId)
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [row.id, Number(row.type)]));
}

/** Every channel id of the guild (its deletion tells the channels' dependants). */
export async function allGuildChannelIds(db: Executor, guildId: string): Promise<string[]> {
  const rows = await db.selectFrom('channels').select('id').where('guild_id', '=', guildId).execute();
  return rows.map((row) => row.id);
}

export async function insertChannel(db: Executor, row: Insertable<ChannelsTable>): Promise<void> {
  await db.insertInto('channels').values(row).execute();
}

/** The guild's roles, lowest first (position, then id as the platform breaks ties). */
export function guildRoles(db: Executor, guildId: string) {
  return db
    .selectFrom('guild_roles')
    .selectAll()
    .where('guild_id', '=', guildId)
    .orderBy('position')
    .orderBy((eb) => eb.fn('length', ['id']))
    .orderBy('id')
    .execute();
}

/** A user who wears this guild's tag keeps the choice, but the system clears it (`identity_enabled` null). */
export async function clearPrimaryGuild(db: Executor, guildId: string, userId?: string): Promise<void> {
  let query = db
    .updateTable('users')
    .set({ primary_guild_enabled: null })
    .where('primary_guild_id', '=', guildId);
  if (userId !== undefined) query = query.where('id', '=', userId);
  await query.execute();
}

export async function setPrimaryGuild(
  db: Executor,
  userId: string,
  guildId: string | null,
  enabled: boolean | null,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ primary_guild_id: guildId, primary_guild_enabled: enabled === null ? null : enabled ? 1 : 0 })
    .where('id', '=', userId)
    .execute();
}

// ---- Audit log (GET /guilds/{id}/audit-logs) ----

/** Snowflake ids as numbers: by length, then text (ids are strings of varying length). */
export function listAuditLogEntries(
  db: Executor,
  guildId: string,
  filter: {
    userId?: string | undefined;
    targetId?: string | undefined;
    actionType?: number | undefined;
    before?: string | undefined;
    after?: string | undefined;
    limit: number;
  },
) {
  let query = db.selectFrom('audit_log_entries').selectAll().where('guild_id', '=', guildId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.targetId !== undefined) query = query.where('target_id', '=', filter.targetId);
  if (filter.actionType !== undefined) query = query.where('action_type', '=', filter.actionType);
  const { before, after } = filter;
  if (before !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('length', ['id']), '<', before.length),
        eb.and([eb(eb.fn('length', ['id']), '=', before.length), eb('id', '<', before)]),
      ]),
    );
  }
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([
        eb(eb.fn('length', ['id']), '>', after.length),
        eb.and([eb(eb.fn('length', ['id']), '=', after.length), eb('id', '>', after)]),
      ]),
    );
  }
  // With only `after`, the page is the entries just after it; it is still answered newest first.
  const direction = after !== undefined && before === undefined ? 'asc' : 'desc';
  return query
    .orderBy((eb) => eb.fn('length', ['id']), direction)
    .orderBy('id', direction)
    .limit(filter.limit)
    .execute();
}
