import { rm } from 'node:fs/promises';
import type { ServerOptions } from 'node:http';
import type { Readable } from 'node:stream';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { API_VERSIONS, JSON_CONTENT_TYPE, MAX_JSON_BODY_BYTES, RATE_LIMITED_VIA } from '@hearth/protocol';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyContextConfig,
  type FastifyError,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type FastifySerializerCompiler,
  type FastifyServerOptions,
  LogController,
  type onRequestHookHandler,
  type RouteOptions,
} from 'fastify';
import type { Bindings, ChildLoggerOptions, Level } from 'pino';
import type { TSchema } from 'typebox';
import type { Clock } from '../kernel/clock.js';
import { HearthError, type WireError } from '../kernel/errors.js';
import { assertJsonDepth, assertNoNul } from '../kernel/input-limits.js';
import type { Logger } from '../kernel/logger.js';
import { after, type MaybePromise } from '../kernel/maybe.js';
import { compileValidator, isOptionalBody, type Part, toFormError } from '../kernel/validation.js';
import {
  REQUEST_ID_HEADER,
  type RequestContext,
  requestIdFrom,
  runInRequest,
} from '../ops/request-context.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import {
  type Authenticators,
  assertAdmitted,
  type Principal,
  type RouteAuth,
  resolvePrincipal,
} from './auth.js';
import { answerCors } from './cors.js';
import { renderClientError, toWireError } from './error-renderer.js';
import { type FileUploads, readMultipart, type UploadedFile } from './multipart.js';
import { applyRateLimits, type RouteBucket, type RouteRateLimit, routeBucket } from './rate-limit.js';
import { answerSdkVersion } from './sdk-version.js';
import { forSerialization } from './serializer-schema.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** The `files[n]` parts of a multipart body, on routes with `files`; removed after the response. */
    uploads: UploadedFile[] | null;
    /** The request's context (ops/request-context.ts): what it causes on this node names it. */
    requestContext: RequestContext | null;
  }
  interface FastifyContextConfig {
    /** Who may call the route; absent: anyone. */
    auth?: RouteAuth;
    /** The route's own bucket; absent: the default bucket. */
    rateLimit?: RouteRateLimit;
    bucket?: RouteBucket;
    legacyAlias?: boolean;
    /** The route takes `files[n]` parts in multipart bodies; absent: they are refused (50035). */
    files?: FileUploads;
    /** File parts of a multipart body read as text fields (an invite's `target_users_file`). */
    textFiles?: readonly string[];
  }
}

export interface HttpDeps {
  logger: Logger;
  clock: Clock;
  rateLimits: RateLimitStore;
  authenticators: Authenticators;
  /** Requests per second per identity. */
  globalPerSecond: number;
  /** Told of every response as sent (tests check each against the reference description). */
  observeResponse?: ResponseObserver | undefined;
  /** How long a client may take to send its headers, and its whole request (ms): slow clients are cut off. */
  timeouts?: HttpTimeouts;
  /** Which hops' `X-Forwarded-For` to believe (`--trust-proxy`): `request.ip` is then the client behind them. */
  trustProxy?: ((address: string, hop: number) => boolean) | undefined;
  /** Emulator mode's fault rules (emulator/faults.ts), asked after authentication; undefined otherwise. */
  faults?: RequestFaults | undefined;
}

/** A hook on every API request: true when it answered (or dropped) the request itself. */
export interface RequestFaults {
  onRequest(request: FastifyRequest, reply: FastifyReply): Promise<boolean>;
}

export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
}

/** How often Node looks for requests past their timeouts (its default, 30 s, would let them linger). */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** One response as it leaves the server, after serialization. */
export interface ObservedResponse {
  method: string;
  /** The matched route as registered, prefix included (`/api/v10/users/:user_id`); undefined: no route. */
  route: string | undefined;
  /** The path asked for, without the query. */
  path: string;
  status: number;
  contentType: string | undefined;
  /** The body as sent; undefined when there is none or it is a stream. */
  body: string | Buffer | undefined;
}

export type ResponseObserver = (response: ObservedResponse) => void;

const API_PREFIX = /^\/api(\/v\d+)?(?=\/)/;

/**
 * A client that trickles its headers (slowloris) or its body holds a socket until Node answers it 408 and
 * closes; Node refuses a headers timeout longer than the request timeout, so it is capped there.
 */
function timeoutOptions(timeouts: HttpTimeouts): { requestTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: timeouts.requestMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, timeouts.headersMs),
    },
  };
}

