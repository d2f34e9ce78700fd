import { type Static, Type } from 'typebox';

/** Request shapes of the emulator's admin API (`/_hearth/…`, README "Emulator mode"). */

const Snowflake = Type.String({ format: 'snowflake' });
/** `30d`, `15m`, `1h30m`, `500ms`. */
const Duration = Type.String({ pattern: '^(\\d+(ms|s|m|h|d|w))+$', maxLength: 40 });

/** `advance` by a duration, or `to` an instant (ISO-8601 with a zone, or epoch ms); `freeze` stops it there. */
export const ClockChange = Type.Object(
  {
    advance: Type.Optional(Duration),
    to: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })])),
    freeze: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ClockChange = Static<typeof ClockChange>;

const RuleLimits = {
  /** How many times the rule fires before it is removed; absent with no duration: once. */
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  /** How long (on the test clock) the rule lives. */
  duration: Type.Optional(Duration),
};

/** An HTTP fault: which requests (all given matchers must match) and what they get instead. */
export const HttpFaultRule = Type.Object(
  {
    target: Type.Literal('http'),
    /** `GET`, `POST`, …; absent: every method. */
    method: Type.Optional(Type.String({ pattern: '^[A-Z]+$', maxLength: 10 })),
    /** Path after `/api/v{N}`: `*` (or `:name`) is one segment, `**` any number; absent: every path. */
    path: Type.Optional(Type.String({ pattern: '^/', maxLength: 300 })),
    application_id: Type.Optional(Snowflake),
    user_id: Type.Optional(Snowflake),
    action: Type.Union([
      Type.Literal('rate_limit'),
      Type.Literal('error'),
      Type.Literal('delay'),
      Type.Literal('drop'),
    ]),
    /** `rate_limit`: seconds the client must wait (the body's `retry_after`). */
    retry_after: Type.Optional(Type.Number({ minimum: 0.001, maximum: 3600 })),
    /** `rate_limit`: the global limit (`X-RateLimit-Global`) rather than the route's bucket. */
    global: Type.Optional(Type.Boolean()),
    /** `error`: the status answered. */
    status: Type.Optional(Type.Union([Type.Literal(500), Type.Literal(502), Type.Literal(503)])),
    /** `delay`: how long the request waits (real time) before it is served. */
    delay_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
    ...RuleLimits,
  },
  { additionalProperties: false },
);
export type HttpFaultRule = Static<typeof HttpFaultRule>;

/** A gateway fault: fires when a dispatch (optionally of one event type) is about to reach a matching session. */
export const GatewayFaultRule = Type.Object(
  {
    target: Type.Literal('gateway'),
    session_id: Type.Optional(Type.String({ maxLength: 64 })),
    application_id: Type.Optional(Snowflake),
    user_id: Type.Optional(Snowflake),
    /** Only dispatches of this type (`MESSAGE_CREATE`); absent: any. */
    event: Type.Optional(Type.String({ pattern: '^[A-Z_]+$', maxLength: 64 })),
    action: Type.Union([
      Type.Literal('reconnect'),
      Type.Literal('invalid_session'),
      Type.Literal('close'),
      Type.Literal('delay'),
      Type.Literal('drop'),
    ]),
    /** `invalid_session`: whether the client may resume (op 9 `d`). */
    resumable: Type.Optional(Type.Boolean()),
    /** `close`: the close code. */
    code: Type.Optional(Type.Integer({ minimum: 1000, maximum: 4999 })),
    /** `delay`: how long the dispatch (and those after it) wait, real time. */
    delay_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
    ...RuleLimits,
  },
  { additionalProperties: false },
);
export type GatewayFaultRule = Static<typeof GatewayFaultRule>;

export const FaultRule = Type.Union([HttpFaultRule, GatewayFaultRule]);
export type FaultRule = Static<typeof FaultRule>;

export const FaultParams = Type.Object({ fault_id: Type.String({ pattern: '^\\d{1,20}$' }) });

/** Snapshot names become file and schema names: letters, digits, `-` and `_`. */
export const SnapshotParams = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
});

export const ActParams = Type.Object({ action: Type.String({ pattern: '^[a-z_]{1,64}$' }) });
