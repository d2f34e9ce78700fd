import { GatewayCloseCodes } from '@hearth/protocol';
import { WebSocket } from 'ws';
import type { Connection } from './connection.js';

/**
 * Closes ws itself sends when a client frame cannot be read: 1009 (larger than `maxPayload`) and 1007
 * (text that is not UTF-8). The gateway answers both with 4002 Decode error (PROTOCOL.md §D.1: client
 * payloads over 4096 bytes close with 4002), which clients know how to recover from.
 */
const DECODE_FAILURES = new Set([1007, 1009]);

/** The server side of a gateway socket: ws's own read failures close with the gateway's code. */
export class GatewaySocket extends WebSocket {
  /** The connection it carries, which its listeners (functions shared by every socket) act on. */
  connection?: Connection;

  override close(code?: number, data?: string | Buffer): void {
    if (code !== undefined && DECODE_FAILURES.has(code)) {
      super.close(GatewayCloseCodes.DecodeError, code === 1009 ? 'Payload too large' : 'Invalid UTF-8');
      return;
    }
    super.close(code, data);
  }
}
