/**
 * A response schema rewritten for fast-json-stringify so that it writes the same JSON for every value the
 * schema accepts, without a validator per value. For `anyOf` it runs a compiled validator on each branch in
 * turn (a user object's seven nullable fields: seven to fourteen calls per response); a nullable schema or a
 * list of types it tells apart with `=== null` and `typeof`.
 * - `anyOf: [X, {type: 'null'}]` becomes X with `nullable: true`;
 * - `anyOf` of primitive types and literals (TypeBox's unions of them) becomes their list of types.
 * Any other `anyOf` is kept, its branches rewritten.
 */
export function forSerialization(schema: unknown): unknown {
  if (!isSchemaObject(schema)) return schema;
  const copy: SchemaObject = { ...schema };
  for (const key of SCHEMA_MAPS) {
    const map = copy[key];
    if (isSchemaObject(map)) {
      copy[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, forSerialization(sub)]));
    }
  }
  for (const key of SCHEMA_LISTS) {
    const list = copy[key];
    if (Array.isArray(list)) copy[key] = list.map(forSerialization);
  }
  for (const key of SCHEMAS) {
    if (key in copy) copy[key] = forSerialization(copy[key]);
  }
  return Array.isArray(copy['anyOf']) ? (simplified(copy, copy['anyOf']) ?? copy) : copy;
}

type SchemaObject = Record<string, unknown>;

/** Keywords whose value is a map of names to schemas, a list of schemas, or one schema. */
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions'] as const;
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const SCHEMAS = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'] as const;

/** Keywords that change nothing of what is written. */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'examples', 'default', 'deprecated']);
/** Keywords after which a branch is no plain schema of one type. */
const COMPOSITE = ['anyOf', 'oneOf', 'allOf', 'not', 'if', '$ref', 'nullable', 'const', 'enum'];
const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

function simplified(node: SchemaObject, branches: unknown[]): SchemaObject | undefined {
  const { anyOf: _branches, ...siblings } = node;
  if (!Object.keys(siblings).every((key) => ANNOTATIONS.has(key))) return undefined;
  if (branches.length === 0 || !branches.every(isSchemaObject)) return undefined;
  const nonNull = branches.filter((branch) => !isNullSchema(branch));
  const nullable = nonNull.length < branches.length;
  const [only] = nonNull;
  if (nullable && nonNull.length === 1 && only !== undefined && isPlainTyped(only)) {
    return { ...siblings, ...only, nullable: true };
  }
  const types = new Set<string>();
  for (const branch of branches) {
    const type = primitiveType(branch);
    if (type === undefined) return undefined;
    types.add(type);
  }
  // Integer and number both write a number the same way; `number` takes either.
  if (types.has('integer') && types.has('number')) types.delete('integer');
  const [type] = types;
  return { ...siblings, type: types.size === 1 ? type : [...types] };
}

function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNullSchema(schema: SchemaObject): boolean {
  return (
    schema['type'] === 'null' && Object.keys(schema).every((key) => key === 'type' || ANNOTATIONS.has(key))
  );
}

/** A schema of one type, and nothing that could make fast-json-stringify validate it. */
function isPlainTyped(schema: SchemaObject): boolean {
  return typeof schema['type'] === 'string' && COMPOSITE.every((key) => !(key in schema));
}

/** The primitive type of a branch that is only a type (`{type: 'string'}`) or a literal (`{const: 1}`). */
function primitiveType(schema: SchemaObject): string | undefined {
  const keys = Object.keys(schema).filter((key) => !ANNOTATIONS.has(key));
  const type = schema['type'];
  if ('const' in schema) {
    if (!keys.every((key) => key === 'const' || key === 'type')) return undefined;
    const constType = literalType(schema['const']);
    return constType !== undefined && (type === undefined || type === constType || type === 'number')
      ? ((type as string | undefined) ?? constType)
      : undefined;
  }
  if (typeof type !== 'string' || !PRIMITIVE_TYPES.has(type)) return undefined;
  // A bound (maxLength, minimum, format) only constrains: what is written is the same.
  return keys.every((key) => key === 'type' || BOUNDS.has(key)) ? type : undefined;
}

const BOUNDS = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
]);

function literalType(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return 'number';
    default:
      return undefined;
  }
}
