import type { Compilable, CompiledQuery, Insertable, Kysely, QueryResult } from 'kysely';
import type { Executor } from './database.js';
import type { Schema } from './schema.js';

/**
 * A query built and compiled once per database, then run with new parameters: for the lookups on every
 * request (credentials), where building and compiling would cost more than SQLite's own work.
 * `build` receives placeholder values and must use each one as a plain parameter.
 */
export function prepared<Row, P extends readonly unknown[]>(
  arity: P['length'],
  build: (db: Kysely<Schema>, ...params: P) => Compilable<Row>,
): (db: Executor, ...params: P) => Promise<Row | undefined> {
  const run = compiledOnce(arity, build);
  return async (db, ...params) => (await run(db, params)).rows[0];
}

/**
 * A write (insert, update, delete) built and compiled once per database, as `prepared`; answers how many
 * rows it changed. For the writes of the token endpoints, where Kysely's building cost as much as SQLite.
 */
export function preparedWrite<P extends readonly unknown[]>(
  arity: P['length'],
  build: (db: Kysely<Schema>, ...params: P) => Compilable<unknown>,
): (db: Executor, ...params: P) => Promise<number> {
  const run = compiledOnce(arity, build);
  return async (db, ...params) => Number((await run(db, params)).numAffectedRows ?? 0n);
}

function compiledOnce<Row, P extends readonly unknown[]>(
  arity: P['length'],
  build: (db: Kysely<Schema>, ...params: P) => Compilable<Row>,
): (db: Executor, params: P) => Promise<QueryResult<Row>> {
  const compiled = new WeakMap<object, { query: CompiledQuery<Row>; slots: number[] }>();
  return (db, params) => {
    // A transaction has its own executor but its database's adapter: compile once per adapter.
    const root = db.getExecutor().adapter;
    let entry = compiled.get(root);
    if (!entry) {
      const markers = Array.from(
        { length: arity },
        (_, i) => `\u0000hearth-param-${i}\u0000`,
      ) as unknown as P;
      const query = build(db as Kysely<Schema>, ...markers).compile();
      const slots = query.parameters.map((value) => (markers as readonly unknown[]).indexOf(value));
      if (slots.some((slot) => slot === -1) || new Set(slots).size !== arity) {
        throw new Error('prepared(): every parameter must appear exactly once as a plain value');
      }
      entry = { query, slots };
      compiled.set(root, entry);
    }
    const parameters = entry.slots.map((slot) => params[slot]);
    return db.executeQuery<Row>({ ...entry.query, parameters });
  };
}

/**
 * An insert of exactly these columns, prepared: a column the row leaves out is written as NULL, so list only
 * columns whose default, if any, is NULL (the others take their defaults, as in any insert that omits them).
 */
export function preparedInsert<T extends keyof Schema & string>(
  table: T,
  columns: readonly (keyof Schema[T] & string)[],
): (db: Executor, row: Insertable<Schema[T]>) => Promise<void> {
  const run = preparedWrite(columns.length, (db, ...values: unknown[]) =>
    db.insertInto(table).values(Object.fromEntries(columns.map((column, i) => [column, values[i]])) as never),
  );
  return async (db, row) => {
    const given = row as Record<string, unknown>;
    await run(db, ...columns.map((column) => given[column] ?? null));
  };
}
