import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/** Paths pino masks wherever they appear: credentials never reach a log line (seed, Authentication 8). */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.client_secret',
  '*.password',
  '*.bot_token',
  'token',
  'password',
  'client_secret',
];

/** Logs go to stderr so that stdout carries only what a command prints for people and scripts. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { component: 'hearth' } },
    destination ?? pino.destination(2),
  );
}
