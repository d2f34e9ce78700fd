import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tableRows } from '../../../test-support/markdown.js';
import { type Config, ConfigError, loadConfig, SETTINGS } from '../src/config.js';

/** A value for each setting from a flag and from the environment, distinct from each other and the default. */
interface Sample<K extends keyof Config> {
  flag: string;
  fromFlag: Config[K];
  env: string;
  fromEnv: Config[K];
}

const SAMPLES: { [K in keyof Config]: Sample<K> } = {
  host: { flag: '0.0.0.0', fromFlag: '0.0.0.0', env: '::1', fromEnv: '::1' },
  port: { flag: '0', fromFlag: 0, env: '9000', fromEnv: 9000 },
  databaseUrl: {
    flag: 'sqlite::memory:',
    fromFlag: 'sqlite::memory:',
    env: 'postgres://hearth@db:5432/hearth?schema=s1',
    fromEnv: 'postgres://hearth@db:5432/hearth?schema=s1',
  },
  redisUrl: {
    flag: 'redis://cache:6379',
    fromFlag: 'redis://cache:6379',
    env: 'rediss://secure-cache:6380/',
    fromEnv: 'rediss://secure-cache:6380',
  },
  redisPrefix: { flag: 'flag:', fromFlag: 'flag:', env: 'env:', fromEnv: 'env:' },
  publicUrl: {
    flag: 'https://hearth.example/',
    fromFlag: 'https://hearth.example',
    env: 'http://10.0.0.1:8080',
    fromEnv: 'http://10.0.0.1:8080',
  },
  now: {
    flag: '2025-01-01T00:00:00Z',
    fromFlag: Date.UTC(2025, 0, 1),
    env: '2030-06-15T12:30:00.250+02:00',
    fromEnv: Date.UTC(2030, 5, 15, 10, 30, 0, 250),
  },
  logLevel: { flag: 'debug', fromFlag: 'debug', env: 'error', fromEnv: 'error' },
  workerId: { flag: '31', fromFlag: 31, env: '7', fromEnv: 7 },
  processId: { flag: '1', fromFlag: 1, env: '2', fromEnv: 2 },
  rateLimitGlobal: { flag: '100', fromFlag: 100, env: '5', fromEnv: 5 },
  webhookPollMs: { flag: '20', fromFlag: 20, env: '250', fromEnv: 250 },
  eventPollMs: { flag: '5', fromFlag: 5, env: '500', fromEnv: 500 },
  providerCaFile: {
    flag: '/etc/ca.pem',
    fromFlag: '/etc/ca.pem',
    env: '/srv/ca.pem',
    fromEnv: '/srv/ca.pem',
  },
  allowLoopbackUrls: { flag: 'true', fromFlag: true, env: '1', fromEnv: true },
  adminToken: {
    flag: 'a'.repeat(32),
    fromFlag: 'a'.repeat(32),
    env: 'b'.repeat(40),
    fromEnv: 'b'.repeat(40),
  },
  gatewayMaxConnectionsPerAddress: { flag: '10', fromFlag: 10, env: '5000', fromEnv: 5000 },
  httpHeadersTimeoutMs: { flag: '500', fromFlag: 500, env: '20000', fromEnv: 20000 },
  httpRequestTimeoutMs: { flag: '1000', fromFlag: 1000, env: '60000', fromEnv: 60000 },
  dataDir: { flag: '/srv/hearth', fromFlag: '/srv/hearth', env: 'uploads', fromEnv: 'uploads' },
  sessionLifetimeDays: { flag: '7', fromFlag: 7, env: '90', fromEnv: 90 },
  metrics: { flag: 'true', fromFlag: true, env: '1', fromEnv: true },
  metricsToken: {
    flag: 'm'.repeat(32),
    fromFlag: 'm'.repeat(32),
    env: 'n'.repeat(48),
    fromEnv: 'n'.repeat(48),
  },
  trustProxy: {
    flag: '10.0.0.0/8, loopback',
    fromFlag: ['10.0.0.0/8', 'loopback'],
    env: '192.168.1.1',
    fromEnv: ['192.168.1.1'],
  },
  voiceHost: { flag: '0.0.0.0', fromFlag: '0.0.0.0', env: '10.0.0.2', fromEnv: '10.0.0.2' },
  voicePort: { flag: '8443', fromFlag: 8443, env: '9443', fromEnv: 9443 },
  voicePublicHost: {
    flag: 'voice.example',
    fromFlag: 'voice.example',
    env: '203.0.113.7',
    fromEnv: '203.0.113.7',
  },
  voiceUdpPorts: {
    flag: '0',
    fromFlag: { first: 0, last: 0 },
    env: '40000-40009',
    fromEnv: { first: 40000, last: 40009 },
  },
  voiceTlsCert: { flag: '/etc/voice.pem', fromFlag: '/etc/voice.pem', env: 'cert.pem', fromEnv: 'cert.pem' },
  voiceTlsKey: { flag: '/etc/voice.key', fromFlag: '/etc/voice.key', env: 'key.pem', fromEnv: 'key.pem' },
  voiceRingTimeoutSeconds: { flag: '30', fromFlag: 30, env: '90', fromEnv: 90 },
  emulator: { flag: 'true', fromFlag: true, env: '1', fromEnv: true },
};

