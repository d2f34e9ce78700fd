/**
 * Client::Status: where the client's connection to the gateway stands. The first connection goes
 * Disconnected → Connecting → Connected (the gateway said Hello) → Ready (the session is up); a dropped
 * connection that can be recovered is Reconnecting until the session is Ready again.
 */
export const ClientStatus = {
  Disconnected: 0,
  Connecting: 1,
  Connected: 2,
  Ready: 3,
  Reconnecting: 4,
  Disconnecting: 5,
} as const;
export type ClientStatus = (typeof ClientStatus)[keyof typeof ClientStatus];

/** Client::Error: why the status changed when nobody asked it to. */
export const ClientError = {
  None: 0,
  /** No session came up: no token, the gateway unreachable, or the gateway refused the Identify. */
  ConnectionFailed: 1,
  /** A session that was Ready lost its connection; errorDetail is the close code. */
  UnexpectedClose: 2,
  ConnectionCanceled: 3,
} as const;
export type ClientError = (typeof ClientError)[keyof typeof ClientError];

/** `errorDetail` is the WebSocket close code when there is one (4004: the token was refused), else 0. */
export type StatusChangedCallback = (status: ClientStatus, error: ClientError, errorDetail: number) => void;

/** The name of a value of a const object, for log lines and ToString helpers. */
export function nameOf(values: Record<string, number>, value: number): string {
  return Object.entries(values).find(([, v]) => v === value)?.[0] ?? 'Unknown';
}
