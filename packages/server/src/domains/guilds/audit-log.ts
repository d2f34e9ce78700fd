import { type AuditLogEvent, GuildLimits } from '@hearth/protocol';
import type { BusEvent } from '../../bus/bus.js';
import type { Clock } from '../../kernel/clock.js';
import type { SnowflakeGenerator } from '../../kernel/snowflake.js';
import type { Executor } from '../../storage/database.js';
import { toAuditLogEntryObject } from './objects.js';
import * as store from './store.js';

/** One change of an audit log entry (GUILDS.md §8): the key and its values before and after. */
export interface AuditLogChange {
  key: string;
  old_value?: unknown;
  new_value?: unknown;
}

export interface AuditLogEntryInput {
  guildId: string;
  /** Who acted; null for the system. */
  userId: string | null;
  targetId: string | null;
  actionType: AuditLogEvent;
  changes?: readonly AuditLogChange[];
  /** The entry's optional info, e.g. `channel_id`, `count`, or an overwrite's `id`/`type`. */
  options?: Readonly<Record<string, string>>;
  /** From the `X-Audit-Log-Reason` header. */
  reason?: string | null;
}

/** Writes audit log entries inside the transaction of the change they record, so neither exists alone. */
export class AuditLog {
  readonly #deps: { clock: Clock; snowflakes: SnowflakeGenerator };

  constructor(deps: { clock: Clock; snowflakes: SnowflakeGenerator }) {
    this.#deps = deps;
  }

  /** Records one entry; answers its id. */
  async record(tx: Executor, entry: AuditLogEntryInput): Promise<string> {
    return (await this.#insert(tx, entry)).id;
  }

  /**
   * Records one entry and answers its GUILD_AUDIT_LOG_ENTRY_CREATE event, for the caller to publish once
   * the transaction has committed (the gateway sends it only to holders of VIEW_AUDIT_LOG).
   */
  async recordEvent(tx: Executor, entry: AuditLogEntryInput): Promise<BusEvent> {
    const row = await this.#insert(tx, entry);
    return {
      type: 'GUILD_AUDIT_LOG_ENTRY_CREATE',
      data: { ...toAuditLogEntryObject(row), guild_id: entry.guildId },
      audience: { guildId: entry.guildId },
    };
  }

  async #insert(tx: Executor, entry: AuditLogEntryInput) {
    const id = this.#deps.snowflakes.next();
    const row = {
      id,
      guild_id: entry.guildId,
      user_id: entry.userId,
      target_id: entry.targetId,
      action_type: entry.actionType,
      changes: entry.changes && entry.changes.length > 0 ? JSON.stringify(entry.changes) : null,
      options: entry.options ? JSON.stringify(entry.options) : null,
      reason: entry.reason ?? null,
      created_at: this.#deps.clock.now(),
    };
    await store.insertAuditLogEntry(tx, row);
    return row;
  }
}

/** The changes between two versions of an object, for the keys given, skipping those that did not change. */
export function diffChanges(
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>> | undefined,
  keys: readonly string[],
): AuditLogChange[] {
  const changes: AuditLogChange[] = [];
  for (const key of keys) {
    const oldValue = before?.[key];
    const newValue = after?.[key];
    if (JSON.stringify(oldValue) === JSON.stringify(newValue)) continue;
    changes.push({
      key,
      ...(oldValue === undefined ? {} : { old_value: oldValue }),
      ...(newValue === undefined ? {} : { new_value: newValue }),
    });
  }
  return changes;
}

/**
 * The reason of `X-Audit-Log-Reason`: clients percent-encode it (discord.js does); at most 512 characters,
 * longer ones cut, an undecodable one kept as sent.
 */
export function auditLogReason(header: string | string[] | undefined): string | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw === '') return null;
  let reason: string;
  try {
    reason = decodeURIComponent(raw);
  } catch {
    reason = raw;
  }
  return reason.slice(0, GuildLimits.auditLogReasonMax);
}
