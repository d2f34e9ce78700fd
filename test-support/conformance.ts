import { readFileSync } from 'node:fs';
import type { ObservedResponse } from '@hearth/server';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import {
  type AllowlistEntry,
  CONFORMANCE_ALLOWLIST,
  SPEC_CORRECTIONS,
  type SpecCorrection,
} from './conformance-allowlist.js';
import { SPEC_PATH } from './openapi.js';

/**
 * The conformance check (STYLE 17): every response a test server sends is checked against the platform's
 * published OpenAPI description (SPEC). `startHearth` installs `recordResponse` on every server; the setup
 * file fails the test that caused a violation. What the description gets wrong, or does not describe, is
 * excused only by an entry of `conformance-allowlist.ts` that says why.
 */

/** What is wrong with one response. */
export type Problem =
  /** The route is not in SPEC (Hearth's own, or a platform route SPEC leaves out). */
  | { kind: 'route' }
  /** SPEC does not list this status for the operation (every 5xx lands here). */
  | { kind: 'status' }
  | { kind: 'content-type'; got: string | undefined; expected: string[] }
  /** A body where SPEC describes none (204), or none where it describes one. */
  | { kind: 'body-presence'; detail: string }
  | { kind: 'json'; detail: string }
  /** One schema error of the body (ajv, every error reported). */
  | { kind: 'body'; instancePath: string; keyword: string; message: string; schemaPath: string };

export interface Verdict {
  /** `GET /users/@me 200`: SPEC's path where there is one, else Hearth's template, else `(no route)`. */
  operation: string;
  outcome: 'validated' | 'allowlisted' | 'violation';
  /** Problems no allowlist entry excuses. */
  problems: Problem[];
  /** The allowlist entries that excused the others. */
  excusedBy: AllowlistEntry[];
}

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
}
interface Described {
  response: ResponseObject;
  pointer: string;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, ResponseObject> };
}

const DOC_ID = 'https://hearth.invalid/reference/openapi.json';
const ERROR_RESPONSE: ResponseObject = { $ref: '#/components/responses/ClientErrorResponse' };
const RATE_LIMITED_RESPONSE: ResponseObject = { $ref: '#/components/responses/ClientRatelimitedResponse' };

