import http from 'node:http';

/**
 * The hostile-input sweep's toolkit: a raw HTTP client (fetch would normalise `..` and re-encode paths,
 * which is exactly what the sweep must not do), and request bodies derived from a route's own schema.
 */

export interface RawResponse {
  status: number;
  contentType: string | undefined;
  body: string;
}

export interface RawRequest {
  method: string;
  /** Sent exactly as given: no normalisation, no encoding. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One request as the bytes say; a connection the server drops answers status 0. */
export function rawRequest(base: string, request: RawRequest): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.body !== undefined) headers['content-length'] = Buffer.byteLength(request.body);
    const sent = http.request(
      { host: hostname, port, method: request.method, path: request.path, headers, agent },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    sent.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve({ status: 0, contentType: undefined, body: '' }) : reject(error),
    );
    sent.end(request.body);
  });
}

/** A JSON Schema as TypeBox writes it, read loosely: the sweep only needs its outline. */
export interface SchemaOutline {
  type?: string | string[];
  format?: string;
  properties?: Record<string, SchemaOutline>;
  required?: string[];
  items?: SchemaOutline;
  anyOf?: SchemaOutline[];
  oneOf?: SchemaOutline[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  minItems?: number;
  minimum?: number;
  pattern?: string;
}

/** The first branch of a union that is not `null`. */
function branch(schema: SchemaOutline): SchemaOutline {
  const options = schema.anyOf ?? schema.oneOf;
  if (!options) return schema;
  return branch(options.find((option) => option.type !== 'null') ?? options[0] ?? {});
}

export function typeOf(schema: SchemaOutline): string | undefined {
  const chosen = branch(schema);
  const type = Array.isArray(chosen.type) ? chosen.type.find((t) => t !== 'null') : chosen.type;
  if (type) return type;
  if (chosen.properties) return 'object';
  return chosen.const !== undefined ? typeof chosen.const : undefined;
}

/**
 * A value the schema accepts, or near enough (patterns are not honoured): required fields filled, ids
 * taken from `snowflake`, so that a hostile value in one field meets the rules behind validation.
 */
export function sampleOf(schema: SchemaOutline, snowflake: string): unknown {
  const chosen = branch(schema);
  if (chosen.const !== undefined) return chosen.const;
  if (chosen.enum && chosen.enum.length > 0) return chosen.enum[0];
  switch (typeOf(chosen)) {
    case 'string':
      if (chosen.format === 'snowflake') return snowflake;
      if (chosen.format === 'uri') return 'https://example.com/hostile';
      if (chosen.format === 'email') return 'hostile@example.com';
      if (chosen.format === 'date-time') return '2030-01-01T00:00:00.000Z';
      return 'x'.repeat(Math.max(chosen.minLength ?? 1, 1));
    case 'integer':
    case 'number':
      return chosen.minimum ?? 0;
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: chosen.minItems ?? 0 }, () => sampleOf(chosen.items ?? {}, snowflake));
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const key of chosen.required ?? []) {
        value[key] = sampleOf(chosen.properties?.[key] ?? {}, snowflake);
      }
      return value;
    }
    default:
      return null;
  }
}

/** Values that a field of this type must refuse or store safely, never crash on. */
export function hostileValuesFor(type: string | undefined): unknown[] {
  switch (type) {
    case 'string':
      return ['a\u0000b', '\ud800 lone surrogate', '../../../../etc/passwd', '99999999999999999999999'];
    case 'integer':
    case 'number':
      return [2 ** 64, -1, -(2 ** 63) - 1, 1.5];
    case 'boolean':
      return ['\u0000', 2];
    case 'array':
      return [['\u0000'], [2 ** 64]];
    default:
      return [{ '\u0000': '\u0000' }, '\u0000'];
  }
}

/** Path segments that are not ids: NUL, traversal, unicode, overflow, bad encoding, over-long. */
export const HOSTILE_SEGMENTS = [
  '%00',
  '1%002',
  '..',
  '..%2F..%2Fetc%2Fpasswd',
  '%F0%9F%98%80',
  '99999999999999999999999',
  '-1',
  '%FF%FE',
  '%E0%A4%A',
  '%',
  '1'.repeat(201),
  '1'.repeat(5000),
] as const;

/** Whole bodies every route with a body gets: nesting, size, encoding, types, emptiness. */
export function hostileBodies(
  stringField: string,
): ReadonlyArray<{ label: string; type?: string; body?: string | Buffer }> {
  return [
    { label: 'deep arrays', type: 'application/json', body: `${'['.repeat(50_000)}${']'.repeat(50_000)}` },
    {
      label: 'deep objects',
      type: 'application/json',
      body: `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`,
    },
    {
      label: 'deep field',
      type: 'application/json',
      body: `{"${stringField}":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    },
    {
      label: '33 levels',
      type: 'application/json',
      body: `{"${stringField}":${'['.repeat(32)}${']'.repeat(32)}}`,
    },
    {
      label: '1 MB string',
      type: 'application/json',
      body: JSON.stringify({ [stringField]: 'x'.repeat(1 << 20) }),
    },
    {
      label: 'invalid UTF-8',
      type: 'application/json',
      body: Buffer.concat([
        Buffer.from(`{"${stringField}":"`),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]),
    },
    { label: 'NUL byte raw', type: 'application/json', body: `{"${stringField}":"a\u0000b"}` },
    { label: 'overflowing number', type: 'application/json', body: `{"${stringField}":1e400}` },
    { label: 'text/plain', type: 'text/plain', body: 'hello' },
    { label: 'xml', type: 'application/xml', body: '<a/>' },
    { label: 'empty JSON', type: 'application/json', body: '' },
    { label: 'no body, no type' },
    { label: 'null', type: 'application/json', body: 'null' },
    { label: 'array', type: 'application/json', body: '[]' },
    { label: 'truncated', type: 'application/json', body: '{"a":' },
    { label: 'form with NUL', type: 'application/x-www-form-urlencoded', body: `${stringField}=%00&x=%FF` },
    { label: 'broken multipart', type: 'multipart/form-data; boundary=x', body: '--x\r\nbroken' },
  ];
}
