import { createHash } from 'node:crypto';
import { FormErrors } from '@hearth/protocol';
import { invalidForm } from '../../kernel/errors.js';

/**
 * Image fields (guild icon, banner, splash, tag badge, role icon) arrive as data URIs. Until an image store
 * exists Hearth keeps the content hash the platform would answer, after checking the bytes are an image.
 */
const SIGNATURES: ReadonlyArray<{ type: string; matches: (bytes: Buffer) => boolean }> = [
  { type: 'png', matches: (b) => b.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])) },
  { type: 'jpeg', matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'gif', matches: (b) => b.subarray(0, 6).toString('latin1').startsWith('GIF8') },
  {
    type: 'webp',
    matches: (b) =>
      b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
];

const DATA_URI = /^data:image\/(png|jpeg|jpg|gif|webp);base64,([A-Za-z0-9+/]+={0,2})$/;

/** The hash of a data-URI image (`a_` for an animated GIF, as the platform marks them); 50035 at `field` otherwise. */
export function imageHash(field: string, dataUri: string): string {
  const match = DATA_URI.exec(dataUri);
  const bytes = match ? Buffer.from(match[2] ?? '', 'base64') : Buffer.alloc(0);
  const signature = SIGNATURES.find((candidate) => candidate.matches(bytes));
  if (!signature) throw invalidForm(field, FormErrors.imageInvalid());
  const hash = createHash('md5').update(bytes).digest('hex');
  return signature.type === 'gif' ? `a_${hash}` : hash;
}

/** An image field of a modify request: undefined (unchanged), null (cleared) or a new hash. */
export function imageChange(field: string, value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  return imageHash(field, value);
}
