import { type RawBuilder, sql } from 'kysely';

/**
 * JSON texts as a PostgreSQL `text[]`, sent as one text of lines and split there. As a `text[]` parameter,
 * the driver escaped every quote of every text (half of what a delivered event allocated on a node copying
 * dispatches) and PostgreSQL read the escapes back. `JSON.stringify` escapes every control character it
 * writes, so a line break never falls inside one text. Each text must be non-empty (a JSON text always is):
 * PostgreSQL splits an empty string into no elements at all.
 */
export function jsonTextArray(texts: readonly string[]): RawBuilder<string[]> {
  return sql<string[]>`string_to_array(${texts.join('\n')}::text, chr(10))`;
}