/** SPEC compiled once per process: paths by shape (`/lobbies/{}/members/{}`), validators by pointer. */
class Reference {
  readonly #doc: OpenApiDocument;
  readonly #ajv: Ajv2020;
  readonly #paths = new Map<string, string>();
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(path: string) {
    this.#doc = JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument;
    if (!this.#doc.openapi.startsWith('3.1')) {
      throw new Error(`SPEC is OpenAPI ${this.#doc.openapi}; the checker reads 3.1 (JSON Schema 2020-12)`);
    }
    // strict: false, because SPEC carries OpenAPI's own keywords (`example`, `x-…`) beside JSON Schema.
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true, validateSchema: false });
    // A CommonJS module: its function is the default export's `default` as well, and only that is typed.
    ajvFormats.default(this.#ajv);
    // SPEC's own formats: a snowflake also has its pattern; a nonce is an integer or a string.
    this.#ajv.addFormat('snowflake', /^(0|[1-9][0-9]*)$/);
    this.#ajv.addFormat('nonce', true);
    for (const correction of SPEC_CORRECTIONS) correct(this.#doc, correction.pointer, correction.schema);
    this.#ajv.addSchema({ ...this.#doc, $id: DOC_ID });
    for (const docPath of Object.keys(this.#doc.paths)) this.#paths.set(shape(docPath), docPath);
  }

  /** SPEC's path for a Hearth route template without its version prefix, if SPEC has it. */
  pathOf(template: string): string | undefined {
    return this.#paths.get(shape(template));
  }

  operation(docPath: string, method: string): Operation | undefined {
    return this.#doc.paths[docPath]?.[method.toLowerCase()];
  }

  /** The response SPEC gives for a status (exact, then `4XX`, then `default`) and where it is in SPEC. */
  responseFor(docPath: string, method: string, status: number): Described | undefined {
    const responses = this.operation(docPath, method)?.responses ?? {};
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (key === undefined) return undefined;
    const pointer = `/paths/${pointerSegment(docPath)}/${method.toLowerCase()}/responses/${key}`;
    return this.resolve(responses[key]!, pointer);
  }

  /** A response object, its `$ref` followed: the validator must point at the target itself. */
  resolve(response: ResponseObject, pointer: string): Described {
    if (response.$ref === undefined) return { response, pointer };
    const name = response.$ref.replace('#/components/responses/', '');
    const target = this.#doc.components.responses[name];
    if (!target) throw new Error(`SPEC has no response ${response.$ref}`);
    return { response: target, pointer: `/components/responses/${pointerSegment(name)}` };
  }

  /** The validator of `paths[docPath][method].responses[status].content[mediaType].schema`. */
  validator(pointer: string): ValidateFunction {
    let validate = this.#validators.get(pointer);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      this.#validators.set(pointer, validate);
    }
    return validate;
  }
}

/** Replaces the schema at a JSON pointer; a pointer SPEC no longer has stops the run (stale correction). */
function correct(doc: OpenApiDocument, pointer: string, schema: SpecCorrection['schema']): void {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = segments.pop();
  let node: unknown = doc;
  for (const segment of segments) node = (node as Record<string, unknown> | undefined)?.[segment];
  if (last === undefined || typeof node !== 'object' || node === null || !(last in node)) {
    throw new Error(`SPEC_CORRECTIONS: SPEC has nothing at ${pointer}`);
  }
  const parent = node as Record<string, object>;
  parent[last] = typeof schema === 'function' ? schema(parent[last] as Record<string, unknown>) : schema;
}

/** `/lobbies/:lobby_id` and `/lobbies/{lobby_id}` have one shape: `/lobbies/{}`. */
function shape(path: string): string {
  return path.replace(/\{[^}]+\}|:[A-Za-z0-9_]+/g, '{}');
}

function pointerSegment(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

const API_PREFIX = /^\/api(\/v\d+)?(?=\/)/;

let reference: Reference | undefined;
function spec(): Reference {
  reference ??= new Reference(SPEC_PATH);
  return reference;
}

/** Checks one response against SPEC, then against the allowlist. */
export function checkResponse(
  response: ObservedResponse,
  allowlist: readonly AllowlistEntry[] = CONFORMANCE_ALLOWLIST,
): Verdict {
  const ref = spec();
  // A HEAD is its GET without a body.
  const method = response.method === 'HEAD' ? 'GET' : response.method;
  const api = response.route === undefined || API_PREFIX.test(response.route);
  const template = response.route?.replace(API_PREFIX, '');
  const docPath = template !== undefined && api ? ref.pathOf(template) : undefined;
  const operation = docPath === undefined ? undefined : ref.operation(docPath, method);
  const label = `${method} ${operation ? docPath : (template ?? '(no route)')} ${response.status}`;

  const problems: Problem[] = [];
  let described: Described | undefined;
  if (operation && docPath !== undefined) {
    described = ref.responseFor(docPath, method, response.status);
    if (!described || response.status >= 500) problems.push({ kind: 'status' });
  } else {
    // Outside SPEC an error still owes the platform's error body (DESIGN, Rules that cut across).
    if (template !== undefined) problems.push({ kind: 'route' });
    if (response.status >= 400 && response.status < 500) {
      described = ref.resolve(response.status === 429 ? RATE_LIMITED_RESPONSE : ERROR_RESPONSE, '');
    } else if (template === undefined || response.status >= 500) {
      problems.push({ kind: 'status' });
    }
  }
  if (described) problems.push(...checkBody(ref, response, described));

  const excusedBy: AllowlistEntry[] = [];
  const left = problems.filter((problem) => {
    const entry = allowlist.find((e) => excuses(e, method, template, response.status, problem));
    if (entry && !excusedBy.includes(entry)) excusedBy.push(entry);
    return !entry;
  });
  const outcome = left.length > 0 ? 'violation' : excusedBy.length > 0 ? 'allowlisted' : 'validated';
  return { operation: label, outcome, problems: left, excusedBy };
}

function checkBody(ref: Reference, response: ObservedResponse, described: Described): Problem[] {
  const body = response.body === undefined ? '' : String(response.body);
  const { content } = described.response;
  if (!content) {
    return body.length > 0 ? [{ kind: 'body-presence', detail: `a body where SPEC describes none` }] : [];
  }
  const expected = Object.keys(content);
  const mediaType = response.contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType === undefined || !expected.includes(mediaType)) {
    return [{ kind: 'content-type', got: response.contentType, expected }];
  }
  if (response.method === 'HEAD') return [];
  if (mediaType !== 'application/json') return [];
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return [{ kind: 'json', detail: (error as Error).message }];
  }
  const validate = ref.validator(`${described.pointer}/content/application~1json/schema`);
  if (validate(value)) return [];
  return compact(validate.errors ?? []).map((e) => ({
    kind: 'body',
    instancePath: e.instancePath,
    keyword: e.keyword,
    message: explain(e),
    schemaPath: e.schemaPath,
  }));
}

