import { AuditLogEvents, GuildLimits, PermissionFlags } from '@hearth/protocol';
import { HearthError } from '../../kernel/errors.js';
import type { Executor } from '../../storage/database.js';
import { toUserObject } from '../accounts/service.js';
import type { MemberAccess } from './access.js';
import * as store from './bans-store.js';
import {
  audit,
  type GuildCaller,
  GuildEvents,
  type GuildModerationDeps,
  type MembersService,
  outranks,
} from './members.js';
import type { BulkBan, CreateBan, ListBansQuery } from './members-schemas.js';
import * as membersStore from './members-store.js';
import { basePermissions, has } from './permissions.js';

const P = PermissionFlags;

/**
 * What a ban asks of the messages a guild holds: delete the user's messages of the last `seconds`. The
 * messages issue registers its deleter here; until then the value is only recorded in the audit entry.
 */
export type BanMessageDeleter = (
  tx: Executor,
  ban: { guildId: string; userId: string; deleteMessageSeconds: number },
) => Promise<void>;

/** Guild bans (GUILDS.md §3.3): list, get, ban (a member or not), unban, bulk ban. */
export class BansService {
  readonly #deps: GuildModerationDeps & { members: MembersService };
  readonly #messageDeleters: BanMessageDeleter[] = [];

  constructor(deps: GuildModerationDeps & { members: MembersService }) {
    this.#deps = deps;
  }

  /** The seam for the messages issue: each deleter runs inside the ban's transaction. */
  onBanDeleteMessages(deleter: BanMessageDeleter): void {
    this.#messageDeleters.push(deleter);
  }

  /** GET /guilds/{id}/bans: BAN_MEMBERS; by user id, `after` forwards or `before` backwards. */
  async listBans(caller: GuildCaller, guildId: string, query: ListBansQuery) {
    const { db } = this.#deps.storage;
    await this.#requireBanMembers(db, guildId, caller.userId);
    const rows = await store.listBans(db, guildId, {
      before: query.before,
      after: query.after,
      limit: query.limit ?? GuildLimits.bansListDefault,
    });
    const users = await this.#deps.accounts.getUsers(rows.map((row) => row.user_id));
    return rows.flatMap((row) => {
      const user = users.get(row.user_id);
      return user ? [{ reason: row.reason, user: toUserObject(user) }] : [];
    });
  }

  /** GET /guilds/{id}/bans/{user_id}: 10026 when the user is not banned. */
  async getBan(caller: GuildCaller, guildId: string, userId: string) {
    const { db } = this.#deps.storage;
    await this.#requireBanMembers(db, guildId, caller.userId);
    const row = await store.findBan(db, guildId, userId);
    const user = row && (await this.#deps.accounts.getUser(userId));
    if (!row || !user) throw new HearthError('UnknownBan');
    return { reason: row.reason, user: toUserObject(user) };
  }

  /** PUT /guilds/{id}/bans/{user_id}: a member below the actor, or any known user who is not a member. */
  async ban(
    caller: GuildCaller,
    guildId: string,
    userId: string,
    input: CreateBan,
    reason: string | null,
  ): Promise<void> {
    const { storage, bus } = this.#deps;
    const seconds = deleteMessageSeconds(input);
    const events = new GuildEvents(guildId, bus);
    await storage.transaction(async (tx) => {
      const actor = await this.#requireBanMembers(tx, guildId, caller.userId);
      const failure = await this.#banOne(tx, events, actor, guildId, userId, seconds, reason);
      if (failure) throw new HearthError(failure);
    });
    await events.publish();
  }

  /** DELETE /guilds/{id}/bans/{user_id}: 10026 when there is no ban. */
  async unban(caller: GuildCaller, guildId: string, userId: string, reason: string | null): Promise<void> {
    const { storage, bus, accounts } = this.#deps;
    const events = new GuildEvents(guildId, bus);
    const user = await accounts.getUser(userId);
    await storage.transaction(async (tx) => {
      await this.#requireBanMembers(tx, guildId, caller.userId);
      if (!(await store.deleteBan(tx, guildId, userId))) throw new HearthError('UnknownBan');
      await audit(this.#deps.auditLog, tx, events, {
        guildId,
        userId: caller.userId,
        targetId: userId,
        actionType: AuditLogEvents.MemberBanRemove,
        reason,
      });
      events.push('GUILD_BAN_REMOVE', {
        guild_id: guildId,
        user: user ? toUserObject(user) : { id: userId },
      });
    });
    await events.publish();
  }

