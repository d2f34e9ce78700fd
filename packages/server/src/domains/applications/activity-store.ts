import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../storage/database.js';
import type { ActivityUrlMappingsTable } from '../../storage/schema.js';

export type UrlMappingRow = Selectable<ActivityUrlMappingsTable>;

export function listMappings(db: Executor, applicationId: string): Promise<UrlMappingRow[]> {
  return db
    .selectFrom('activity_url_mappings')
    .selectAll()
    .where('application_id', '=', applicationId)
    .orderBy('prefix')
    .execute();
}

/** Sets the mapping of a prefix, replacing the target it had. */
export async function saveMapping(db: Executor, row: Insertable<ActivityUrlMappingsTable>): Promise<void> {
  await db
    .insertInto('activity_url_mappings')
    .values(row)
    .onConflict((oc) => oc.columns(['application_id', 'prefix']).doUpdateSet({ target: row.target }))
    .execute();
}

export async function deleteMapping(db: Executor, applicationId: string, prefix: string): Promise<number> {
  const result = await db
    .deleteFrom('activity_url_mappings')
    .where('application_id', '=', applicationId)
    .where('prefix', '=', prefix)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
