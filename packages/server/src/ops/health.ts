import type { Storage } from '../storage/database.js';
import { ping } from './store.js';

/** How long one readiness check may take before it counts as failing (a load balancer must get an answer). */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

export interface CheckResult {
  status: 'ok' | 'failing';
  /** Why it fails, in words an operator can act on; never a connection string or credential. */
  error?: string;
}

export interface Readiness {
  status: 'ready' | 'unavailable';
  checks: Record<string, CheckResult>;
  /** The names of the checks that fail (empty when ready). */
  failing: string[];
}

/** The part of a Redis client the probe uses. */
export interface RedisProbe {
  readonly status: string;
  ping(): Promise<string>;
}

export interface ReadinessDeps {
  storage: Storage;
  /** Present when the node is configured with Redis. */
  redis?: RedisProbe | undefined;
  timeoutMs?: number;
}

/**
 * Whether this node can serve: its database answers, its Redis (when configured) answers, and every
 * migration this code knows is applied. Every check runs each time, so a node recovers on its own once
 * what it depends on is back.
 */
export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  const timeoutMs = deps.timeoutMs ?? READINESS_CHECK_TIMEOUT_MS;
  const checks: Record<string, () => Promise<void>> = {
    database: () => ping(deps.storage.db),
    migrations: async () => {
      const pending = await deps.storage.pendingMigrations();
      if (pending.length > 0) throw new Error(`not applied: ${pending.join(', ')}`);
    },
  };
  const { redis } = deps;
  if (redis) {
    checks['redis'] = async () => {
      // ioredis would queue a command while reconnecting: a Redis that is not ready fails at once.
      if (redis.status !== 'ready') throw new Error(`connection ${redis.status}`);
      await redis.ping();
    };
  }
  const names = Object.keys(checks);
  const results = await Promise.all(names.map((name) => run(checks[name] as () => Promise<void>, timeoutMs)));
  const entries = names.map((name, i) => [name, results[i] as CheckResult] as const);
  const failing = entries.filter(([, result]) => result.status === 'failing').map(([name]) => name);
  return {
    status: failing.length === 0 ? 'ready' : 'unavailable',
    checks: Object.fromEntries(entries),
    failing,
  };
}

async function run(check: () => Promise<void>, timeoutMs: number): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([check(), timeout]);
    return { status: 'ok' };
  } catch (error) {
    return { status: 'failing', error: describe(error) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A short reason: the system error code when there is one (`ECONNREFUSED`), else the message with any
 * address or URL removed. The probe is public: it names what fails, never where it lives.
 */
function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  const message = error instanceof Error ? error.message : String(error);
  const cleaned = message
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '(address)')
    .replace(/\[?[0-9a-f:.]+\]?:\d{2,5}\b/gi, '(address)');
  return cleaned || 'failed';
}
