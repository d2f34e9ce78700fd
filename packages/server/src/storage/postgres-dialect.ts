import {
  type ColumnMetadata,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

/**
 * Kysely's PostgreSQL dialect, introspecting only the schemas on our search path. Kysely's own
 * introspector (which the migrator calls on every run) reads every column of every schema in the
 * database and calls `pg_get_serial_sequence` by name on each; that lookup sees the live catalog, not
 * the query's snapshot, so a schema dropped meanwhile by anyone sharing the database failed our
 * migration with "column … of relation … does not exist".
 */
export class SearchPathPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SearchPathIntrospector(db);
  }
}

interface ColumnRow {
  schema: string;
  table: string;
  kind: string;
  column: string;
  type: string;
  type_schema: string;
  not_null: boolean;
  has_default: boolean;
  identity: string;
  default_expression: string | null;
  comment: string | null;
}

const KYSELY_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

class SearchPathIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      SELECT unnest(current_schemas(false)) AS name`.execute(this.#db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }) {
    const { rows } = await sql<ColumnRow>`
      SELECT ns.nspname AS schema, c.relname AS table, c.relkind AS kind, a.attname AS column,
             typ.typname AS type, tns.nspname AS type_schema, a.attnotnull AS not_null,
             a.atthasdef AS has_default, a.attidentity AS identity,
             pg_get_expr(d.adbin, d.adrelid) AS default_expression,
             col_description(a.attrelid, a.attnum) AS comment
      FROM pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
      JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
      JOIN pg_catalog.pg_type typ ON typ.oid = a.atttypid
      JOIN pg_catalog.pg_namespace tns ON tns.oid = typ.typnamespace
      LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE ns.nspname = ANY (current_schemas(false))
        AND c.relkind IN ('r', 'v', 'p') AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY ns.nspname, c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata & { columns: ColumnMetadata[] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLES.has(row.table)) continue;
      const key = `${row.schema}.${row.table}`;
      let table = tables.get(key);
      if (table === undefined) {
        table = { name: row.table, schema: row.schema, isView: row.kind === 'v', columns: [] };
        tables.set(key, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.identity !== '' || (row.default_expression?.startsWith('nextval(') ?? false),
        ...(row.comment === null ? {} : { comment: row.comment }),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
