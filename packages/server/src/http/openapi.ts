import { API_VERSIONS, Scopes } from '@hearth/protocol';
import type { FastifyPluginAsync } from 'fastify';
import { isOptionalBody } from '../kernel/validation.js';
import type { RouteAuth } from './auth.js';

/** One route as `Hearth.routes` holds it: method, template with its prefix, who it admits, its schemas. */
export interface DescribedRoute {
  method: string;
  url: string;
  auth: RouteAuth | undefined;
  schema: { body?: unknown; querystring?: unknown; params?: unknown; response?: unknown } | undefined;
}

/** A JSON Schema as the document carries it: plain JSON, TypeBox's symbol keys dropped. */
export type JsonSchema = Record<string, unknown>;

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
  description?: string;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  tags: string[];
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, OpenApiResponse | { $ref: string }>;
  security?: Record<string, string[]>[];
}

export interface OpenApiResponse {
  description: string;
  content?: Record<string, { schema: JsonSchema }>;
}

export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  paths: Record<string, OpenApiPathItem>;
  components: {
    securitySchemes: Record<string, JsonSchema>;
    schemas: Record<string, JsonSchema>;
    responses: Record<string, OpenApiResponse>;
  };
  tags: { name: string }[];
}

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
const METHODS: ReadonlySet<string> = new Set([
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
]);

/** The security schemes a route's `auth` maps to (http/auth.ts: `Bot …`, `Bearer …`, a bare session token). */
export const SECURITY_SCHEMES = {
  BotToken: 'BotToken',
  OAuth2: 'OAuth2',
  UserSession: 'UserSession',
} as const;

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'integer', description: 'A JSON error code (docs/errors.md)' },
    message: { type: 'string' },
    errors: { type: 'object', description: 'For 50035 (Invalid Form Body): the tree of field errors' },
  },
};

const RATE_LIMITED_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['message', 'retry_after', 'global'],
  properties: {
    code: { type: 'integer' },
    message: { type: 'string' },
    retry_after: { type: 'number' },
    global: { type: 'boolean' },
  },
};

/** The API prefixes the server answers under, newest first: `/api/v10`, `/api/v9`, then the unversioned `/api`. */
export function apiPrefixes(): string[] {
  return [...[...API_VERSIONS].sort((a, b) => b - a).map((v) => `/api/v${v}`), '/api'];
}

const VERSIONED = /^\/api\/v\d+(?=\/)/;

/** `/channels/:channel_id` → `/channels/{channel_id}`. */
export function openApiPath(template: string): string {
  return template.replace(/:(\w+)/g, '{$1}');
}

/**
 * A stable operation id from method and template: `GET /channels/:channel_id/messages` →
 * `get_channels_by_channel_id_messages`; `@me` reads `me`. The same routes give the same ids on every start.
 */
export function operationIdOf(method: string, template: string): string {
  const words = template
    .split('/')
    .filter(Boolean)
    .map((segment) =>
      segment.startsWith(':')
        ? `by_${segment.slice(1)}`
        : segment.replace(/^@/, '').replace(/[^A-Za-z0-9]+/g, '_'),
    );
  return [method.toLowerCase(), ...words].join('_').replace(/_+/g, '_').replace(/_$/, '');
}

/**
 * The OpenAPI 3.1 description of the routes served under `prefix` (`/api/v10`, `/api`) and of those outside
 * the API (the consent pages, the CDN, OpenID discovery, these documents' index). Built from the routes as registered:
 * their TypeBox schemas are JSON Schema 2020-12 already, so they go in as they are.
 */
