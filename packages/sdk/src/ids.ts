import { toUint64 } from './authorization.js';
import { ClientResult, ErrorType } from './client-result.js';

/** An id as the wire wants it, or the ValidationError to report: operations resolve, they never reject. */
export function snowflakeOf(value: bigint | string, name: string): string | ClientResult {
  try {
    return toUint64(value, name).toString();
  } catch (error) {
    return new ClientResult({ type: ErrorType.ValidationError, error: (error as Error).message });
  }
}
