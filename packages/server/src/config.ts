/**
 * One typed configuration: command-line flags win over HEARTH_* environment variables, which win over
 * defaults. The README's settings table is checked against `SETTINGS` by a test.
 */

import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import proxyaddr from '@fastify/proxy-addr';
import { CALL_RING_TIMEOUT_DEFAULT_SECONDS } from '@hearth/protocol';

export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  redisUrl: string | undefined;
  redisPrefix: string;
  publicUrl: string | undefined;
  now: number | undefined;
  logLevel: LogLevel;
  workerId: number;
  processId: number;
  rateLimitGlobal: number;
  webhookPollMs: number;
  eventPollMs: number;
  // Provisional accounts
  providerCaFile: string | undefined;
  allowLoopbackUrls: boolean;
  adminToken: string | undefined;
  // Lifetimes
  gatewayMaxConnectionsPerAddress: number;
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  dataDir: string;
  sessionLifetimeDays: number;
  // Operations
  metrics: boolean;
  metricsToken: string | undefined;
  trustProxy: readonly string[] | undefined;
  // Emulator
  emulator: boolean;
  // Voice
  voiceHost: string;
  voicePort: number;
  voicePublicHost: string | undefined;
  voiceUdpPorts: PortRange;
  voiceTlsCert: string | undefined;
  voiceTlsKey: string | undefined;
  voiceRingTimeoutSeconds: number;
}

/** An inclusive range of ports; `{first: 0, last: 0}` lets the system pick one. */
export interface PortRange {
  first: number;
  last: number;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

interface Setting<K extends keyof Config> {
  key: K;
  flag: string;
  env: string;
  /** As shown in the README; `undefined` means unset. */
  default: string | undefined;
  description: string;
  parse: (raw: string, name: string) => Config[K];
}

const text = (raw: string) => raw;

function integer(min: number, max: number) {
  return (raw: string, name: string): number => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
}

function url(protocols: readonly string[]) {
  return (raw: string, name: string): string => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(`${name} must be a URL, got "${raw}"`);
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${raw}"`);
    }
    return raw.replace(/\/+$/, '');
  };
}

function databaseUrl(raw: string, name: string): string {
  if (/^sqlite:/.test(raw) || /^postgres(ql)?:\/\//.test(raw)) return raw;
  throw new ConfigError(`${name} must be sqlite:PATH, sqlite::memory: or postgres://…, got "${raw}"`);
}

/** A date-time with its zone: Date.parse alone would read `2025-01-01T00:00` in the machine's time zone. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function instant(raw: string, name: string): number {
  const ms = ISO_INSTANT.test(raw.trim()) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new ConfigError(
      `${name} must be an ISO-8601 date-time with a zone (2025-01-01T00:00:00Z), got "${raw}"`,
    );
  }
  return ms;
}

function logLevel(raw: string, name: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === raw);
  if (!level) throw new ConfigError(`${name} must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return level;
}

function boolean(raw: string, name: string): boolean {
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** An operator secret: long enough not to be guessed. */
function secret(raw: string, name: string): string {
  if (raw.length < 32) throw new ConfigError(`${name} must be at least 32 characters`);
  return raw;
}

/** Proxy addresses, CIDR ranges or proxy-addr's names (loopback, linklocal, uniquelocal), comma-separated. */
function proxies(raw: string, name: string): readonly string[] {
  const list = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    proxyaddr.compile(list);
    if (list.length > 0) return list;
  } catch {
    // proxy-addr's own message names the entry; ours names the setting, as every other setting does.
  }
  throw new ConfigError(
    `${name} must list addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${raw}"`,
  );
}

function portRange(raw: string, name: string): PortRange {
  const match = /^(\d{1,5})(?:-(\d{1,5}))?$/.exec(raw.trim());
  const first = Number(match?.[1]);
  const last = match?.[2] === undefined ? first : Number(match[2]);
  if (!match || first > 65535 || last > 65535 || last < first || (first === 0 && last !== 0)) {
    throw new ConfigError(`${name} must be a port or a range FIRST-LAST (0 picks a free one), got "${raw}"`);
  }
  return { first, last };
}