export function buildOpenApiDocument(routes: readonly DescribedRoute[], prefix: string): OpenApiDocument {
  const paths: Record<string, OpenApiPathItem> = {};
  const scopes = new Set<string>(Object.values(Scopes));
  const usedIds = new Set<string>();
  const tags = new Set<string>();
  const chosen = routes
    .filter((route) => belongsTo(route.url, prefix))
    .map((route) => ({ route, template: templateOf(route.url, prefix) }))
    .sort((a, b) => a.template.localeCompare(b.template) || a.route.method.localeCompare(b.route.method));
  for (const { route, template } of chosen) {
    const method = route.method.toLowerCase();
    if (!METHODS.has(method)) continue;
    const path = openApiPath(route.url);
    const item: OpenApiPathItem = paths[path] ?? {};
    paths[path] = item;
    for (const scope of route.auth?.bearer ?? []) scopes.add(scope);
    const page = !route.url.startsWith('/api/');
    const tag = page ? 'pages' : (template.split('/').find(Boolean)?.replace(/^[.@]/, '') ?? 'api');
    tags.add(tag);
    const base = `${operationIdOf(method, template)}${page ? '_page' : ''}`;
    let operationId = base;
    for (let n = 2; usedIds.has(operationId); n++) operationId = `${base}_${n}`;
    usedIds.add(operationId);
    item[method as HttpMethod] = operationOf(route, template, operationId, tag);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Hearth HTTP API',
      version: prefix === '/api' ? 'unversioned' : prefix.replace('/api/v', ''),
      description:
        'Generated at start-up from the routes this server registered and their request schemas. ' +
        'Request bodies a route validates inside its handler are not described here.',
    },
    // Paths are whole (`/api/v10/channels/{channel_id}`): the pages and the CDN live at the origin, and the
    // consent page shares its path with an API route once the prefix is taken off.
    servers: [{ url: '/', description: 'this server' }],
    paths,
    components: {
      securitySchemes: {
        [SECURITY_SCHEMES.BotToken]: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'A bot token: `Authorization: Bot <token>`',
        },
        [SECURITY_SCHEMES.OAuth2]: {
          type: 'oauth2',
          description:
            'An access token: `Authorization: Bearer <token>`; the operation lists the scopes it needs',
          flows: {
            authorizationCode: {
              authorizationUrl: '/oauth2/authorize',
              tokenUrl: `${prefix}/oauth2/token`,
              refreshUrl: `${prefix}/oauth2/token`,
              scopes: Object.fromEntries([...scopes].sort().map((scope) => [scope, scope])),
            },
          },
        },
        [SECURITY_SCHEMES.UserSession]: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'A Hearth user session token, sent bare: `Authorization: <token>` (from /auth/login)',
        },
      },
      schemas: { Error: ERROR_SCHEMA, RateLimited: RATE_LIMITED_SCHEMA },
      responses: {
        ClientError: {
          description: 'The platform error body',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
        RateLimited: {
          description: 'Rate limited',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/RateLimited' } } },
        },
      },
    },
    tags: [...tags].sort().map((name) => ({ name })),
  };
}

/** Under `/api/v10` the routes of that prefix and the pages; under `/api` the unversioned aliases and the pages. */
function belongsTo(url: string, prefix: string): boolean {
  if (!url.startsWith('/api/')) return true;
  if (prefix === '/api') return !VERSIONED.test(url);
  return url.startsWith(`${prefix}/`);
}

function templateOf(url: string, prefix: string): string {
  return url.startsWith(`${prefix}/`) ? url.slice(prefix.length) : url;
}

function operationOf(
  route: DescribedRoute,
  template: string,
  operationId: string,
  tag: string,
): OpenApiOperation {
  const operation: OpenApiOperation = {
    operationId,
    summary: `${route.method} ${template}`,
    tags: [tag],
    responses: responsesOf(route),
  };
  const parameters = [...pathParameters(route, template), ...queryParameters(route)];
  if (parameters.length > 0) operation.parameters = parameters;
  if (route.schema?.body !== undefined) {
    operation.requestBody = {
      required: !isOptionalBody(route.schema.body),
      content: { 'application/json': { schema: plain(route.schema.body) } },
    };
  }
  const security = securityOf(route.auth);
  if (security) operation.security = security;
  return operation;
}

/** Every `:name` of the template, typed by the params schema where it has one, else a string. */
function pathParameters(route: DescribedRoute, template: string): OpenApiParameter[] {
  const properties = propertiesOf(route.schema?.params);
  return [...template.matchAll(/:(\w+)/g)].map(([, name = '']) => ({
    name,
    in: 'path' as const,
    required: true,
    schema: properties[name] ?? { type: 'string' },
  }));
}

function queryParameters(route: DescribedRoute): OpenApiParameter[] {
  const schema = route.schema?.querystring as { required?: unknown } | undefined;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(propertiesOf(schema)).map(([name, property]) => {
    const parameter: OpenApiParameter = { name, in: 'query', required: required.has(name), schema: property };
    if (typeof property['description'] === 'string') parameter.description = property['description'];
    return parameter;
  });
}

function propertiesOf(schema: unknown): Record<string, JsonSchema> {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null) return {};
  return Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, plain(value)]));
}

function responsesOf(route: DescribedRoute): Record<string, OpenApiResponse | { $ref: string }> {
  const responses: Record<string, OpenApiResponse | { $ref: string }> = {};
  const declared = route.schema?.response;
  if (typeof declared === 'object' && declared !== null) {
    for (const [status, schema] of Object.entries(declared)) {
      const code = /^[1-5](\d\d|XX)$/.test(status) ? status : status === 'default' ? 'default' : undefined;
      if (!code) continue;
      responses[code] =
        code === '204'
          ? { description: 'No content' }
          : {
              description: `${code} response`,
              content: { 'application/json': { schema: plain(schema) } },
            };
    }
  }
  if (!Object.keys(responses).some((code) => code.startsWith('2'))) {
    responses['2XX'] = { description: 'Success; the body is described in the platform documentation' };
  }
  responses['429'] = { $ref: '#/components/responses/RateLimited' };
  responses['4XX'] = { $ref: '#/components/responses/ClientError' };
  return responses;
}