/**
 * The Fastify instance with the platform's conventions: error bodies, body parsing, validation wording,
 * authentication, rate limits. `api` plugins are served under `/api/v10`, `/api/v9` and the legacy `/api`.
 */
export function createHttpServer(
  deps: HttpDeps,
  api: FastifyPluginAsync[],
  pages: FastifyPluginAsync[] = [],
): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request, written by the onResponse hook below, with credentials never in it.
    logController: new LogController({ disableRequestLogging: true }),
    // The client's (or its proxy's) X-Request-Id when well formed, so that one id follows a request across hops.
    genReqId: (raw) => requestIdFrom(raw.headers[REQUEST_ID_HEADER]),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: MAX_JSON_BODY_BYTES,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    rewriteUrl: (raw) => decodePathSegments(raw.url ?? '/'),
    ...(deps.timeouts ? timeoutOptions(deps.timeouts) : {}),
    ...(deps.trustProxy ? { trustProxy: deps.trustProxy } : {}),
    // Router and HTTP-parser failures get the same body as everything else (error-renderer.ts).
    frameworkErrors: renderRouterError,
    clientErrorHandler: renderClientError,
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('uploads', null);
  app.decorateRequest('requestContext', null);
  // First of all hooks: the id is answered on every response, and a preflight is answered whatever the route
  // (before the routes' own hooks: authentication, limits). One hook: each costs a turn of Fastify's runner.
  // Carrying the request's context costs every promise of every request (async hooks on Node 20: 15 % of
  // read-path throughput), so the lines a request causes elsewhere name it only when debug lines are written.
  const carryContext = deps.logger.isLevelEnabled('debug');
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    if (answerCors(request, reply)) return;
    if (!carryContext) return done();
    request.requestContext = { requestId: request.id, active: true };
    runInRequest(request.requestContext, done);
  });
  if (carryContext) {
    app.addHook('onResponse', (request, _reply, done) => {
      if (request.requestContext) request.requestContext.active = false;
      done();
    });
  }
  app.addHook('onSend', (_request, reply, payload, done) => {
    // Fastify appends `; charset=utf-8`; the platform does not, and discord.py compares the whole header.
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && JSON_WITH_CHARSET.test(type))
      reply.header('content-type', JSON_CONTENT_TYPE);
    if (reply.statusCode === 429 && !reply.hasHeader('via')) reply.header('via', RATE_LIMITED_VIA);
    done(null, payload);
  });
  // Each hook stage a request passes costs it a turn of Fastify's runner: the stages below are added only
  // where they have work (a request line to write, uploads to remove).
  if (deps.logger.isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        { method: request.method, url: request.url.split('?')[0], status: reply.statusCode },
        'request',
      );
      done();
    });
  }
  app.addHook('onRoute', (route) => {
    if (route.config?.files) removeUploadsAfter(route);
  });
  if (deps.observeResponse) observeResponses(app, deps.observeResponse);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const validate = compileValidator(schema as TSchema, (httpPart ?? 'body') as Part);
    // Fastify hands an absent body over as null; on a route whose body is optional it stays absent.
    const absentAllowed = (httpPart ?? 'body') === 'body' && isOptionalBody(schema);
    return (data: unknown) => {
      if (absentAllowed && data === null) return { value: undefined };
      return validate(data) ? { value: data } : { error: toFormError(validate.errors ?? []) };
    };
  });
  app.setSerializerCompiler(compileSerializer);
  registerBodyParsers(app);
  app.setErrorHandler(renderError);
  // After validation, before any handler: a NUL reaches neither rules nor storage (PostgreSQL refuses it).
  app.addHook('preHandler', (request, _reply, done) => {
    assertNoNul({ params: request.params, query: request.query, body: request.body });
    done();
  });
  app.setNotFoundHandler((request, reply) => {
    const version = /^\/api\/v(\d+)\//.exec(request.url)?.[1];
    const known = API_VERSIONS.some((v) => String(v) === version);
    const error = new HearthError(version !== undefined && !known ? 'InvalidAPIVersion' : 'GeneralNotFound');
    return reply.code(error.status).send(error.body());
  });
  const defaultLimit = { limit: deps.globalPerSecond * 5, windowMs: 5000 };
  const faults = deps.faults;
  const limiter = { store: deps.rateLimits, clock: deps.clock, globalPerSecond: deps.globalPerSecond };
  // Limits first: a refused credential still spends its caller's (IP) budget, so guessing is throttled.
  const limitAndAdmit = (
    request: FastifyRequest,
    reply: FastifyReply,
    config: FastifyContextConfig,
  ): MaybePromise<boolean> => {
    const limited = config.bucket
      ? applyRateLimits(request, reply, config.bucket, config.legacyAlias === true, limiter)
      : false;
    return after(limited, (replied) => {
      if (!replied && config.auth) assertAdmitted(request, config.auth);
      return replied;
    });
  };
  const admit = (
    request: FastifyRequest,
    reply: FastifyReply,
    config: FastifyContextConfig,
    principal: Principal | undefined,
  ): MaybePromise<boolean> => {
    request.principal = principal ?? null;
    if (faults === undefined) return limitAndAdmit(request, reply, config);
    return faults
      .onRequest(request, reply)
      .then((replied) => replied || limitAndAdmit(request, reply, config));
  };
  /**
   * Every API request: its SDK version, its principal, the emulator's faults, its limits, its route's callers.
   * A callback hook that finishes at once when the credential was kept and the limits count in process, with
   * no promise or microtask turn; answers whether it replied (a 429, a fault).
   */
  const gate = (
    request: FastifyRequest,
    reply: FastifyReply,
    config: FastifyContextConfig,
  ): MaybePromise<boolean> => {
    answerSdkVersion(request, reply, deps.clock);
    const header = request.headers.authorization;
    if (!header) return admit(request, reply, config, undefined);
    return after(resolvePrincipal(header, deps.authenticators, request.raw.socket ?? null), (principal) =>
      admit(request, reply, config, principal),
    );
  };
  // Each route's own first hook, holding its config: `request.routeOptions` makes a new object of eleven
  // fields, and asks the router about version constraints, on every read.
  const gateOf =
    (config: FastifyContextConfig): onRequestHookHandler =>
    (request, reply, done) => {
      let replied: MaybePromise<boolean>;
      try {
        replied = gate(request, reply, config);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (replied === false) done();
      else if (replied !== true) {
        replied.then((sent) => {
          if (!sent) done();
        }, done);
      }
    };
  for (const prefix of [...API_VERSIONS.map((v) => `/api/v${v}`), '/api']) {
    void app.register(
      async (scope) => {
        scope.addHook('onRoute', (route) => {
          const template = route.url.replace(API_PREFIX, '');
          const limit = route.config?.rateLimit ?? defaultLimit;
          const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
          const config = {
            ...route.config,
            legacyAlias: prefix === '/api',
            bucket: routeBucket(methods, template, limit),
          };
          route.config = config;
          // Before the route's own hooks, as every hook of this scope would run.
          route.onRequest = [gateOf(config), ...hookList(route.onRequest)];
        });
        for (const plugin of api) await scope.register(plugin);
      },
      { prefix },
    );
  }
  for (const plugin of pages) void app.register(plugin);
  return app;
}

