import { type FormErrorLeaf, FormErrors, type FormErrorTree } from '@hearth/protocol';
import type { ValidateFunction } from 'ajv';
import type { TSchema } from 'typebox';
import { formErrorTree, HearthError } from '../../kernel/errors.js';
import { compileValidator, toFormError } from '../../kernel/validation.js';

/** A path into the request body: `['components', 0, 'components', 2]` answers as `components.0.components.2`. */
export type FieldPath = readonly (string | number)[];

/**
 * Gathers the errors of a nested request part (embeds, a component tree) so the client gets every bad field
 * in one Invalid Form Body (50035), each under its full path, as the platform answers.
 */
export class FormBody {
  readonly #entries: [string[], FormErrorLeaf][] = [];

  get ok(): boolean {
    return this.#entries.length === 0;
  }

  add(path: FieldPath, leaf: FormErrorLeaf): void {
    this.#entries.push([path.map(String), leaf]);
  }

  /**
   * Checks `value` against `schema` with the request validator's wording; errors land under `path`.
   * Returns whether the value conformed, so the caller can stop before reading a malformed node.
   */
  check(schema: TSchema, value: unknown, path: FieldPath): boolean {
    const validate = validatorOf(schema);
    if (validate(value)) return true;
    const tree = toFormError(validate.errors ?? []).errors ?? {};
    this.#addTree(path.map(String), tree);
    return false;
  }

  /**
   * A list bounded on both sides answers BASE_TYPE_BAD_LENGTH, as the platform words it for component
   * lists ("Must be between 1 and 5 in length."); the schema's minItems/maxItems words one side only.
   */
  checkLength(list: readonly unknown[], min: number, max: number, path: FieldPath): void {
    if (list.length < min || list.length > max) this.add(path, FormErrors.badLength(min, max));
  }

  /** Throws the gathered errors, if any. */
  throwIfAny(): void {
    if (this.#entries.length > 0) {
      throw new HearthError('InvalidFormBody', { errors: formErrorTree(this.#entries) });
    }
  }

  #addTree(prefix: string[], tree: FormErrorTree): void {
    for (const [key, child] of Object.entries(tree)) {
      if (child === undefined) continue;
      if (key === '_errors' && Array.isArray(child)) {
        for (const leaf of child) this.#entries.push([prefix, leaf]);
      } else if (!Array.isArray(child)) {
        this.#addTree([...prefix, key], child);
      }
    }
  }
}

const validators = new WeakMap<TSchema, ValidateFunction>();
function validatorOf(schema: TSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = compileValidator(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/** Characters as the platform counts them (code points, as the validator's `maxLength` does). */
export function characters(text: string | null | undefined): number {
  if (!text) return 0;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The scheme of a URL the validator already found well formed, lower case, without the colon. */
export function schemeOf(url: string): string {
  return url.slice(0, Math.max(0, url.indexOf(':'))).toLowerCase();
}