/** Any of the admitted credentials will do: one requirement object per credential kind. */
function securityOf(auth: RouteAuth | undefined): Record<string, string[]>[] | undefined {
  if (!auth) return undefined;
  const security: Record<string, string[]>[] = [];
  if (auth.bot) security.push({ [SECURITY_SCHEMES.BotToken]: [] });
  if (auth.bearer) security.push({ [SECURITY_SCHEMES.OAuth2]: [...auth.bearer] });
  if (auth.user) security.push({ [SECURITY_SCHEMES.UserSession]: [] });
  return security;
}

/** A TypeBox schema as plain JSON (its symbol keys and any undefined values dropped). */
function plain(schema: unknown): JsonSchema {
  if (typeof schema !== 'object' || schema === null) return {};
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}

/** One operation as the index page lists it. */
export interface ListedOperation {
  method: string;
  path: string;
  operationId: string;
  auth: string;
}

/**
 * The documents, one per API prefix, built once when the server is ready (every route registered by then),
 * with their index pages, and served as they are.
 */
export class OpenApiDocuments {
  readonly #routes: readonly DescribedRoute[];
  #built = new Map<string, { json: string; page: string }>();

  constructor(routes: readonly DescribedRoute[]) {
    this.#routes = routes;
  }

  /** Builds every prefix's document and page; call once all routes are registered (the server's onReady). */
  build(): void {
    this.#built = new Map(
      apiPrefixes().map((prefix) => {
        const document = buildOpenApiDocument(this.#routes, prefix);
        return [prefix, { json: JSON.stringify(document), page: docsPage(prefix, operationsOf(document)) }];
      }),
    );
  }

  /** The serialized document of a prefix. */
  json(prefix: string): string {
    return this.#of(prefix).json;
  }

  /** The HTML index of a prefix's operations. */
  page(prefix: string): string {
    return this.#of(prefix).page;
  }

  /** Built now if the server was not made ready first (an embedder calling inject). */
  #of(prefix: string): { json: string; page: string } {
    if (this.#built.size === 0) this.build();
    const built = this.#built.get(prefix);
    if (!built) throw new Error(`no OpenAPI document for ${prefix}`);
    return built;
  }
}

/** The operations of a document, HEAD aside (each is its GET), for the index page. */
export function operationsOf(document: OpenApiDocument): ListedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method) && method !== 'head')
      .map(([method, operation]: [string, OpenApiOperation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        auth: (operation.security ?? []).flatMap(describeRequirement).join(', '),
      })),
  );
}

function describeRequirement(requirement: Record<string, string[]>): string[] {
  return Object.entries(requirement).map(([scheme, scopes]) =>
    scheme === SECURITY_SCHEMES.OAuth2
      ? `Bearer${scopes.length > 0 ? ` (${scopes.join(' ')})` : ''}`
      : scheme === SECURITY_SCHEMES.BotToken
        ? 'Bot'
        : 'user session',
  );
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/**
 * Under each API prefix: `GET /openapi.json`, the document of that prefix, and `GET /docs`, a self-contained
 * page listing its operations (no script, no CDN).
 */
export function openApiRoutes(documents: OpenApiDocuments): FastifyPluginAsync {
  const prefixOf = (url: string | undefined) => url?.slice(0, url.lastIndexOf('/')) ?? '/api/v10';
  return async (app) => {
    app.get('/openapi.json', async (request, reply) =>
      reply.type('application/json').send(documents.json(prefixOf(request.routeOptions.url))),
    );
    app.get('/docs', async (request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
        .send(documents.page(prefixOf(request.routeOptions.url))),
    );
  };
}

function docsPage(prefix: string, operations: readonly ListedOperation[]): string {
  const rows = operations
    .map(
      (op) =>
        `<tr id="${escapeHtml(op.operationId)}"><td><code>${op.method}</code></td>` +
        `<td><code>${escapeHtml(op.path)}</code></td><td>${escapeHtml(op.auth || 'none')}</td>` +
        `<td><code>${escapeHtml(op.operationId)}</code></td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hearth HTTP API</title>
<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:left}</style>
</head><body>
<h1>Hearth HTTP API</h1>
<p>The OpenAPI 3.1 description of these operations: <a href="${prefix}/openapi.json">${prefix}/openapi.json</a>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>Credentials</th><th>operationId</th></tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`;
}
