/**
 * What the gateway client needs of a WebSocket: the WHATWG interface, which the `ws` package (Node entry)
 * and browsers' `WebSocket` (browser entry) both implement. Injected, so the library's core imports neither.
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
}

/** A WebSocket constructor: `WebSocket` of the `ws` package, `globalThis.WebSocket`, or a test's fake. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Opens a socket; throws when this environment has none. */
export type SocketOpener = (url: string) => WebSocketLike;

/** Text of a message event: `ws` and browsers give text frames as strings; binary ones are decoded as UTF-8. */
export function messageText(data: unknown): string | undefined {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data))
    return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return undefined;
}
