import { type FormErrorLeaf, FormErrors, isSnowflake } from '@hearth/protocol';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from 'typebox';
import { formErrorTree, HearthError } from './errors.js';

/**
 * Request validation with the platform's error wording. Bodies are checked strictly (a string is not a
 * number); query strings and path parameters are coerced, as the platform reads `?limit=5` as 5.
 */
function createAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, coerceTypes, useDefaults: true, strict: false });
  addFormats.default(ajv, ['email', 'uri', 'date-time']);
  ajv.addFormat('snowflake', { type: 'string', validate: isSnowflake });
  return ajv;
}

const strict = createAjv(false);
const coercing = createAjv('array');

export type Part = 'body' | 'querystring' | 'params' | 'headers';

export function compileValidator(schema: TSchema, part: Part = 'body'): ValidateFunction {
  return (part === 'body' ? strict : coercing).compile(schema);
}

/** Turns Ajv's errors into Invalid Form Body (50035) with one leaf per field. */
export function toFormError(errors: readonly ErrorObject[]): HearthError {
  const chosen = new Map<string, [string[], FormErrorLeaf]>();
  for (const error of errors) {
    const path = pathOf(error);
    const key = path.join('\u0000');
    if (chosen.has(key)) continue;
    const leaf = leafOf(error);
    if (leaf) chosen.set(key, [path, leaf]);
  }
  // A node of the platform's tree holds either its own `_errors` or its children's, never both: a field with
  // errors inside it (`messages.0`) answers those, the more precise, rather than its own (`messages`).
  const keys = [...chosen.keys()];
  for (const key of keys) {
    if (keys.some((other) => other !== key && other.startsWith(key === '' ? '' : `${key}\u0000`)))
      chosen.delete(key);
  }
  if (chosen.size === 0) chosen.set('', [[], FormErrors.invalid()]);
  return new HearthError('InvalidFormBody', { errors: formErrorTree(chosen.values()) });
}

/** The mark of a body schema whose body may be left out (a symbol: the served description drops it). */
const OPTIONAL_BODY = Symbol.for('hearth.optionalBody');

/**
 * A route body that may be absent: a request without one reaches the handler with no body, which applies the
 * route's own default (`request.body ?? {}`), as the platform takes these routes bodiless; a body that is
 * present is checked against the schema. The description marks the body not required.
 */
export function optionalBody<S extends TSchema>(schema: S): S {
  return { ...schema, [OPTIONAL_BODY]: true };
}

export function isOptionalBody(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && OPTIONAL_BODY in schema;
}

/** Validates a value outside HTTP (the CLI, services) with the same schema and the same error. */
export function parse<S extends TSchema>(schema: S, value: unknown): Static<S> {
  const validate = cache.get(schema) ?? compileValidator(schema);
  cache.set(schema, validate);
  if (!validate(value)) throw toFormError(validate.errors ?? []);
  return value as Static<S>;
}
const cache = new WeakMap<TSchema, ValidateFunction>();

function pathOf(error: ErrorObject): string[] {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') path.push(String(error.params['missingProperty']));
  return path;
}

/** One leaf per keyword; `anyOf` and the `null` branch of a nullable field stay silent. */
function leafOf(error: ErrorObject): FormErrorLeaf | undefined {
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  const num = (key: string) => Number(parent[key]);
  switch (error.keyword) {
    case 'required':
      return FormErrors.required();
    case 'type':
      return typeLeaf(String(error.params['type']), error.data);
    case 'minLength':
    case 'maxLength':
      if (parent['minLength'] !== undefined && parent['maxLength'] !== undefined) {
        return FormErrors.badLength(num('minLength'), num('maxLength'));
      }
      return error.keyword === 'minLength'
        ? FormErrors.minLength(num('minLength'))
        : FormErrors.maxLength(num('maxLength'));
    case 'minItems':
      return FormErrors.minItems(num('minItems'));
    case 'maxItems':
      return FormErrors.maxItems(num('maxItems'));
    case 'minProperties':
      return FormErrors.minItems(num('minProperties'));
    case 'maxProperties':
      return FormErrors.maxItems(num('maxProperties'));
    case 'minimum':
    case 'exclusiveMinimum':
      return FormErrors.minimum(num(error.keyword));
    case 'maximum':
    case 'exclusiveMaximum':
      return FormErrors.maximum(num(error.keyword));
    case 'enum':
      return FormErrors.choices((parent['enum'] as unknown[]) ?? []);
    case 'const':
      return FormErrors.choices([parent['const']]);
    case 'format':
      return formatLeaf(String(error.params['format']), error.data);
    case 'anyOf':
    case 'oneOf':
      return undefined;
    default:
      return FormErrors.invalid();
  }
}

function typeLeaf(type: string, value: unknown): FormErrorLeaf | undefined {
  switch (type) {
    case 'null':
      return undefined;
    case 'string':
      return FormErrors.string(value);
    case 'integer':
      return FormErrors.integer(value);
    case 'number':
      return FormErrors.number(value);
    case 'boolean':
      return FormErrors.boolean();
    case 'object':
      return FormErrors.object();
    case 'array':
      return FormErrors.array();
    default:
      return FormErrors.invalid();
  }
}

function formatLeaf(format: string, value: unknown): FormErrorLeaf {
  switch (format) {
    case 'snowflake':
      return FormErrors.snowflake(value);
    case 'email':
      return FormErrors.email();
    case 'uri':
      return FormErrors.url();
    case 'date-time':
      return FormErrors.dateTime(value);
    default:
      return FormErrors.invalid();
  }
}