function define<K extends keyof Config>(setting: Setting<K>): Setting<K> {
  return setting;
}

export const SETTINGS = [
  define({
    key: 'host',
    flag: '--host',
    env: 'HEARTH_HOST',
    default: '127.0.0.1',
    description: 'Address the HTTP server and gateway listen on.',
    parse: text,
  }),
  define({
    key: 'port',
    flag: '--port',
    env: 'HEARTH_PORT',
    default: '8080',
    description: 'TCP port; 0 picks a free one.',
    parse: integer(0, 65535),
  }),
  define({
    key: 'databaseUrl',
    flag: '--database',
    env: 'HEARTH_DATABASE_URL',
    default: 'sqlite:./data/hearth.sqlite',
    description:
      'Storage: `sqlite:PATH` (WAL), `sqlite::memory:`, or `postgres://…` (`?schema=NAME` optional).',
    parse: databaseUrl,
  }),
  define({
    key: 'redisUrl',
    flag: '--redis',
    env: 'HEARTH_REDIS_URL',
    default: undefined,
    description:
      'Redis shared by many nodes: rate-limit counters, the event bus (Streams), gateway sessions. Unset: in-process.',
    parse: url(['redis:', 'rediss:']),
  }),
  define({
    key: 'redisPrefix',
    flag: '--redis-prefix',
    env: 'HEARTH_REDIS_PREFIX',
    default: 'hearth:',
    description: 'Prefix of every Redis key, so that several deployments can share one Redis.',
    parse: text,
  }),
  define({
    key: 'publicUrl',
    flag: '--public-url',
    env: 'HEARTH_PUBLIC_URL',
    default: undefined,
    description: 'Address clients use to reach this server; unset: `http://HOST:PORT`.',
    parse: url(['http:', 'https:']),
  }),
  define({
    key: 'now',
    flag: '--now',
    env: 'HEARTH_NOW',
    default: undefined,
    description: 'Start the clock at this ISO-8601 instant (dated rules follow it); unset: real time.',
    parse: instant,
  }),
  define({
    key: 'logLevel',
    flag: '--log-level',
    env: 'HEARTH_LOG_LEVEL',
    default: 'info',
    description: `Log level: ${LOG_LEVELS.join(', ')}. Logs go to stderr.`,
    parse: logLevel,
  }),
  define({
    key: 'workerId',
    flag: '--worker-id',
    env: 'HEARTH_WORKER_ID',
    default: '0',
    description: 'Snowflake worker id (0–31); give each node its own pair.',
    parse: integer(0, 31),
  }),
  define({
    key: 'processId',
    flag: '--process-id',
    env: 'HEARTH_PROCESS_ID',
    default: '0',
    description: 'Snowflake process id (0–31); one-shot commands draw 1–31 unless given.',
    parse: integer(0, 31),
  }),
  define({
    key: 'rateLimitGlobal',
    flag: '--rate-limit-global',
    env: 'HEARTH_RATE_LIMIT_GLOBAL',
    default: '50',
    description: 'Requests per second per identity (and for the whole legacy `/api` alias).',
    parse: integer(1, 1_000_000_000),
  }),
  define({
    key: 'webhookPollMs',
    flag: '--webhook-poll-ms',
    env: 'HEARTH_WEBHOOK_POLL_MS',
    default: '1000',
    description:
      'How often the webhook worker reads the event queue (ms); events this node records are sent at once.',
    parse: integer(1, 3_600_000),
  }),
  define({
    key: 'eventPollMs',
    flag: '--event-poll-ms',
    env: 'HEARTH_EVENT_POLL_MS',
    default: '100',
    description:
      'Without `--redis`: how often a node reads the event log in the database for events of other processes (`hearth` commands, other nodes) (ms); its own are delivered at once.',
    parse: integer(1, 60_000),
  }),
  define({
    key: 'providerCaFile',
    flag: '--provider-ca-file',
    env: 'HEARTH_PROVIDER_CA_FILE',
    default: undefined,
    description:
      'PEM file of an extra certificate authority trusted for outbound HTTPS (identity providers: OIDC discovery, JWKS, verification endpoints; webhook receivers).',
    parse: text,
  }),
  define({
    key: 'allowLoopbackUrls',
    flag: '--allow-loopback-urls',
    env: 'HEARTH_ALLOW_LOOPBACK_URLS',
    default: 'false',
    description:
      'Development only: URLs Hearth calls (event webhooks, lobby overrides, identity providers) may reach loopback (localhost, 127.0.0.0/8, ::1), and webhook receivers may use http:. Private, link-local and metadata addresses stay refused.',
    parse: boolean,
  }),
  define({
    key: 'adminToken',
    flag: '--admin-token',
    env: 'HEARTH_ADMIN_TOKEN',
    default: undefined,
    description:
      'Operator secret (32+ characters) for the admin API (`Authorization: Admin <token>`); unset: the admin API answers 401.',
    parse: secret,
  }),
  define({
    key: 'gatewayMaxConnectionsPerAddress',
    flag: '--gateway-max-connections-per-address',
    env: 'HEARTH_GATEWAY_MAX_CONNECTIONS_PER_ADDRESS',
    default: '256',
    description:
      'Gateway sockets one remote address may hold open at once; further upgrades answer 429 until one closes.',
    parse: integer(1, 1_000_000),
  }),
  define({
    key: 'httpHeadersTimeoutMs',
    flag: '--http-headers-timeout-ms',
    env: 'HEARTH_HTTP_HEADERS_TIMEOUT_MS',
    default: '10000',
    description:
      'A client that has not sent its whole request headers within this time is answered 408 and disconnected (ms).',
    parse: integer(100, 3_600_000),
  }),
  define({
    key: 'httpRequestTimeoutMs',
    flag: '--http-request-timeout-ms',
    env: 'HEARTH_HTTP_REQUEST_TIMEOUT_MS',
    default: '120000',
    description:
      'A client that has not sent its whole request (headers and body) within this time is answered 408 and disconnected (ms).',
    parse: integer(100, 3_600_000),
  }),
  define({
    key: 'dataDir',
    flag: '--data-dir',
    env: 'HEARTH_DATA_DIR',
    default: './data',
    description: 'Directory of uploaded files (message attachments), created on the first upload.',
    parse: text,
  }),
  define({
    key: 'sessionLifetimeDays',
    flag: '--session-lifetime-days',
    env: 'HEARTH_SESSION_LIFETIME_DAYS',
    default: '30',
    description:
      'How long a user session token (sign-up, sign-in) lives, in days; logout, a password change and a ban end it sooner.',
    parse: integer(1, 3650),
  }),
  define({
    key: 'metrics',
    flag: '--metrics',
    env: 'HEARTH_METRICS',
    default: 'false',
    description:
      'Serve Prometheus metrics at `/metrics` to anyone who can reach the port; `--metrics-token` serves them to its holder only. Unset: `/metrics` answers 404.',
    parse: boolean,
  }),
  define({
    key: 'metricsToken',
    flag: '--metrics-token',
    env: 'HEARTH_METRICS_TOKEN',
    default: undefined,
    description:
      'Secret (32+ characters) a scraper sends as `Authorization: Bearer <token>` for `/metrics`; setting it turns metrics on. Other requests answer 401.',
    parse: secret,
  }),
  define({
    key: 'trustProxy',
    flag: '--trust-proxy',
    env: 'HEARTH_TRUST_PROXY',
    default: undefined,
    description:
      'Reverse proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`; comma-separated): per-address rate limits and gateway caps then count the client behind them. Unset: the socket address counts.',
    parse: proxies,
  }),
  define({
    key: 'voiceHost',
    flag: '--voice-host',
    env: 'HEARTH_VOICE_HOST',
    default: '127.0.0.1',
    description: 'Address the voice gateway (WebSocket) and the voice media (UDP) listen on.',
    parse: text,
  }),
  define({
    key: 'voicePort',
    flag: '--voice-port',
    env: 'HEARTH_VOICE_PORT',
    default: '0',
    description:
      'TCP port of the voice gateway (`wss://` with `--voice-tls-cert`, else `ws://`); 0 (the default) picks a free one, which `VOICE_SERVER_UPDATE` names.',
    parse: integer(0, 65535),
  }),
  define({
    key: 'voicePublicHost',
    flag: '--voice-public-host',
    env: 'HEARTH_VOICE_PUBLIC_HOST',
    default: undefined,
    description:
      'Host name or address clients reach the voice gateway and UDP media of this node at (`VOICE_SERVER_UPDATE` `endpoint`, op 2 `ip`); unset: `--voice-host`.',
    parse: text,
  }),
  define({
    key: 'voiceUdpPorts',
    flag: '--voice-udp-ports',
    env: 'HEARTH_VOICE_UDP_PORTS',
    default: '50000-50099',
    description:
      'UDP port, or range `FIRST-LAST`, of the voice media; the node binds the first free one (0: any).',
    parse: portRange,
  }),
  define({
    key: 'voiceTlsCert',
    flag: '--voice-tls-cert',
    env: 'HEARTH_VOICE_TLS_CERT',
    default: undefined,
    description:
      'PEM certificate (chain) of the voice gateway; with `--voice-tls-key` it serves `wss://`, which voice clients such as `@discordjs/voice` require. Unset: plain `ws://`.',
    parse: text,
  }),
  define({
    key: 'voiceTlsKey',
    flag: '--voice-tls-key',
    env: 'HEARTH_VOICE_TLS_KEY',
    default: undefined,
    description: 'PEM private key of `--voice-tls-cert`.',
    parse: text,
  }),
  define({
    key: 'voiceRingTimeoutSeconds',
    flag: '--voice-ring-timeout',
    env: 'HEARTH_VOICE_RING_TIMEOUT',
    default: String(CALL_RING_TIMEOUT_DEFAULT_SECONDS),
    description:
      'Seconds a DM call rings a recipient who neither joins nor declines; then `CALL_UPDATE` drops them from `ringing`.',
    parse: integer(1, 3600),
  }),
  define({
    key: 'emulator',
    flag: '--emulator',
    env: 'HEARTH_EMULATOR',
    default: 'false',
    description:
      'Development and CI only: serve the emulator admin API under `/_hearth` (test clock, fixtures, snapshots, fault injection, scripted users) to holders of `--admin-token`. Off: those paths answer 404.',
    parse: boolean,
  }),
] as const;