  /**
   * POST /guilds/{id}/bulk-ban: BAN_MEMBERS and MANAGE_GUILD; each user banned as PUT would, those that
   * cannot be (unknown, owner, above the actor, already banned) listed as failed; none banned is 500000.
   */
  async bulkBan(caller: GuildCaller, guildId: string, input: BulkBan, reason: string | null) {
    const { storage, bus, access, clock } = this.#deps;
    const seconds = input.delete_message_seconds ?? 0;
    const events = new GuildEvents(guildId, bus);
    const result = await storage.transaction(async (tx) => {
      const actor = await access.member(tx, guildId, caller.userId);
      if (!has(basePermissions(actor.input, clock.now()), P.BanMembers | P.ManageGuild))
        throw new HearthError('MissingPermissions');
      const banned: string[] = [];
      const failed: string[] = [];
      for (const userId of input.user_ids) {
        const already = await store.findBan(tx, guildId, userId);
        const failure =
          already !== undefined
            ? 'already'
            : await this.#banOne(tx, events, actor, guildId, userId, seconds, reason);
        (failure ? failed : banned).push(userId);
      }
      if (banned.length === 0) throw new HearthError('FailedToBanUsers');
      return { banned_users: banned, failed_users: failed };
    });
    await events.publish();
    return result;
  }

  // ---- Steps ----

  async #requireBanMembers(db: Executor, guildId: string, userId: string): Promise<MemberAccess> {
    return this.#deps.access.requireGuild(db, guildId, userId, P.BanMembers);
  }

  /** Bans one user; answers the error that prevents it, or undefined when banned. */
  async #banOne(
    tx: Executor,
    events: GuildEvents,
    actor: MemberAccess,
    guildId: string,
    userId: string,
    seconds: number,
    reason: string | null,
  ): Promise<'UnknownUser' | 'MissingPermissions' | undefined> {
    const { access, accounts, clock, members } = this.#deps;
    const user = await accounts.getUserIn(tx, userId);
    if (!user) return 'UnknownUser';
    if (await membersStore.findMember(tx, guildId, userId)) {
      const target = await access.member(tx, guildId, userId);
      if (target.isOwner || !outranks(actor, target.highestPosition)) return 'MissingPermissions';
    }
    const userObject = toUserObject(user);
    await store.upsertBan(tx, { guild_id: guildId, user_id: userId, reason, created_at: clock.now() });
    await members.removeMemberIn(tx, events, guildId, userId, userObject);
    for (const deleter of this.#messageDeleters)
      await deleter(tx, { guildId, userId, deleteMessageSeconds: seconds });
    await audit(this.#deps.auditLog, tx, events, {
      guildId,
      userId: actor.input.userId,
      targetId: userId,
      actionType: AuditLogEvents.MemberBanAdd,
      // The entry keeps what the messages issue will act on (Hearth's option key; the platform lists none).
      ...(seconds > 0 ? { options: { delete_message_seconds: String(seconds) } } : {}),
      reason,
    });
    events.push('GUILD_BAN_ADD', { guild_id: guildId, user: userObject });
    return undefined;
  }
}

/** `delete_message_seconds`, or the deprecated `delete_message_days` converted (GUILDS.md §3.3). */
function deleteMessageSeconds(input: CreateBan): number {
  if (input.delete_message_seconds != null) return input.delete_message_seconds;
  return (input.delete_message_days ?? 0) * 86_400;
}
