import { ALL_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS } from '@hearth/protocol';
import type { Static } from 'typebox';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import { parse } from '../../kernel/validation.js';
import type { Storage } from '../../storage/database.js';
import { ListMyGuildsQuery, type MyGuildObject, NewGuild } from './schemas.js';
import * as store from './store.js';

/** Guilds (servers). This first part serves the current user's guild list; the guild issue builds the rest. */
export class GuildsService {
  readonly #deps: { storage: Storage; clock: Clock; snowflakes: SnowflakeGenerator };

  constructor(deps: { storage: Storage; clock: Clock; snowflakes: SnowflakeGenerator }) {
    this.#deps = deps;
  }

  async createGuild(ownerId: string, input: unknown): Promise<{ id: string }> {
    const { name, banner = null } = parse(NewGuild, input);
    const { storage, clock, snowflakes } = this.#deps;
    const id = snowflakes.next();
    const now = clock.now();
    if (!(await store.userExists(storage.db, ownerId))) throw new HearthError('UnknownUser');
    await storage.transaction(async (tx) => {
      await store.insertGuild(tx, {
        id,
        name,
        icon: null,
        banner,
        owner_id: ownerId,
        features: '[]',
        created_at: now,
      });
      // The @everyone role shares the guild's id (GUILDS.md §1.4).
      await store.insertRole(tx, {
        id,
        guild_id: id,
        name: '@everyone',
        permissions: DEFAULT_EVERYONE_PERMISSIONS.toString(),
        color: 0,
        secondary_color: null,
        tertiary_color: null,
        hoist: 0,
        icon: null,
        unicode_emoji: null,
        position: 0,
        managed: 0,
        mentionable: 0,
        bot_id: null,
        integration_id: null,
        created_at: now,
      });
      await store.insertMember(tx, { guild_id: id, user_id: ownerId, joined_at: now });
    });
    return { id };
  }

  async addMember(guildId: string, userId: string): Promise<void> {
    await store.insertMember(this.#deps.storage.db, {
      guild_id: guildId,
      user_id: userId,
      joined_at: this.#deps.clock.now(),
    });
  }

  /** The ids of the guilds a user is in (what a gateway session can see). */
  async guildIdsOf(userId: string): Promise<string[]> {
    const rows = await store.listUserGuilds(this.#deps.storage.db, userId, { limit: 100_000 });
    return rows.map((row) => row.id);
  }

  /** Members matching a name prefix or ids, at most `limit` (0: all), for Request Guild Members. */
  async findMembers(
    guildId: string,
    filter: { query?: string; userIds?: readonly string[]; limit: number },
  ): Promise<Array<{ userId: string; joinedAt: number }>> {
    const rows = await store.listMembers(this.#deps.storage.db, guildId, {
      ...filter,
      limit: filter.limit === 0 ? 1_000_000 : filter.limit,
    });
    return rows.map((row) => ({ userId: row.user_id, joinedAt: Number(row.joined_at) }));
  }

  /** GET /users/@me/guilds: each guild carries `banner` (seed). */
  async listUserGuilds(userId: string, query: unknown): Promise<Static<typeof MyGuildObject>[]> {
    const { before, after, limit = 200, with_counts = false } = parse(ListMyGuildsQuery, query ?? {});
    const rows = await store.listUserGuilds(this.#deps.storage.db, userId, { before, after, limit });
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      icon: row.icon,
      banner: row.banner,
      owner: row.owner_id === userId,
      // The owner holds every permission, whatever the member row says.
      permissions: row.owner_id === userId ? ALL_PERMISSIONS.toString() : row.permissions,
      features: JSON.parse(row.features) as string[],
      ...(with_counts ? { approximate_member_count: Number(row.member_count ?? 0) } : {}),
    }));
  }

  // ---- Entitlements ----
  async guildExists(guildId: string): Promise<boolean> {
    return store.guildExists(this.#deps.storage.db, guildId);
  }
}