const DEFAULTS: Config = {
  host: '127.0.0.1',
  port: 8080,
  databaseUrl: 'sqlite:./data/hearth.sqlite',
  redisUrl: undefined,
  redisPrefix: 'hearth:',
  publicUrl: undefined,
  now: undefined,
  logLevel: 'info',
  workerId: 0,
  processId: 0,
  rateLimitGlobal: 50,
  webhookPollMs: 1000,
  eventPollMs: 100,
  providerCaFile: undefined,
  allowLoopbackUrls: false,
  adminToken: undefined,
  gatewayMaxConnectionsPerAddress: 256,
  httpHeadersTimeoutMs: 10000,
  httpRequestTimeoutMs: 120000,
  dataDir: './data',
  sessionLifetimeDays: 30,
  metrics: false,
  metricsToken: undefined,
  trustProxy: undefined,
  voiceHost: '127.0.0.1',
  voicePort: 0,
  voicePublicHost: undefined,
  voiceUdpPorts: { first: 50000, last: 50099 },
  voiceTlsCert: undefined,
  voiceTlsKey: undefined,
  voiceRingTimeoutSeconds: 60,
  emulator: false,
};

const cases = SETTINGS.map((setting) => ({ ...setting, sample: SAMPLES[setting.key] }));

function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('settings precedence: flag > environment > default (README: Settings)', () => {
  it('uses every default when neither a flag nor an environment variable is given', () => {
    expect(loadConfig({}, {})).toStrictEqual(DEFAULTS);
  });

  it.each(cases)('$flag wins over $env', ({ key, env, sample }) => {
    expect(loadConfig({ [key]: sample.flag }, { [env]: sample.env })).toStrictEqual({
      ...DEFAULTS,
      [key]: sample.fromFlag,
    });
  });

  it.each(cases)('$env wins over the default of $flag', ({ key, env, sample }) => {
    expect(loadConfig({}, { [env]: sample.env })).toStrictEqual({ ...DEFAULTS, [key]: sample.fromEnv });
  });

  it.each(cases)('an empty $env counts as unset', ({ key, env, sample }) => {
    expect(loadConfig({}, { [env]: '' })).toStrictEqual(DEFAULTS);
    expect(loadConfig({ [key]: sample.flag }, { [env]: '' })).toStrictEqual({
      ...DEFAULTS,
      [key]: sample.fromFlag,
    });
  });

  it.each(cases)('an undefined flag for $flag falls through to $env', ({ key, env, sample }) => {
    expect(loadConfig({ [key]: undefined }, { [env]: sample.env })).toStrictEqual({
      ...DEFAULTS,
      [key]: sample.fromEnv,
    });
  });

  it('does not read an environment variable that a flag overrides, even a bad one', () => {
    expect(loadConfig({ port: '1234' }, { HEARTH_PORT: 'abc' }).port).toBe(1234);
  });

  it('ignores environment variables outside the settings table', () => {
    expect(loadConfig({}, { PORT: '1', HEARTH_UNKNOWN: 'x', DATABASE_URL: 'mysql://x' })).toStrictEqual(
      DEFAULTS,
    );
  });
});

