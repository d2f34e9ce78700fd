import {
  GatewayCloseCodes,
  GatewayOpcodes,
  JSON_CONTENT_TYPE,
  RATE_LIMITED_MESSAGE,
  RATE_LIMITED_VIA,
  RateLimitHeaders,
  RateLimitScopes,
} from '@hearth/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../kernel/clock.js';
import { HearthError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import { parse } from '../kernel/validation.js';
import { REQUEST_ID_HEADER } from '../ops/request-context.js';
import { parseDuration } from './clock.js';
import { type FaultRule, GatewayFaultRule, HttpFaultRule } from './schemas.js';

/** A rule as stored and listed: the request's fields plus its id, what is left of it, and when it ends. */
export type ActiveFault = FaultRule & { id: string; remaining: number | null; expires_at: string | null };

/** What a fault needs of a gateway connection (gateway/connection.ts implements it). */
export interface FaultConnection {
  readonly open: boolean;
  sendOp(op: number, d: unknown): void;
  close(code: number, reason?: string): void;
  /** Sends a recorded dispatch, bypassing the faults (a delayed one, when its time comes). */
  sendDispatch(sent: FaultDispatch): void;
}

export interface FaultDispatch {
  seq: number;
  t: string;
  d: unknown;
}

export interface FaultSession {
  id: string;
  identity: { userId: string; applicationId: string | undefined };
}

/** Ends a session for good (a non-resumable INVALID_SESSION): the gateway's `forget`. */
export type ForgetSession = (session: FaultSession) => void;

interface Stored {
  rule: FaultRule;
  id: string;
  remaining: number | undefined;
  expiresAt: number | undefined;
  /** `path` as a regular expression over the path after `/api/v{N}`. */
  path: RegExp | undefined;
}

/** How long a client told to reconnect (op 7) or re-identify (op 9) has before the server closes the socket. */
const CLOSE_AFTER_OP_MS = 5000;

/**
 * The emulator's fault rules (README "Fault injection"): HTTP requests answered with a 429, a 5xx, a delay
 * or a dropped socket; gateway dispatches turned into op 7, op 9, a close, a delay or a drop. Every fault
 * fired is logged naming its rule. With no rule the hooks return at their first line.
 */
export class Faults {
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #rules = new Map<string, Stored>();
  #nextId = 1;
  /** Dispatches held behind a delayed one, per connection, so that order is kept. */
  readonly #held = new WeakMap<FaultConnection, FaultDispatch[]>();
  forgetSession: ForgetSession | undefined;
  /** Leaves a session resumable while its socket stays open (the gateway's `detach`). */
  detachSession: ForgetSession | undefined;

  constructor(deps: { clock: Clock; logger: Logger }) {
    this.#clock = deps.clock;
    this.#logger = deps.logger;
  }

  get size(): number {
    return this.#rules.size;
  }

  /** Validates a rule against the schema of its `target` (so errors name its own fields), then adds it. */
  add(input: unknown): ActiveFault {
    const target = (input as { target?: unknown } | null)?.target;
    const rule: FaultRule =
      target === 'gateway' ? parse(GatewayFaultRule, input) : parse(HttpFaultRule, input);
    const problem = missingParameter(rule);
    if (problem) throw problem;
    const duration = rule.duration === undefined ? undefined : parseDuration(rule.duration);
    const id = String(this.#nextId++);
    const stored: Stored = {
      rule,
      id,
      // A rule with neither a count nor a duration fires once.
      remaining: rule.count ?? (duration === undefined ? 1 : undefined),
      expiresAt: duration === undefined ? undefined : this.#clock.now() + duration,
      path: rule.target === 'http' && rule.path !== undefined ? pathPattern(rule.path) : undefined,
    };
    this.#rules.set(id, stored);
    this.#logger.info({ fault: id, rule }, 'emulator fault rule added');
    return describe(stored);
  }

  list(): ActiveFault[] {
    this.#expire();
    return [...this.#rules.values()].map(describe);
  }

  /** Removes one rule (false when there is none by that id), or every rule. */
  clear(id?: string): boolean {
    if (id === undefined) {
      this.#rules.clear();
      return true;
    }
    return this.#rules.delete(id);
  }

  // ---- HTTP ----

  /** The API scope's hook, after authentication: true when the fault answered (or dropped) the request. */
  async onRequest(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    if (this.#rules.size === 0) return false;
    const path = (request.url.split('?')[0] ?? '').replace(/^\/api(\/v\d+)?(?=\/)/, '');
    const principal = request.principal;
    const stored = this.#take((rule) => {
      if (rule.rule.target !== 'http') return false;
      const r = rule.rule;
      return (
        (r.method === undefined || r.method === request.method) &&
        (rule.path === undefined || rule.path.test(path)) &&
        (r.application_id === undefined ||
          (principal !== null &&
            'applicationId' in principal &&
            principal.applicationId === r.application_id)) &&
        (r.user_id === undefined || principal?.userId === r.user_id)
      );
    });
    if (!stored) return false;
    const rule = stored.rule as HttpFaultRule;
    this.#logger.warn(
      { fault: stored.id, action: rule.action, method: request.method, path },
      'emulator: injected fault',
    );
    switch (rule.action) {
      case 'delay':
        await new Promise((resolve) => setTimeout(resolve, rule.delay_ms));
        return false;
      case 'drop':
        reply.hijack();
        request.raw.socket.destroy();
        return true;
      case 'error': {
        const status = rule.status ?? 500;
        const error = new HearthError('GeneralInternalServerError');
        writeRaw(request, reply, status, {}, { ...error.body(), message: `${status}: Injected fault` });
        return true;
      }
      case 'rate_limit':
        this.#rateLimited(request, reply, rule);
        return true;
    }
  }

  /** The platform's 429 (http/rate-limit.ts): the same headers and body, so clients wait `retry_after`. */
  #rateLimited(request: FastifyRequest, reply: FastifyReply, rule: HttpFaultRule): void {
    const seconds = rule.retry_after ?? 1;
    const now = this.#clock.now();
    const global = rule.global === true;
    const headers: Record<string, string> = {
      [RateLimitHeaders.RetryAfter]: String(Math.ceil(seconds)),
      [RateLimitHeaders.Scope]: global ? RateLimitScopes.Global : RateLimitScopes.User,
      via: RATE_LIMITED_VIA,
    };
    if (global) headers[RateLimitHeaders.Global] = 'true';
    else {
      const bucket = request.routeOptions.config.bucket;
      headers[RateLimitHeaders.Limit] = String(bucket?.limit.limit ?? 1);
      headers[RateLimitHeaders.Remaining] = '0';
      headers[RateLimitHeaders.Reset] = ((now + seconds * 1000) / 1000).toFixed(3);
      headers[RateLimitHeaders.ResetAfter] = seconds.toFixed(3);
      if (bucket) headers[RateLimitHeaders.Bucket] = bucket.hash;
    }
    writeRaw(request, reply, 429, headers, {
      message: RATE_LIMITED_MESSAGE,
      retry_after: seconds,
      global,
      code: 0,
    });
  }

  // ---- Gateway ----

  /** The connection's dispatch hook: true when the fault took the dispatch over (delayed, dropped, replaced). */
  onDispatch(connection: FaultConnection, session: FaultSession, sent: FaultDispatch): boolean {
    const held = this.#held.get(connection);
    if (held) {
      held.push(sent);
      return true;
    }
    if (this.#rules.size === 0) return false;
    const stored = this.#take((rule) => {
      if (rule.rule.target !== 'gateway') return false;
      const r = rule.rule;
      return (
        (r.session_id === undefined || r.session_id === session.id) &&
        (r.user_id === undefined || r.user_id === session.identity.userId) &&
        (r.application_id === undefined || r.application_id === session.identity.applicationId) &&
        (r.event === undefined || r.event === sent.t)
      );
    });
    if (!stored) return false;
    const rule = stored.rule as GatewayFaultRule;
    this.#logger.warn(
      { fault: stored.id, action: rule.action, session: session.id, t: sent.t, seq: sent.seq },
      'emulator: injected gateway fault',
    );
    // The dispatch stays in the session's buffer: a client that resumes gets it then.
    switch (rule.action) {
      case 'drop':
        return true;
      case 'delay':
        this.#held.set(connection, [sent]);
        setTimeout(() => {
          const waiting = this.#held.get(connection) ?? [];
          this.#held.delete(connection);
          if (connection.open) for (const item of waiting) connection.sendDispatch(item);
        }, rule.delay_ms).unref();
        return true;
      case 'reconnect':
        connection.sendOp(GatewayOpcodes.Reconnect, null);
        closeLater(connection);
        return true;
      case 'invalid_session': {
        const resumable = rule.resumable === true;
        // The client may send its Resume (or, not resumable, its Identify) on this very socket, as
        // discord.js does, or on a new one.
        this.detachSession?.(session);
        if (!resumable) this.forgetSession?.(session);
        connection.sendOp(GatewayOpcodes.InvalidSession, resumable);
        return true;
      }
      case 'close':
        connection.close(rule.code ?? GatewayCloseCodes.UnknownError, 'Injected fault');
        return true;
    }
  }

  /** The first live rule `matches` accepts, with one use spent; spent and expired rules go. */
  #take(matches: (rule: Stored) => boolean): Stored | undefined {
    const now = this.#clock.now();
    for (const rule of this.#rules.values()) {
      if (rule.expiresAt !== undefined && rule.expiresAt <= now) {
        this.#rules.delete(rule.id);
        continue;
      }
      if (!matches(rule)) continue;
      if (rule.remaining !== undefined && --rule.remaining <= 0) this.#rules.delete(rule.id);
      return rule;
    }
    return undefined;
  }

  #expire(): void {
    const now = this.#clock.now();
    for (const rule of this.#rules.values())
      if (rule.expiresAt !== undefined && rule.expiresAt <= now) this.#rules.delete(rule.id);
  }
}

