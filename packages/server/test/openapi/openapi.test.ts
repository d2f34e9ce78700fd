import { isSnowflake } from '@hearth/protocol';
import { Ajv2020, type AnySchema } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type TestHearth } from '../../../../test-support/hearth.js';
import { createGame, type TestGame } from '../../../../test-support/oauth.js';
import {
  buildOpenApiDocument,
  type OpenApiDocument,
  OpenApiDocuments,
  type OpenApiOperation,
  type OpenApiResponse,
  openApiPath,
  operationIdOf,
} from '../../src/http/openapi.js';

/**
 * Issue 22, served OpenAPI: the server describes its own routes at /api/v{N}/openapi.json, generated at
 * start-up from the routes it registered (asked of the server, not listed here) and their TypeBox schemas.
 */

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

let hearth: TestHearth;
let game: TestGame;
const documents = new Map<string, OpenApiDocument>();

async function fetchDocument(prefix: string): Promise<OpenApiDocument> {
  const response = await fetch(`${hearth.url}${prefix}/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as OpenApiDocument;
}

beforeAll(async () => {
  hearth = await startHearth();
  game = await createGame(hearth);
  for (const prefix of ['/api/v10', '/api/v9', '/api']) documents.set(prefix, await fetchDocument(prefix));
});

afterAll(async () => {
  await hearth?.close();
});

const v10 = () => documents.get('/api/v10') as OpenApiDocument;

function operationsOf(document: OpenApiDocument): [string, string, OpenApiOperation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.flatMap((method) => {
      const operation = item[method];
      return operation ? [[path, method, operation] as [string, string, OpenApiOperation]] : [];
    }),
  );
}

/** Follows a local `$ref` (`#/components/...`); fails the test for one that points nowhere. */
function resolve(document: OpenApiDocument, ref: string): unknown {
  expect(ref.startsWith('#/')).toBe(true);
  let node: unknown = document;
  for (const segment of ref.slice(2).split('/')) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    node = (node as Record<string, unknown> | undefined)?.[key];
    expect(node, `${ref} resolves`).toBeDefined();
  }
  return node;
}

function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner);
      else refsIn(inner, found);
    }
  }
  return found;
}

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, logger: false });
  addFormats.default(ajv);
  ajv.addFormat('snowflake', { type: 'string', validate: isSnowflake });
  return ajv;
}

/** Every JSON Schema the document embeds, with where it sits. */
function schemasOf(document: OpenApiDocument): [string, AnySchema][] {
  const found: [string, AnySchema][] = Object.entries(document.components.schemas).map(([name, schema]) => [
    `components/schemas/${name}`,
    schema,
  ]);
  for (const [path, method, operation] of operationsOf(document)) {
    const at = `${method.toUpperCase()} ${path}`;
    for (const parameter of operation.parameters ?? [])
      found.push([`${at} ${parameter.in} ${parameter.name}`, parameter.schema]);
    for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}))
      found.push([`${at} body ${type}`, media.schema]);
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const [type, media] of Object.entries((response as OpenApiResponse).content ?? {}))
        found.push([`${at} ${status} ${type}`, media.schema]);
    }
  }
  return found;
}

