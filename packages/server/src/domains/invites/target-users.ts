import { PermissionFlags, TargetUsersJobStatuses } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError } from '../../kernel/errors.js';
import { parse } from '../../kernel/validation.js';
import type { Executor, Storage } from '../../storage/database.js';
import type { GuildAccess } from '../guilds/access.js';
import { basePermissions, has } from '../guilds/permissions.js';
import { UpdateTargetUsers } from './schemas.js';
import type { InviteRow } from './store.js';
import * as store from './store.js';
import { parseTargetUsers, targetUsersCsv } from './target-users-file.js';

const P = PermissionFlags;

/** The invite if it can still be used at `now`; 10006 for an unknown, expired or used-up code. */
export async function usableInvite(db: Executor, code: string, now: number): Promise<InviteRow> {
  const row = await store.findInvite(db, code);
  if (!row) throw new HearthError('UnknownInvite');
  const expired = row.expires_at !== null && Number(row.expires_at) <= now;
  const usedUp = Number(row.max_uses) > 0 && Number(row.uses) >= Number(row.max_uses);
  if (expired || usedUp) throw new HearthError('UnknownInvite');
  return row;
}

/**
 * An invite's target users file (GUILDS.md §3.6; seed: Get Target Users answers a CSV with header `user_id`):
 * read it back, replace it, and the state of its processing.
 */
export class InviteTargetUsers {
  readonly #deps: { storage: Storage; clock: Clock; access: GuildAccess };

  constructor(deps: { storage: Storage; clock: Clock; access: GuildAccess }) {
    this.#deps = deps;
  }

  /** GET /invites/{code}/target-users: the CSV (seed); the inviter, MANAGE_GUILD or VIEW_AUDIT_LOG. */
  async get(userId: string, code: string): Promise<string> {
    const db = this.#deps.storage.db;
    const row = await usableInvite(db, code, this.#deps.clock.now());
    await this.#requireInviterOr(db, row, userId, [P.ManageGuild, P.ViewAuditLog]);
    return targetUsersCsv(await store.targetUserIds(db, code));
  }

  /** PUT /invites/{code}/target-users: replaces the list; the inviter or MANAGE_GUILD. */
  async update(userId: string, code: string, input: unknown): Promise<void> {
    const body = parse(UpdateTargetUsers, input ?? {});
    const userIds = parseTargetUsers(body.target_users_file, 'target_users_file');
    await this.#deps.storage.transaction(async (tx) => {
      const row = await usableInvite(tx, code, this.#deps.clock.now());
      await this.#requireInviterOr(tx, row, userId, [P.ManageGuild]);
      await store.replaceTargetUsers(tx, code, userIds, this.#deps.clock.now());
    });
  }

  /**
   * GET /invites/{code}/target-users/job-status: files are processed as they arrive, so a file's job is
   * COMPLETED at once; an invite without one answers UNSPECIFIED.
   */
  async jobStatus(userId: string, code: string) {
    const db = this.#deps.storage.db;
    const row = await usableInvite(db, code, this.#deps.clock.now());
    await this.#requireInviterOr(db, row, userId, [P.ManageGuild, P.ViewAuditLog]);
    const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
    const total = Number(row.target_users_total);
    return {
      status:
        row.target_users_at === null ? TargetUsersJobStatuses.Unspecified : TargetUsersJobStatuses.Completed,
      total_users: total,
      processed_users: total,
      created_at: iso(row.target_users_at),
      completed_at: iso(row.target_users_completed_at),
      error_message: null,
    };
  }

  /** The invite's creator, or a member holding one of `anyOf` at guild level (50001 for non-members). */
  async #requireInviterOr(db: Executor, row: InviteRow, userId: string, anyOf: readonly bigint[]) {
    if (row.inviter_id === userId) return;
    const access = await this.#deps.access.member(db, row.guild_id, userId);
    const permissions = basePermissions(access.input, this.#deps.clock.now());
    if (!anyOf.some((bits) => has(permissions, bits))) throw new HearthError('MissingPermissions');
  }
}
