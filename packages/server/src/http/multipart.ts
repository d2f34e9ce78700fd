import { FormErrors } from '@hearth/protocol';
import { HearthError, invalidForm } from '../kernel/errors.js';
import { assertJsonDepth } from '../kernel/input-limits.js';

/**
 * `multipart/form-data` bodies of the routes that accept them (lobby messages, moderation metadata): the
 * text fields, with `payload_json` standing for the whole body as the platform reads it. File parts are
 * refused: no route here takes attachments yet.
 */
export function parseMultipart(body: Buffer, contentType: string): Record<string, unknown> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const marker = boundary?.[1] ?? boundary?.[2]?.trim();
  if (!marker) throw malformed();
  const delimiter = Buffer.from(`--${marker}`);
  const fields: Record<string, string> = Object.create(null);
  let position = body.indexOf(delimiter);
  if (position === -1) throw malformed();
  for (;;) {
    position += delimiter.length;
    // `--` after a delimiter closes the body.
    if (body.subarray(position, position + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, position);
    if (next === -1) throw malformed();
    const part = body.subarray(position + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split === -1) throw malformed();
    const headers = part.subarray(0, split).toString('utf8');
    const disposition = /content-disposition:\s*form-data\s*;([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /(?:^|;)\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw malformed();
    if (/(?:^|;)\s*filename\*?=/i.test(disposition)) throw invalidForm(name, FormErrors.invalid());
    fields[name] = part.subarray(split + 4).toString('utf8');
    position = next;
  }
  if (fields['payload_json'] === undefined) return { ...fields };
  assertJsonDepth(fields['payload_json']);
  try {
    return JSON.parse(fields['payload_json']) as Record<string, unknown>;
  } catch {
    throw new HearthError('InvalidJSON');
  }
}

function malformed(): HearthError {
  return new HearthError('InvalidFormBody', { errors: { _errors: [FormErrors.invalid()] } });
}
