/**
 * What the forwarder may know of a media payload without keys (protocol.md, Protocol Frame Check): a DAVE
 * frame ends with its 0xFAFA magic marker, and the Opus silence frame passes through unencrypted.
 */
import { DAVE_FRAME_MAGIC_MARKER, OPUS_SILENCE_FRAME } from '@hearth/protocol';

export type MediaPayloadKind = 'dave' | 'silence' | 'plain';

export function mediaPayloadKind(payload: Uint8Array): MediaPayloadKind {
  const n = payload.length;
  if (n >= 2 && ((payload[n - 2] ?? 0) << 8) + (payload[n - 1] ?? 0) === DAVE_FRAME_MAGIC_MARKER)
    return 'dave';
  // The payload may start with an encrypted header-extension body, so only its end is compared.
  const start = n - OPUS_SILENCE_FRAME.length;
  if (start >= 0 && OPUS_SILENCE_FRAME.every((byte, i) => payload[start + i] === byte)) {
    return 'silence';
  }
  return 'plain';
}
