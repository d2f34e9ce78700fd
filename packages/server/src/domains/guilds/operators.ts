import type { Bus } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import type { Executor, Storage } from '../../storage/database.js';
import { toUserObject, type User } from '../accounts/service.js';
import * as installStore from './bot-install-store.js';
import { type GuildObject, toChannelObject, toGuildObject, toMemberObject, toRoleObject } from './objects.js';
import * as store from './snapshot-store.js';

export interface GuildSummary {
  id: string;
  name: string;
  owner_id: string;
  member_count: number;
}

/** What operators do to guilds from the CLI (`hearth guilds list|show|add-member`). */
export class GuildOperators {
  readonly #deps: OperatorDeps;

  constructor(deps: OperatorDeps) {
    this.#deps = deps;
  }

  async list(): Promise<GuildSummary[]> {
    const rows = await store.allGuilds(this.#deps.storage.db);
    return rows.map((row) => ({ ...row, member_count: Number(row.member_count ?? 0) }));
  }

  /** The guild object with its channels and member count; 10004 when there is none. */
  async show(
    guildId: string,
  ): Promise<GuildObject & { member_count: number; channels: ReturnType<typeof toChannelObject>[] }> {
    const db = this.#deps.storage.db;
    const guild = await store.guildRow(db, guildId);
    if (!guild) throw new HearthError('UnknownGuild');
    const [roles, channels, overwrites, memberCount] = await Promise.all([
      store.guildRoles(db, guildId),
      store.guildChannels(db, guildId),
      store.guildOverwrites(db, guildId),
      store.memberCount(db, guildId),
    ]);
    return {
      ...toGuildObject(guild, roles.map(toRoleObject), []),
      member_count: memberCount,
      channels: channels.map((channel) =>
        toChannelObject(
          channel,
          overwrites.filter((row) => row.channel_id === channel.id),
        ),
      ),
    };
  }

  /** Adds a user to a guild (GUILD_MEMBER_ADD to the guild); a member already there stays as is. */
  async addMember(guildId: string, userId: string): Promise<{ added: boolean }> {
    const { storage, clock, bus } = this.#deps;
    const event = await storage.transaction(async (tx) => {
      if (!(await store.guildRow(tx, guildId))) throw new HearthError('UnknownGuild');
      const user = await this.#deps.user(tx, userId);
      if (!user) throw new HearthError('UnknownUser');
      const [existing] = await store.members(tx, guildId, { userIds: [userId], limit: 1 });
      if (existing) return undefined;
      await installStore.insertMember(tx, guildId, userId, clock.now());
      const [row] = await store.members(tx, guildId, { userIds: [userId], limit: 1 });
      if (!row) return undefined;
      return { ...toMemberObject(row, [], toUserObject(user)), guild_id: guildId };
    });
    if (event) await bus.publish({ type: 'GUILD_MEMBER_ADD', data: event, audience: { guildId } });
    return { added: event !== undefined };
  }
}

export interface OperatorDeps {
  storage: Storage;
  clock: Clock;
  bus: Bus;
  user: (db: Executor, id: string) => Promise<User | undefined>;
}
