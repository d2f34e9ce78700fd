import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/** Fields that hold a credential, by name: their values never reach a log line (seed, Authentication 8). */
export const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'bot_token',
  'client_secret',
  'password',
] as const;

/**
 * Paths pino masks: each secret field at the top level and up to three objects deep (`req.headers.cookie`,
 * `err.config.headers.authorization`). pino's redaction matches paths, not names at any depth.
 */
export const REDACTED_PATHS = ['', '*.', '*.*.', '*.*.*.'].flatMap((prefix) =>
  SECRET_FIELDS.map((field) => `${prefix}${field}`),
);

/** Logs go to stderr so that stdout carries only what a command prints for people and scripts. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { component: 'hearth' } },
    destination ?? pino.destination(2),
  );
}