/** A failed `oneOf` of constants (an enum) or of `null | X` says it once, not once per branch. */
function compact(errors: ErrorObject[]): ErrorObject[] {
  const failedOneOf = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath));
  return errors.filter(
    (e) => !(failedOneOf.has(e.instancePath) && /\/oneOf\/\d+\/(const|type)$/.test(e.schemaPath)),
  );
}

function explain(e: ErrorObject): string {
  const shown = ['oneOf', 'const', 'enum', 'type', 'format', 'pattern'].includes(e.keyword);
  const value = shown ? ` (got ${JSON.stringify(e.data)?.slice(0, 80)})` : '';
  const params =
    e.keyword === 'oneOf' || !e.params || Object.keys(e.params).length === 0
      ? ''
      : ` ${JSON.stringify(e.params)}`;
  return `${e.message ?? e.keyword}${params}${value}`;
}

function excuses(
  entry: AllowlistEntry,
  method: string,
  template: string | undefined,
  status: number,
  problem: Problem,
): boolean {
  if (entry.method !== '*' && entry.method !== method) return false;
  if (entry.route !== (template ?? '(no route)')) return false;
  if (entry.status !== undefined && entry.status !== status) return false;
  if (entry.problem !== problem.kind) return false;
  if (problem.kind !== 'body') return true;
  if (entry.instancePath !== undefined && !globMatches(entry.instancePath, problem.instancePath))
    return false;
  return entry.keyword === undefined || entry.keyword === problem.keyword;
}