const JSON_WITH_CHARSET = /^application\/json;\s*charset=utf-8$/i;

/** Fastify's own response serializer compiler, as it builds it when no schema is added with addSchema. */
const buildSerializer = SerializerSelector()({}, {});
const serializers = new WeakMap<object, (data: unknown) => string>();

/**
 * Each response schema is compiled once per process, not once per route prefix and server: the schemas are
 * module constants, and compiling them was most of what starting a server cost (about 1.5 s of CPU). It is
 * compiled in the form that writes without validating (serializer-schema.ts).
 */
const compileSerializer: FastifySerializerCompiler<unknown> = (route) => {
  const schema = route.schema as object;
  let serialize = serializers.get(schema);
  if (!serialize) {
    serialize = buildSerializer({
      ...route,
      schema: forSerialization(schema),
      httpStatus: route.httpStatus ?? '',
    });
    serializers.set(schema, serialize);
  }
  return serialize;
};

/** Reserved characters find-my-way routes in their encoded form (it decodes them only inside parameters). */
const ENCODED_RESERVED = /%(?:24|26|2b|2c|3a|3b|3d|40)/gi;

/**
 * The request target with `%40`, `%3A` and the other reserved characters of its path decoded, so that
 * `/users/%40me` routes as `/users/@me` (@discordjs/core encodes every segment). `%2F`, `%3F`, `%23` and
 * `%25` stay encoded: decoding them would change where segments or the query begin.
 */
export function decodePathSegments(url: string): string {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  if (!path.includes('%')) return url;
  const decoded = path.replace(ENCODED_RESERVED, (encoded) =>
    String.fromCharCode(Number.parseInt(encoded.slice(1), 16)),
  );
  return end === -1 ? decoded : decoded + url.slice(end);
}

/**
 * Files a request's owner kept were moved away; whatever is left of them goes, whatever the outcome, and
 * before the answer leaves: a client told "refused" finds nothing of its upload on disk. Only a route that
 * takes files (`config.files`) is given uploads by the multipart parser.
 */