const BAD_VALUES: { key: keyof Config; raw: string; problem: string }[] = [
  { key: 'port', raw: '-1', problem: 'must be an integer from 0 to 65535, got "-1"' },
  { key: 'port', raw: '65536', problem: 'must be an integer from 0 to 65535, got "65536"' },
  { key: 'port', raw: 'abc', problem: 'must be an integer from 0 to 65535, got "abc"' },
  { key: 'port', raw: '80.5', problem: 'must be an integer from 0 to 65535, got "80.5"' },
  { key: 'workerId', raw: '32', problem: 'must be an integer from 0 to 31, got "32"' },
  { key: 'processId', raw: '-1', problem: 'must be an integer from 0 to 31, got "-1"' },
  { key: 'rateLimitGlobal', raw: '0', problem: 'must be an integer from 1 to 1000000000, got "0"' },
  { key: 'allowLoopbackUrls', raw: 'yes', problem: 'must be true or false, got "yes"' },
  { key: 'sessionLifetimeDays', raw: '0', problem: 'must be an integer from 1 to 3650, got "0"' },
  { key: 'adminToken', raw: 'short', problem: 'must be at least 32 characters' },
  { key: 'metrics', raw: 'on', problem: 'must be true or false, got "on"' },
  { key: 'metricsToken', raw: 'm'.repeat(31), problem: 'must be at least 32 characters' },
  {
    key: 'trustProxy',
    raw: '10.0.0.0/33',
    problem: 'must list addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "10.0.0.0/33"',
  },
  {
    key: 'trustProxy',
    raw: ' , ',
    problem: 'must list addresses, CIDR ranges, loopback, linklocal or uniquelocal, got " , "',
  },
  {
    key: 'databaseUrl',
    raw: 'mysql://',
    problem: 'must be sqlite:PATH, sqlite::memory: or postgres://…, got "mysql://"',
  },
  { key: 'redisUrl', raw: 'http://x', problem: 'must use redis: or rediss:, got "http://x"' },
  { key: 'redisUrl', raw: 'not a url', problem: 'must be a URL, got "not a url"' },
  { key: 'publicUrl', raw: 'ftp://x', problem: 'must use http: or https:, got "ftp://x"' },
  {
    key: 'now',
    raw: 'yesterday',
    problem: 'must be an ISO-8601 date-time with a zone (2025-01-01T00:00:00Z), got "yesterday"',
  },
  {
    key: 'now',
    raw: '2025-01-01T00:00:00',
    problem: 'must be an ISO-8601 date-time with a zone (2025-01-01T00:00:00Z), got "2025-01-01T00:00:00"',
  },
  {
    key: 'logLevel',
    raw: 'loud',
    problem: 'must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
  },
];

const badCases = BAD_VALUES.map((bad) => {
  const setting = SETTINGS.find((s) => s.key === bad.key);
  if (!setting) throw new Error(`no setting ${bad.key}`);
  return { ...bad, flag: setting.flag, env: setting.env };
});

describe('a bad setting is refused with a ConfigError naming where it came from', () => {
  it.each(badCases)('$flag $raw names the flag', ({ key, raw, problem, flag }) => {
    expect(configError(() => loadConfig({ [key]: raw }, {})).message).toBe(`${flag} ${problem}`);
  });

  it.each(badCases)('$env=$raw names the environment variable', ({ raw, problem, env }) => {
    expect(configError(() => loadConfig({}, { [env]: raw })).message).toBe(`${env} ${problem}`);
  });

  it('names ConfigError as its name, for callers that print it', () => {
    expect(configError(() => loadConfig({ port: 'abc' }, {})).name).toBe('ConfigError');
  });
});

const README = new URL('../../../README.md', import.meta.url);

describe('the README settings table is SETTINGS, in order', () => {
  const [header, separator, ...rows] = tableRows(
    readFileSync(README, 'utf8'),
    '<!-- settings:start -->',
    '<!-- settings:end -->',
  );

  it('has the columns Flag, Environment, Default, Meaning', () => {
    expect(header).toEqual(['Flag', 'Environment', 'Default', 'Meaning']);
    expect(separator?.every((cell) => /^:?-+:?$/.test(cell))).toBe(true);
  });

  it('lists every setting with its flag, variable, default ("(unset)" when undefined) and meaning', () => {
    expect(rows).toEqual(
      SETTINGS.map((setting) => [
        `\`${setting.flag}\``,
        `\`${setting.env}\``,
        setting.default === undefined ? '(unset)' : `\`${setting.default}\``,
        setting.description,
      ]),
    );
  });

  it('documents defaults that loadConfig accepts and applies', () => {
    for (const setting of SETTINGS) {
      const shown = setting.default;
      const applied = loadConfig({}, {})[setting.key];
      expect(applied).toStrictEqual(
        shown === undefined ? undefined : loadConfig({ [setting.key]: shown }, {})[setting.key],
      );
    }
  });
});
