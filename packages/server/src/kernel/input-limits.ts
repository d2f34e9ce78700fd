import { FormErrors, MAX_JSON_DEPTH } from '@hearth/protocol';
import { formErrorTree, HearthError } from './errors.js';

/**
 * Limits every request meets before any rule sees it (issue 21): JSON nesting checked on the raw text,
 * and NUL characters, which PostgreSQL cannot store in text, refused alike on both engines. Nothing here
 * recurses, so no input can exhaust the stack.
 */

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether JSON text nests arrays and objects deeper than `max`, counted outside strings, without parsing. */
export function exceedsJsonDepth(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** Refuses JSON text nested deeper than MAX_JSON_DEPTH with 50109, before JSON.parse sees it. */
export function assertJsonDepth(text: string): void {
  if (exceedsJsonDepth(text)) throw new HearthError('InvalidJSON');
}

/** Whether any string (value or key) holds a NUL character, walked without recursion or paths. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  const stack: unknown[] = [value];
  for (let current = stack.pop(); current !== undefined; current = stack.pop()) {
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return true;
    } else if (Array.isArray(current)) {
      for (const child of current) stack.push(child);
    } else if (typeof current === 'object' && current !== null) {
      for (const key in current) {
        if (!Object.hasOwn(current, key)) continue;
        if (key.includes('\u0000')) return true;
        stack.push((current as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** The path of the first string (value or key) holding a NUL character, walked without recursion. */
export function findNul(value: unknown): string[] | undefined {
  // Every request is walked; paths are built only for the rare one that holds a NUL.
  if (!holdsNul(value)) return undefined;
  const stack: Array<[unknown, string[]]> = [[value, []]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, path] = item;
    if (typeof current === 'string') {
      if (current.includes('\u0000')) return path;
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index++) {
        stack.push([current[index], [...path, String(index)]]);
      }
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        const at = [...path, key];
        if (key.includes('\u0000')) return at;
        stack.push([child, at]);
      }
    }
  }
  return undefined;
}

/**
 * Refuses a request whose body or query holds a NUL character: 50035 with the field's path. A NUL in a
 * path parameter names nothing that can exist: 404, as an unknown route.
 */
export function assertNoNul(parts: { params?: unknown; query?: unknown; body?: unknown }): void {
  if (findNul(parts.params) !== undefined) throw new HearthError('GeneralNotFound');
  for (const value of [parts.query, parts.body]) {
    const path = findNul(value);
    if (path !== undefined) {
      throw new HearthError('InvalidFormBody', { errors: formErrorTree([[path, FormErrors.invalid()]]) });
    }
  }
}