function removeUploadsAfter(route: RouteOptions): void {
  route.onSend = [
    ...hookList(route.onSend),
    (request, _reply, payload, done) =>
      removeUploads(request, (error) => (error ? done(error) : done(null, payload))),
  ];
  route.onResponse = [...hookList(route.onResponse), (request, _reply, done) => removeUploads(request, done)];
  route.onRequestAbort = [...hookList(route.onRequestAbort), (request, done) => removeUploads(request, done)];
}

function removeUploads(request: FastifyRequest, done: (error?: Error) => void): void {
  const uploads = request.uploads;
  if (!uploads) {
    done();
    return;
  }
  request.uploads = null;
  Promise.all(uploads.map((file) => rm(file.path, { force: true }))).then(() => done(), done);
}

function hookList<H>(hooks: H | H[] | undefined): H[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/** A root hook, so every route, the not-found handler, error replies and early 429s pass through it. */
function observeResponses(app: FastifyInstance, observe: ResponseObserver): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const contentType = reply.getHeader('content-type');
    observe({
      method: request.method,
      route: request.is404 ? undefined : request.routeOptions.url,
      path: request.url.split('?')[0] ?? request.url,
      status: reply.statusCode,
      contentType: contentType === undefined ? undefined : String(contentType),
      body: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : undefined,
    });
    return payload;
  });
}

/**
 * Fastify gives every request a child logger; with redaction, making one costs more than many requests'
 * own work. It is made on the first line actually written, or the first `child` asked of it (Fastify
 * checks every request's logger has one: a Proxy answering that check made the child every time).
 */
class RequestLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #write(level: Level, args: unknown[]): void {
    if (!(this.#parent as unknown as Logger).isLevelEnabled(level)) return;
    (this.#real()[level] as (...line: unknown[]) => void)(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#write('error', args);
  }

  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }

  info(...args: unknown[]): void {
    this.#write('info', args);
  }

  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }

  silent(): void {}
}

const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) => new RequestLogger(logger, bindings, options);

function registerBodyParsers(app: FastifyInstance): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw as string;
    if (body.length === 0) return done(null, undefined);
    try {
      assertJsonDepth(body);
    } catch (error) {
      return done(error as Error, undefined);
    }
    json(request, body, (error: Error | null, value?: unknown) =>
      error ? done(new HearthError('InvalidJSON'), undefined) : done(null, value),
    );
  });
  // Streamed: file parts go to disk as they arrive. The declared length is checked before anything is read.
  app.addContentTypeParser('multipart/form-data', async (request: FastifyRequest, payload: Readable) => {
    const files = request.routeOptions.config.files;
    const maxBodyBytes = files?.maxBodyBytes ?? request.routeOptions.bodyLimit ?? MAX_JSON_BODY_BYTES;
    if (Number(request.headers['content-length'] ?? 0) > maxBodyBytes) {
      throw new HearthError('RequestEntityTooLarge');
    }
    const form = await readMultipart(payload, request.headers['content-type'] ?? '', {
      maxBodyBytes,
      files,
      textFiles: request.routeOptions.config.textFiles,
    });
    if (files) request.uploads = form.files;
    return form.body;
  });
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      // A repeated key becomes an array, which every schema refuses where it expects one value.
      const form: Record<string, string | string[]> = Object.create(null);
      for (const [key, value] of new URLSearchParams(body as string)) {
        const previous = form[key];
        form[key] =
          previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
      }
      done(null, { ...form });
    },
  );
}

/**
 * What the router refuses before any route or hook runs (an over-long parameter, bad percent-encoding):
 * written as is, since Fastify would add the `; charset=utf-8` only the onSend hooks of a route remove.
 */
function renderRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const wire = toWireError(error) ?? new HearthError('GeneralBadRequest');
  reply.hijack();
  reply.raw
    .writeHead(wire.status, { 'content-type': JSON_CONTENT_TYPE, [REQUEST_ID_HEADER]: request.id })
    .end(JSON.stringify(wire.body()));
}

/** The error handler of every route, the router and the body parsers: the platform's body, or a logged 500. */
function renderError(error: FastifyError | WireError, request: FastifyRequest, reply: FastifyReply) {
  const known = toWireError(error);
  if (known)
    return reply
      .code(known.status)
      .headers(known.headers ?? {})
      .send(known.body());
  request.log.error({ err: error }, 'unhandled error');
  const internal = new HearthError('GeneralInternalServerError');
  return reply.code(internal.status).send(internal.body());
}
