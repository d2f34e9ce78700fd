/** Snowflake layout (PROTOCOL.md §E.4): 42 bits of ms since the epoch, 5 worker, 5 process, 12 increment. */
export const SNOWFLAKE_EPOCH = 1420070400000;
export const SNOWFLAKE_WORKER_BITS = 5;
export const SNOWFLAKE_PROCESS_BITS = 5;
export const SNOWFLAKE_INCREMENT_BITS = 12;
export const SNOWFLAKE_MAX_WORKER_ID = (1 << SNOWFLAKE_WORKER_BITS) - 1;
export const SNOWFLAKE_MAX_PROCESS_ID = (1 << SNOWFLAKE_PROCESS_BITS) - 1;
export const SNOWFLAKE_MAX_INCREMENT = (1 << SNOWFLAKE_INCREMENT_BITS) - 1;

/** Serialized snowflakes are decimal strings (SPEC pattern `^(0|[1-9][0-9]*)$`). */
export const SNOWFLAKE_PATTERN = /^(0|[1-9][0-9]{0,19})$/;

export function isSnowflake(value: unknown): value is string {
  if (typeof value !== 'string' || !SNOWFLAKE_PATTERN.test(value)) return false;
  return BigInt(value) < 1n << 64n;
}

/** Milliseconds since the Unix epoch at which a snowflake was made. */
export function snowflakeTimestamp(id: string): number {
  return Number(BigInt(id) >> 22n) + SNOWFLAKE_EPOCH;
}

/** The smallest snowflake of a given instant, for pagination by time. */
export function snowflakeFromTimestamp(ms: number): string {
  return (BigInt(Math.max(0, ms - SNOWFLAKE_EPOCH)) << 22n).toString();
}