/** The parameter an action cannot do without, as a 50035 naming it. */
function missingParameter(rule: FaultRule): HearthError | undefined {
  const needs: Record<string, string | undefined> = {
    'http:delay': 'delay_ms',
    'gateway:delay': 'delay_ms',
    'gateway:close': 'code',
  };
  const field = needs[`${rule.target}:${rule.action}`];
  if (field === undefined || (rule as Record<string, unknown>)[field] !== undefined) return undefined;
  return new HearthError('InvalidFormBody', {
    errors: { [field]: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] } },
  });
}

function describe(stored: Stored): ActiveFault {
  return {
    ...stored.rule,
    id: stored.id,
    remaining: stored.remaining ?? null,
    expires_at: stored.expiresAt === undefined ? null : new Date(stored.expiresAt).toISOString(),
  };
}

/** `/channels/*\/messages`, `/channels/:channel_id/messages`, `/guilds/**`: one regular expression. */
export function pathPattern(pattern: string): RegExp {
  const segments = pattern.replace(/\/+$/, '').split('/').slice(1);
  const parts = segments.map((segment) => {
    if (segment === '**') return '(?:/[^/]+)*';
    if (segment === '*' || segment.startsWith(':')) return '/[^/]+';
    return `/${segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`;
  });
  return new RegExp(`^${parts.join('')}/?$`);
}

/** Writes the response itself: an injected answer skips the response hooks (and the conformance observer). */
function writeRaw(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  headers: Record<string, string>,
  body: object,
): void {
  reply.hijack();
  reply.raw
    .writeHead(status, { ...headers, 'content-type': JSON_CONTENT_TYPE, [REQUEST_ID_HEADER]: request.id })
    .end(JSON.stringify(body));
}

function closeLater(connection: FaultConnection): void {
  setTimeout(() => {
    if (connection.open) connection.close(GatewayCloseCodes.UnknownError, 'Reconnect');
  }, CLOSE_AFTER_OP_MS).unref();
}
