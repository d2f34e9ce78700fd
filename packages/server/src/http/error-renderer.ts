import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { FormErrors, type JSONErrorName } from '@hearth/protocol';
import type { FastifyError } from 'fastify';
import { formErrorTree, HearthError, isWireError, type WireError } from '../kernel/errors.js';

/**
 * The one place that turns whatever Fastify, Node's HTTP parser, a plugin or our code raises into the
 * platform's error body `{code, message, errors?}` (PROTOCOL.md §E.2). Undefined means a bug: a 500.
 */
export function toWireError(error: FastifyError | WireError): WireError | undefined {
  if (isWireError(error)) return error;
  switch ((error as FastifyError).code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // The platform answers an unsupported Content-Type with 50035 at the top of the tree, not 415.
      return new HearthError('InvalidFormBody', { errors: formErrorTree([[[], FormErrors.contentType()]]) });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HearthError('RequestEntityTooLarge');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new HearthError('InvalidJSON');
    // A path parameter longer than any id, or a segment that is not valid percent-encoded UTF-8, names
    // nothing that can exist: the answer of an unknown route.
    case 'FST_ERR_MAX_PARAM_LENGTH':
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_INVALID_URL':
      return new HearthError('GeneralNotFound');
  }
  const { statusCode } = error as FastifyError;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return new HearthError(BY_STATUS[statusCode] ?? 'GeneralBadRequest');
  }
  return undefined;
}

/** HTTP-level errors of code 0, by the status a framework or plugin error carries. */
const BY_STATUS: Readonly<Record<number, JSONErrorName>> = {
  401: 'GeneralUnauthorized',
  403: 'GeneralForbidden',
  404: 'GeneralNotFound',
  405: 'GeneralMethodNotAllowed',
  408: 'GeneralRequestTimeout',
  413: 'RequestEntityTooLarge',
  431: 'GeneralRequestHeaderFieldsTooLarge',
};

/**
 * Node's `clientError`: a request the HTTP parser refused (malformed, headers too large, too slow). No
 * request object exists, so the platform's body is written on the socket before it is closed.
 */
export function renderClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const name: JSONErrorName =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'GeneralRequestTimeout'
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? 'GeneralRequestHeaderFieldsTooLarge'
        : 'GeneralBadRequest';
  const wire = new HearthError(name);
  const body = JSON.stringify(wire.body());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${wire.status} ${STATUS_CODES[wire.status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
