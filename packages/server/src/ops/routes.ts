import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { HearthError } from '../kernel/errors.js';
import { type ReadinessDeps, readiness } from './health.js';
import type { HearthMetrics } from './metrics.js';

export interface OpsRoutesDeps extends ReadinessDeps {
  /** Present when metrics are enabled (`--metrics` or `--metrics-token`). */
  metrics?: HearthMetrics | undefined;
  /** When set, /metrics answers only `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
}

/**
 * Probes and metrics for orchestrators and load balancers, at the server's root (not under /api):
 * `/healthz` (the process answers), `/readyz` (it can serve), `/metrics` (Prometheus text).
 */
export function opsRoutes(deps: OpsRoutesDeps): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', async (_request, reply) => {
      void reply.header('cache-control', 'no-store');
      return { status: 'ok' };
    });

    app.get('/readyz', async (_request, reply) => {
      const result = await readiness(deps);
      return reply
        .code(result.status === 'ready' ? 200 : 503)
        .header('cache-control', 'no-store')
        .send(result);
    });

    const { metrics, metricsToken } = deps;
    if (!metrics) return;
    const expected = metricsToken === undefined ? undefined : digest(metricsToken);
    app.get('/metrics', async (request, reply) => {
      if (expected && !bearerMatches(request.headers.authorization, expected)) {
        void reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw new HearthError('GeneralUnauthorized');
      }
      const { contentType, body } = await metrics.render();
      return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
    });
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Compares digests, so that neither the token's content nor its length shows in the time taken. */
function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected);
}
