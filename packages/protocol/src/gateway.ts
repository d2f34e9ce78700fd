/** Session start limit reported by GET /gateway/bot (PROTOCOL.md §D.1, §D.3). */
export const SESSION_START_LIMIT = { total: 1000, windowMs: 24 * 60 * 60 * 1000, maxConcurrency: 1 } as const;

/** Path of the WebSocket gateway on a Hearth server; clients append `?v=10&encoding=json`. */
export const GATEWAY_PATH = '/gateway';
