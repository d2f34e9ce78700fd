import {
  SNOWFLAKE_EPOCH,
  SNOWFLAKE_INCREMENT_BITS,
  SNOWFLAKE_MAX_INCREMENT,
  SNOWFLAKE_MAX_PROCESS_ID,
  SNOWFLAKE_MAX_WORKER_ID,
  SNOWFLAKE_PROCESS_BITS,
} from '@hearth/protocol';
import type { Clock } from './clock.js';

/** Makes unique, time-ordered ids (PROTOCOL.md §E.4) for one worker/process pair. */
export class SnowflakeGenerator {
  readonly #clock: Clock;
  readonly #node: bigint;
  #lastMs = -1;
  #increment = 0;

  constructor(clock: Clock, workerId = 0, processId = 0) {
    if (!Number.isInteger(workerId) || workerId < 0 || workerId > SNOWFLAKE_MAX_WORKER_ID) {
      throw new RangeError(`worker id must be 0..${SNOWFLAKE_MAX_WORKER_ID}`);
    }
    if (!Number.isInteger(processId) || processId < 0 || processId > SNOWFLAKE_MAX_PROCESS_ID) {
      throw new RangeError(`process id must be 0..${SNOWFLAKE_MAX_PROCESS_ID}`);
    }
    this.#clock = clock;
    this.#node =
      ((BigInt(workerId) << BigInt(SNOWFLAKE_PROCESS_BITS)) | BigInt(processId)) <<
      BigInt(SNOWFLAKE_INCREMENT_BITS);
  }

  next(): string {
    // A clock that stands still or steps back (a fixed test clock) borrows the next millisecond instead.
    let ms = Math.max(this.#clock.now() - SNOWFLAKE_EPOCH, this.#lastMs);
    if (ms === this.#lastMs) {
      this.#increment++;
      if (this.#increment > SNOWFLAKE_MAX_INCREMENT) {
        ms++;
        this.#increment = 0;
      }
    } else {
      this.#increment = 0;
    }
    this.#lastMs = ms;
    return ((BigInt(ms) << 22n) | this.#node | BigInt(this.#increment)).toString();
  }
}