/** `/*​/type` matches `/0/type`: `*` is one segment of a JSON pointer, `**` any number of them. */
export function globMatches(glob: string, instancePath: string): boolean {
  const pattern = glob
    .split('/')
    .map((s) => (s === '**' ? '.*' : s === '*' ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${pattern}$`).test(instancePath);
}

export function describeProblem(problem: Problem): string {
  switch (problem.kind) {
    case 'route':
      return 'route not in SPEC';
    case 'status':
      return 'status not in SPEC for this operation';
    case 'content-type':
      return `content-type ${problem.got ?? '(none)'}, SPEC: ${problem.expected.join(' | ')}`;
    case 'body-presence':
    case 'json':
      return problem.detail;
    case 'body':
      return `body${problem.instancePath || '/'} ${problem.message} (${problem.schemaPath.replace(`${DOC_ID}#`, '#')})`;
  }
}

/** What this test file's servers sent so far: verdicts per operation, and violations not yet reported. */
export interface Tally {
  /** `GET /users/@me 200` → how many responses were validated, allowlisted, in violation. */
  operations: Record<string, Record<Verdict['outcome'], number>>;
  /** Indexes into CONFORMANCE_ALLOWLIST of the entries that excused something. */
  usedEntries: number[];
  /** `operation: problem` → how many times, for the run's summary. */
  violations: Record<string, number>;
}

/** Keeps verdicts and the violations not yet reported; the setup file asks it after each test. */
export class ConformanceRecorder {
  tally: Tally = emptyTally();
  readonly #pending: string[] = [];
  readonly #expectedServerErrors: Array<{ method: string; route: string }> = [];

  /**
   * The current test provokes a 5xx on purpose (a closed database, a participant that throws) and says
   * why: it excuses one 5xx of that route until the end of the test. Nothing else excuses a 5xx.
   */
  expectServerError(method: string, route: string, reason: string): void {
    if (reason.trim().length < 10) throw new Error('expectServerError: say why the test provokes a 5xx');
    this.#expectedServerErrors.push({ method, route });
  }

  /** Checks one response and keeps the verdict. */
  record(response: ObservedResponse): void {
    let verdict: Verdict;
    try {
      verdict = checkResponse(response);
    } catch (error) {
      this.#pending.push(
        `${response.method} ${response.path} ${response.status}: the checker failed: ${error}`,
      );
      return;
    }
    if (response.status >= 500 && verdict.problems.every((p) => p.kind === 'status')) {
      const template = response.route?.replace(API_PREFIX, '');
      const index = this.#expectedServerErrors.findIndex(
        (e) => e.method === response.method && e.route === template,
      );
      if (index >= 0) {
        this.#expectedServerErrors.splice(index, 1);
        verdict = { ...verdict, outcome: 'allowlisted', problems: [] };
      }
    }
    const counts = this.tally.operations[verdict.operation] ?? { validated: 0, allowlisted: 0, violation: 0 };
    counts[verdict.outcome]++;
    this.tally.operations[verdict.operation] = counts;
    for (const entry of verdict.excusedBy) {
      const index = CONFORMANCE_ALLOWLIST.indexOf(entry);
      if (index >= 0 && !this.tally.usedEntries.includes(index)) this.tally.usedEntries.push(index);
    }
    if (verdict.outcome !== 'violation') return;
    for (const problem of verdict.problems) {
      // Array indexes vary from response to response: the summary names each problem once.
      const where = describeProblem(problem).replace(/\/\d+(?=[/ ])/g, '/*');
      const signature = `${verdict.operation} [${response.route ?? 'no route'}]: ${where}`;
      this.tally.violations[signature] = (this.tally.violations[signature] ?? 0) + 1;
    }
    const body = response.body === undefined ? '' : String(response.body);
    this.#pending.push(
      [
        `${response.method} ${response.path} → ${response.status} (${verdict.operation}, route ${response.route ?? 'none'})`,
        ...verdict.problems.map((p) => `  - ${describeProblem(p)}`),
        `  body: ${body.length > 400 ? `${body.slice(0, 400)}…` : body}`,
      ].join('\n'),
    );
  }

  /** The tally so far, and a fresh one from now on: test files that share a worker each report their own. */
  takeTally(): Tally {
    const taken = this.tally;
    this.tally = emptyTally();
    return taken;
  }

  /** Throws listing the violations recorded since the last call; a test's expected 5xx end with it. */
  assertClean(): void {
    this.#expectedServerErrors.length = 0;
    if (this.#pending.length === 0) return;
    const listed = this.#pending.splice(0);
    throw new Error(
      `${listed.length} response(s) do not conform to reference/openapi.json ` +
        `(fix Hearth, or name SPEC's defect in test-support/conformance-allowlist.ts):\n${listed.join('\n')}`,
    );
  }
}

function emptyTally(): Tally {
  return { operations: {}, usedEntries: [], violations: {} };
}

/** The recorder of this worker: every `startHearth` server reports to it, whichever test file started it. */
export const conformance = new ConformanceRecorder();

/** The observer `startHearth` gives every server. */
export const recordResponse = (response: ObservedResponse): void => conformance.record(response);
