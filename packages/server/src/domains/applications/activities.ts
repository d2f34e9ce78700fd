import { ApplicationLimits, FormErrors } from '@hearth/protocol';
import type { Clock } from '../../kernel/clock.js';
import { HearthError, invalidForm } from '../../kernel/errors.js';
import { type OutboundPolicy, outboundRequest, outboundUrlProblem } from '../../kernel/outbound.js';
import type { Storage } from '../../storage/database.js';
import * as store from './activity-store.js';
import type { ApplicationsService } from './service.js';

export interface UrlMapping {
  prefix: string;
  target: string;
}

export interface ActivitiesDeps {
  storage: Storage;
  clock: Clock;
  applications: ApplicationsService;
  /** Where proxied requests may go (`--allow-loopback-urls` lets them reach a local dev server). */
  outbound: OutboundPolicy;
  /** The server's public URL: share links are built on it. */
  publicUrl: () => string;
}

/** What the proxy forwards and answers: the request's method, path with query, headers and body. */
export interface ProxiedRequest {
  method: string;
  /** The path under the Activity's root, with its query: `/.proxy/api/token?x=1` or `/api/token?x=1`. */
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

export interface ProxiedAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** The optional prefix of proxied paths (seed: Versioning, "optional and stays supported"). */
const PROXY_PREFIX = '/.proxy';
const PREFIX_PATTERN = /^\/(?:[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*)?$/;
const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'authorization', 'cookie', 'user-agent'];
const FORWARDED_ANSWER_HEADERS = ['content-type', 'cache-control', 'set-cookie', 'location', 'etag'];
const PROXY_TIMEOUT_MS = 10_000;
const PROXY_MAX_BYTES = 10 * 1024 * 1024;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

/**
 * Activities (DOCS activities: Networking): each application's URL mappings, the proxy that sends an
 * Activity's requests to their targets under the outbound rules, and the share-link call.
 */
export class ActivitiesService {
  readonly #deps: ActivitiesDeps;

  constructor(deps: ActivitiesDeps) {
    this.#deps = deps;
  }