export type Flags = Partial<Record<keyof Config, string | undefined>>;

/** Resolves every setting: flags > environment > defaults. Throws ConfigError naming the bad setting. */
export function loadConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const config: Partial<Record<keyof Config, unknown>> = {};
  for (const setting of SETTINGS) {
    const fromFlag = flags[setting.key];
    const fromEnv = env[setting.env];
    const [raw, name] =
      fromFlag !== undefined
        ? [fromFlag, setting.flag]
        : fromEnv !== undefined && fromEnv !== ''
          ? [fromEnv, setting.env]
          : [setting.default, setting.flag];
    config[setting.key] =
      raw === undefined ? undefined : (setting.parse as (r: string, n: string) => unknown)(raw, name);
  }
  return config as Config;
}

/**
 * A configuration for tests and embedding: defaults with overrides, no environment. Uploads go to a
 * directory of their own under the system's temporary directory, never into the working tree.
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}, {}),
    databaseUrl: 'sqlite::memory:',
    port: 0,
    logLevel: 'silent',
    dataDir: join(tmpdir(), `hearth-data-${randomUUID()}`),
    // Many test servers run at once: each voice gateway and UDP socket takes a free port.
    voicePort: 0,
    voiceUdpPorts: { first: 0, last: 0 },
    ...overrides,
  };
}
