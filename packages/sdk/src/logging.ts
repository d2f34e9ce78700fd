/** Log severities (seed, Authentication 8). */
export const LoggingSeverity = { Verbose: 1, Info: 2, Warning: 3, Error: 4, None: 5 } as const;
export type LoggingSeverity = (typeof LoggingSeverity)[keyof typeof LoggingSeverity];

export type LogCallback = (message: string, severity: LoggingSeverity) => void;

/** Release builds log only Error and Warning; debug builds also Info and Verbose (seed, Authentication 8). */
export type Build = 'release' | 'debug';

const TOKEN_PATTERNS: readonly RegExp[] = [
  /(Bearer|Bot)\s+[^\s"',;]+/gi,
  // A bare `token` too: the RFC 7009 revocation form carries the token under that name, whatever its length.
  /((?:(?:access|refresh|id|parent_access|external_auth)_token|\btoken)["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
  /(code_verifier["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
];

/**
 * The library's logger. Every message passes through redaction before any callback sees it: the bearer
 * token never reaches a log line, at any level (seed, Authentication 8).
 */
export class Logger {
  readonly #minimum: LoggingSeverity;
  readonly #callbacks = new Map<LogCallback, LoggingSeverity>();
  readonly #secrets = new Set<string>();

  constructor(build: Build) {
    this.#minimum = build === 'debug' ? LoggingSeverity.Verbose : LoggingSeverity.Warning;
  }

  add(callback: LogCallback, minSeverity: LoggingSeverity): void {
    this.#callbacks.set(callback, minSeverity);
  }

  remove(callback: LogCallback): void {
    this.#callbacks.delete(callback);
  }

  /** A value that must never be logged, wherever it appears (tokens the client holds). */
  secret(value: string | undefined): void {
    if (value && value.length >= 8) this.#secrets.add(value);
  }

  log(severity: LoggingSeverity, message: string): void {
    if (severity < this.#minimum || this.#callbacks.size === 0) return;
    const safe = this.redact(message);
    for (const [callback, min] of this.#callbacks) if (severity >= min) callback(safe, severity);
  }

  redact(message: string): string {
    let out = message;
    for (const secret of this.#secrets) out = out.split(secret).join('[redacted]');
    for (const pattern of TOKEN_PATTERNS) {
      out = out.replace(
        pattern,
        (_match, prefix: string) => `${prefix}${/^(Bearer|Bot)$/i.test(prefix) ? ' ' : ''}[redacted]`,
      );
    }
    return out;
  }
}
