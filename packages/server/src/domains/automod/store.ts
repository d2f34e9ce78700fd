import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { AutoModerationRulesTable } from '../../storage/schema.js';

export type RuleRow = Selectable<AutoModerationRulesTable>;

/** A guild's rules, oldest first (ids are snowflakes of equal length within a guild's lifetime). */
export function guildRules(db: Executor, guildId: string): Promise<RuleRow[]> {
  return db
    .selectFrom('auto_moderation_rules')
    .selectAll()
    .where('guild_id', '=', guildId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The enabled rules of one event type: what a message is checked against. */
export function enabledRules(db: Executor, guildId: string, eventType: number): Promise<RuleRow[]> {
  return db
    .selectFrom('auto_moderation_rules')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('event_type', '=', eventType)
    .where('enabled', '=', 1)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findRule(db: Executor, guildId: string, ruleId: string): Promise<RuleRow | undefined> {
  return db
    .selectFrom('auto_moderation_rules')
    .selectAll()
    .where('guild_id', '=', guildId)
    .where('id', '=', ruleId)
    .executeTakeFirst();
}

export async function countRulesOfType(db: Executor, guildId: string, triggerType: number): Promise<number> {
  const row = await db
    .selectFrom('auto_moderation_rules')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .where('trigger_type', '=', triggerType)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertRule(db: Executor, row: Insertable<AutoModerationRulesTable>): Promise<void> {
  await db.insertInto('auto_moderation_rules').values(row).execute();
}

export async function updateRule(
  db: Executor,
  ruleId: string,
  changes: Updateable<AutoModerationRulesTable>,
): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await db.updateTable('auto_moderation_rules').set(changes).where('id', '=', ruleId).execute();
}

export async function deleteRule(db: Executor, ruleId: string): Promise<void> {
  await db.deleteFrom('auto_moderation_rules').where('id', '=', ruleId).execute();
}