  async mappings(applicationId: string): Promise<UrlMapping[]> {
    await this.#deps.applications.requireApplication(applicationId);
    const rows = await store.listMappings(this.#deps.storage.db, applicationId);
    return rows.map((row) => ({ prefix: row.prefix, target: row.target }));
  }

  /**
   * Maps a path prefix (`/`, `/api`) to a target (`example.com/api` or a full URL; https unless the
   * development switch allows a local http server), as the portal's URL Mappings do.
   */
  async map(applicationId: string, input: { prefix: unknown; target: unknown }): Promise<UrlMapping> {
    const { storage, clock } = this.#deps;
    await this.#deps.applications.requireApplication(applicationId);
    const prefix = checkPrefix(input.prefix);
    const target = this.#checkTarget(input.target);
    const current = await store.listMappings(storage.db, applicationId);
    if (!current.some((row) => row.prefix === prefix) && current.length >= ApplicationLimits.urlMappingsMax)
      throw invalidForm('prefix', FormErrors.maxItems(ApplicationLimits.urlMappingsMax));
    await store.saveMapping(storage.db, {
      application_id: applicationId,
      prefix,
      target,
      created_at: clock.now(),
    });
    return { prefix, target };
  }

  async unmap(applicationId: string, prefix: string): Promise<void> {
    await this.#deps.applications.requireApplication(applicationId);
    if ((await store.deleteMapping(this.#deps.storage.db, applicationId, prefix)) === 0)
      throw invalidForm('prefix', FormErrors.invalid());
  }

  /**
   * Forwards one request of the application's Activity to the target of the longest mapped prefix, with or
   * without the `/.proxy` prefix. No mapping: 404. A target the rules refuse or that does not answer: 502.
   */
  async proxy(applicationId: string, request: ProxiedRequest): Promise<ProxiedAnswer> {
    const url = new URL(request.path, 'http://activity.invalid');
    let path = url.pathname;
    if (path === PROXY_PREFIX || path.startsWith(`${PROXY_PREFIX}/`))
      path = path.slice(PROXY_PREFIX.length) || '/';
    const mapping = longestMatch(await this.mappings(applicationId), path);
    if (!mapping) throw new HearthError('GeneralNotFound');
    const rest = mapping.prefix === '/' ? path : path.slice(mapping.prefix.length);
    const target = `${mapping.target.replace(/\/$/, '')}${rest.startsWith('/') || rest === '' ? rest : `/${rest}`}${url.search}`;
    const method = METHODS.find((m) => m === request.method.toUpperCase());
    if (!method) throw new HearthError('GeneralNotFound');
    const headers: Record<string, string> = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = request.headers[name];
      if (value !== undefined) headers[name] = value;
    }
    const answer = await outboundRequest(target, this.#deps.outbound, {
      method,
      headers,
      ...(request.body && request.body.length > 0 ? { body: request.body } : {}),
      timeoutMs: PROXY_TIMEOUT_MS,
      maxBytes: PROXY_MAX_BYTES,
      rules: { http: true, query: true },
    });
    if (answer.error !== null) {
      return {
        status: 502,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ message: 'Bad Gateway', code: 0 })),
      };
    }
    const forwarded: Record<string, string> = {};
    for (const name of FORWARDED_ANSWER_HEADERS) {
      const value = answer.headers[name];
      if (value !== undefined) forwarded[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { status: answer.status, headers: forwarded, body: answer.body };
  }

  /**
   * The share-link call of the embedded app SDK: a link into the Activity carrying `custom_id`; `referrer_id`
   * is no longer taken and is ignored without an error (seed: Errors). The platform publishes no HTTP route.
   */
  async shareLink(
    applicationId: string,
    input: { message: string; custom_id?: string | undefined },
  ): Promise<{ success: true; link: string }> {
    await this.#deps.applications.requireApplication(applicationId);
    const link = new URL(`/activities/${applicationId}`, this.#deps.publicUrl());
    if (input.custom_id !== undefined) link.searchParams.set('custom_id', input.custom_id);
    return { success: true, link: link.toString() };
  }

  #checkTarget(raw: unknown): string {
    if (typeof raw !== 'string' || raw.length === 0) throw invalidForm('target', FormErrors.required());
    if (raw.length > ApplicationLimits.urlMaxLength)
      throw invalidForm('target', FormErrors.maxLength(ApplicationLimits.urlMaxLength));
    // The portal takes a host and path without a scheme; https is meant then.
    const full = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `https://${raw}`;
    const problem = outboundUrlProblem(full, this.#deps.outbound, { http: true });
    if (problem !== undefined) throw invalidForm('target', FormErrors.url());
    return full.replace(/\/$/, '');
  }
}

function checkPrefix(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0) throw invalidForm('prefix', FormErrors.required());
  if (raw.length > 100) throw invalidForm('prefix', FormErrors.maxLength(100));
  const prefix = raw.length > 1 ? raw.replace(/\/$/, '') : raw;
  if (!PREFIX_PATTERN.test(prefix) || prefix === PROXY_PREFIX || prefix.startsWith(`${PROXY_PREFIX}/`))
    throw invalidForm('prefix', FormErrors.invalid());
  return prefix;
}

/** The mapping whose prefix is the longest that `path` starts with, segment by segment. */
function longestMatch(mappings: UrlMapping[], path: string): UrlMapping | undefined {
  let best: UrlMapping | undefined;
  for (const mapping of mappings) {
    const matches =
      mapping.prefix === '/' || path === mapping.prefix || path.startsWith(`${mapping.prefix}/`);
    if (matches && (!best || mapping.prefix.length > best.prefix.length)) best = mapping;
  }
  return best;
}