describe('GET /api/v{N}/openapi.json', () => {
  it('describes every route the server registered, under each version and the unversioned prefix', () => {
    for (const [prefix, document] of documents) {
      const expected = hearth.routes.filter((route) =>
        prefix === '/api'
          ? !/^\/api\/v\d+\//.test(route.url)
          : route.url.startsWith(`${prefix}/`) || !route.url.startsWith('/api/'),
      );
      expect(expected.length).toBeGreaterThan(100);
      const missing = expected.filter(
        (route) => !document.paths[openApiPath(route.url)]?.[route.method.toLowerCase() as 'get'],
      );
      expect(missing.map((route) => `${route.method} ${route.url}`)).toEqual([]);
      // And nothing the server does not serve.
      expect(operationsOf(document).length).toBe(expected.length);
    }
    // The documents themselves and the index page are routes like the others.
    expect(v10().paths['/api/v10/openapi.json']?.get).toBeDefined();
    expect(v10().paths['/api/v10/docs']?.get).toBeDefined();
    expect(documents.get('/api')?.paths['/api/docs']?.get).toBeDefined();
    expect(documents.get('/api/v9')?.paths['/api/v9/channels/{channel_id}']?.patch).toBeDefined();
    expect(documents.get('/api')?.paths['/api/channels/{channel_id}']?.patch).toBeDefined();
    expect(v10().paths['/api/v9/channels/{channel_id}']).toBeUndefined();
  });

  it('is a structurally valid OpenAPI 3.1 document', () => {
    for (const document of documents.values()) {
      expect(document.openapi).toBe('3.1.0');
      expect(typeof document.info.title).toBe('string');
      expect(typeof document.info.version).toBe('string');
      expect(document.servers.length).toBeGreaterThan(0);
      const ids = new Set<string>();
      const declaredTags = new Set(document.tags.map((tag) => tag.name));
      const schemes = document.components.securitySchemes;
      const oauthScopes = Object.keys(
        (schemes['OAuth2'] as { flows: { authorizationCode: { scopes: Record<string, string> } } }).flows
          .authorizationCode.scopes,
      );
      for (const [path, method, operation] of operationsOf(document)) {
        const at = `${method} ${path}`;
        expect(path, at).toMatch(/^\/[^:]*$/);
        expect(ids.has(operation.operationId), `${at}: operationId ${operation.operationId} unique`).toBe(
          false,
        );
        ids.add(operation.operationId);
        expect(operation.operationId, at).toMatch(/^[A-Za-z0-9_]+$/);
        for (const tag of operation.tags) expect(declaredTags.has(tag), `${at}: tag ${tag}`).toBe(true);
        // Every `{name}` of the path has exactly one required path parameter, and no other exists.
        const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        const inPath = (operation.parameters ?? []).filter((p) => p.in === 'path');
        expect(inPath.map((p) => p.name).sort(), at).toEqual([...templated].sort());
        for (const parameter of inPath) expect(parameter.required, at).toBe(true);
        const keys = (operation.parameters ?? []).map((p) => `${p.in}:${p.name}`);
        expect(new Set(keys).size, `${at}: parameters unique`).toBe(keys.length);
        expect(Object.keys(operation.responses).length, at).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(operation.responses)) {
          expect(status, at).toMatch(/^([1-5](\d\d|XX)|default)$/);
          if (!('$ref' in response)) expect(typeof response.description, at).toBe('string');
        }
        for (const requirement of operation.security ?? []) {
          for (const [scheme, scopes] of Object.entries(requirement)) {
            expect(schemes[scheme], `${at}: scheme ${scheme}`).toBeDefined();
            for (const scope of scopes) expect(oauthScopes, `${at}: scope ${scope}`).toContain(scope);
          }
        }
      }
      for (const ref of refsIn(document)) resolve(document, ref);
    }
  });

  it('embeds only JSON Schemas that compile (JSON Schema 2020-12, the dialect it declares)', () => {
    const document = v10();
    expect(document.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    const ajv = newAjv();
    const schemas = schemasOf(document);
    expect(schemas.length).toBeGreaterThan(200);
    const failures: string[] = [];
    for (const [at, schema] of schemas) {
      try {
        ajv.compile(schema);
      } catch (error) {
        failures.push(`${at}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('maps each route’s credentials to security requirements, with the bearer scopes it needs', () => {
    const me = v10().paths['/api/v10/users/@me']?.get;
    expect(me?.security).toEqual([{ BotToken: [] }, { OAuth2: ['identify'] }, { UserSession: [] }]);
    const lobbyMessages = v10().paths['/api/v10/lobbies/{lobby_id}/messages']?.post;
    expect(lobbyMessages?.security).toEqual([{ OAuth2: ['lobbies.write'] }]);
    expect(v10().paths['/api/v10/gateway/bot']?.get?.security).toEqual([{ BotToken: [] }]);
    // A route anyone may call has no requirement at all.
    expect(v10().paths['/api/v10/gateway']?.get?.security).toBeUndefined();
    expect(v10().components.securitySchemes['OAuth2']).toMatchObject({
      type: 'oauth2',
      flows: {
        authorizationCode: { tokenUrl: '/api/v10/oauth2/token', authorizationUrl: '/oauth2/authorize' },
      },
    });
    expect(documents.get('/api/v9')?.components.securitySchemes['OAuth2']).toMatchObject({
      flows: { authorizationCode: { tokenUrl: '/api/v9/oauth2/token' } },
    });
  });

  it('takes parameters and bodies from the route schemas', () => {
    const bans = v10().paths['/api/v10/guilds/{guild_id}/bans']?.get;
    const guildId = bans?.parameters?.find((p) => p.name === 'guild_id');
    expect(guildId).toMatchObject({ in: 'path', required: true, schema: { type: 'string' } });
    const limit = bans?.parameters?.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', maximum: 1000 } });
    const register = v10().paths['/api/v10/auth/register']?.post;
    const body = register?.requestBody?.content['application/json']?.schema as {
      properties?: Record<string, unknown>;
    };
    expect(Object.keys(body.properties ?? {})).toEqual(expect.arrayContaining(['username', 'password']));
    // A path parameter no schema types is still there, as a string.
    const avatar = v10().paths['/avatars/{user_id}/{file}']?.get;
    expect(avatar?.parameters?.map((p) => [p.name, p.schema])).toEqual([
      ['user_id', { type: 'string' }],
      ['file', { type: 'string' }],
    ]);
  });

  it('describes the body of every write route that takes JSON; the rest are listed here with their reason', () => {
    const writes = operationsOf(v10()).filter(
      ([path, method]) => path.startsWith('/api/v10/') && ['post', 'put', 'patch'].includes(method),
    );
    const without = writes
      .filter(([, , operation]) => operation.requestBody === undefined)
      .map(([path, method]) => `${method.toUpperCase()} ${path.slice('/api/v10'.length)}`);
    expect(without.sort()).toEqual(Object.keys(UNDESCRIBED_BODIES).sort());
    expect(writes.length - without.length).toBeGreaterThanOrEqual(67);
  });

  it('marks a body that may be left out as not required, and checks a present one in the platform’s words', async () => {
    const body = (path: string, method: 'post' | 'put' | 'patch') => v10().paths[`/api/v10${path}`]?.[method];
    expect(body('/channels/{channel_id}/messages', 'post')?.requestBody?.required).toBe(false);
    expect(body('/guilds/{guild_id}/bulk-ban', 'post')?.requestBody?.required).toBe(true);
    const dm = body('/users/@me/channels', 'post')?.requestBody?.content['application/json']?.schema;
    expect(dm).toMatchObject({ properties: { recipient_id: { type: 'string' } } });
    const refused = await hearth.api('/users/@me/channels', {
      method: 'POST',
      auth: `Bot ${game.botToken}`,
      body: { recipient_id: 5 },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { recipient_id: { _errors: [{ code: 'BASE_TYPE_STRING' }] } },
    });
    // Left out, the route's own default applies: an empty body, refused at its required field.
    const absent = await hearth.api('/users/@me/channels', { method: 'POST', auth: `Bot ${game.botToken}` });
    expect(absent.status).toBe(400);
    expect(await absent.json()).toMatchObject({
      code: 50035,
      errors: { recipient_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] } },
    });
  });

  it('describes responses truthfully: what the server answers validates against the schema it publishes', async () => {
    const ajv = newAjv();
    const cases: [string, string, string | undefined][] = [
      ['/api/v10/gateway', '/api/v10/gateway', undefined],
      ['/api/v10/gateway/bot', '/api/v10/gateway/bot', `Bot ${game.botToken}`],
      ['/api/v10/applications/@me', '/api/v10/applications/@me', `Bot ${game.botToken}`],
    ];
    for (const [path, url, auth] of cases) {
      const response = await fetch(`${hearth.url}${url}`, auth ? { headers: { authorization: auth } } : {});
      expect(response.status).toBe(200);
      const described = v10().paths[path]?.get?.responses['200'] as OpenApiResponse;
      const schema = described.content?.['application/json']?.schema;
      expect(schema, path).toBeDefined();
      const validate = ajv.compile(schema as AnySchema);
      expect(validate(await response.json()), `${path}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });

  it('has operation ids that do not depend on the order routes were registered in', () => {
    const reversed = [...hearth.routes].reverse();
    expect(buildOpenApiDocument(reversed, '/api/v10')).toEqual(v10());
    expect(v10().paths['/api/v10/channels/{channel_id}/messages']?.get?.operationId).toBe(
      'get_channels_by_channel_id_messages',
    );
    expect(operationIdOf('GET', '/users/@me')).toBe('get_users_me');
    // The consent page and the API's redirect to it share a path once the prefix is off: both are there.
    expect(v10().paths['/oauth2/authorize']?.get?.operationId).toBe('get_oauth2_authorize_page');
    expect(v10().paths['/api/v10/oauth2/authorize']?.get?.operationId).toBe('get_oauth2_authorize');
  });

  it('lists the probes the image and compose.yaml check (Dockerfile: /healthz; compose: /readyz)', async () => {
    for (const path of ['/healthz', '/readyz']) {
      expect(v10().paths[path]?.get, path).toBeDefined();
      expect((await fetch(`${hearth.url}${path}`)).status, path).toBe(200);
    }
  });

  it('answers HEAD, and an unknown version as every other route does', async () => {
    const head = await fetch(`${hearth.url}/api/v10/openapi.json`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    const unknown = await fetch(`${hearth.url}/api/v8/openapi.json`);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 50041 });
    const post = await fetch(`${hearth.url}/api/v10/openapi.json`, { method: 'POST' });
    expect(post.status).toBe(404);
    expect(await post.json()).toMatchObject({ code: 0 });
  });
});

describe('GET /api/docs', () => {
  it('lists every operation of its version in a self-contained page, with no script', async () => {
    const response = await fetch(`${hearth.url}/api/v10/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).not.toMatch(/<script|https?:\/\//i);
    expect(html).toContain('href="/api/v10/openapi.json"');
    const listed = operationsOf(v10()).filter(([, method]) => method !== 'head');
    for (const [, , operation] of listed) expect(html).toContain(`id="${operation.operationId}"`);
    // Paths are escaped, never markup.
    expect(html).toContain('<code>/api/v10/channels/{channel_id}</code>');
    const unversioned = await (await fetch(`${hearth.url}/api/docs`)).text();
    expect(unversioned).toContain('href="/api/openapi.json"');
    expect(unversioned).toContain('<code>/api/channels/{channel_id}</code>');
    expect(unversioned).not.toContain('/api/v10/channels/');
  });

  it('writes paths and operation ids as text, never as markup', () => {
    const hostile = new OpenApiDocuments([
      {
        method: 'GET',
        url: '/api/v10/things/<img src=x onerror=alert(1)>',
        auth: undefined,
        schema: undefined,
      },
    ]);
    const page = hostile.page('/api/v10');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(() => hostile.page('/api/v8')).toThrow();
  });
});

/**
 * The write routes of /api/v10 whose body the description leaves out, each with its reason. A route that
 * takes no body has nothing to describe; the others are read by hand or as forms, and are yet to be described.
 */
const UNDESCRIBED_BODIES: Record<string, string> = {
  // ---- No body: the path says everything ----
  'POST /applications/{application_id}/entitlements/{entitlement_id}/consume': 'no body',
  'POST /auth/logout': 'no body: the session is the Authorization header',
  'POST /channels/{channel_id}/messages/{message_id}/crosspost': 'no body',
  'PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me': 'no body',
  'PUT /channels/{channel_id}/messages/pins/{message_id}': 'no body',
  'PUT /channels/{channel_id}/pins/{message_id}': 'no body (the deprecated pin route)',
  'PUT /channels/{channel_id}/thread-members/{user_id}': 'no body',
  'PUT /channels/{channel_id}/thread-members/@me': 'no body',
  'POST /channels/{channel_id}/typing': 'no body',
  'PUT /guilds/{guild_id}/members/{user_id}/roles/{role_id}': 'no body',
  'POST /invites/{code}': 'no body: accepting an invite',
  'POST /lobbies/{lobby_id}/members/{user_id}/invites': 'no body',
  'POST /lobbies/{lobby_id}/members/@me/invites': 'no body',
  'POST /users/{user_id}/messages/{message_id}/activity-invite/accept': 'no body',
  // ---- RFC 6749 / RFC 7009: form bodies, refused as {error, error_description}, not 50035 ----
  'POST /oauth2/token': 'an application/x-www-form-urlencoded body with RFC 6749 errors',
  'POST /oauth2/token/revoke': 'an application/x-www-form-urlencoded body with RFC 7009 errors',
  // ---- Read by hand, so each refusal lands at its own path with the platform's codes ----
  'POST /applications/{application_id}/commands': 'a command body, read by commands/command-body.ts',
  'PUT /applications/{application_id}/commands': 'command bodies, read by commands/command-body.ts',
  'PATCH /applications/{application_id}/commands/{command_id}': 'read by commands/command-body.ts',
  'POST /applications/{application_id}/guilds/{guild_id}/commands': 'read by commands/command-body.ts',
  'PUT /applications/{application_id}/guilds/{guild_id}/commands': 'read by commands/command-body.ts',
  'PATCH /applications/{application_id}/guilds/{guild_id}/commands/{command_id}':
    'read by commands/command-body.ts',
  'PATCH /webhooks/{application_id}/{interaction_token}/messages/{message_id}':
    'a deferred response’s first edit takes a new message’s body, any other edit an edit’s',
  // ---- One route, two bodies: which one depends on the channel ----
  'PATCH /channels/{channel_id}': 'a channel’s changes or a thread’s, by the kind of channel',
  'POST /channels/{channel_id}/threads': 'a thread or a forum post, by the kind of parent channel',
};
